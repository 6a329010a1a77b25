"""From a run to a deployed model (issue 23, item 5): imputation as a preprocessing step kept in
the model, predict skipping and reporting bad rows, and ``safeclf deploy`` (refit on all rows,
or the certified model itself)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from audited_model import SPEC as AUDITED_SPEC
from group_data import two_groups


def _csv(n=240, seed=0, empty=0.1):
    """Two numeric features (``a`` empty in about ``empty`` of the rows), a colour, a group."""
    X, y, g = two_groups(n, seed)
    rng = np.random.default_rng(seed + 1)
    a = np.where(rng.random(n) < empty, np.nan, X[:, 0].round(3))
    return pd.DataFrame({"a": a, "b": X[:, 1].round(3),
                         "colour": np.where(np.arange(n) % 3, "red", "blue"), "sex": g, "y": y})


SPEC = """
name: dep
seeds: 2
save_models: true
datasets:
  - dataset: csv
    params: {{path: data.csv, target: y, group: sex, privileged: M}}
    preprocess: {preprocess}
methods:
  - method: logreg
  - method: svm
    params: {{C: {{grid: [0.1, 1.0]}}}}
"""


@pytest.fixture(scope="module")
def imputed_run(tmp_path_factory):
    """A run on data with empty cells, imputed with the median, then standardized."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    base = tmp_path_factory.mktemp("imputed")
    _csv().to_csv(base / "data.csv", index=False)
    (base / "spec.yaml").write_text(SPEC.format(
        preprocess="{impute: median, scale: standardize}"))
    result = CliRunner().invoke(app, ["run", str(base / "spec.yaml"), "--out",
                                      str(base / "runs"), "-j", "1"])
    assert result.exit_code == 0, result.output
    (run,) = (base / "runs").iterdir()
    return run


def _job(run, method="logreg", seed=0):
    table = pd.read_csv(run / "metrics.csv")
    return table.loc[(table.method == method) & (table.seed == seed), "job"].iloc[0]


def test_the_imputer_is_fitted_on_the_training_part_and_kept_in_the_model(imputed_run):
    from safeclf.execution.job import load_dataset, split_task
    from safeclf.spec.yaml import read_yaml
    from safeclf.store.models import load

    table = pd.read_csv(imputed_run / "metrics.csv")
    assert set(table.status) == {"ok"}
    job = _job(imputed_run, seed=1)
    meta = json.loads((imputed_run / "models" / f"{job}.json").read_text())
    assert meta["preprocess"] == {"impute": "median", "scale": "standardize"}
    pipeline = load(imputed_run / "models" / f"{job}.skops")
    imputer, scaler = pipeline[0]["impute"], pipeline[0]["scale"]
    # the statistics are those of this job's training rows, not of all rows
    entry = read_yaml(imputed_run / "spec.yaml")["datasets"][0]
    task = split_task(load_dataset(entry, entry["preprocess"]), entry, 1, None)
    train_a = task.train.X[:, 0]
    assert np.isnan(train_a).any()
    assert imputer.statistics_[0] == pytest.approx(np.nanmedian(train_a))
    assert imputer.statistics_[0] != pytest.approx(np.nanmedian(_csv()["a"]))
    filled = np.where(np.isnan(task.train.X), imputer.statistics_, task.train.X)
    assert scaler.mean_ == pytest.approx(filled.mean(axis=0))
    # the saved model reproduces the job's test error on the raw rows, NaN included
    error = float(np.mean(pipeline.predict(task.test.X) != task.test.y))
    assert error == pytest.approx(table.loc[table.job == job, "test_error"].item())


def test_predict_imputes_empty_numeric_cells_with_the_training_statistic(imputed_run, tmp_path,
                                                                         cli):
    from safeclf.store.models import load

    job = _job(imputed_run)
    pipeline = load(imputed_run / "models" / f"{job}.skops")
    median = pipeline[0]["impute"].statistics_[0]
    (tmp_path / "new.csv").write_text("a,b,colour\n,0.5,red\n" + f"{median},0.5,red\n")
    result = cli("predict", imputed_run, "--job", job, "--data", tmp_path / "new.csv",
                 "--out", tmp_path / "p.csv")
    assert result.exit_code == 0, result.output
    out = pd.read_csv(tmp_path / "p.csv")
    assert out["proba_1"].iloc[0] == pytest.approx(out["proba_1"].iloc[1])


def test_empty_cells_without_imputation_are_refused_with_the_way_out(tmp_path, cli):
    _csv().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC.format(preprocess="standardize"))
    result = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs")
    assert result.exit_code == 2 and "Traceback" not in result.output
    (line,) = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "column 'a' has an empty cell" in line and "preprocess: {impute: median}" in line
    assert not (tmp_path / "runs").exists()


def test_an_empty_text_cell_is_not_imputed(tmp_path, cli):
    frame = _csv()
    frame.loc[5, "colour"] = np.nan
    frame.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC.format(preprocess="{impute: most_frequent}"))
    result = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs")
    assert result.exit_code == 2, result.output
    assert "column 'colour' has an empty cell at line 7" in result.stderr


def test_skip_bad_rows_scores_the_good_rows_and_names_the_bad_cells(imputed_run, tmp_path,
                                                                    cli):
    job = _job(imputed_run)
    rows = ("a,b,colour\n0.1,0.2,red\nx,0.3,blue\n0.4,inf,green\n,0.6,blue\n0.7,0.8,red\n")
    (tmp_path / "new.csv").write_text(rows)
    common = ("predict", imputed_run, "--job", job, "--data", tmp_path / "new.csv")
    refused = cli(*common, "--out", tmp_path / "p.csv")
    assert refused.exit_code == 2 and not (tmp_path / "p.csv").exists()
    assert "column 'a' at line 3 holds 'x', not a number" in refused.stderr
    assert "--skip-bad-rows" in refused.stderr
    result = cli(*common, "--out", tmp_path / "p.csv", "--skip-bad-rows", "--bad-rows",
                 tmp_path / "bad.csv")
    assert result.exit_code == 0, result.output
    bad = pd.read_csv(tmp_path / "bad.csv")
    assert bad[["line", "column"]].values.tolist() == [[3, "a"], [4, "b"], [4, "colour"]]
    assert "not a number" in bad.reason[0] and "not seen in training" in bad.reason[2]
    assert "2 row(s) skipped, 3 problem(s) listed in" in result.stderr
    out = pd.read_csv(tmp_path / "p.csv")
    assert out["a"].tolist()[0::2] == [0.1, 0.7] and len(out) == 3  # lines 2, 5, 6
    # the good rows are scored as they would be alone
    (tmp_path / "good.csv").write_text("a,b,colour\n0.1,0.2,red\n,0.6,blue\n0.7,0.8,red\n")
    alone = cli("predict", imputed_run, "--job", job, "--data", tmp_path / "good.csv",
                "--out", tmp_path / "alone.csv")
    assert alone.exit_code == 0, alone.output
    assert pd.read_csv(tmp_path / "alone.csv").equals(out)
    # without --bad-rows the table is on stderr
    shown = cli(*common, "--out", tmp_path / "p2.csv", "--skip-bad-rows")
    assert shown.exit_code == 0 and "holds 'green'" in shown.stderr


def test_deploy_refits_an_uncertified_method_on_all_rows(imputed_run, tmp_path, cli):
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from safeclf.store.models import load

    out = tmp_path / "model"
    result = cli("deploy", imputed_run, "--method", "logreg", "--out", out)
    assert result.exit_code == 0, result.output
    assert "refitted on all rows, train 240" in result.stdout
    meta = json.loads((out / "model.json").read_text())
    record = meta["deployment"]
    assert record["refit"] is True and record["seed"] == 0 and record["params"] == {}
    assert record["rows"] == {"train": 240}
    data = imputed_run.parent.parent / "data.csv"
    assert record["data"][0]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert set(record["evidence"]["jobs"]) == set(pd.read_csv(
        imputed_run / "metrics.csv").query("method == 'logreg'").job)
    # the same as fitting the pipeline by hand on every row
    frame = pd.read_csv(data)
    X = pd.get_dummies(frame[["a", "b", "colour"]], dtype=float).to_numpy()
    filled = SimpleImputer(strategy="median").fit_transform(X)
    by_hand = LogisticRegression(random_state=0).fit(
        StandardScaler().fit_transform(filled), frame.y)
    model = load(out / "model.skops")
    assert model[-1].coef_ == pytest.approx(by_hand.coef_, rel=1e-6)
    # predict takes the deployed folder without --job
    (tmp_path / "new.csv").write_text("a,b,colour\n,0.5,red\n1.0,-0.5,blue\n")
    pred = cli("predict", out, "--data", tmp_path / "new.csv", "--out", tmp_path / "p.csv")
    assert pred.exit_code == 0, pred.output
    assert len(pd.read_csv(tmp_path / "p.csv")) == 2


def test_deploy_asks_which_parameter_point_of_a_grid(imputed_run, tmp_path, cli):
    result = cli("deploy", imputed_run, "--method", "svm", "--out", tmp_path / "m")
    assert result.exit_code == 2 and "ran at 2 parameter points" in result.stderr
    assert not (tmp_path / "m").exists()
    table = pd.read_csv(imputed_run / "metrics.csv")
    job = table.loc[(table.method == "svm") & (table["param.C"] == 1.0), "job"].iloc[0]
    chosen = cli("deploy", imputed_run, "--method", "svm", "--job", job, "--out",
                 tmp_path / "m")
    assert chosen.exit_code == 0, chosen.output
    record = json.loads((tmp_path / "m" / "model.json").read_text())["deployment"]
    assert record["params"] == {"C": 1.0} and record["job"] == job


# the certified ramp run that the audit and load_model tests deploy (tests/audited_model.py)
CERTIFIED = AUDITED_SPEC


def test_deploy_copies_a_certified_model_and_says_why(tmp_path, cli):
    X, y, g = two_groups(1500, 3)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "sex": g, "y": y}).to_csv(
        tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(CERTIFIED)
    ran = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs", "-j", "1")
    assert ran.exit_code == 0, ran.output
    (run,) = (tmp_path / "runs").iterdir()
    table = pd.read_csv(run / "metrics.csv")
    solved = table[table.status == "ok"].sort_values("seed")
    assert len(solved), table[["status", "error"]]
    result = cli("deploy", run, "--out", tmp_path / "model")
    assert result.exit_code == 0, result.output
    assert "not refitted" in result.stdout and "void its certificate" in result.stdout
    job = solved.job.iloc[0]
    assert (tmp_path / "model" / "model.skops").read_bytes() == \
        (run / "models" / f"{job}.skops").read_bytes()
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert meta["deployment"]["refit"] is False and meta["deployment"]["job"] == job
    assert meta["deployment"]["certificate"] == meta["certificate"]
    assert meta["certificate"]["delta"] == 0.05


DEPLOY_BAD = [
    ("out-not-empty", lambda run, tmp: ["--method", "logreg", "--out", tmp / "full"],
     "is a folder that is not empty"),
    ("out-a-file", lambda run, tmp: ["--method", "logreg", "--out", tmp / "file.txt"],
     "is a regular file; give a folder"),
    ("out-parent-missing", lambda run, tmp: ["--method", "logreg", "--out", tmp / "no" / "m"],
     "does not exist"),
    ("unknown-method", lambda run, tmp: ["--method", "logreq", "--out", tmp / "m"],
     "no method named 'logreq' in the run (logreg, svm) (did you mean 'logreg'?)"),
    ("method-needed", lambda run, tmp: ["--out", tmp / "m"], "the run has 2 methods"),
    ("unknown-dataset", lambda run, tmp: ["--method", "logreg", "--dataset", "iris", "--out",
                                          tmp / "m"],
     "no dataset of method 'logreg' named 'iris' in the run (csv)"),
    ("unknown-job", lambda run, tmp: ["--method", "logreg", "--job", "nope", "--out", tmp / "m"],
     "no job 'nope' of method 'logreg'"),
    ("no-out", lambda run, tmp: ["--method", "logreg"], "Missing option '--out'"),
    ("not-a-run", lambda run, tmp: ["--method", "logreg", "--out", tmp / "m"],
     "is not a finished run folder"),
]


@pytest.mark.parametrize("case", DEPLOY_BAD, ids=[c[0] for c in DEPLOY_BAD])
def test_deploy_bad_inputs_are_one_line(case, imputed_run, tmp_path, cli):
    name, args, fragment = case
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("mine\n")
    (tmp_path / "file.txt").write_text("mine\n")
    (tmp_path / "empty-run").mkdir()
    run = tmp_path / "empty-run" if name == "not-a-run" else imputed_run
    before = sorted(p.name for p in tmp_path.rglob("*"))
    result = cli("deploy", run, *args(run, tmp_path))
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "full" / "mine.txt").read_text() == "mine\n"


def test_deploy_refuses_data_changed_since_the_run(imputed_run, tmp_path, cli):
    import shutil

    base = tmp_path / "copy"
    shutil.copytree(imputed_run.parent.parent, base)
    (run,) = (base / "runs").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["data"][0]["path"] = str(base / "data.csv")
    (run / "manifest.json").write_text(json.dumps(manifest))
    with open(base / "data.csv", "a") as fh:
        fh.write("0.1,0.2,red,M,1\n")
    result = cli("deploy", run, "--method", "logreg", "--out", tmp_path / "m")
    assert result.exit_code == 2 and "changed since the run" in result.stderr
    assert not (tmp_path / "m").exists()


PREDICT_BAD = [
    ("bad-rows-without-skip", ["--bad-rows", "{tmp}/bad.csv"], "only with --skip-bad-rows"),
    ("bad-rows-is-out", ["--skip-bad-rows", "--bad-rows", "{tmp}/p.csv"],
     "give another file than --out"),
    ("bad-rows-a-folder", ["--skip-bad-rows", "--bad-rows", "{tmp}"], "--bad-rows"),
    ("bad-rows-parent-missing", ["--skip-bad-rows", "--bad-rows", "{tmp}/no/bad.csv"],
     "--bad-rows: folder"),
    ("no-row-good", ["--skip-bad-rows", "--data", "{tmp}/allbad.csv"],
     "no row can be scored (2 rows; the first problem: column 'a' at line 2"),
    ("no-job-for-a-run", ["--no-job"], "holds no deployed model (model.skops); give --job"),
]


@pytest.mark.parametrize("case", PREDICT_BAD, ids=[c[0] for c in PREDICT_BAD])
def test_predict_bad_inputs_of_the_new_options(case, imputed_run, tmp_path, cli):
    name, extra, fragment = case
    (tmp_path / "new.csv").write_text("a,b,colour\n0.1,0.2,red\n")
    (tmp_path / "allbad.csv").write_text("a,b,colour\nx,0.2,red\n0.1,0.2,green\n")
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]
    job = [] if "--no-job" in extra else ["--job", _job(imputed_run)]
    extra = [e for e in extra if e != "--no-job"]
    data = [] if "--data" in extra else ["--data", tmp_path / "new.csv"]
    before = sorted(p.name for p in tmp_path.iterdir())
    result = cli("predict", imputed_run, *job, *data, "--out", tmp_path / "p.csv", *extra)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_spec_refuses_an_unknown_imputation(tmp_path, cli):
    _csv().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.yaml").write_text(SPEC.format(preprocess="{impute: mode}"))
    result = cli("validate", tmp_path / "spec.yaml")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "datasets[0].preprocess.impute must be 'median', 'mean' or 'most_frequent', got " \
        "'mode'" in result.stderr


@pytest.mark.parametrize("case,preprocess,params,fragment", [
    ("keep-empty-without-impute", "standardize", ", keep_empty: true",
     "feature column 'a' has empty cells and preprocess 'standardize' does not fill them"),
    ("a-column-never-filled", "{impute: mean}", "",
     "feature column 'a' is empty in every training row; nothing to impute it from"),
])
def test_imputation_that_cannot_work_is_one_line_before_running(case, preprocess, params,
                                                                fragment, tmp_path, cli):
    frame = _csv()
    if case == "a-column-never-filled":
        frame["a"] = np.nan
    frame.to_csv(tmp_path / "data.csv", index=False)
    text = SPEC.format(preprocess=preprocess).replace("privileged: M}",
                                                      "privileged: M" + params + "}")
    (tmp_path / "spec.yaml").write_text(text)
    result = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not (tmp_path / "runs").exists()


def _deployed_C(out):
    """The C the deployed model holds and the C its record says, for a deployed svm."""
    from safeclf.store.models import load

    record = json.loads((out / "model.json").read_text())["deployment"]
    return load(out / "model.skops")[-1].C, record["params"]["C"]


def _svm_jobs(run):
    table = pd.read_csv(run / "metrics.csv").query("method == 'svm' and seed == 0")
    return {json.loads(p)["C"]: j for p, j in zip(table.params, table.job)}


def test_a_deploy_that_finishes_second_into_the_same_folder_keeps_nothing(
        imputed_run, tmp_path, cli, monkeypatch):
    """Deterministic interleaving: while the first deploy writes, a second one into the same
    --out runs to the end; the first is then refused whole, the folder is the second's."""
    from safeclf.serve import deploy as mod

    jobs, out, real, seen = _svm_jobs(imputed_run), tmp_path / "m", mod._refit, []

    def refit_then_race(*args, **kw):
        done = real(*args, **kw)
        if not seen:
            seen.append(None)  # the second deploy's own refit does not race again
            seen[0] = cli("deploy", imputed_run, "--method", "svm", "--job", jobs[1.0],
                          "--out", out)
        return done

    monkeypatch.setattr(mod, "_refit", refit_then_race)
    first = cli("deploy", imputed_run, "--method", "svm", "--job", jobs[0.1], "--out", out)
    assert seen[0].exit_code == 0, seen[0].output
    assert first.exit_code == 2 and "written by another deploy" in first.stderr, first.output
    assert len([x for x in first.stderr.splitlines() if x.strip()]) == 1
    assert _deployed_C(out) == (1.0, 1.0)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_two_deploy_processes_into_one_folder_never_mix(imputed_run, tmp_path):
    import os
    import subprocess
    import sys

    jobs = _svm_jobs(imputed_run)
    exe = os.path.join(os.path.dirname(sys.executable), "safeclf")
    for attempt in range(2):
        out = tmp_path / f"m{attempt}"
        procs = [subprocess.Popen([exe, "deploy", str(imputed_run), "--method", "svm", "--job",
                                   jobs[c], "--out", str(out)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for c in (0.1, 1.0)]
        codes = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
        assert sorted(c for c, _ in codes) == [0, 2], codes
        assert all(len(e.strip().splitlines()) == 1 for c, e in codes if c == 2), codes
        held, said = _deployed_C(out)
        assert held == said and sorted(p.name for p in out.iterdir()) == ["model.json",
                                                                         "model.skops"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
