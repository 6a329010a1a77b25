"""Saved models: written with skops when asked, loaded safely, applied to new rows with the
preprocessing fitted in their job."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("skops")

CSV = "a,b,colour,sex,y\n" + "".join(
    f"{i % 7},{(i * 3) % 11},{'red' if i % 3 else 'blue'},{'M' if i % 2 else 'F'},{int(i % 7 > 3)}\n"
    for i in range(120))

SPEC = """
name: keep
seeds: 1
save_models: true
datasets:
  - dataset: csv
    params: {path: data.csv, target: y, group: sex, privileged: M}
    preprocess: standardize
methods:
  - method: logreg
  - method: svm
    save_model: false
"""


@pytest.fixture
def saved_run(tmp_path, cli):
    (tmp_path / "data.csv").write_text(CSV)
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs", "-j", "1")
    assert result.exit_code == 0, result.output
    return next((tmp_path / "runs").iterdir())


def test_models_are_saved_where_asked_and_predict_matches_the_run(saved_run, tmp_path, cli):
    from safeclf.execution.job import load_dataset, preprocess, split_task
    from safeclf.spec.yaml import read_yaml
    from safeclf.store.models import load

    table = pd.read_csv(saved_run / "metrics.csv")
    logreg = table.loc[table.method == "logreg", "job"].item()
    svm = table.loc[table.method == "svm", "job"].item()
    assert sorted(p.name for p in (saved_run / "models").iterdir()) == [f"{logreg}.json",
                                                                        f"{logreg}.skops"]
    # the saved pipeline reproduces the run's test error on the run's own split
    entry = read_yaml(saved_run / "spec.yaml")["datasets"][0]
    task = split_task(load_dataset(entry), entry, 0, None)
    raw_test = task.test.X.copy()
    preprocess(task, "standardize")
    pipeline = load(saved_run / "models" / f"{logreg}.skops")
    error = float(np.mean(pipeline.predict(raw_test) != task.test.y))
    assert error == pytest.approx(table.loc[table.method == "logreg", "test_error"].item())
    # predict on new rows: the same encoding (one-hot colour re-aligned, sex and y dropped)
    new = tmp_path / "new.csv"
    frame = pd.read_csv(tmp_path / "data.csv").drop(columns=["y"]).iloc[:10]
    frame[["colour", "a", "b", "sex"]].to_csv(new, index=False)  # other column order, no label
    out = tmp_path / "preds.csv"
    result = cli("predict", saved_run, "--job", logreg, "--data", new, "--out", out)
    assert result.exit_code == 0, result.output
    preds = pd.read_csv(out)
    assert len(preds) == 10 and {"prediction", "proba_0", "proba_1"} <= set(preds.columns)
    X = pd.get_dummies(frame[["a", "b", "colour"]], dtype=float).to_numpy()
    assert (preds["prediction"].to_numpy() == pipeline.predict(X)).all()
    missing = cli("predict", saved_run, "--job", svm, "--data", new, "--out", out)
    assert missing.exit_code == 2 and f"no saved model for job '{svm}'" in missing.stderr


def test_predict_refuses_a_new_category_and_a_missing_column(saved_run, tmp_path, cli):
    table = pd.read_csv(saved_run / "metrics.csv")
    job = table.loc[table.method == "logreg", "job"].item()
    for text, message in (("a,b,colour\n1,2,red\n3,4,green\n",
                           "column 'colour' at line 3 holds 'green', a category not seen in "
                           "training (seen: blue, red)"),
                          ("a,colour\n1,red\n", "column 'b' used in training is missing")):
        new = tmp_path / "new.csv"
        new.write_text(text)
        result = cli("predict", saved_run, "--job", job, "--data", new, "--out", tmp_path / "p.csv")
        assert result.exit_code == 2 and message in result.stderr, result.output
        assert not (tmp_path / "p.csv").exists()
