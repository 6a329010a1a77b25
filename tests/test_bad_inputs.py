"""The catalogue of bad inputs: each ends in one clear line and the right exit code, never a
traceback, and nothing is written."""

from __future__ import annotations

import pytest

BASE = """
name: bad
seeds: 1
datasets:
  - dataset: iris
methods:
  - method: svm
"""


def _csv(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


NAN_CSV = "a,b,y\n1,2,0\n3,,1\n5,6,0\n7,8,1\n"
ONE_CLASS_CSV = "a,y\n1,0\n2,0\n3,0\n"
TWO_ROWS_CSV = "a,y\n1,0\n2,1\n"


def _with_csv(content, target="y"):
    def make(tmp):
        path = _csv(tmp, content)
        return BASE.replace("- dataset: iris",
                            f"- dataset: csv\n    params: {{path: {path}, target: {target}}}")

    return make


CASES = [
    # (id, spec text or callable(tmp_path) -> text, extra args, exit code, expected fragment)
    ("malformed-yaml", "name: x\nmethods: [svm\n", [], 2, "malformed YAML at line"),
    ("not-a-mapping", "- just\n- a list\n", [], 2, "must be a mapping"),
    ("unknown-method", BASE.replace("method: svm", "method: svn"), [], 2,
     "methods[0].method: unknown method 'svn' (did you mean 'svm'?)"),
    ("unknown-dataset", BASE.replace("dataset: iris", "dataset: irsi"), [], 2,
     "datasets[0].dataset: unknown dataset 'irsi' (did you mean 'iris'?)"),
    ("wrong-param-type", BASE + "    params: {C: abc}\n", [], 2,
     "methods[0].params.C must be a float in the range (0.0, inf), got 'abc'"),
    ("negative-param", BASE + "    params: {C: -1}\n", [], 2,
     "methods[0].params.C must be a float in the range (0.0, inf), got -1"),
    ("unknown-param", BASE + "    params: {CC: 1}\n", [], 2,
     "methods[0].params.CC is not a parameter of method 'svm' (did you mean 'C'?)"),
    ("negative-fraction", BASE.replace("- dataset: iris", "- dataset: iris\n    split: {test: -0.2}"),
     [], 2, "datasets[0].split.test must be > 0, got -0.2"),
    ("fraction-above-one", BASE.replace("- dataset: iris", "- dataset: iris\n    split: {test: 1.5}"),
     [], 2, "datasets[0].split.test must be < 1, got 1.5"),
    ("empty-grid", BASE + "    params: {C: {grid: []}}\n", [], 2,
     "methods[0].params.C.grid is empty"),
    ("duplicate-names", BASE + "  - method: svm\n", [], 2,
     "methods[1] has the same label 'svm' as methods[0]"),
    ("unknown-field", BASE + "metrcs: [error]\n", [], 2,
     "metrcs is not a known field (did you mean 'metrics'?)"),
    ("missing-methods", "name: x\ndatasets: [{dataset: iris}]\n", [], 2, "methods is required"),
    ("unknown-metric", BASE + "metrics: [eror]\n", [], 2,
     "metrics[0]: unknown metric 'eror' (did you mean 'error'?)"),
    ("unknown-profile", BASE + "profiles: {ci: {seeds: 1}}\n", ["--profile", "cj"], 2,
     "profiles: no profile 'cj' (did you mean 'ci'?)"),
    ("zero-seeds", BASE.replace("seeds: 1", "seeds: 0"), [], 2, "seeds must be ≥ 1, got 0"),
    ("two-conditions", BASE + 'expect: [{metric: test_error, "<=": 0.1, ">=": 0.0}]\n', [], 2,
     "expect[0] needs exactly one condition"),
    ("expect-unknown-method", BASE + 'expect: [{metric: test_error, method: logrg, "<=": 0.1}]\n',
     [], 2, "expect[0].method: no method labelled 'logrg'"),
    ("unknown-plot", BASE + "plots: [{kind: barr, metric: test_error}]\n", [], 2,
     "plots[0].kind: unknown plot kind 'barr' (did you mean 'bar'?)"),
    ("plot-missing-axis", BASE + "plots: [{kind: scatter, x: test_error}]\n", [], 2,
     "plots[0].y is required for a 'scatter' plot"),
    ("dataset-param-type", BASE.replace("- dataset: iris", "- dataset: iris\n    params: {features: abc}"),
     [], 2, "datasets[0].params.features"),
    ("bad-jobs", BASE, ["--jobs", "0"], 2, "--jobs must be a positive number"),
    ("predefined-missing", BASE.replace("- dataset: iris", "- dataset: iris\n    split: {predefined: true}"),
     [], 2, "has no predefined split"),
    ("minmax-on-sparse", BASE.replace(
        "- dataset: iris",
        "- dataset: adult\n    params: {sparse: true}\n    preprocess: minmax"), [], 2,
     "dataset 'adult' is sparse and minmax would densify it; use maxabs"),
    ("missing-data-file", lambda tmp: BASE.replace(
        "- dataset: iris", f"- dataset: csv\n    params: {{path: {tmp}/nope.csv, target: y}}"),
     [], 2, "data file"),
    ("nan-in-data", _with_csv(NAN_CSV), [], 2, "NaN or infinite feature values"),
    ("one-class", _with_csv(ONE_CLASS_CSV), [], 2, "has only one class"),
    ("missing-column", _with_csv(TWO_ROWS_CSV, target="label"), [], 2, "column 'label' is not in"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_exit_code(case, tmp_path, cli):
    _, text, extra, code, fragment = case
    spec = tmp_path / "spec.yaml"
    spec.write_text(text(tmp_path) if callable(text) else text)
    out = tmp_path / "runs"
    result = cli("run", spec, "--out", out, *extra)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert fragment in " ".join(result.stderr.split()), result.stderr
    assert not out.exists() or not any(out.iterdir()), "a bad input must not leave a run folder"


def test_missing_spec_file(cli, tmp_path):
    result = cli("run", tmp_path / "absent.yaml")
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_unwritable_output_folder(cli, tiny_spec, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = cli("run", tiny_spec, "--out", blocker / "runs", "--profile", "ci")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "cannot create output folder" in result.stderr
    assert blocker.read_text() == "not a folder"


def test_validate_reports_same_message(cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE + "    params: {C: -1}\n")
    result = cli("validate", spec)
    assert result.exit_code == 2
    assert "methods[0].params.C must be" in result.stderr


def test_debug_shows_traceback(tmp_path):
    """--debug re-raises, so the traceback is there for developers."""
    from typer.testing import CliRunner

    from safeclf.cli import app

    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE.replace("method: svm", "method: svn"))
    result = CliRunner().invoke(app, ["--debug", "run", str(spec), "--out", str(tmp_path / "r")])
    assert result.exit_code != 0
    assert result.exception is not None and "unknown method" in str(result.exception)


def test_messages_are_printed_verbatim_not_as_markup(cli, tmp_path):
    """Square brackets in a message (an extra's name, a list) must reach the user intact."""
    missing = tmp_path / "spec[bench].yaml"
    result = cli("run", missing)
    assert result.exit_code == 2
    assert f"spec file '{missing}' does not exist" in " ".join(result.stderr.split())
