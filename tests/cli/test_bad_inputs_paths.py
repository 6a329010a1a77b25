"""The catalogue of hostile and careless paths (issue 36, items 2, 3 and the paths of 6): a run
folder, or a deployed model's folder, is data. ``report``, ``compare``, ``deploy``, ``predict``
and ``--resume`` read only files inside it (a symlink out of it, a job name with a path in it,
is refused); an output that is one of the command's inputs, or lies inside the folder it
reads, is refused; a place where nothing can be written is said before anything is. Each case
asserts exit code 2, exactly one ``error:`` line naming the problem, no traceback, and that
nothing under the test's folder changed (the input files' bytes included)."""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_bad_inputs import BASE, run_and_validate
from test_bad_inputs_runtime import _one_error_line, _snapshot

pytest.importorskip("skops")

SPEC = """
name: paths
seeds: 1
save_models: true
datasets:
  - dataset: csv
    params: {path: data.csv, target: y}
methods:
  - method: logreg
  - method: logreg
    name: cert
    promises: [{rate: fpr, max: 0.3}]
    certify: {delta: 0.1, fraction: 0.3, how: threshold}
plots:
  - {kind: bar, metric: test_error}
"""

#: the content of the file outside the run that a hostile folder points to
SECRET = "SECRET-MARKER-7f3a9 the reader's private file\n"


def _data(n: int = 400) -> str:
    import numpy as np

    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    a, b = rng.normal(y, 1.0), rng.normal(-y, 1.0)
    return "a,b,y\n" + "".join(f"{u:.3f},{v:.3f},{t}\n" for u, v, t in zip(a, b, y))


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One finished run (a plain and a certified logreg, models saved, plots drawn) and the
    certified model deployed from it, made once for the module."""
    from audited_model import deploy, run_spec

    base = tmp_path_factory.mktemp("paths-catalogue")
    (base / "data.csv").write_text(_data())
    run = run_spec(base, SPEC)
    table = pd.read_csv(run / "metrics.csv")
    assert set(table.status) == {"ok"}, table[["method", "status", "error"]]
    jobs = dict(zip(table.method, table.job))
    return {"run": run, "deployed": deploy(run, base / "deployed", "--method", "cert"),
            "jobs": jobs}


class Case:
    """The per-test copies a case works on: ``run`` and ``deployed`` (copies of the module's),
    ``new.csv`` (rows to predict), ``outside/secret.txt`` (a file that is no file of the run),
    ``outside/`` also holding copies of the run's parts, for links that point to real data."""

    def __init__(self, tmp: Path, made: dict):
        self.tmp = tmp
        self.original = made["run"]
        self.run = Path(shutil.copytree(made["run"], tmp / "run", symlinks=True))
        self.deployed = Path(shutil.copytree(made["deployed"], tmp / "deployed", symlinks=True))
        self.job, self.cert = made["jobs"]["logreg"], made["jobs"]["cert"]
        self.new = tmp / "new.csv"
        self.new.write_text("a,b\n0.1,0.2\n1.5,-0.3\n")
        self.outside = tmp / "outside"
        self.outside.mkdir()
        self.secret = self.outside / "secret.txt"
        self.secret.write_text(SECRET)

    def move_out(self, name: str) -> Path:
        """Move the run's ``name`` (file or folder) outside and leave a symlink to it."""
        target = self.outside / name.replace("/", "_")
        shutil.move(self.run / name, target)
        (self.run / name).symlink_to(target, target_is_directory=target.is_dir())
        return target

    def link(self, name: str, target: Path | str) -> Path:
        """Replace the run's ``name`` (if any) by a symlink to ``target``."""
        path = self.run / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)
        return path

    def predict(self, *extra, job=None, out=None, data=None, folder=None):
        folder = self.run if folder is None else folder
        job = [] if folder == self.deployed else ["--job", self.job if job is None else job]
        return ["predict", folder, *job, "--data", self.new if data is None else data,
                "--out", self.tmp / "p.csv" if out is None else out, *extra]


SYMLINK_OUT = "is a symlink to"
SHADOW = "/etc/shadow"


def _shadow(c: Case, name: str) -> str:
    c.link(name, SHADOW)
    return f"{SYMLINK_OUT} '{SHADOW}'"


CASES = [
    # (id, make(case) -> (args, fragment)): every file a command reads is one of the folder
    ("report-svg-plot-to-shadow", lambda c: (["report", c.run],
                                             _shadow(c, "plots/bar_test_error.svg"))),
    ("report-png-plot-to-shadow", lambda c: (["report", c.run], _shadow(c, "plots/extra.png"))),
    ("report-plot-to-outside-file", lambda c: (
        ["report", c.run], (c.link("plots/bar_test_error.svg", c.secret),
                            f"{SYMLINK_OUT} '{c.secret}'")[1])),
    ("report-plots-folder-symlinked", lambda c: (["report", c.run],
                                                 (c.move_out("plots"), "/plots' " + SYMLINK_OUT)[1])),
    ("report-spec-symlinked-out", lambda c: (["report", c.run],
                                             (c.move_out("spec.yaml"), "spec.yaml' " + SYMLINK_OUT)[1])),
    ("report-spec-to-shadow", lambda c: (["report", c.run], _shadow(c, "spec.yaml"))),
    ("report-manifest-symlinked-out", lambda c: (
        ["report", c.run], (c.move_out("manifest.json"), "manifest.json' " + SYMLINK_OUT)[1])),
    ("report-metrics-symlinked-out", lambda c: (
        ["report", c.run], (c.move_out("metrics.parquet"), "metrics.parquet' " + SYMLINK_OUT)[1])),
    ("report-summary-symlinked-out", lambda c: (
        ["report", c.run], (c.move_out("summary.csv"), "summary.csv' " + SYMLINK_OUT)[1])),
    ("report-promises-symlinked-out", lambda c: (
        ["report", c.run], (c.move_out("promises.csv"), "promises.csv' " + SYMLINK_OUT)[1])),
    ("report-by-group-to-shadow", lambda c: (["report", c.run], _shadow(c, "by_group.csv"))),
    ("report-run-folder-in-a-symlinked-parent-with-plot-out", lambda c: (
        ["report", (c.tmp / "alias").symlink_to(c.run) or c.tmp / "alias"],
        _shadow(c, "plots/bar_test_error.png"))),
    ("compare-metrics-symlinked-out", lambda c: (
        ["compare", c.run], (c.move_out("metrics.parquet"), "metrics.parquet' " + SYMLINK_OUT)[1])),
    ("compare-csv-table-to-shadow", lambda c: (
        ["compare", c.run], ((c.run / "metrics.parquet").unlink(),
                             _shadow(c, "metrics.csv"))[1])),
    ("compare-manifest-to-shadow", lambda c: (["compare", c.run], _shadow(c, "manifest.json"))),
    ("compare-second-run-symlinked-out", lambda c: (
        ["compare", c.original, c.run],
        (c.move_out("spec.yaml"), "spec.yaml' " + SYMLINK_OUT)[1])),
    ("compare-promises-symlinked-out", lambda c: (
        ["compare", c.run, "--promises"],
        (c.move_out("promises.csv"), "promises.csv' " + SYMLINK_OUT)[1])),
    ("predict-job-climbs", lambda c: (c.predict(job="../../../x"),
                                      "--job: '../../../x' is not a plain name")),
    ("predict-job-climbs-to-a-real-model", lambda c: (
        c.predict(job="../../deployed/model"), "--job: '../../deployed/model' is not a plain")),
    ("predict-job-absolute", lambda c: (c.predict(job="/etc/passwd"),
                                        "--job: '/etc/passwd' is not a plain name")),
    ("predict-job-dot-dot", lambda c: (c.predict(job=".."), "--job: '..' is not a plain name")),
    ("predict-job-dot", lambda c: (c.predict(job="."), "--job: '.' is not a plain name")),
    ("predict-job-empty", lambda c: (c.predict(job=""), "--job: '' is not a plain name")),
    ("predict-models-folder-symlinked", lambda c: (
        c.predict(), (c.move_out("models"), "/models' " + SYMLINK_OUT)[1])),
    ("predict-model-file-symlinked-out", lambda c: (
        c.predict(), (c.move_out(f"models/{c.job}.skops"), f"{c.job}.skops' {SYMLINK_OUT}")[1])),
    ("predict-model-file-to-shadow", lambda c: (c.predict(),
                                                _shadow(c, f"models/{c.job}.skops"))),
    ("predict-metadata-symlinked-out", lambda c: (
        c.predict(), (c.move_out(f"models/{c.job}.json"), f"{c.job}.json' {SYMLINK_OUT}")[1])),
    ("predict-deployed-model-symlinked-out", lambda c: (
        c.predict(folder=c.deployed),
        ((c.deployed / "model.skops").rename(c.outside / "m.skops"),
         (c.deployed / "model.skops").symlink_to(c.outside / "m.skops"),
         f"model.skops' {SYMLINK_OUT}")[2])),
    ("predict-deployed-metadata-to-shadow", lambda c: (
        c.predict(folder=c.deployed),
        ((c.deployed / "model.json").unlink(), (c.deployed / "model.json").symlink_to(SHADOW),
         f"{SYMLINK_OUT} '{SHADOW}'")[2])),
    ("deploy-models-folder-symlinked", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", c.tmp / "d"],
        (c.move_out("models"), "/models' " + SYMLINK_OUT)[1])),
    ("deploy-certified-model-symlinked-out", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", c.tmp / "d"],
        (c.move_out(f"models/{c.cert}.skops"), f"{c.cert}.skops' {SYMLINK_OUT}")[1])),
    ("deploy-table-job-climbs", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", c.tmp / "d"], _table_job(c, "../../x"))),
    ("deploy-table-job-absolute", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", c.tmp / "d"], _table_job(c, "/etc/x"))),
    ("deploy-metrics-symlinked-out", lambda c: (
        ["deploy", c.run, "--method", "logreg", "--out", c.tmp / "d"],
        (c.move_out("metrics.parquet"), "metrics.parquet' " + SYMLINK_OUT)[1])),
    ("deploy-spec-to-shadow", lambda c: (["deploy", c.run, "--method", "logreg", "--out",
                                          c.tmp / "d"], _shadow(c, "spec.yaml"))),
    ("resume-results-symlinked-out", lambda c: (
        ["run", "--resume", c.run], (c.move_out("results"), "/results' " + SYMLINK_OUT)[1])),
    ("resume-models-symlinked-out", lambda c: (
        ["run", "--resume", c.run], (c.move_out("models"), "/models' " + SYMLINK_OUT)[1])),
    ("resume-plots-symlinked-out", lambda c: (
        ["run", "--resume", c.run], (c.move_out("plots"), "/plots' " + SYMLINK_OUT)[1])),
    ("resume-record-symlinked-out", lambda c: (
        ["run", "--resume", c.run],
        (c.move_out(f"results/{c.job}.json"), f"{c.job}.json' {SYMLINK_OUT}")[1])),
    ("resume-plot-to-shadow", lambda c: (["run", "--resume", c.run],
                                         _shadow(c, "plots/bar_test_error.png"))),
    ("resume-spec-symlinked-out", lambda c: (
        ["run", "--resume", c.run], (c.move_out("spec.yaml"), "spec.yaml' " + SYMLINK_OUT)[1])),
    ("resume-manifest-symlinked-out", lambda c: (
        ["run", "--resume", c.run],
        (c.move_out("manifest.json"), "manifest.json' " + SYMLINK_OUT)[1])),
    ("resume-table-to-outside-file", lambda c: (
        ["run", "--resume", c.run], (c.link("metrics.csv", c.secret),
                                     f"{SYMLINK_OUT} '{c.secret}'")[1])),
    ("resume-manifest-names-dev-zero-as-data", lambda c: (
        ["run", "--resume", c.run], _manifest_data(c, "/dev/zero"))),
    ("resume-manifest-names-a-fifo-as-data", lambda c: (
        ["run", "--resume", c.run], _manifest_data(c, (os.mkfifo(c.tmp / "fifo"), c.tmp / "fifo")[1]))),
    # no input overwritten
    ("predict-out-is-data", lambda c: (c.predict(out=c.new),
                                       f"--out '{c.new}' is the --data file")),
    ("predict-out-is-data-through-a-symlink", lambda c: (
        c.predict(out=_symlink(c.tmp / "o.csv", c.new)), "is the --data file")),
    ("predict-out-is-data-through-a-hard-link", lambda c: (
        c.predict(out=(os.link(c.new, c.tmp / "h.csv"), c.tmp / "h.csv")[1]), "is the --data file")),
    ("predict-out-is-the-model-through-a-symlink", lambda c: (
        c.predict(out=_symlink(c.tmp / "o.csv", c.run / "models" / f"{c.job}.skops")),
        "is the model file")),
    ("predict-out-is-the-metadata", lambda c: (
        c.predict(out=c.run / "models" / f"{c.job}.json"), "is the model's metadata")),
    ("predict-out-new-file-in-the-run", lambda c: (
        c.predict(out=c.run / "predictions.csv"), "is inside the run folder")),
    ("predict-out-is-the-runs-table", lambda c: (
        c.predict(out=c.run / "metrics.csv"), "is inside the run folder")),
    ("predict-out-into-the-run-through-a-symlinked-folder", lambda c: (
        c.predict(out=_symlink(c.tmp / "into-run", c.run) / "p.csv"), "is inside the run folder")),
    ("predict-out-in-the-deployed-folder", lambda c: (
        c.predict(folder=c.deployed, out=c.deployed / "p.csv"),
        "is inside the deployed model's folder")),
    ("predict-out-is-the-deployed-model", lambda c: (
        c.predict(folder=c.deployed, out=c.deployed / "model.skops"), "is the model file")),
    ("predict-bad-rows-is-data", lambda c: (
        c.predict("--skip-bad-rows", "--bad-rows", c.new),
        f"--bad-rows '{c.new}' is the --data file")),
    ("predict-bad-rows-in-the-run", lambda c: (
        c.predict("--skip-bad-rows", "--bad-rows", c.run / "bad.csv"),
        "--bad-rows '" + str(c.run / "bad.csv") + "' is inside the run folder")),
    ("predict-bad-rows-into-proc", lambda c: (
        c.predict("--skip-bad-rows", "--bad-rows", "/proc/bad.csv"),
        "--bad-rows '/proc/bad.csv' cannot be written")),
    ("predict-bad-rows-into-sys", lambda c: (
        c.predict("--skip-bad-rows", "--bad-rows", "/sys/bad.csv"),
        "--bad-rows '/sys/bad.csv' cannot be written")),
    ("predict-out-into-proc", lambda c: (c.predict(out="/proc/p.csv"),
                                         "--out '/proc/p.csv' cannot be written")),
    ("predict-out-into-proc-with-bad-rows", lambda c: (
        c.predict("--skip-bad-rows", "--bad-rows", c.tmp / "bad.csv", out="/proc/p.csv"),
        "--out '/proc/p.csv' cannot be written")),
    ("deploy-out-inside-the-run", lambda c: (
        ["deploy", c.run, "--method", "logreg", "--out", c.run / "deployed"],
        "is inside the run folder")),
    ("deploy-out-is-an-empty-folder-of-the-run", lambda c: (
        ["deploy", c.run, "--method", "logreg", "--out", (c.run / "empty").mkdir() or c.run / "empty"],
        "is inside the run folder")),
    ("deploy-out-into-the-run-through-a-symlink", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", _symlink(c.tmp / "alias", c.run) / "d"],
        "is inside the run folder")),
    ("deploy-out-is-the-run", lambda c: (
        ["deploy", c.run, "--method", "logreg", "--out", c.run], "is a folder that is not empty")),
    ("deploy-out-into-proc", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", "/proc/x"],
        "--out: cannot create folder '/proc/x': folder '/proc' is not writable")),
    ("deploy-out-into-sys", lambda c: (
        ["deploy", c.run, "--method", "logreg", "--out", "/sys/x"],
        "--out: cannot create folder '/sys/x': folder '/sys' is not writable")),
    ("deploy-out-is-proc", lambda c: (
        ["deploy", c.run, "--method", "cert", "--out", "/proc"], "is a folder that is not empty")),
]


def _symlink(path: Path, target: Path) -> Path:
    path.symlink_to(target)
    return path


def _manifest_data(c: Case, path) -> str:
    """The manifest's data file replaced by ``path`` (a device or a FIFO, never read)."""
    import json

    manifest = json.loads((c.run / "manifest.json").read_text())
    manifest["data"][0]["path"] = str(path)
    (c.run / "manifest.json").write_text(json.dumps(manifest))
    return f"data file '{path}' of dataset 'csv' can no longer be read"


def _table_job(c: Case, job: str) -> str:
    """The metrics table's job of the certified method replaced by ``job`` (a forged record)."""
    (c.run / "metrics.parquet").unlink()
    table = pd.read_csv(c.run / "metrics.csv")
    table.loc[table.method == "cert", "job"] = job
    table.to_csv(c.run / "metrics.csv", index=False)
    return f"metrics.csv: job '{job}' is not a plain name"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_paths_are_refused(case, made, tmp_path, cli):
    _, make = case
    c = Case(tmp_path, made)
    args, fragment = make(c)
    before = _snapshot(tmp_path)
    result = cli(*args)
    line = _one_error_line(result, 2, fragment)
    assert SECRET.strip() not in result.output and "root:" not in result.output, line
    assert _snapshot(tmp_path) == before, "a refused command must write nothing"
    assert c.secret.read_text() == SECRET


@pytest.mark.parametrize("option", ["--out", "--mlflow"])
@pytest.mark.parametrize("where", ["/proc/x", "/sys/x"])
def test_run_into_an_unwritable_place(option, where, tmp_path, cli, monkeypatch):
    """``run`` and ``validate`` say it in one line, exit 2, before a folder is made (os.access
    says yes to root in /proc and /sys: the check tries)."""
    if option == "--mlflow":
        pytest.importorskip("mlflow")
    monkeypatch.chdir(tmp_path)
    extra = [option, where] if option == "--out" else [option, where, "--out", tmp_path / "runs"]
    line = run_and_validate(cli, tmp_path, BASE, extra, 2, f"{option}: cannot create")
    assert f"'{where}'" in line and "not writable" in line


def test_report_embeds_nothing_of_a_file_outside_the_run(made, tmp_path, cli):
    """A run folder whose plot is a symlink to a file outside it: ``safeclf report`` refuses
    it in one line, and report.html holds neither the file's text nor its base64 (the form a
    plot is embedded in), before or after; the Python API refuses it the same way."""
    from safeclf import api
    from safeclf.errors import SpecError
    from safeclf.report import html as report

    c = Case(tmp_path, made)
    secret = SECRET.encode() * 50  # long enough that any embedding of it would show
    c.secret.write_bytes(secret)
    c.link("plots/bar_test_error.svg", c.secret)
    c.link("plots/stolen.png", c.secret)
    result = cli("report", c.run)
    _one_error_line(result, 2, f"{SYMLINK_OUT} '{c.secret}'")
    page = (c.run / "report.html").read_text()  # the one the run wrote, untouched
    assert page == (made["run"] / "report.html").read_text()
    encoded = base64.b64encode(secret).decode()
    for text in (page, result.output):
        assert SECRET.strip() not in text and encoded[:64] not in text
    with pytest.raises(SpecError, match="is a symlink to"):
        report.save(c.run)
    with pytest.raises(SpecError, match="is a symlink to"):
        api.load_run(c.run)
    # control: the same folder with the link replaced by the run's own plot is reported
    (c.run / "plots" / "stolen.png").unlink()
    (c.run / "plots" / "bar_test_error.svg").unlink()
    shutil.copy(made["run"] / "plots" / "bar_test_error.svg", c.run / "plots")
    assert cli("report", c.run).exit_code == 0
    page = (c.run / "report.html").read_text()
    own = base64.b64encode((c.run / "plots" / "bar_test_error.svg").read_bytes()).decode()
    assert own in page and SECRET.strip() not in page


def test_without_the_check_the_plot_would_be_embedded(made, tmp_path, monkeypatch):
    """The report test's premise: a symlinked plot is what the renderer would embed."""
    from safeclf import api
    from safeclf._utils import paths
    from safeclf.report import html as report

    c = Case(tmp_path, made)
    c.link("plots/bar_test_error.svg", c.secret)
    monkeypatch.setattr(report, "inside", lambda folder, *names, what="": Path(folder, *names))
    monkeypatch.setattr(paths, "inside", lambda folder, *names, what="": Path(folder, *names))
    page = report.render(api.load_run(c.run))
    assert base64.b64encode(SECRET.encode()).decode() in page


def test_ordinary_links_are_not_refused(made, tmp_path, cli):
    """A run folder reached through a symlink (``runs/latest``), and a symlink inside it to
    another of its files, are the run's own files: reported, compared, predicted from."""
    c = Case(tmp_path, made)
    latest = _symlink(tmp_path / "latest", c.run)
    svg = c.run / "plots" / "bar_test_error.svg"
    svg.rename(c.run / "kept.svg")
    svg.symlink_to(Path("..") / "kept.svg")
    assert cli("report", latest).exit_code == 0
    assert cli("compare", latest, c.run).exit_code == 0
    done = cli("predict", latest, "--job", c.job, "--data", c.new, "--out", tmp_path / "p.csv")
    assert done.exit_code == 0, done.output
    assert len(pd.read_csv(tmp_path / "p.csv")) == 2
    assert cli("predict", c.deployed, "--data", c.new, "--out", tmp_path / "q.csv").exit_code == 0


def test_predict_writes_both_files_or_neither(tmp_path, monkeypatch):
    """--out and --bad-rows are written together: when the second cannot be written after the
    checks passed (a disk that fills), the first is not replaced either."""
    from safeclf.store import folder as run_folder

    first, second = tmp_path / "p.csv", tmp_path / "bad.csv"
    first.write_text("old\n")
    real = run_folder._temp_beside

    def full(path):
        if path == second:
            raise OSError(28, "No space left on device")
        return real(path)

    monkeypatch.setattr(run_folder, "_temp_beside", full)
    with pytest.raises(run_folder.WriteError, match="No space left") as err:
        run_folder.atomic_write_all([(first, "new\n"), (second, "bad\n")])
    assert err.value.path == second
    assert first.read_text() == "old\n" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv"]  # no temporary file left
