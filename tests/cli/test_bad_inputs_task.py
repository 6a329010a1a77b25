"""The catalogue of inputs refused too late or for the wrong task (issue 36, item 7): promises
and certificates on three classes, a promise needing rows the data lacks (churn without a
baseline, a comparison of groups without groups), a group column holding one group, a
certification fraction leaving no candidate rows, and unwritable ``--out`` / ``--mlflow``
places. Each goes through the harness of tests/cli/test_bad_inputs.py
(:func:`run_and_validate`: exit code 2, one ``error: `` line naming the place, no traceback,
nothing written, ``validate`` says the same)."""

from __future__ import annotations

import pytest
from test_bad_inputs import BASE, GROUP_CSV, _with_csv, run_and_validate

#: A 0/1 target with two groups (sex) and a feature; 80 rows.
TWO_GROUPS_CSV = "a,b,sex,y\n" + "".join(
    f"{i},{(i * 7) % 11},{'M' if i % 3 else 'F'},{(i // 2) % 2}\n" for i in range(80))
#: The same rows, every one in group M.
ONE_GROUP_CSV = TWO_GROUPS_CSV.replace(",F,", ",M,")


def _logreg(entry: str):
    """BASE on iris with its method replaced by logreg and ``entry`` (YAML lines of the entry)."""
    return BASE.replace("- method: svm", "- method: logreg\n" + entry)


def _on_csv(content, entry: str, extra=""):
    """``content`` as the dataset (target y), the method logreg with ``entry``."""
    def make(tmp):
        return _with_csv(content, extra=extra)(tmp).replace(
            "- method: svm", "- method: logreg\n" + entry)

    return make


CERTIFY_FPR = ("    promises: [{rate: fpr, max: 0.3}]\n"
               "    certify: {delta: 0.05, fraction: FRACTION, how: threshold}\n")

CASES = [
    # (id, spec text or callable(tmp_path) -> text, extra args, expected fragment)
    ("certify-on-three-classes",
     _logreg("    promises: [{rate: fpr, max: 0.1}]\n"
             "    certify: {delta: 0.05, fraction: 0.3, how: threshold}\n"), [],
     "methods[0].promises: promises and certificates are about two classes (a rate of "
     "positive decisions), but the dataset has 3 (0, 1, 2); leave out promises and certify"),
    ("promise-on-three-classes", _logreg("    promises: [{rate: error, max: 0.5}]\n"), [],
     "methods[0].promises: promises and certificates are about two classes"),
    ("promise-on-three-classes-csv",
     _on_csv("a,y\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(60)),
             "    promises: [{rate: fpr, max: 0.2}]\n"), [],
     "but the dataset has 3 (a, b, c)"),
    ("churn-promise-without-baseline",
     _on_csv(TWO_GROUPS_CSV, "    promises: [{rate: churn, max: 0.1}]\n"), [],
     "methods[0].promises[0] (churn) needs rows 'baseline' (a deployed model's predictions"),
    ("churn-certified-without-baseline",
     _on_csv(TWO_GROUPS_CSV, "    promises: [{rate: churn, max: 0.1}]\n"
                             "    certify: {delta: 0.05}\n"), [],
     "methods[0].promises[0] (churn) needs rows 'baseline'"),
    ("churn-constraint-without-baseline",
     lambda tmp: _on_csv(TWO_GROUPS_CSV, "")(tmp).replace(
         "- method: logreg\n",
         "- method: ramp\n    params: {constraints: [{rate: churn, max: 0.1}], lam: 0.01}\n"),
     [], "methods[0] (ramp) on datasets[0] (csv) needs 'baseline', which the dataset does "
         "not provide"),
    ("bound-at-baseline-without-baseline",
     _on_csv(TWO_GROUPS_CSV, "    promises: [{rate: error, max: baseline}]\n"), [],
     "methods[0].promises[0] (error) needs rows 'baseline'"),
    ("fairness-promise-without-groups",
     _on_csv(TWO_GROUPS_CSV, "    promises: [{rate: fairness_ratio, min: 0.8}]\n"), [],
     "methods[0].promises[0] (fairness_ratio) needs rows 'groups' (the group of each row: "
     "name the dataset's group column), which the dataset does not provide"),
    ("fairness-certified-without-groups",
     _on_csv(TWO_GROUPS_CSV, "    promises: [{rate: fairness_ratio, min: 0.8}]\n"
                             "    certify: {delta: 0.05, how: threshold}\n"), [],
     "methods[0].promises[0] (fairness_ratio) needs rows 'groups'"),
    ("one-group-column",
     _on_csv(ONE_GROUP_CSV, "", extra=", group: sex"), [],
     "group column 'sex' in"),
    ("one-group-column-with-fairness-constraint",
     lambda tmp: _on_csv(ONE_GROUP_CSV, "", extra=", group: sex")(tmp).replace(
         "- method: logreg\n", "- method: ramp\n    params: {constraints: "
                               "[{rate: fairness_ratio, min: 0.8}], lam: 0.01}\n"),
     [], "holds one group only ('M' on all 80 rows)"),
    ("one-group-in-one-of-two-columns",
     _on_csv("a,sex,race,y\n" + "".join(f"{i},{'MF'[i % 2]},w,{(i // 2) % 2}\n"
                                       for i in range(40)), "", extra=", group: [sex, race]"),
     [], "group column 'race' in"),
    ("certify-fraction-leaves-nothing",
     _on_csv(TWO_GROUPS_CSV, CERTIFY_FPR.replace("FRACTION", "0.999")), [],
     "methods[0].certify.fraction 0.999 leaves 0 of the 56 training rows of the first split "
     "(seed 0) for fitting the candidate model; lower the fraction"),
    ("certify-fraction-leaves-one-class",
     _on_csv(TWO_GROUPS_CSV, CERTIFY_FPR.replace("FRACTION", "0.97")), [],
     "methods[0].certify.fraction 0.97 leaves 1 of the 56 training rows"),
    ("certify-training-fraction-leaves-nothing",
     lambda tmp: _on_csv(GROUP_CSV, "")(tmp).replace(
         "- method: logreg\n", "- method: ramp\n    params: {constraints: [{rate: fpr, "
                               "max: 0.3}], lam: 0.01}\n    certify: {fraction: 0.999}\n"),
     [], "methods[0].certify.fraction 0.999 leaves 0 of the"),
    ("run-mlflow-into-proc", BASE, ["--mlflow", "/proc/x"],
     "--mlflow: cannot create the store folder '/proc/x'"),
    ("run-mlflow-file-uri-into-proc", BASE, ["--mlflow", "file:///proc/x/y"],
     "--mlflow: cannot create the store folder '/proc/x/y'"),
    ("run-mlflow-into-sys", BASE, ["--mlflow", "/sys/x"],
     "--mlflow: cannot create the store folder '/sys/x'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_before_running(case, tmp_path, cli):
    _, text, extra, fragment = case
    run_and_validate(cli, tmp_path, text, extra, 2, fragment)


def test_the_one_group_line_names_the_column_and_its_value(tmp_path, cli):
    """The line names the column, the file and the one value it holds."""
    line = run_and_validate(cli, tmp_path, _on_csv(ONE_GROUP_CSV, "", extra=", group: sex"),
                            [], 2, "holds one group only")
    path = tmp_path / "data.csv"
    assert f"group column 'sex' in '{path}' holds one group only ('M' on all 80 rows)" in line


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of BASE with logreg (iris, one seed)."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    base = tmp_path_factory.mktemp("finished")
    spec = base / "spec.yaml"
    spec.write_text(BASE.replace("method: svm", "method: logreg"))
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(base / "runs")])
    assert result.exit_code == 0, result.output
    return next((base / "runs").iterdir())


@pytest.mark.parametrize("out, fragment", [
    ("/proc/x", "--out: cannot create folder '/proc/x': folder '/proc' is not writable"),
    ("/proc/self/x", "--out: cannot create folder '/proc/self/x'"),
    ("/sys/x", "--out: cannot create folder '/sys/x': folder '/sys' is not writable"),
    ("/dev/null/x", "'/dev/null' is a character device, not a folder"),
], ids=["proc", "proc-self", "sys", "under-dev-null"])
def test_deploy_out_unwritable(finished, out, fragment, cli):
    """``deploy --out`` a place no folder can be made: one line, exit 2, the run untouched."""
    before = sorted(p.stat().st_mtime_ns for p in finished.rglob("*"))
    result = cli("deploy", finished, "--out", out)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], lines[0]
    assert sorted(p.stat().st_mtime_ns for p in finished.rglob("*")) == before


def test_validate_reads_data_as_run_reads_it(tmp_path, cli):
    """Empty cells imputed by the dataset's ``preprocess``: ``run --dry-run`` accepts the spec,
    and ``validate`` says "valid" and lists the comparison of groups (it once said "valid",
    then failed reading the groups without the imputer)."""
    text = _on_csv(TWO_GROUPS_CSV.replace("\n3,", "\n,"), "", extra=", group: sex")(tmp_path)
    text = text.replace("- method: logreg\n", "- method: ramp\n    params: {constraints: "
                        "[{rate: fairness_ratio, min: 0.8}], lam: 0.01}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text.replace("- dataset: csv", "- dataset: csv\n    preprocess: "
                                 "{impute: median}"))
    dry, validated = cli("run", spec, "--dry-run"), cli("validate", spec)
    assert dry.exit_code == validated.exit_code == 0, (dry.output, validated.output)
    assert validated.stderr == ""
    assert ": valid; 1 jobs" in validated.stdout
    assert "comparisons of groups:" in validated.stdout and "s_p(" in validated.stdout
    missing = cli("validate", spec, "datasets[0].preprocess=none")
    assert missing.exit_code == 2 and "empty" in missing.stderr, missing.output
