"""``safeclf.load_model`` (issue 35, item 2): a saved model scores a raw DataFrame exactly as
``safeclf predict`` scores the same rows from a CSV (one encoding path), refuses what predict
refuses with the same message, and carries its promises, certificate and deployment record."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from audited_model import deployed, rows


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    base = tmp_path_factory.mktemp("loaded")
    return deployed(base)


def test_a_str_path_scores_a_raw_frame_as_predict_does(made, tmp_path, cli):
    import safeclf

    _, model_dir = made
    new = rows(300, 61).drop(columns=["y"])
    new.loc[3, "a"] = 7.25  # values as a CSV holds them
    new.to_csv(tmp_path / "new.csv", index=False)
    done = cli("predict", model_dir, "--data", tmp_path / "new.csv", "--out", tmp_path / "p.csv")
    assert done.exit_code == 0, done.output
    written = pd.read_csv(tmp_path / "p.csv")
    model = safeclf.load_model(str(model_dir))
    raw = pd.read_csv(tmp_path / "new.csv")
    assert np.array_equal(model.predict(raw), written["prediction"].to_numpy())
    proba = model.predict_proba(raw)
    assert set(written["prediction"]) <= set(model.classes_)
    for k, c in enumerate(model.classes_):
        np.testing.assert_array_equal(proba[:, k], written[f"proba_{c}"].to_numpy())
    table = model.score(raw).table.reset_index(drop=True)
    pd.testing.assert_frame_equal(pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False))),
                                  written)
    # the decision function's sign is the decision (positive: the favourable class)
    score = model.decision_function(raw)
    assert np.array_equal(score > 0, model.predict(raw) == model.classes_[-1])
    assert 0 < (score > 0).mean() < 1


def test_it_carries_what_the_model_promises(made):
    import safeclf

    run, model_dir = made
    meta = json.loads((model_dir / "model.json").read_text())
    model = safeclf.load_model(model_dir)
    assert model.promises == meta["promises"] and model.promises[0]["kind"] == "high_confidence"
    assert model.certificate == meta["certificate"] and model.certificate["delta"] == 0.05
    assert model.deployment["refit"] is False
    assert model.deployment["from_run"] == str(run.resolve())
    # a run's job model: its file, and the run folder with its job
    job = model.deployment["job"]
    for loaded in (safeclf.load_model(str(run / "models" / f"{job}.skops")),
                   safeclf.load_model(run, job=job)):
        assert loaded.deployment is None and loaded.certificate == model.certificate
        frame = rows(50, 62)
        assert np.array_equal(loaded.predict(frame), model.predict(frame))


def test_an_unseen_category_is_refused_with_predicts_message(made, tmp_path, cli):
    import safeclf
    from safeclf.errors import DataError

    _, model_dir = made
    new = rows(5, 63).drop(columns=["y"])
    new.loc[2, "colour"] = "green"
    new.to_csv(tmp_path / "new.csv", index=False)
    done = cli("predict", model_dir, "--data", tmp_path / "new.csv", "--out", tmp_path / "p.csv")
    assert done.exit_code == 2
    said = " ".join(done.stderr.split()).removeprefix("error: ")
    with pytest.raises(DataError) as caught:
        safeclf.load_model(str(model_dir)).predict(pd.read_csv(tmp_path / "new.csv"))
    # the same sentence, but for where the rows come from and how to skip them
    cli_core = said.split(": ", 1)[1].replace("--skip-bad-rows", "skip_bad_rows=True")
    assert str(caught.value) == f"X: {cli_core}"
    assert "column 'colour' at line 4 holds 'green', a category not seen in training" in cli_core
    # skipped, the other rows are scored as they are alone
    model = safeclf.load_model(model_dir)
    scored = model.score(pd.read_csv(tmp_path / "new.csv"), skip_bad_rows=True)
    assert scored.rows.bad["line"].tolist() == [4] and len(scored.table) == 4
    alone = model.predict(pd.read_csv(tmp_path / "new.csv").drop(index=2))
    assert np.array_equal(scored.table["prediction"].to_numpy(), alone)


def test_the_store_loader_takes_a_str(made):
    from sklearn.pipeline import Pipeline

    from safeclf.store.models import load, read_meta

    _, model_dir = made
    assert isinstance(load(str(model_dir / "model.skops")), Pipeline)
    assert read_meta(str(model_dir / "model.json"))["format"] == 1


def test_the_public_names_are_exported():
    import safeclf

    assert {"load_model", "audit"} <= set(safeclf.__all__)
    assert callable(safeclf.load_model) and callable(safeclf.audit)
