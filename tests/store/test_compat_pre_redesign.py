"""A run folder and model files written before the package was regrouped (issue 33) still
work: the fixture ``tests/fixtures/pre_redesign_run`` was written by safeclf at commit 21024d4
(`safeclf run` of an svm and a post-hoc certified logistic regression on breast_cancer, with
save_models), when every module sat at the top of the package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).parents[1] / "fixtures" / "pre_redesign_run"


def _copy(tmp_path) -> Path:
    run = tmp_path / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    return run


def test_its_model_files_load_and_predict():
    from sklearn.datasets import load_breast_cancer

    from safeclf.store import models

    X, y = load_breast_cancer(return_X_y=True)
    seen = set()
    for path in sorted((FIXTURE / "models").glob("*.skops")):
        meta = json.loads(path.with_suffix(".json").read_text())
        pipeline = models.load(path)
        pred = pipeline.predict(X)
        assert set(np.unique(pred)) <= set(np.unique(y))
        assert np.mean(pred == y) > 0.9  # a working classifier, not merely an object
        certified = bool(meta.get("certificate"))
        assert (type(pipeline[-1]).__name__ == "CertifiedClassifier") == certified
        seen.add(certified)
    assert seen == {True, False}  # one certified model, one plain


def test_it_resumes_compares_and_reports(tmp_path, cli):
    run = _copy(tmp_path)
    record = sorted((run / "results").glob("*.json"))[0]
    record.unlink()  # a job left to do
    res = cli("run", "--resume", run)
    assert res.exit_code == 0, res.output
    assert record.is_file()
    assert cli("compare", FIXTURE, run).exit_code == 0
    res = cli("report", run)
    assert res.exit_code == 0, res.output
    assert (run / "report.html").is_file()
