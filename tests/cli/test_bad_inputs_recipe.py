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


# -- the trial on a loans CSV (issue 35, second trial): messages that left the user guessing --
def _loans(tmp_path, gap: float, mean: float = 0.45, n: int = 1500, seed: int = 3):
    """A CSV whose label depends on ``x`` only, with the groups' base rates ``gap`` apart
    around ``mean`` (group b, the protected one, less often favourable): a group-blind threshold on ``x``
    carries the gap into its decisions."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    y = rng.random(n) < np.where(g == "a", mean + gap / 2, mean - gap / 2)
    frame = pd.DataFrame({"x": 1.5 * y + rng.normal(size=n), "z": rng.normal(size=n),
                          "grp": g, "y": np.where(y, "yes", "no")})
    frame.to_csv(tmp_path / "loans.csv", index=False)


def _loans_spec(tmp_path, certify: str, seeds: int = 1):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: loans\nseeds: {seeds}\ndatasets:\n  - dataset: csv\n"
        "    params: {path: loans.csv, target: y, positive: \"yes\", group: grp, privileged: a}\n"
        "methods:\n  - method: logreg\n    promises: [{rate: fairness_ratio, min: 0.8}]\n"
        f"    certify: {{delta: 0.05, fraction: 0.5{certify}}}\nmetrics: [error]\n")
    return spec


def test_a_group_blind_no_solution_says_the_way_out(tmp_path, cli):
    """Base rates 0.35 and 0.05: one threshold on x keeps s_p(b) ≥ 0.8 s_p(a) only by
    approving nearly everyone, worse than the majority rule (deny all), so the group-blind job
    returns no model, and its reason (the console line and metrics.csv's error) names what may
    help: more rows, or a threshold per group through group_as_feature. Without group_blind
    (one threshold too, as the group is no feature) the reason does not say it."""
    import pandas as pd

    _loans(tmp_path, gap=0.3, mean=0.2)
    said = {}
    for name, certify in (("blind", ", group_blind: true"), ("plain", "")):
        out = tmp_path / f"runs_{name}"
        res = cli("run", _loans_spec(tmp_path, certify), "--out", out, "-j", "1")
        assert res.exit_code == 0, res.output
        (run,) = out.iterdir()
        table = pd.read_csv(run / "metrics.csv")
        if name == "blind":
            assert (table.status == "no_solution").all(), table[["status", "error"]]
        said[name] = (" ".join(res.output.split()), str(table.error[0]))
    for text in said["blind"]:
        assert "the rule is group-blind (one threshold for everyone)" in text
        assert "a threshold per group (leave out group_blind; on a csv dataset, " \
               "group_as_feature: true), which reads the group" in text
    assert not any("group-blind" in text for text in said["plain"])


def test_deploy_says_which_seed_and_the_certificate_it_re_checked(tmp_path, cli):
    """Equal base rates: the group-blind rule certifies. deploy's output names the seed and
    among how many jobs it was chosen (what δ covers depends on it), prints the line it
    re-checked (what safeclf verify prints), and says that no column encodes the group
    (not "the 0 feature columns")."""
    import json

    _loans(tmp_path, gap=0.0)
    out = tmp_path / "runs"
    res = cli("run", _loans_spec(tmp_path, ", group_blind: true", seeds=2), "--out", out,
              "-j", "1")
    assert res.exit_code == 0, res.output
    (run,) = out.iterdir()
    done = cli("deploy", run, "--out", tmp_path / "model")
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    record = meta["deployment"]
    assert record["seed"] == 0  # the first seed, whatever the others returned
    assert "seed 0, the run's first seed, chosen before any outcome" in text
    assert record["chosen_by"].startswith("the run's first seed")
    assert "decision reads the group: no: group-blind (no feature column encodes it; one " \
           "threshold for everyone)" in text
    verified = cli("verify", tmp_path / "model")
    assert verified.exit_code == 0, verified.output
    line = verified.output.splitlines()[0]
    assert line.startswith(f"job {record['job']} ") and "certificate re-checks on" in line
    assert f"re-checked before copying: {line}" in done.output


def test_deploy_refuses_to_pick_the_next_seed_that_passed(tmp_path, cli):
    """The run's first seed returned no model and the second did: deploy does not take the
    second (choosing among the seeds that passed covers the promise only at 1 − k·δ): exit
    2, one line saying why and what to do, nothing written; naming the job with --job (a
    choice made in advance) deploys it."""
    import pandas as pd

    _loans(tmp_path, gap=0.15, n=1000)
    out = tmp_path / "runs"
    res = cli("run", _loans_spec(tmp_path, ", group_blind: true", seeds=2), "--out", out,
              "-j", "1")
    assert res.exit_code == 0, res.output
    (run,) = out.iterdir()
    table = pd.read_csv(run / "metrics.csv").sort_values("seed")
    assert list(table.status) == ["no_solution", "ok"]  # the case this test is about
    refused = cli("deploy", run, "--out", tmp_path / "model")
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "first seed (0" in line and "1 − k·δ" in line and "--job" in line
    assert not (tmp_path / "model").exists()
    second = table.job.iloc[1]
    named = cli("deploy", run, "--job", second, "--out", tmp_path / "model")
    assert named.exit_code == 0, named.output
    import json

    record = json.loads((tmp_path / "model" / "model.json").read_text())["deployment"]
    assert record["job"] == second and record["chosen_by"] == "named with --job"
