"""Everything a plugin can check before fitting stops the run before any job starts: the
same one line and exit code 2 from ``run --dry-run`` and ``validate``, nothing written."""

from __future__ import annotations

import pytest

CASES = {
    "ramp_rows": ("""
        name: x
        datasets: [{dataset: breast_cancer}]
        methods: [{method: ramp, params: {constraints: [{rate: fairness_ratio, kappa: 0.8}]}}]
        """, r"methods\[0\] \(ramp\) on datasets\[0\] \(breast_cancer\) needs 'groups', which "
             r"the dataset does not provide"),
    "thresholded_rows": ("""
        name: x
        datasets: [{dataset: breast_cancer}]
        methods: [{method: thresholded_svm}]
        """, r"methods\[0\] \(thresholded_svm\) on datasets\[0\] \(breast_cancer\) needs "
             r"'baseline'"),
    "zafar_rows": ("""
        name: x
        datasets: [{dataset: breast_cancer}]
        methods: [{method: zafar, params: {c: 0.1}}]
        """, r"methods\[0\] \(zafar\) on datasets\[0\] \(breast_cancer\) needs 'groups'"),
    "ramp_classes": ("""
        name: x
        datasets: [{dataset: iris}]
        methods: [{method: ramp}]
        """, r"methods\[0\] \(ramp\) on datasets\[0\] \(iris\) takes two classes, but the "
             r"dataset has 3"),
    "mcsvm_classes": ("""
        name: x
        datasets: [{dataset: wine}]
        methods: [{method: mcsvm, params: {calibration: none}}]
        """, r"methods\[0\] \(mcsvm\) on datasets\[0\] \(wine\) takes two classes"),
    "robust_socp_scaling": ("""
        name: x
        datasets: [{dataset: uncertain_synthetic, preprocess: standardize}]
        methods: [{method: robust_socp}]
        """, r"methods\[0\] \(robust_socp\) on datasets\[0\] \(uncertain_synthetic\) takes X as "
             r"the dataset gives it .* preprocess must be none, not 'standardize'"),
    "selection_width": ("""
        name: x
        datasets: [{dataset: breast_cancer}]
        methods:
          - method: budgeted_selection
            params: {budget: 10, classes: [{method: logreg, features: [5, 31], incremental: refit}]}
        """, r"methods\[0\] \(budgeted_selection\) on datasets\[0\] \(breast_cancer\) asks for "
             r"classes\[1\]\.features=31, more than the 30 features"),
}


@pytest.mark.parametrize("command", [("run", "--dry-run"), ("validate",)])
@pytest.mark.parametrize("case", sorted(CASES))
def test_stops_before_running(cli, write_spec, tmp_path, case, command):
    import re

    text, message = CASES[case]
    out = tmp_path / "runs"
    args = [command[0], write_spec(text), *command[1:]]
    result = cli(*args, *(["--out", out] if command[0] == "run" else []))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), result.output
    assert not out.exists()


def test_the_same_specs_pass_when_the_data_fits(cli, write_spec):
    """The checks are about the data, not the methods: each case with data that fits passes."""
    text = """
        name: x
        datasets:
          - {dataset: uncertain_synthetic, preprocess: none}
          - {dataset: breast_cancer, preprocess: standardize}
        methods:
          - {method: robust_socp, datasets: [uncertain_synthetic]}
          - method: budgeted_selection
            datasets: [breast_cancer]
            params: {budget: 10, classes: [{method: logreg, features: [5, 30], incremental: refit}]}
          - {method: ramp, datasets: [breast_cancer]}
          - {method: mcsvm, datasets: [breast_cancer], params: {calibration: none}}
        """
    result = cli("validate", write_spec(text))
    assert result.exit_code == 0, result.output
