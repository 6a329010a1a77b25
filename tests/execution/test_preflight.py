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


GROUPED = "x,sex,y\n" + "".join(
    f"{i % 7},{'Male' if i % 3 else 'Female'},{int((i % 5) > 1)}\n" for i in range(60))
NAMED = {
    "ramp": ("{method: ramp, params: {constraints: [{rate: fairness_ratio, kappa: 0.8, "
             "privileged: %s}]}}", r"constraints\[0\]\.privileged 'male' is not a value of the "
             r"data's groups \(did you mean 'Male'\?\)"),
    "zafar": ("{method: zafar, params: {c: 0.1, privileged: %s}}",
              r"privileged 'male' is not a value of the data's groups \(did you mean 'Male'\?\)"),
    "thresholded_svm": ("{method: thresholded_svm, params: {recall_min: 0.5, report: [{rate: "
                        "fairness_ratio, kappa: 0.8, privileged: %s}]}}",
                        r"report\[0\]\.privileged 'male' is not a value"),
}


@pytest.mark.parametrize("command", [("run", "--dry-run"), ("validate",)])
@pytest.mark.parametrize("method", sorted(NAMED))
def test_a_misspelt_privileged_group_stops_before_running(cli, write_spec, tmp_path, method,
                                                          command):
    """A privileged group a method names itself is checked against the data's groups by the
    one resolver (safeclf.guarantees.groups) before any job: one line, exit 2; spelt right, it passes."""
    import re

    data = tmp_path / "grouped.csv"
    data.write_text(GROUPED)
    entry, message = NAMED[method]
    out = tmp_path / "runs"
    for group, code in (("male", 2), ("Male", 0)):
        text = (f"name: x\ndatasets: [{{dataset: csv, params: {{path: {data}, target: y, "
                f"group: sex}}}}]\nmethods: [{entry % group}]\n")
        args = [command[0], write_spec(text), *command[1:]]
        result = cli(*args, *(["--out", out] if command[0] == "run" else []))
        assert result.exit_code == code, result.output
        if code:
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and re.search(
                rf"methods\[0\] \({method}\) on datasets\[0\] \(.*\) {message}", lines[0]), \
                result.output
        assert not out.exists()


def _iris_task(how="none"):
    from safeclf.execution.job import load_dataset, preprocess, split_task

    entry = {"dataset": "iris", "params": {}, "split": {"test": 0.3}, "name": "iris"}
    return preprocess(split_task(load_dataset(entry), entry, 0, None), how)


def test_wide_integers_are_found_at_any_depth():
    from safeclf.execution.preflight import WIDE_INT, wide_ints

    assert wide_ints({"a": WIDE_INT - 1, "b": True, "c": 1.0e300}) == []
    assert wide_ints({"a": [1, {"b": -WIDE_INT}]}) == [("a[1].b", -WIDE_INT)]


def test_trial_fit_blames_an_integer_only_when_the_default_fits():
    """liblinear takes a C int: 2^31 fails in every job; L-BFGS takes any integer, so the same
    value for logreg passes; a slice too small for the method is not blamed on the integer."""
    from safeclf.errors import SpecError
    from safeclf.execution.preflight import trial_fit
    from safeclf.plugins import registry
    from safeclf.plugins.contract import MethodPlugin

    task = _iris_task()
    with pytest.raises(SpecError, match=r"^m\.max_iter is 2147483648, too large for method 'svm' "
                                        r"on d \(its fit fails: OverflowError"):
        trial_fit(registry.get_method("svm"), {"max_iter": 2**31}, task, "m", "on d")
    trial_fit(registry.get_method("svm"), {"max_iter": 2**31 - 1}, task, "m", "on d")
    trial_fit(registry.get_method("logreg"), {"max_iter": 2**70}, task, "m", "on d")

    class Fails(MethodPlugin):
        def fit(self, estimator, task):
            raise ValueError("the slice is too small")

    failing = Fails(name="fails", estimator=registry.get_method("svm").estimator)
    trial_fit(failing, {"max_iter": 2**70}, task, "m", "on d")  # the default fails too


def test_scaler_overflow_names_the_column(tmp_path):
    import numpy as np

    from safeclf.data.task import Part, Task
    from safeclf.errors import DataError
    from safeclf.execution.job import preprocess
    from safeclf.execution.preflight import check_finite

    X = np.array([[1.0, 1e308], [2.0, 1e308], [3.0, 1.0], [4.0, 2.0]])
    y = np.array([0, 1, 0, 1])
    for how, what in (("standardize", "is not finite"), ("minmax", None), ("maxabs", None)):
        task = Task("d", Part(X.copy(), y), Part(X.copy(), y), info={"feature_names": ["a", "b"]})
        with np.errstate(all="ignore"):
            task = preprocess(task, how)
        if what is None:
            check_finite(task, how)  # ranges and maxima of 1e308 are finite
            continue
        with pytest.raises(DataError, match=rf"preprocess '{how}' overflows on feature column "
                                            r"'b': its (mean|variance) is not finite"):
            check_finite(task, how)
    check_finite(_iris_task("standardize"), "standardize")
