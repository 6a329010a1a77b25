"""Every registered method's fitted model is saved within the trusted types and loads back to
the same predictions: the allow-list of :mod:`safeclf.store.trust` covers what safeclf
writes, and nothing more is needed."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("skops")

GROUP_CSV = "a,b,c,sex,y\n" + "".join(
    f"{i % 7},{(i * 3) % 11},{(i * 5) % 13},{'M' if i % 3 else 'F'},{int((i % 7) + (i % 3) > 4)}\n"
    for i in range(160))

SPECS = {
    "tabular": """
name: tabular
seeds: 1
save_models: true
datasets:
  - dataset: csv
    params: {path: data.csv, target: y, group: sex, privileged: M, group_as_feature: true}
    preprocess: standardize
methods:
  - method: logreg
  - method: svm
  - method: sgd
  - method: ramp
    params: {kappa: 0.7, lam: 0.01}
  - method: group_thresholds
    params: {kappa: 0.7}
  - method: zafar
  - method: proset
    params: {n_candidates: 50, max_iter: 200}
  - method: report_knn
    params: {k_max: 10, cv: 3}
""" + ("""  - method: fairlearn_eg
    params: {ratio_bound: 0.8, max_iter: 10}
""" if importlib.util.find_spec("fairlearn") else "") + ("""  - method: report_xgboost
    params: {n_trials: 2, n_trees: 10, cv: 3}
""" if importlib.util.find_spec("xgboost") else ""),
    "selection": """
name: selection
seeds: 1
save_models: true
datasets:
  - dataset: nested
    params: {n_samples: 600, n_features: 8, n_signal: 3, random_state: 0}
methods:
  - method: budgeted_selection
    params:
      procedure: coarse_grid
      budget: 25
      quantum: 50
      classes:
        - {method: sgd, params: {loss: hinge}, features: [2, 4, 8]}
""",
    "mcsvm": """
name: mcsvm
seeds: 1
save_models: true
datasets:
  - dataset: gaussian_priors
    params: {mean_pos: [1, 1], cov_pos: [[1, 0], [0, 1]], mean_neg: [-1, -1],
             cov_neg: [[1, 0], [0, 1]], p_pos: [0.5], n_samples: 400}
    split: {test: 0.25, calibration: 0.25}
    preprocess: none
methods:
  - method: mcsvm
    params: {n_tau: 3}
  - method: mcsvm
    name: mcsvm_rbf
    params: {kernel: rbf, n_tau: 2}
""",
    "robust": """
name: robust
seeds: 1
save_models: true
datasets:
  - dataset: uncertain_synthetic
    params: {n_samples: 120, random_state: 1}
    split: {test: 0.3}
    preprocess: none
methods:
  - method: robust_socp
""",
    "churn": """
name: churn
seeds: 1
save_models: true
datasets:
  - dataset: adult_churn
    params: {n_d1: 300, n_d2: 200, n_d3: 200, n_deploy: 100}
    split: {predefined: true}
    preprocess: minmax
methods:
  - method: thresholded_svm
    params:
      train_subset: {role: [d1, d2]}
      recall_subset: {role: d2}
      recall_min: baseline
""",
}


@pytest.fixture(scope="module")
def saved_runs(tmp_path_factory):
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    root = tmp_path_factory.mktemp("roundtrip")
    (root / "data.csv").write_text(GROUP_CSV)
    runs = {}
    for name, text in SPECS.items():
        (root / f"{name}.yaml").write_text(text)
        result = CliRunner().invoke(app, ["run", str(root / f"{name}.yaml"), "--out",
                                          str(root / "runs" / name), "-j", "1"])
        assert result.exit_code == 0, (name, result.output)
        runs[name] = next((root / "runs" / name).iterdir())
    return runs


def test_every_registered_method_is_covered(saved_runs):
    from safeclf.plugins import registry

    covered = {json.loads(meta.read_text())["job"]["plugin"]
               for run in saved_runs.values() for meta in (run / "models").glob("*.json")}
    extras = ({"fairlearn_eg"} if importlib.util.find_spec("fairlearn") is None else set()) | (
        {"report_xgboost"} if importlib.util.find_spec("xgboost") is None else set())
    assert set(registry.method_names()) - covered == extras


def test_saved_models_load_and_predict_as_in_their_job(saved_runs):
    from safeclf.execution.job import load_dataset, preprocess, split_task
    from safeclf.spec.yaml import read_yaml
    from safeclf.store import models
    from safeclf.store.trust import TRUSTED_TYPES, check_file

    n = 0
    for run in saved_runs.values():
        table = pd.read_csv(run / "metrics.csv").set_index("job")
        spec = read_yaml(run / "spec.yaml")
        for path in sorted((run / "models").glob("*.skops")):
            assert set(check_file(path)) <= TRUSTED_TYPES
            meta = models.read_meta(path.with_suffix(".json")) if spec["datasets"][0][
                "dataset"] == "csv" else json.loads(path.with_suffix(".json").read_text())
            pipeline = models.load(path)
            assert f"{type(pipeline[-1]).__module__}.{type(pipeline[-1]).__qualname__}" \
                == meta["estimator"]
            job = meta["job"]
            entry = spec["datasets"][0]
            task = split_task(load_dataset(entry), entry, job["seed"], job["fold"])
            raw = task.test.X.copy()
            method = next(m for m in spec["methods"] if m.get("name", m["method"]) == job["method"])
            preprocess(task, method.get("preprocess") or entry.get("preprocess"))
            error = float(np.mean(pipeline.predict(raw) != task.test.y))
            assert error == pytest.approx(table.loc[path.stem, "test_error"]), path
            assert isinstance(meta["promises"], list)
            n += 1
    assert n >= 10


def test_every_trusted_name_is_a_real_type():
    """A renamed class would leave a stale name on the list; the list names real objects
    (``NoneType`` is how skops names None)."""
    import importlib

    from safeclf.store.trust import TRUSTED_TYPES

    for name in sorted(TRUSTED_TYPES - {"builtins.NoneType"}):
        module, _, attr = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), attr), type), name
