"""The Python API: safeclf.run / safeclf.load_run give the command line's run folder as
DataFrames; safeclf.estimators exposes every method's estimator; import safeclf stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import safeclf
from safeclf.errors import SpecError

ROOT = Path(__file__).resolve().parents[1]
TIMINGS = ["fit_seconds", "predict_seconds", "solver_seconds"]  # wall-clock, not results


def _only_run(folder: Path) -> Path:
    runs = [p for p in folder.iterdir() if p.is_dir()]
    assert len(runs) == 1
    return runs[0]


def test_run_returns_the_cli_tables(cli, tmp_path):
    result = cli("run", ROOT / "configs" / "quickstart.yaml", "--profile", "ci", "--out",
                 tmp_path / "cli", "-j", "2")
    assert result.exit_code == 0, result.output
    from_cli = safeclf.load_run(_only_run(tmp_path / "cli"))

    r = safeclf.run(ROOT / "configs" / "quickstart.yaml", profile="ci", out=tmp_path / "api",
                    jobs=2)
    assert r.exit_code == 0
    assert r.path.parent == tmp_path / "api"
    for name in ("metrics", "summary", "promises", "expectations"):
        ours, theirs = getattr(r, name), getattr(from_cli, name)
        assert isinstance(ours, pd.DataFrame) and not ours.empty, name
        if name in ("metrics", "summary"):
            timings = [c for c in TIMINGS if c in ours.columns]
            ours, theirs = ours.drop(columns=timings), theirs.drop(columns=timings)
        pd.testing.assert_frame_equal(ours, theirs, check_dtype=True, obj=name)
    # the tables are the run folder's files
    on_disk = pd.read_csv(r.path / "summary.csv")
    pd.testing.assert_frame_equal(r.summary, on_disk)
    assert r.expectations_met and len(r.expectations) == 4
    assert set(r.metrics["status"]) == {"ok"} and r.failed.empty
    assert r.manifest["profile"] == "ci" and r.spec["seeds"] == [0, 1]
    assert r.report.is_file()
    assert "4/4 met" in repr(r)
    # the first promise table a new user sees holds verdicts: a training-only promise and a
    # certified one, checked on Adult's test rows
    promises = r.promises.set_index("method")
    assert promises.loc["ramp_fair", "kind"].unique().tolist() == ["training"]
    assert promises.loc["ramp_certified", "kind"].unique().tolist() == ["high_confidence"]
    assert set(promises.loc["ramp_certified", "verdict"]) == {"holds"}
    assert (r.path / "plots" / "frontier.png").is_file()
    # ... and its certified model is the one to deploy, as the run saved it
    deployed = cli("deploy", r.path, "--method", "ramp_certified", "--out", tmp_path / "model")
    assert deployed.exit_code == 0 and "void its certificate" in deployed.stdout
    job = r.metrics.query("method == 'ramp_certified' and status == 'ok'").sort_values(
        "seed")["job"].iloc[0]
    assert (tmp_path / "model" / "model.skops").read_bytes() == \
        (r.path / "models" / f"{job}.skops").read_bytes()


def test_run_takes_a_dict_or_a_spec_with_profile_and_overrides(tmp_path):
    spec = {"name": "from_dict", "seeds": 3,
            "datasets": [{"dataset": "iris", "preprocess": "standardize"}],
            "methods": [{"method": "logreg", "params": {"max_iter": 500}}],
            "metrics": ["error"],
            "profiles": {"fast": {"seeds": 2}}}
    original = {k: v for k, v in spec.items()}
    r = safeclf.run(spec, profile="fast", overrides=["methods[0].params.C=0.5"],
                    out=tmp_path, jobs=1)
    assert spec == original  # the caller's dict is not changed
    assert len(r.metrics) == 2 and r.metrics["param.C"].tolist() == [0.5, 0.5]
    assert r.manifest["overrides"] == ["methods[0].params.C=0.5"]
    assert r.expectations.empty and r.expectations_met

    parsed = safeclf.read_spec(spec, overrides=["seeds=1", "name=parsed"])
    assert isinstance(parsed, safeclf.Spec)
    r2 = safeclf.run(parsed, out=tmp_path, jobs=1)
    assert r2.name == "parsed" and len(r2.metrics) == 1


def test_user_errors_are_spec_errors(tmp_path):
    with pytest.raises(SpecError, match="methods\\[0\\].params.C"):
        safeclf.run({"name": "bad", "datasets": [{"dataset": "iris"}],
                     "methods": [{"method": "svm", "params": {"C": -1}}]}, out=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing was written
    with pytest.raises(SpecError, match="not a run folder"):
        safeclf.load_run(tmp_path / "missing")
    with pytest.raises(SpecError, match="a path, a mapping or a Spec"):
        safeclf.read_spec(42)


def test_estimators_module_names_every_family():
    from sklearn.base import is_classifier

    import safeclf.estimators as est

    assert {"RobustSOCPClassifier", "MultiCostSVM", "RampClassifier", "ProsetClassifier",
            "BudgetedSelection"} <= set(est.__all__)
    for name in est.__all__:
        cls = getattr(est, name)
        assert cls.__name__ == name and is_classifier(cls()), name
    with pytest.raises(AttributeError):
        est.NoSuchClassifier  # noqa: B018


def test_import_safeclf_is_cheap():
    code = ("import sys, safeclf, safeclf.estimators; print([m for m in ('numpy', 'pandas', "
            "'sklearn', 'matplotlib', 'cvxpy', 'pydantic') if m in sys.modules]); "
            "print(callable(safeclf.run), 'run' in dir(safeclf))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True True"]


def test_the_api_reference_documents_every_public_estimator_at_its_path():
    """docs/reference/estimators.md has a ``:::`` entry for every name of
    safeclf.estimators, at the module that defines it (so the reference follows a move)."""
    from pathlib import Path

    import safeclf.estimators as est

    page = (Path(__file__).parents[1] / "docs" / "reference" / "estimators.md").read_text()
    documented = {line.split()[1] for line in page.splitlines() if line.startswith(":::")}
    for name in est.__all__:
        assert f"{est._WHERE[name]}.{name}" in documented, name
