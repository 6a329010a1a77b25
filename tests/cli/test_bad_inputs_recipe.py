"""The catalogue of the traps a new user met on their own data (issue 35): a YAML boolean
where a group was meant, a ratio bound written as a percentage, help text wrapped where the
source was, predictions that rewrite the user's integers."""

from __future__ import annotations

import re

import pytest
from cli.test_bad_inputs import BASE, _csv, run_and_validate

#: Groups named yes / no (a membership column): words YAML reads as booleans unquoted.
MEMBER_CSV = "a,member,y\n" + "".join(f"{i},{('yes', 'no')[i % 2]},{(i // 2) % 2}\n"
                                      for i in range(40))


def _member(params="", method="- method: svm"):
    def make(tmp):
        path = _csv(tmp, MEMBER_CSV)
        return BASE.replace(
            "- dataset: iris",
            f"- dataset: csv\n    params: {{path: {path}, target: y, group: member{params}}}"
        ).replace("- method: svm", method)

    return make


CASES = [
    ("privileged-no-read-by-yaml-as-false", _member(", privileged: no"), [], 2,
     "privileged group 'False' is not a value of column 'member'"),
    ("privileged-no-says-to-quote-it", _member(", privileged: no"), [], 2,
     "(YAML reads an unquoted no as False: quote it, \"no\"); its groups are 'yes', 'no'"),
    ("privileged-yes-says-to-quote-it", _member(", privileged: yes"), [], 2,
     "(YAML reads an unquoted yes as True: quote it, \"yes\")"),
    ("declared-ratio-min-as-a-percentage",
     _member(", privileged: \"no\"",
             "- method: logreg\n    promises: [{rate: fairness_ratio, min: 80}]"), [], 2,
     "methods[0].promises[0].min must be ≤ 3, got 80 (a ratio of two rates: 0.8 for 80%)"),
    ("declared-band-min-as-a-percentage",
     _member(", privileged: \"no\"",
             "- method: logreg\n    promises: [{rate: fairness_ratio, min: 80, max: 125}]"), [],
     2, "methods[0].promises[0].min must be ≤ 3, got 80"),
    ("ramp-constraint-min-as-a-percentage",
     _member(", privileged: \"no\"",
             "- method: ramp\n    params: {constraints: [{rate: fairness_ratio, min: 80}]}"),
     [], 2, "methods[0].params.constraints[0].min must be ≤ 3, got 80"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_exit_code(case, tmp_path, cli):
    _, text, extra, code, fragment = case
    line = run_and_validate(cli, tmp_path, text, extra, code, fragment)
    assert "kappa" not in line  # the key the user wrote, not the one it is read as


def test_kappa_written_as_kappa_is_still_named_kappa(tmp_path, cli):
    text = _member(", privileged: \"no\"", "- method: ramp\n    params: {constraints: "
                   "[{rate: fairness_ratio, kappa: 80}]}")
    run_and_validate(cli, tmp_path, text, [], 2,
                     "methods[0].params.constraints[0].kappa must be ≤ 3, got 80")


def _commands():
    from safeclf.cli.app import app

    return [None] + [c.name or c.callback.__name__ for c in app.registered_commands]


@pytest.mark.parametrize("command", _commands(), ids=lambda c: c or "safeclf")
def test_help_wraps_at_the_terminal_not_where_the_source_did(command):
    """Every ``--help`` at 100 columns: no reST double backticks, and no line of a box cut
    short where the next line's first word would have fitted (a docstring's own line
    break)."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    args = [command, "--help"] if command else ["--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100", "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "``" not in text
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    for line, after in zip(lines, lines[1:]):
        if not (line.startswith("│") and after.startswith("│")):
            continue
        inner, nxt = line[1:].rstrip().removesuffix("│"), after[1:].rstrip().removesuffix("│")
        width = len(inner) - 1  # the text may reach the box's last column but one
        cells = [m.end() for m in re.finditer(r"\s{2,}(?=\S)", inner.rstrip())]
        words = nxt.split()
        # a continuation of this line's last cell: the next line starts where that cell does
        # (not a new option; not typer's [required] note)
        if not cells or not words or words[0].startswith("[") or \
                len(nxt) - len(nxt.lstrip()) != cells[-1]:
            continue
        used = len(inner.rstrip())
        assert used + 1 + len(words[0]) > width, f"wrapped early:\n{line}\n{after}"


def test_predict_writes_integer_columns_as_written(tmp_path, cli):
    """An integer column with an empty cell (pandas reads it as floats) comes out as the
    user wrote it: 21, not 21.0."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = [(int(a), int(rng.integers(1000, 5000))) for a in rng.integers(20, 60, size=120)]
    _csv(tmp_path, "age,income,y\n" + "".join(f"{a},{i},{int(a > 40)}\n" for a, i in rows),
         "train.csv")
    (tmp_path / "spec.yaml").write_text(
        "name: p\nseeds: 1\nsave_models: true\ndatasets:\n  - dataset: csv\n"
        "    params: {path: train.csv, target: y}\n"
        "    preprocess: {impute: median, scale: standardize}\nmethods: [{method: logreg}]\n")
    assert cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs").exit_code == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert cli("deploy", run, "--out", tmp_path / "model").exit_code == 0
    _csv(tmp_path, "age,income\n21,3000\n,2000\n33,\n", "new.csv")
    done = cli("predict", tmp_path / "model", "--data", tmp_path / "new.csv", "--out",
               tmp_path / "out.csv")
    assert done.exit_code == 0, done.output
    written = (tmp_path / "out.csv").read_text().splitlines()
    assert [re.split(",", line)[:2] for line in written[1:]] == [
        ["21", "3000"], ["", "2000"], ["33", ""]]
