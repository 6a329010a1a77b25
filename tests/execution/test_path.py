"""A grid solved as a path (``path: kappa`` on a method entry): validated in the spec, grouped
into one unit per data set, seed and other parameters, and reported per grid point exactly as
separate jobs are — same job ids, same columns, the same results within solver tolerance —
with resume re-running only the missing points."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from interrupted import as_interrupted

from safeclf.errors import SpecError
from safeclf.spec.check import check, load_spec, parse
from safeclf.spec.expand import expand, path_units

SPEC = """
name: path
seeds: [0, 1]
datasets:
  - dataset: adult
    params: {{n_rows: 400}}
    split: {{test: 0.3}}
    preprocess: minmax
methods:
  - method: ramp
    {path}
    params:
      constraints: [{{rate: fairness_ratio}}]
      kappa: {{grid: [0.6, 0.9]}}
      lam: 1/n
metrics: [error, fairness_ratio]
"""


def _spec(extra: dict, base: dict | None = None):
    data = {"name": "x", "datasets": [{"dataset": "iris"}],
            "methods": [dict({"method": "ramp", "params": {"kappa": {"grid": [0.5, 0.8]}}},
                             **extra)]}
    spec = parse(data)
    check(spec)
    return spec


def test_path_must_name_a_grid_parameter_the_method_can_follow():
    with pytest.raises(SpecError, match=r"^methods\[0\]\.path: method 'ramp' cannot solve a grid "
                                        r"of 'lam' as a path \(it can for 'kappa', 'target'\)$"):
        _spec({"path": "lam"})
    with pytest.raises(SpecError, match=r"^methods\[0\]\.path: 'target' must be given as a grid"):
        _spec({"path": "target"})
    with pytest.raises(SpecError, match="it declares no path parameter"):
        check(parse({"name": "x", "datasets": [{"dataset": "iris"}],
                     "methods": [{"method": "svm", "path": "C",
                                  "params": {"C": {"grid": [1, 2]}}}]}))


def test_path_units_group_the_points_in_grid_order_and_keep_the_job_ids():
    data = {"name": "x", "seeds": [0, 1], "datasets": [{"dataset": "iris"}],
            "methods": [{"method": "ramp", "params": {"kappa": {"grid": [0.9, 0.5, 0.7]},
                                                      "max_mm_iter": {"grid": [2, 3]}}}]}
    plain = parse(data)
    data["methods"][0]["path"] = "kappa"
    spec = parse(data)
    check(spec)
    jobs = expand(spec)
    assert [j.id for j in jobs] == [j.id for j in expand(plain)]  # path is not in the id
    units = path_units(spec, jobs)
    assert len(units) == 2 * 2  # seeds × max_mm_iter
    for unit in units:
        assert [j.params["kappa"] for j in unit] == [0.9, 0.5, 0.7]
        assert len({(j.seed, j.params["max_mm_iter"]) for j in unit}) == 1
    assert all(len(u) == 1 for u in path_units(plain, expand(plain)))


def _table(run: Path) -> pd.DataFrame:
    return pd.read_parquet(run / "metrics.parquet").set_index("job").sort_index()


def _run(write_spec, tmp_path, name, path, resume=None):
    from safeclf.execution.options import Options
    from safeclf.execution.runner import run

    spec = write_spec(SPEC.format(path=path), f"{name}.yaml")
    out = run(spec if resume is None else None,
              Options(jobs=1, out=tmp_path / name, resume=resume))
    assert out.exit_code == 0, [r.error for r in out.results]
    return out.run_dir


def test_a_path_reports_what_separate_jobs_report(write_spec, tmp_path):
    separate = _table(_run(write_spec, tmp_path, "separate", ""))
    path_dir = _run(write_spec, tmp_path, "path", "path: kappa")
    path = _table(path_dir)
    assert list(path.index) == list(separate.index) and list(path.columns) == list(separate.columns)
    # the ramp method warm-starts each point from the previous one (warm_start): the first
    # point of each path is its separate job's fit, the second starts from the first's
    # solution, takes fewer majorization steps and keeps its training promise
    varying = {"fit_seconds", "predict_seconds", "solver_seconds"}
    first = separate["constraint_fairness_ratio_target"] == 0.6
    for col in separate.columns:
        if col not in varying and pd.api.types.is_float_dtype(separate[col]):
            np.testing.assert_allclose(path.loc[first, col], separate.loc[first, col],
                                       rtol=1e-9, err_msg=col)
    assert (path.loc[~first, "mm_iterations"] < separate.loc[~first, "mm_iterations"]).all()
    assert (path["promise_constraint_fairness_ratio_train_holds"] == 1).all()
    # resume: a lost record of the second point is re-run alone; the others are kept
    second = next(p for p in (path_dir / "results").glob("*.json")
                  if json.loads(p.read_text())["params"]["kappa"] == 0.9)
    kept = {p.name: p.read_text() for p in (path_dir / "results").glob("*.json") if p != second}
    as_interrupted(path_dir, [second])
    resumed = _run(write_spec, tmp_path, "path", "path: kappa", resume=path_dir)
    assert resumed == path_dir and second.is_file()
    assert {p.name: p.read_text() for p in (path_dir / "results").glob("*.json")
            if p != second} == kept
    again = _table(path_dir)
    assert list(again.index) == list(path.index)
    # the re-run point is a path of one point: started cold, as its separate job
    rerun = again["constraint_fairness_ratio_target"] == 0.9
    np.testing.assert_allclose(again.loc[~rerun, "test_error"], path.loc[~rerun, "test_error"],
                               rtol=1e-9)
    job = json.loads(second.read_text())["id"]
    np.testing.assert_allclose(again.loc[job, "train_objective"],
                               separate.loc[job, "train_objective"], rtol=1e-9)


class _Steps:
    """An estimator with scikit-learn's warm_start: records where each fit started."""

    def __init__(self, a=0, warm_start=False):
        self.a, self.warm_start = a, warm_start

    def get_params(self, deep=False):
        return {"a": self.a, "warm_start": self.warm_start}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X=None, y=None):
        if self.a == 2:
            raise ValueError("a = 2 fails")
        self.started_from_ = getattr(self, "value_", None) if self.warm_start else None
        self.value_ = self.a
        return self


def test_fit_path_warm_starts_each_point_from_the_previous_and_restarts_after_a_failure():
    from safeclf.plugins.contract import MethodPlugin

    class Plugin(MethodPlugin):
        def fit(self, estimator, task):
            return estimator.fit()

    plugin = Plugin("steps", _Steps)
    out = list(plugin.fit_path([_Steps(a) for a in (1, 3, 2, 4, 5)], task=None))
    assert [o.a for o in out if not isinstance(o, Exception)] == [1, 3, 4, 5]
    assert [getattr(o, "started_from_", "failed") for o in out] == [None, 1, "failed", None, 4]
    assert isinstance(out[2], ValueError)


def test_a_method_without_warm_start_fits_a_path_cold(write_spec):
    from safeclf.execution.job import run_path
    from safeclf.plugins import registry

    spec = load_spec(write_spec("""
        name: p
        datasets: [{dataset: iris}]
        methods: [{method: logreg, params: {C: {grid: [0.1, 10]}}}]
        """))
    from safeclf.execution.runner import payloads

    records = run_path(payloads(spec, expand(spec)))
    assert [r.params["C"] for r in records] == [0.1, 10]
    assert all(r.status.value == "ok" for r in records)
    assert records[0].metrics["train_error"] >= records[1].metrics["train_error"]
    assert registry.get_method("logreg").path_params == ()
