"""The catalogue of bad inputs met at run time (issue 20, items 4 and 5): usage errors of every
command, odd paths given as the spec or to --resume, compare on damaged and odd run folders,
a full disk while a run writes, an unwritable cache, and the umask. Each case asserts the exit
code, exactly one ``error: `` line on stderr (or the one documented warning), no traceback,
and that nothing was written or lost."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from interrupted import as_interrupted
from test_bad_inputs import BASE

CATALOGUE_SPEC = BASE.replace("seeds: 1", "seeds: 2") + "  - method: logreg\n"


def _one_error_line(result, code: int, fragment: str, ran: bool = False) -> str:
    """The harness of this catalogue: exit ``code``, no traceback, exactly one stderr line,
    starting with ``error: `` and holding ``fragment``; returns the line. ``ran``: jobs ran
    first, so progress lines are on stderr too (a terminal's bar "jobs ━━━ n done, ...", or
    in a log the plain "jobs: n/N finished (n done, ...)" lines)."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if ran:
        progress = [line for line in lines if line.startswith("jobs")]
        assert progress and all(" done, " in line for line in progress), result.stderr
        lines = [line for line in lines if not line.startswith("jobs")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _snapshot(folder: Path) -> dict:
    """Every path under ``folder`` (itself included) with its kind and content hash."""
    out = {}
    for p in [folder, *sorted(folder.rglob("*"))] if folder.is_dir() else []:
        if p.is_symlink():
            out[str(p)] = ("link", os.readlink(p))
        elif p.is_file():
            out[str(p)] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
        else:
            out[str(p)] = ("other", stat.S_IFMT(os.lstat(p).st_mode))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two finished runs of CATALOGUE_SPEC: ``good`` (every job ok) and ``failed`` (every
    job failed at fit: the svm and logreg plugins' fit raise), made once for the module."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app
    from safeclf.plugins.contract import MethodPlugin

    base = tmp_path_factory.mktemp("catalogue-runs")
    spec = base / "spec.yaml"
    spec.write_text(CATALOGUE_SPEC)
    made = {}
    for name in ("good", "failed"):
        with pytest.MonkeyPatch.context() as mp:
            if name == "failed":
                def fit(self, est, task):
                    raise ValueError("boom at fit")

                mp.setattr(MethodPlugin, "fit", fit)
            result = CliRunner().invoke(app, ["run", str(spec), "--out", str(base / name),
                                              "-j", "1", "--name", name])
        assert result.exit_code == (0 if name == "good" else 1), result.output
        (made[name],) = (base / name).iterdir()
    table = pd.read_csv(made["failed"] / "metrics.csv")
    assert len(table) == 4 and set(table["status"]) == {"failed"}
    return made


def _copy(run: Path, tmp_path: Path, name: str = "copy") -> Path:
    return Path(shutil.copytree(run, tmp_path / name, symlinks=True))


# --------------------------------------------------------------------------------------------
# usage errors: one line, exit 2, for every command

USAGE = [
    ("run-unknown-option", ["run", "{spec}", "--bogus"], "No such option: --bogus"),
    ("run-misspelt-option", ["run", "{spec}", "--jbos", "2"], "No such option: --jbos"),
    ("run-unknown-short-option", ["run", "{spec}", "-x"], "No such option: -x"),
    ("run-jobs-not-a-number", ["run", "{spec}", "-j", "abc"], "Invalid value for '--jobs'"),
    ("run-jobs-float", ["run", "{spec}", "--jobs", "1.5"], "Invalid value for '--jobs'"),
    ("run-jobs-no-value", ["run", "{spec}", "--jobs"], "'--jobs' requires an argument"),
    ("run-backend-unknown", ["run", "{spec}", "--backend", "spark"], "Invalid value for '--backend'"),
    ("run-out-no-value", ["run", "{spec}", "--out"], "'--out' requires an argument"),
    ("run-name-no-value", ["run", "{spec}", "--name"], "'--name' requires an argument"),
    ("run-resume-no-value", ["run", "--resume"], "'--resume' requires an argument"),
    ("run-scheduler-no-value", ["run", "{spec}", "--scheduler"], "'--scheduler' requires an argument"),
    ("run-profile-no-value", ["run", "{spec}", "--profile"], "'--profile' requires an argument"),
    ("run-mlflow-no-value", ["run", "{spec}", "--mlflow"], "'--mlflow' requires an argument"),
    ("run-mlflow-experiment-no-value", ["run", "{spec}", "--mlflow-experiment"],
     "'--mlflow-experiment' requires an argument"),
    ("run-dry-run-with-value", ["run", "{spec}", "--dry-run=yes"], "'--dry-run' does not take a value"),
    ("run-check-with-value", ["run", "{spec}", "--check=1"], "'--check' does not take a value"),
    ("run-debug-with-value", ["run", "{spec}", "--debug=no"], "'--debug' does not take a value"),
    ("compare-no-run", ["compare"], "Missing argument"),
    ("compare-unknown-option", ["compare", "{tmp}", "--bogus"], "No such option: --bogus"),
    ("compare-format-unknown", ["compare", "{tmp}", "--format", "xml"], "Invalid value for '--format'"),
    ("compare-metric-no-value", ["compare", "{tmp}", "--metric"], "'--metric' requires an argument"),
    ("compare-by-no-value", ["compare", "{tmp}", "--by"], "'--by' requires an argument"),
    ("compare-promises-with-value", ["compare", "{tmp}", "--promises=yes"],
     "'--promises' does not take a value"),
    ("predict-no-argument", ["predict"], "Missing argument"),
    ("predict-no-job", ["predict", "{tmp}", "--data", "d.csv", "--out", "o.csv"],
     "holds no deployed model (model.skops); give --job"),
    ("predict-skip-bad-rows-with-value", ["predict", "{tmp}", "--skip-bad-rows=1"],
     "'--skip-bad-rows' does not take a value"),
    ("predict-bad-rows-no-value", ["predict", "{tmp}", "--bad-rows"],
     "'--bad-rows' requires an argument"),
    ("deploy-no-argument", ["deploy"], "Missing argument"),
    ("deploy-no-out", ["deploy", "{tmp}", "--method", "m"], "Missing option '--out'"),
    ("deploy-unknown-option", ["deploy", "{tmp}", "--methd", "m"], "No such option: --methd"),
    ("deploy-method-no-value", ["deploy", "{tmp}", "--method"], "'--method' requires an argument"),
    ("deploy-two-runs", ["deploy", "{tmp}", "{tmp}", "--out", "m"], "unexpected extra argument"),
    ("deploy-allow-degenerate-with-value", ["deploy", "{tmp}", "--allow-degenerate=yes"],
     "'--allow-degenerate' does not take a value"),
    ("predict-no-data", ["predict", "{tmp}", "--job", "j", "--out", "o.csv"], "Missing option '--data'"),
    ("predict-no-out", ["predict", "{tmp}", "--job", "j", "--data", "d.csv"], "Missing option '--out'"),
    ("predict-unknown-option", ["predict", "{tmp}", "--jobb", "j"], "No such option: --jobb"),
    ("validate-no-spec", ["validate"], "Missing argument"),
    ("validate-unknown-option", ["validate", "{spec}", "--outt", "x"], "No such option: --outt"),
    ("validate-profile-no-value", ["validate", "{spec}", "--profile"], "'--profile' requires an argument"),
    ("run-allow-changed-data-with-value", ["run", "--resume", "{tmp}", "--allow-changed-data=1"],
     "'--allow-changed-data' does not take a value"),
    ("validate-jobs-not-a-number", ["validate", "{spec}", "-j", "two"], "Invalid value for '--jobs'"),
    ("validate-jobs-no-value", ["validate", "{spec}", "--jobs"], "'--jobs' requires an argument"),
    ("validate-backend-unknown", ["validate", "{spec}", "--backend", "ray"],
     "Invalid value for '--backend'"),
    ("validate-out-no-value", ["validate", "{spec}", "--out"], "'--out' requires an argument"),
    ("validate-name-no-value", ["validate", "{spec}", "--name"], "'--name' requires an argument"),
    ("validate-scheduler-no-value", ["validate", "{spec}", "--scheduler"],
     "'--scheduler' requires an argument"),
    ("validate-mlflow-no-value", ["validate", "{spec}", "--mlflow"], "'--mlflow' requires an argument"),
    ("validate-mlflow-experiment-no-value", ["validate", "{spec}", "--mlflow-experiment"],
     "'--mlflow-experiment' requires an argument"),
    ("compare-short-metric-no-value", ["compare", "{tmp}", "-m"], "'-m' requires an argument"),
    ("report-no-run", ["report"], "Missing argument"),
    ("report-unknown-option", ["report", "{tmp}", "--html"], "No such option: --html"),
    ("report-two-runs", ["report", "{tmp}", "{tmp}"], "unexpected extra argument"),
    ("methods-extra-argument", ["methods", "svm"], "unexpected extra argument"),
    ("methods-unknown-option", ["methods", "--all"], "No such option: --all"),
    ("schema-unknown-option", ["schema", "--yaml"], "No such option: --yaml"),
    ("datasets-extra-argument", ["datasets", "csv"], "unexpected extra argument"),
    ("datasets-unknown-option", ["datasets", "--all"], "No such option: --all"),
    ("schema-extra-argument", ["schema", "json"], "unexpected extra argument"),
    ("unknown-command", ["rnu", "{spec}"], "No such command 'rnu'"),
    ("top-level-unknown-option", ["--bogus", "run", "{spec}"], "No such option: --bogus"),
    ("no-command", ["--debug"], "Missing command"),
]


@pytest.mark.parametrize("case", USAGE, ids=[c[0] for c in USAGE])
def test_usage_error_is_one_line(case, cli, tmp_path, monkeypatch):
    _, args, fragment = case
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE)
    monkeypatch.chdir(tmp_path)  # a run that went ahead would write ./runs here
    before = _snapshot(tmp_path)
    result = cli(*[a.format(spec=spec, tmp=tmp_path) for a in args])
    line = _one_error_line(result, 2, fragment)
    assert "╭" not in result.output and "Usage:" not in result.output, line
    assert _snapshot(tmp_path) == before


def test_deploy_refuses_a_model_the_run_flagged_degenerate(cli, tmp_path, runs):
    """A run whose logreg jobs were flagged degenerate (metrics.csv's degenerate and
    degenerate_reason, as a run writes them): deploy refuses in one line naming the reason and
    --allow-degenerate, and writes nothing."""
    run = _copy(runs["good"], tmp_path)
    table = pd.read_csv(run / "metrics.csv")
    flagged = table["method"] == "logreg"
    table["degenerate"] = flagged.astype(float)
    table["degenerate_reason"] = flagged.map(
        {True: "predicts `setosa` for 100.0 % of the test rows", False: None})
    import pyarrow.parquet as pq

    from safeclf.store.folder import parquet_table

    table.to_csv(run / "metrics.csv", index=False)
    pq.write_table(parquet_table(table), run / "metrics.parquet")
    before = _snapshot(tmp_path)
    result = cli("deploy", run, "--method", "logreg", "--out", tmp_path / "model")
    line = _one_error_line(result, 2, "the method's model was degenerate on 2/2 seeds")
    assert "predicts `setosa` for 100.0 % of the test rows" in line
    assert "--allow-degenerate" in line
    assert _snapshot(tmp_path) == before


def test_no_arguments_still_print_the_help(cli):
    result = cli()
    assert "Usage" in result.output and "Commands" in result.output
    assert not any(line.startswith("error:") for line in result.output.splitlines())


# --------------------------------------------------------------------------------------------
# the spec path, for run and validate: what it is, said as it is


def _loop(tmp):
    a, b = tmp / "loop-a.yaml", tmp / "loop-b.yaml"
    a.symlink_to(b)
    b.symlink_to(a)
    return a


def _self_loop(tmp):
    a = tmp / "self.yaml"
    a.symlink_to(a)
    return a


def _fifo(tmp):
    path = tmp / "pipe.yaml"
    os.mkfifo(path)
    return path


def _socket(tmp):
    path = tmp / "sock.yaml"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    return path


def _dangling(tmp):
    path = tmp / "dangling.yaml"
    path.symlink_to(tmp / "gone.yaml")
    return path


def _through_a_file(tmp):
    (tmp / "plain").write_text("x")
    return tmp / "plain" / "spec.yaml"


def _folder(tmp):
    (tmp / "specs").mkdir()
    return tmp / "specs"


SPEC_PATHS = [
    ("dev-zero", lambda tmp: Path("/dev/zero"), "is a character device, not a regular file"),
    ("dev-null", lambda tmp: Path("/dev/null"), "is a character device, not a regular file"),
    ("fifo", _fifo, "is a FIFO (named pipe), not a regular file"),
    ("socket", _socket, "is a socket, not a regular file"),
    ("symlink-loop", _loop, "is a symlink loop, not a regular file"),
    ("symlink-to-itself", _self_loop, "is a symlink loop, not a regular file"),
    ("dangling-symlink", _dangling, "does not exist"),
    ("path-through-a-file", _through_a_file, "does not exist"),
    ("folder", _folder, "is a folder; give the YAML file inside it"),
]


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case", SPEC_PATHS, ids=[c[0] for c in SPEC_PATHS])
def test_spec_path_is_said_as_it_is(case, command, cli, tmp_path):
    _, make, fragment = case
    path = make(tmp_path)
    before = _snapshot(tmp_path)
    args = ["run", path, "--out", tmp_path / "runs"] if command == "run" else ["validate", path]
    line = _one_error_line(cli(*args), 2, fragment)
    assert f"spec file '{path}'" in line
    assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------------------------
# --resume on paths that are not a run folder: one line, nothing written


def _resume_results_file(tmp, runs):
    run = _copy(runs["good"], tmp)
    shutil.rmtree(run / "results")
    (run / "results").write_text("not a folder")
    return run


def _resume_results_loop(tmp, runs):
    run = _copy(runs["good"], tmp)
    shutil.rmtree(run / "results")
    (run / "results").symlink_to(run / "results")
    return run


RESUME = [
    ("resume-symlink-loop", lambda tmp, runs: _loop(tmp), "is a symlink loop, not a folder"),
    ("resume-fifo", lambda tmp, runs: _fifo(tmp), "is a FIFO (named pipe), not a folder"),
    ("resume-socket", lambda tmp, runs: _socket(tmp), "is a socket, not a folder"),
    ("resume-a-file", lambda tmp, runs: _through_a_file(tmp).parent, "is a regular file, not a folder"),
    ("resume-dev-null", lambda tmp, runs: Path("/dev/null"), "is a character device, not a folder"),
    ("resume-missing", lambda tmp, runs: tmp / "absent", "does not exist"),
    ("resume-dangling-symlink", lambda tmp, runs: _dangling(tmp), "does not exist"),
    ("resume-results-is-a-file", _resume_results_file, "its 'results' is not a folder"),
    ("resume-results-symlink-loop", _resume_results_loop, "its 'results'"),
]


@pytest.mark.parametrize("case", RESUME, ids=[c[0] for c in RESUME])
def test_resume_of_what_is_not_a_run(case, cli, tmp_path, runs):
    _, make, fragment = case
    path = make(tmp_path, runs)
    before = _snapshot(tmp_path)
    line = _one_error_line(cli("run", "--resume", path), 2, fragment)
    assert line.startswith(f"error: --resume: '{path}'"), line
    assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------------------------
# compare on damaged and odd run folders


def _unfinished(tmp, runs):
    run = _copy(runs["good"], tmp)
    for name in ("metrics.csv", "metrics.parquet"):
        (run / name).unlink()
    return [run]


def _tables_are_folders(tmp, runs):
    run = _copy(runs["good"], tmp)
    for name in ("metrics.csv", "metrics.parquet"):
        (run / name).unlink()
        (run / name).mkdir()
    return [run]


def _foreign_csv(tmp, runs):
    run = _copy(runs["good"], tmp)
    (run / "metrics.parquet").unlink()
    (run / "metrics.csv").write_text("a,b\n1,2\n")
    return [run]


def _damaged_spec(tmp, runs):
    run = _copy(runs["good"], tmp)
    (run / "spec.yaml").write_text("name: [unclosed\n")
    return [run]


def _spec_with(text):
    def make(tmp, runs):
        run = _copy(runs["good"], tmp)
        (run / "spec.yaml").write_text(text)
        return [run]
    return make


#: an "alias bomb": nine levels of nine aliases, 9⁹ nodes once expanded
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def _no_promises(tmp, runs):
    run = _copy(runs["good"], tmp)
    (run / "promises.csv").unlink()
    return [run, "--promises"]


def _damaged_promises(tmp, runs):
    run = _copy(runs["good"], tmp)
    (run / "promises.csv").write_bytes(b"\x00\xff garbage")
    return [run, "--promises"]


def _empty_folder(tmp, runs):
    (tmp / "empty").mkdir()
    return [tmp / "empty"]


def _parent_of_runs(tmp, runs):
    _copy(runs["good"], tmp / "many", "a")
    return [tmp / "many"]


COMPARE = [
    ("empty-folder", _empty_folder, "is not a finished run folder (no metrics table)"),
    ("a-file", lambda tmp, runs: [_through_a_file(tmp).parent], "(it is a regular file)"),
    ("missing", lambda tmp, runs: [tmp / "absent"], "(it does not exist)"),
    ("fifo", lambda tmp, runs: [_fifo(tmp)], "(it is a FIFO (named pipe))"),
    ("socket", lambda tmp, runs: [_socket(tmp)], "(it is a socket)"),
    ("symlink-loop", lambda tmp, runs: [_loop(tmp)], "(it is a symlink loop)"),
    ("dev-null", lambda tmp, runs: [Path("/dev/null")], "(it is a character device)"),
    ("unfinished-run", _unfinished, "no metrics table); finish it with: safeclf run --resume"),
    ("tables-are-folders", _tables_are_folders, "no metrics table"),
    ("foreign-csv", _foreign_csv, "is not a safeclf metrics table (no column 'dataset')"),
    ("damaged-spec", _damaged_spec, "spec.yaml' cannot be read (damaged)"),
    ("alias-bomb-spec", _spec_with(ALIAS_BOMB), "spec.yaml' cannot be read (damaged)"),
    ("duplicate-key-spec", _spec_with("name: a\nname: b\n"), "spec.yaml' cannot be read (damaged)"),
    ("folder-of-runs", _parent_of_runs, "is not a run folder but holds 1 runs; give them as"),
    ("all-jobs-failed", lambda tmp, runs: [runs["failed"]], "no job of this run ended ok"),
    ("all-jobs-failed-twice", lambda tmp, runs: [runs["failed"], runs["failed"]],
     "no job of these runs ended ok"),
    ("all-jobs-failed-metric", lambda tmp, runs: [runs["failed"], "--metric", "test_error"],
     "no job of this run ended ok"),
    ("all-jobs-failed-promises", lambda tmp, runs: [runs["failed"], "--promises"],
     "-failed' recorded a promise (no job ended with a model"),
    ("all-jobs-failed-promises-twice", lambda tmp, runs: [runs["failed"], runs["failed"],
                                                          "--promises"],
     "none of the runs recorded a promise (no job ended with a model"),
    ("all-jobs-failed-and-a-file", lambda tmp, runs: [runs["failed"], _through_a_file(tmp).parent],
     "(it is a regular file)"),
    ("no-promises-csv", _no_promises, "has no promises.csv"),
    ("damaged-promises-csv", _damaged_promises, "promises.csv' cannot be read"),
    ("unknown-metric", lambda tmp, runs: [runs["good"], "--metric", "test_eror"],
     "--metric: no run reports 'test_eror' (did you mean 'test_error'?)"),
    ("by-unknown-column", lambda tmp, runs: [runs["good"], "--by", "param.CC"],
     "--by: run 'good"),
    ("runs-of-different-specs-by-a-param", lambda tmp, runs: [runs["good"], runs["failed"], "--by",
                                                            "param.gamma"], "has no column 'param.gamma'"),
]


@pytest.mark.parametrize("case", COMPARE, ids=[c[0] for c in COMPARE])
def test_compare_on_odd_runs(case, cli, tmp_path, runs):
    _, make, fragment = case
    args = make(tmp_path, runs)
    before = {p: _snapshot(p) for p in (tmp_path, *runs.values())}
    _one_error_line(cli("compare", *args), 2, fragment)
    assert {p: _snapshot(p) for p in before} == before


def test_compare_of_a_good_run_and_a_failed_one_says_so(cli, runs):
    result = cli("compare", runs["good"], runs["failed"], "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "failed" in result.output and "no job ended ok (4 jobs; see its metrics.csv)" in result.output
    promises = cli("compare", runs["good"], runs["failed"], "--promises", "--format", "csv")
    assert promises.exit_code == 0, promises.output
    from io import StringIO

    table = pd.read_csv(StringIO(promises.output))
    good, failed = (next(c for c in table.columns if c.startswith(f"{k} ")  # short names
                         and c.endswith(" verdicts")) for k in ("good", "failed"))
    assert len(table) == 2 and set(table[good]) == {"no promise"}
    assert set(table[failed]) == {"no job ended with a model"}


# --------------------------------------------------------------------------------------------
# permission denied: when the tests run as root, the CLI runs without the capabilities that
# let root read and write anything (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so modes apply

NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
          "--bounding-set=-dac_override,-dac_read_search", "--"]


def _cli_without_privilege(args, cwd: Path):
    """``safeclf *args`` in a subprocess that file modes bind; a CliRunner-like result."""
    from types import SimpleNamespace

    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file modes cannot be made to bind")
        prefix = NO_DAC
    proc = subprocess.run([*prefix, str(Path(sys.executable).with_name("safeclf")), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    return SimpleNamespace(exit_code=proc.returncode, stderr=proc.stderr,
                           output=proc.stdout + proc.stderr)


def _unreadable_spec(folder, runs):
    spec = folder / "spec.yaml"
    spec.write_text(BASE)
    spec.chmod(0o000)
    return ["validate", spec], f"Invalid value for 'spec': path '{spec}' is not readable"


def _unreadable_metrics(folder, runs):
    run = _copy(runs["good"], folder, "run")
    for p in [run, *run.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    (run / "metrics.parquet").chmod(0o000)
    return ["compare", run], f"'{run / 'metrics.parquet'}' cannot be read: permission denied"


def _unreadable_run(folder, runs):
    run = _copy(runs["good"], folder, "run")
    run.chmod(0o000)
    return ["compare", run], f"path '{run}' is not readable"


def _unwritable_resume(folder, runs):
    run = _copy(runs["good"], folder, "run")
    for p in [run, *run.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    return ["run", "--resume", run], f"--resume: '{run}' is not writable"


def _unreadable_spec_for_run(folder, runs):
    spec = folder / "spec.yaml"
    spec.write_text(BASE)
    spec.chmod(0o000)
    return ["run", spec, "--out", folder / "runs"], f"path '{spec}' is not readable"


PERMISSION = [
    ("unreadable-spec", _unreadable_spec),
    ("run-unreadable-spec", _unreadable_spec_for_run),
    ("compare-unreadable-metrics", _unreadable_metrics),
    ("compare-unreadable-run-folder", _unreadable_run),
    ("resume-unwritable-run", _unwritable_resume),
]


@pytest.mark.parametrize("case", PERMISSION, ids=[c[0] for c in PERMISSION])
def test_permission_denied_is_one_line(case, tmp_path, runs):
    _, make = case
    args, expected = make(tmp_path, runs)
    result = _cli_without_privilege(args, tmp_path)
    _one_error_line(result, 2, expected)
    assert not (tmp_path / "runs").exists()
    for p in [tmp_path, *tmp_path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o700)
    if "--resume" in args:  # the resumed run is as it was
        run = Path(args[-1])
        assert sorted(p.name for p in run.iterdir()) == sorted(p.name for p in runs["good"].iterdir())
        assert (run / "manifest.json").read_bytes() == (runs["good"] / "manifest.json").read_bytes()


# --------------------------------------------------------------------------------------------
# a full disk while the run writes: one line, records intact, --resume finishes the run

def _fail_writes(monkeypatch, match, after: int = 0):
    """Make ``os.write`` fail with ENOSPC, as a full disk does, on the temporary files of
    atomic writes whose path ``match``es, once ``after`` such files were written whole."""
    real = os.write
    seen: set = set()

    def write(fd, data):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = ""
        if path.endswith(".tmp") and match(path):
            seen.add(path)
            if len(seen) > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


def _table_named(name):
    return lambda path: os.path.basename(path).startswith(f".{name}.")


def _fail_parquet(monkeypatch):
    import pyarrow.parquet as pq

    def write_table(*args, **kwargs):  # pyarrow writes through its own C++ file
        raise OSError(errno.ENOSPC, "Error writing bytes to file: No space left on device")

    monkeypatch.setattr(pq, "write_table", write_table)


def _records(path):
    return os.path.basename(os.path.dirname(path)) == "results"


FULL_DISK = [  # (id, how the disk fills, records written before it, workers)
    ("at-the-third-record", lambda mp: _fail_writes(mp, _records, 2), 2, 1),
    ("at-the-third-record-two-workers", lambda mp: _fail_writes(mp, _records, 2), 2, 2),
    ("at-metrics-csv", lambda mp: _fail_writes(mp, _table_named("metrics.csv")), 4, 1),
    ("at-metrics-parquet", _fail_parquet, 4, 1),
    ("at-summary-md", lambda mp: _fail_writes(mp, _table_named("summary.md")), 4, 1),
    ("at-promises-csv", lambda mp: _fail_writes(mp, _table_named("promises.csv")), 4, 1),
    ("at-the-final-manifest", lambda mp: _fail_writes(mp, _table_named("manifest.json"), 1), 4, 1),
]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names open files through /proc")
@pytest.mark.parametrize("case", FULL_DISK, ids=[c[0] for c in FULL_DISK])
def test_full_disk_leaves_a_resumable_run(case, cli, tmp_path, monkeypatch):
    from safeclf.store.result import JobResult

    _, fill, n_records, workers = case
    spec = tmp_path / "spec.yaml"
    spec.write_text(CATALOGUE_SPEC)
    out = tmp_path / "runs"
    with monkeypatch.context() as full:
        fill(full)
        result = cli("run", spec, "--out", out, "-j", workers)
    (run,) = out.iterdir()
    line = _one_error_line(result, 1, "No space left on device", ran=True)
    assert f"safeclf run --resume {run}" in line and "records written before it are intact" in line
    assert not list(run.rglob("*.tmp")), "a temporary file was left behind"
    records = [JobResult.from_record(json.loads(p.read_text()))
               for p in (run / "results").glob("*.json")]
    assert len(records) == n_records and all(r is not None and r.ok for r in records)
    resumed = cli("run", "--resume", run, "-j", "1")
    assert resumed.exit_code == 0, resumed.output
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["skipped_on_resume"] == n_records and manifest["ok"] == 4
    table = pd.read_csv(run / "metrics.csv")
    assert len(table) == 4 and set(table["status"]) == {"ok"}
    assert pd.read_parquet(run / "metrics.parquet")["job"].tolist() == table["job"].tolist()


FULL_DISK_AT_START = [("spec.yaml", 0), ("manifest.json", 0)]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names open files through /proc")
@pytest.mark.parametrize("name, after", FULL_DISK_AT_START, ids=[c[0] for c in FULL_DISK_AT_START])
def test_full_disk_before_the_first_job_leaves_no_run_folder(name, after, cli, tmp_path, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text(CATALOGUE_SPEC)
    out = tmp_path / "runs"
    with monkeypatch.context() as full:
        _fail_writes(full, _table_named(name), after)
        result = cli("run", spec, "--out", out, "-j", "1")
    line = _one_error_line(result, 1, "No space left on device")
    assert f"{name}'" in line and "the run did not start and its folder was removed" in line
    assert out.is_dir() and not list(out.iterdir())


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names open files through /proc")
def test_full_disk_when_resume_starts_keeps_the_run(cli, tmp_path, monkeypatch, runs):
    run = _copy(runs["good"], tmp_path)
    as_interrupted(run, sorted((run / "results").iterdir())[:2])  # two jobs left to run
    (run / "metrics.csv").unlink()
    before = _snapshot(run)
    with monkeypatch.context() as full:
        _fail_writes(full, _table_named("manifest.json"))
        result = cli("run", "--resume", run, "-j", "1")
    line = _one_error_line(result, 1, "No space left on device")
    assert f"safeclf run --resume {run}" in line
    assert _snapshot(run) == before
    assert cli("run", "--resume", run, "-j", "1").exit_code == 0
    assert len(pd.read_csv(run / "metrics.csv")) == 4
    assert json.loads((run / "manifest.json").read_text())["skipped_on_resume"] == 2


# --------------------------------------------------------------------------------------------
# run-folder files honour the umask


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_run_folder_files_honour_the_umask(umask, cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(CATALOGUE_SPEC + "plots: [{kind: bar, metric: test_error}]\n")
    old = os.umask(umask)
    try:
        result = cli("run", spec, "--out", tmp_path / "runs", "-j", "1")
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "runs").iterdir()
    paths = [run, *run.rglob("*")]
    assert {p.name for p in paths} >= {"spec.yaml", "manifest.json", "metrics.csv",
                                       "metrics.parquet", "summary.md", "run.log", "plots"}
    for p in paths:
        want = (0o777 if p.is_dir() else 0o666) & ~umask
        assert stat.S_IMODE(p.stat().st_mode) == want, (p, oct(p.stat().st_mode), oct(want))


# --------------------------------------------------------------------------------------------
# an unwritable user cache: safeclf still runs, with one warning line

CACHE = [
    ("xdg-cache-is-a-file", lambda tmp: {"XDG_CACHE_HOME": str(tmp / "afile")}, "afile/safeclf/numba"),
    ("numba-cache-dir-is-a-file", lambda tmp: {"NUMBA_CACHE_DIR": str(tmp / "afile")}, "afile"),
    ("numba-cache-dir-under-a-file", lambda tmp: {"NUMBA_CACHE_DIR": str(tmp / "afile" / "n")},
     "afile/n"),
    ("numba-cache-dir-dev-null", lambda tmp: {"NUMBA_CACHE_DIR": "/dev/null"}, "/dev/null"),
]

NJIT_PROBE = """
import os, sys
import safeclf
sys.path.insert(0, sys.argv[1])
import probe
assert probe.add(2, 3) == 5
cache = os.environ["NUMBA_CACHE_DIR"]
print(cache)
print(sum(len(files) for _, _, files in os.walk(cache)))
"""


@pytest.mark.parametrize("case", CACHE, ids=[c[0] for c in CACHE])
def test_unwritable_cache_falls_back_with_one_warning(case, tmp_path):
    _, make, named = case
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "probe.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef add(a, b):\n    return a + b\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "MPLCONFIGDIR")}
    env.update(make(tmp_path), TMPDIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", NJIT_PROBE, str(tmp_path / "mod")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: cache folder '"), proc.stderr
    assert named in lines[0] and "for this run only" in lines[0]
    cache, n_files = proc.stdout.split()
    fallback = Path(cache).parent
    assert fallback.parent == tmp_path and fallback.name.startswith("safeclf-cache-")
    assert f"caching in '{fallback}'" in lines[0]
    assert int(n_files) >= 2, "numba cached the function in the fallback folder"
    assert not fallback.exists(), "the fallback folder is removed at exit"
    assert (tmp_path / "afile").read_text() == "a file, not a folder"


def test_a_run_with_an_unwritable_cache_warns_once(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE + "plots: [{kind: bar, metric: test_error}]\n")
    (tmp_path / "afile").write_text("x")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "MPLCONFIGDIR")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "afile"), TMPDIR=str(tmp_path))
    proc = subprocess.run([str(Path(sys.executable).with_name("safeclf")), "run", str(spec),
                           "--out", str(tmp_path / "runs"), "-j", "1"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines()
                if "warning" in line.lower() or "matplotlib" in line.lower()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: cache folder"), proc.stderr
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "plots" / "bar_test_error.png").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("safeclf-cache-")]
