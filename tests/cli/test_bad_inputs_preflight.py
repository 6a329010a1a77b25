"""The catalogue of bad inputs caught before running (issue 20, items 3, 4 and 6): parameters
every job would fail on, undeclared metric and promise names in expectations and plots, run
options, spec reading, CSV cells and data paths. Each case goes through the harness of
tests/cli/test_bad_inputs.py (:func:`run_and_validate`): exit code, exactly one ``error: `` line
on stderr holding the fragment, no traceback, nothing written under ``--out``, and
``validate`` with the same arguments gives the same exit code and stderr."""

from __future__ import annotations

import importlib.util
import os
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from test_bad_inputs import BASE, _csv, run_and_validate

# --------------------------------------------------------------------------------------------
# parameters: every registered method's numeric parameters, checked by the estimator's own
# constraints (safeclf.plugins.contract.MethodPlugin.check_params) before any data is loaded

#: Numeric parameters of each method (fairlearn_eg needs an extra that CI does not install;
#: its parameters are checked the same way).
NUMERIC = {
    "svm": ("C", "degree", "coef0", "max_iter"),
    "logreg": ("C", "l1_ratio", "tol", "intercept_scaling", "max_iter", "verbose"),
    "sgd": ("alpha", "l1_ratio", "max_iter", "tol", "verbose", "epsilon", "eta0", "power_t",
            "validation_fraction", "n_iter_no_change"),
    "ramp": ("cv", "cv_repeats", "intercept_scaling", "max_multiplier", "max_mm_iter", "mm_tol",
             "max_cp_iter", "tol", "svm_tol", "svm_max_iter", "feasibility_tol"),
    "mcsvm": ("eta", "n_tau", "degree", "coef0", "epsilon", "delta", "tol", "max_iter",
              "cache_size", "guarantee_draws"),
    "proset": ("n_batches", "n_candidates", "max_fraction", "lambda_v", "lambda_w", "alpha_v",
               "alpha_w", "max_batches", "n_search", "cv", "solver_factr", "solver_memory",
               "weight_scale", "max_iter", "merge_tol", "blas_threads"),
    "robust_socp": ("C", "epsilon", "n_monte_carlo"),
    "budgeted_selection": ("budget", "quantum", "cost_probe", "penalty_c", "penalty_alpha",
                           "kappa2", "lam", "halving_factor", "holdout"),
    "group_thresholds": ("kappa", "C", "max_iter"),
    "thresholded_svm": ("C",),
    "report_knn": ("k_max", "cv"),
}
#: report_xgboost needs xgboost (the bench extra); without it validate refuses the method
#: first, in one line naming the extra (tests/methods/test_proset_peers.py)
HAS_XGB = importlib.util.find_spec("xgboost") is not None
if HAS_XGB:
    NUMERIC["report_xgboost"] = ("n_trials", "max_depth", "n_trees", "cv")
#: Values the constraints accept, so not bad inputs: -1 for an unbounded real, 0 where a
#: parameter may be 0 (a tolerance, a verbosity, a count that may be none), infinity where
#: the estimator means something by it (logreg's C = inf: no penalty).
NEGATIVE_OK = {("svm", "coef0"), ("mcsvm", "coef0"), ("sgd", "power_t")}
ZERO_OK = {("logreg", p) for p in ("l1_ratio", "tol", "max_iter", "verbose")} | {
    ("mcsvm", "coef0"), ("mcsvm", "guarantee_draws"), ("svm", "coef0"),
    ("ramp", "mm_tol"), ("ramp", "feasibility_tol"), ("robust_socp", "n_monte_carlo"),
    ("budgeted_selection", "penalty_c"), ("budgeted_selection", "kappa2"),
    *(("proset", p) for p in ("n_batches", "lambda_v", "lambda_w", "max_batches", "merge_tol",
                              "alpha_v", "alpha_w")),
    *(("sgd", p) for p in ("alpha", "l1_ratio", "tol", "verbose", "epsilon", "power_t"))}
INF_OK = {("logreg", "C"), ("svm", "coef0"), ("mcsvm", "coef0")}


#: Parameters a method needs besides the one under test.
REQUIRED = {"budgeted_selection":
            "classes: [{method: logreg, features: 2, incremental: warm_start}], "}


def _param_cases():
    cases = []
    for method, names in NUMERIC.items():
        for p in names:
            where = f"methods[0].params.{p}"
            values = [("string", "abc", f"{where} "), ("list", "[1]", f"{where} "),
                      ("nan", ".nan", f"{where} is NaN")]
            if (method, p) not in NEGATIVE_OK:
                values.append(("negative", "-1", f"{where} "))
            if (method, p) not in ZERO_OK:
                values.append(("zero", "0", f"{where} "))
            if (method, p) not in INF_OK:
                values.append(("inf", ".inf", f"{where} "))
            for label, value, fragment in values:
                text = BASE.replace("method: svm", f"method: {method}") + \
                    f"    params: {{{REQUIRED.get(method, '')}{p}: {value}}}\n"
                cases.append((f"{method}-{p}-{label}", text, [], 2, fragment))
    return cases


def test_the_table_lists_every_numeric_parameter():
    """NUMERIC is complete: every registered method's int or float parameters (defaults)."""
    from safeclf.plugins import registry

    for name in registry.method_names():
        if name == "fairlearn_eg" or (name == "report_xgboost" and not HAS_XGB):
            continue
        numeric = {k for k, v in registry.get_method(name).defaults().items()
                   if isinstance(v, int | float) and not isinstance(v, bool)}
        assert numeric == set(NUMERIC.get(name, ())), name


# --------------------------------------------------------------------------------------------
# parameters and data every job would fail on, found at preflight (safeclf/execution/preflight.py)

IRIS_STD = BASE.replace("- dataset: iris", "- dataset: iris\n    preprocess: standardize")


def _data(content, extra="", preprocess="", name="data.csv"):
    """A spec on a CSV written into tmp_path (``content`` text or bytes)."""

    def make(tmp):
        path = tmp / name
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        pre = f"\n    preprocess: {preprocess}" if preprocess else ""
        return BASE.replace("- dataset: iris", f"- dataset: csv\n    params: {{path: {path}, "
                                               f"target: y{extra}}}{pre}")

    return make


def _rows(first: str, n: int = 12) -> str:
    return "a,b,y\n" + first + "".join(f"{i % 5},{(i * 7) % 3},{i % 2}\n" for i in range(n))


HUGE = "1180591620717411303424"  # 2^70
PREFLIGHT = [
    ("svm-max_iter-2^70", BASE + f"    params: {{max_iter: {HUGE}}}\n", [], 2,
     f"methods[0].params.max_iter is {HUGE}, too large for method 'svm' on datasets[0] (iris)"),
    ("svm-max_iter-2^31", BASE + "    params: {max_iter: 2147483648}\n", [], 2,
     "methods[0].params.max_iter is 2147483648, too large for method 'svm'"),
    ("svm-max_iter-2^63", BASE + "    params: {max_iter: 9223372036854775808}\n", [], 2,
     "OverflowError"),
    ("svm-max_iter-grid-point-2^70", BASE + f"    params: {{max_iter: {{grid: [100, {HUGE}]}}}}\n",
     [], 2, f"methods[0].params.max_iter is {HUGE}"),
    ("svm-poly-degree-2^40", BASE + "    params: {kernel: poly, degree: 1099511627776}\n", [], 2,
     "methods[0].params.degree is 1099511627776, too large for method 'svm'"),
    ("sgd-max_iter-2^32", BASE.replace("method: svm", "method: sgd")
     + "    params: {max_iter: 4294967296}\n", [], 2,
     "methods[0].params.max_iter is 4294967296, too large for method 'sgd'"),
    ("sgd-n_iter_no_change-2^31", BASE.replace("method: svm", "method: sgd")
     + "    params: {n_iter_no_change: 2147483648}\n", [], 2,
     "methods[0].params.n_iter_no_change is 2147483648"),
    ("second-method-2^70", BASE + "  - method: svm\n    name: big\n"
     f"    params: {{max_iter: {HUGE}}}\n", [], 2, "methods[1].params.max_iter is"),
    ("class_weight-absent-int", BASE + "    params: {class_weight: {7: 2}}\n", [], 2,
     "methods[0] (svm) on datasets[0] (iris) has class_weight naming 7, not a class of the "
     "dataset (classes: 0, 1, 2)"),
    ("class_weight-absent-negative", BASE + "    params: {class_weight: {-1: 2}}\n", [], 2,
     "has class_weight naming -1"),
    ("class_weight-label-as-string", BASE + "    params: {class_weight: {'0': 2}}\n", [], 2,
     "has class_weight naming '0'"),
    ("class_weight-unicode", BASE + "    params: {class_weight: {é: 2}}\n", [], 2,
     "has class_weight naming 'é'"),
    ("class_weight-logreg", BASE.replace("method: svm", "method: logreg")
     + "    params: {class_weight: {5: 1.0}}\n", [], 2, "methods[0] (logreg)"),
    ("class_weight-sgd", BASE.replace("method: svm", "method: sgd")
     + "    params: {class_weight: {9: 1.0}}\n", [], 2, "methods[0] (sgd)"),
    ("class_weight-in-grid", BASE + "    params: {class_weight: {grid: [balanced, {3: 1}]}}\n",
     [], 2, "has class_weight naming 3"),
    ("iris-features-empty", BASE.replace("- dataset: iris",
                                         "- dataset: iris\n    params: {features: []}"), [], 2,
     "datasets[0] (iris): iris: features is empty"),
    ("wine-features-empty", BASE.replace("- dataset: iris",
                                         "- dataset: wine\n    params: {features: []}"), [], 2,
     "wine: features is empty"),
    ("csv-features-empty", _data(_rows(""), ", features: []"), [], 2, "csv: features is empty"),
    ("csv-only-target", _data("y\n0\n1\n0\n1\n"), [], 2,
     "has no feature columns besides the target and group"),
    ("csv-1e308-standardize", _data(_rows("1e308,1,0\n1e308,2,1\n" * 4), preprocess="standardize"),
     [], 2, "preprocess 'standardize' overflows on feature column 'a'"),
    # ±1e200: the mean stays finite whatever the split, the variance's squares overflow
    ("csv-pm1e200-standardize", _data(_rows("1e200,1,0\n-1e200,2,1\n" * 4),
                                      preprocess="standardize"),
     [], 2, "preprocess 'standardize' overflows on feature column 'a': its variance is not finite"),
    ("csv-pm1e308-minmax", _data(_rows("1e308,1,0\n-1e308,2,1\n" * 4), preprocess="minmax"), [], 2,
     "preprocess 'minmax' overflows on feature column 'a': its range is not finite"),
    ("csv-1e308-second-column", _data("a,b,y\n" + "".join(
        f"{i},{'1e308' if i < 3 else i},{i % 2}\n" for i in range(12)), preprocess="standardize"),
     [], 2, "feature column 'b'"),
    ("csv-1e308-method-preprocess", lambda tmp: _data(_rows("1e308,1,0\n-1e308,2,1\n" * 4))(tmp)
     + "    preprocess: standardize\n", [], 2, "preprocess 'standardize' overflows"),
]


# --------------------------------------------------------------------------------------------
# expectations and plots naming columns or promises no selected method declares

GROUPED = "x,z,sex,y\n" + "".join(
    f"{i % 7},{(i * 3) % 5},{'Male' if i % 3 else 'Female'},{int((i % 5) > 1)}\n" for i in range(60))


def _ramp(expect_or_plot: str):
    def make(tmp):
        path = _csv(tmp, GROUPED, "grouped.csv")
        return (f"name: x\ndatasets: [{{dataset: csv, params: {{path: {path}, target: y, "
                f"group: sex}}}}]\nmethods:\n  - {{method: ramp, params: {{constraints: "
                f"[{{rate: fairness_ratio, kappa: 0.8}}]}}}}\n{expect_or_plot}\n")

    return make


def _expect(body: str) -> str:
    return BASE + f"expect: [{body}]\n"


def _plot(body: str) -> str:
    return BASE + f"plots: [{body}]\n"


NAMES = [
    ("expect-promise-of-a-baseline", _expect('{metric: promise_error_holds, "<=": 1}'), [], 2,
     "expect[0].metric: no method reports 'promise_error_holds'"),
    ("expect-no_solution-without-certify", _expect('{metric: no_solution, "<=": 0}'), [], 2,
     "expect[0].metric: no method reports 'no_solution'"),
    ("expect-ramp-promise-misspelt", _ramp(
        'expect: [{metric: promise_constraint_fairnes_ratio_holds, ">=": 1}]'), [], 2,
     "expect[0].metric: no method reports 'promise_constraint_fairnes_ratio_holds' (did you "
     "mean"),
    ("expect-ramp-constraint-misspelt", _ramp(
        'expect: [{metric: test_constraint_fairnes_ratio, ">=": 0.8}]'), [], 2,
     "no method reports 'test_constraint_fairnes_ratio' (did you mean "
     "'test_constraint_fairness_ratio'?)"),
    ("expect-ramp-unknown-monitor", _ramp('expect: [{metric: test_monitor_err, "<=": 1}]'), [],
     2, "no method reports 'test_monitor_err'"),
    ("expect-ramp-no-calibration-part", _ramp('expect: [{metric: cal_objective, "<=": 1}]'), [],
     2, "no method reports 'cal_objective'"),
    ("expect-ramp-no_solution", _ramp('expect: [{metric: no_solution, "<=": 0}]'), [], 2,
     "no method reports 'no_solution'"),
    ("method-datasets-empty", BASE + "  - method: robust_socp\n    datasets: []\n", [], 2,
     "methods[1].datasets must not be empty"),
    ("expect-metric-of-unselected-method", _expect(
        '{metric: margin, method: svm, "<=": 1}'), [], 2,
     "expect[0].metric: no method selected reports 'margin'"),
    ("expect-rhs-metric-unknown", _expect(
        '{metric: test_error, "<=": {metric: test_eror, method: svm}}'), [], 2,
     "expect[0].\"<=\".metric: no method selected reports 'test_eror'"),
    ("expect-per-unknown", _expect('{metric: test_error, per: [sed], "<=": 1}'), [], 2,
     "expect[0].per[0]: no column 'sed' in the metrics table (did you mean 'seed'?)"),
    ("expect-per-second-unknown", _expect('{metric: test_error, per: [seed, param.CC], "<=": 1}'),
     [], 2, "expect[0].per[1]: no column 'param.CC'"),
    ("expect-where-unknown", _expect('{metric: test_error, where: {CC: 1}, "<=": 1}'), [], 2,
     "expect[0].where.CC: no column 'CC' in the metrics table (did you mean 'C'?)"),
    ("expect-where-unicode", _expect('{metric: test_error, where: {Ç: 1}, "<=": 1}'), [], 2,
     "expect[0].where.Ç: no column 'Ç'"),
    ("expect-rhs-where-unknown", _expect(
        '{metric: test_error, "<=": {method: svm, where: {gamma2: 1}}}'), [], 2,
     "expect[0].\"<=\".where.gamma2: no column 'gamma2'"),
    ("expect-metric-not-asked", _expect('{metric: test_balanced_accuracy, "<=": 1}')
     .replace("expect:", "metrics: [error]\nexpect:"), [], 2,
     "add 'balanced_accuracy' to metrics to compute it"),
    ("expect-paper-unknown", _expect('{metric: test_errr, paper: 0.1, tolerance: 0.1}'), [], 2,
     "no method reports 'test_errr'"),
    ("expect-unicode-metric", _expect('{metric: tést_error, "<=": 1}'), [], 2,
     "no method reports 'tést_error'"),
    ("expect-huge-metric-name", _expect('{metric: ' + "x" * 300 + ', "<=": 1}'), [], 2,
     "expect[0].metric: no method reports"),
    ("plot-bar-unknown-metric", _plot("{kind: bar, metric: test_eror}"), [], 2,
     "plots[0].metric: no method reports 'test_eror' (did you mean 'test_error'?)"),
    ("plot-bar-metric-number", _plot("{kind: bar, metric: 3}"), [], 2,
     "plots[0].metric must be a column name, got 3"),
    ("plot-bar-metric-list", _plot("{kind: bar, metric: [test_error]}"), [], 2,
     "plots[0].metric must be a column name, got ['test_error']"),
    ("plot-bar-metric-null", _plot("{kind: bar, metric: null}"), [], 2,
     "plots[0].metric must be a column name, got None"),
    ("plot-bar-missing-metric", _plot("{kind: bar}"), [], 2,
     "plots[0].metric is required for a 'bar' plot"),
    ("plot-bar-bound-string", _plot("{kind: bar, metric: test_error, bound: high}"), [], 2,
     "plots[0].bound must be a number, got 'high'"),
    ("plot-scatter-unknown-x", _plot("{kind: scatter, x: test_acc, y: test_error}"), [], 2,
     "plots[0].x: no method reports 'test_acc'"),
    ("plot-scatter-unknown-y", _plot("{kind: scatter, x: test_error, y: train_eror}"), [], 2,
     "plots[0].y: no method reports 'train_eror'"),
    ("plot-scatter-x-mapping", _plot("{kind: scatter, x: {a: 1}, y: test_error}"), [], 2,
     "plots[0].x must be a column name"),
    ("plot-scatter-missing-x", _plot("{kind: scatter, y: test_error}"), [], 2,
     "plots[0].x is required for a 'scatter' plot"),
    ("plot-line-unknown-param", _plot("{kind: line, x: param.gama, y: test_error}"), [], 2,
     "plots[0].x: no method reports 'param.gama' (did you mean 'param.gamma'?)"),
    ("plot-line-y-bool", _plot("{kind: line, x: param.C, y: true}"), [], 2,
     "plots[0].y must be a column name, got True"),
    ("plot-line-missing-y", _plot("{kind: line, x: param.C}"), [], 2,
     "plots[0].y is required for a 'line' plot"),
    ("plot-methods-unknown", _plot("{kind: bar, metric: test_error, methods: [svn]}"), [], 2,
     "plots[0].methods[0]: no method labelled 'svn' (did you mean 'svm'?)"),
    ("plot-methods-string", _plot("{kind: bar, metric: test_error, methods: svm}"), [], 2,
     "plots[0].methods must be a non-empty list of method labels, got 'svm'"),
    ("plot-methods-empty", _plot("{kind: bar, metric: test_error, methods: []}"), [], 2,
     "plots[0].methods must be a non-empty list"),
    ("plot-datasets-unknown", _plot("{kind: bar, metric: test_error, datasets: [iris, wine]}"),
     [], 2, "plots[0].datasets[1]: no dataset labelled 'wine'"),
    ("plot-metric-of-filtered-method", _plot(
        "{kind: bar, metric: margin, methods: [svm]}"), [], 2,
     "plots[0].metric: no method selected reports 'margin'"),
    ("plot-name-path", _plot("{kind: bar, metric: test_error, name: ../../escape}"), [], 2,
     "plots[0].name must be a file name (1 to 100 characters, no '/'), got '../../escape'"),
    ("plot-name-dotdot", _plot("{kind: bar, metric: test_error, name: '..'}"), [], 2,
     "plots[0].name must be a file name"),
    ("plot-name-too-long", _plot("{kind: bar, metric: test_error, name: " + "p" * 101 + "}"), [],
     2, "plots[0].name must be a file name"),
    ("plot-name-repeated", _plot("{kind: bar, metric: test_error, name: a}, "
                                 "{kind: bar, metric: train_error, name: a}"), [], 2,
     "plots[1].name 'a' is the name of an earlier plot"),
    ("plot-plugin-kind-misspelt", _plot("{kind: budget_shar}"), [], 2,
     "plots[0].kind: unknown plot kind 'budget_shar'"),
    ("plot-ramp-unknown-metric", _ramp("plots: [{kind: line, x: param.lam, y: test_constraint_x}]"),
     [], 2, "plots[0].y: no method reports 'test_constraint_x'"),
]


# --------------------------------------------------------------------------------------------
# run options, checked before the first job by run (with or without --dry-run) and validate

def _silent_port() -> int:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


OPTIONS = [
    ("out-is-a-file", lambda tmp: (_csv(tmp, "x", "afile"), BASE)[1], ["--out", "afile"], 2,
     "--out: 'afile' is a regular file, not a folder"),
    ("jobs-zero", BASE, ["--jobs", "0"], 2, "--jobs must be a positive number of workers or -1"),
    ("jobs-minus-two", BASE, ["--jobs", "-2"], 2, "got -2"),
    ("name-300", BASE, ["--name", "n" * 300], 2,
     "--name is 300 characters long; at most 100 are allowed (it names the run folder)"),
    ("name-101", BASE, ["--name", "n" * 101], 2, "--name is 101 characters long"),
    ("name-slash", BASE, ["--name", "a/b"], 2,
     "--name must be letters, digits, '_', '.' or '-' (it names the run folder), got 'a/b'"),
    ("name-empty", BASE, ["--name", ""], 2, "--name must be letters"),
    ("name-unicode", BASE, ["--name", "exp\u00e9"], 2, "--name must be letters"),
    ("name-space", BASE, ["--name", "my run"], 2, "got 'my run'"),
    ("spec-name-300", BASE.replace("name: bad", "name: " + "s" * 300), [], 2,
     "name must be at most 100 characters long, got 'ssssss"),
    ("spec-name-unicode", BASE.replace("name: bad", "name: tést"), [], 2,
     "name must match the pattern"),
    ("scheduler-without-dask", BASE, ["--scheduler", "tcp://127.0.0.1:8786"], 2,
     "--scheduler names a Dask scheduler: give it with --backend dask"),
    ("scheduler-port-out-of-range", BASE, ["--backend", "dask", "--scheduler", "tcp://h:99999"],
     2, "--scheduler: 'tcp://h:99999' is not an address"),
    ("scheduler-port-zero", BASE, ["--backend", "dask", "--scheduler", "tcp://h:0"], 2,
     "--scheduler: port 0 in 'tcp://h:0' is not from 1 to 65535"),
    ("scheduler-colons", BASE, ["--backend", "dask", "--scheduler", "nope:::"], 2,
     "--scheduler: 'nope:::' is not an address"),
    ("scheduler-no-port", BASE, ["--backend", "dask", "--scheduler", "tcp://host"], 2,
     "--scheduler: 'tcp://host' needs a host and a port"),
    ("scheduler-no-host", BASE, ["--backend", "dask", "--scheduler", "tcp://:8786"], 2,
     "needs a host and a port"),
    ("scheduler-scheme", BASE, ["--backend", "dask", "--scheduler", "http://h:8786"], 2,
     "--scheduler: unknown scheme 'http' in 'http://h:8786'"),
    ("scheduler-path", BASE, ["--backend", "dask", "--scheduler", "tcp://h:1/x"], 2,
     "needs a host and a port"),
    ("scheduler-port-text", BASE, ["--backend", "dask", "--scheduler", "tcp://h:port"], 2,
     "is not an address"),
    ("mlflow-ftp", BASE, ["--mlflow", "ftp://x/y"], 2,
     "--mlflow: unsupported URI scheme 'ftp' in 'ftp://x/y'"),
    ("mlflow-made-up-scheme", BASE, ["--mlflow", "s3x://bucket"], 2,
     "unsupported URI scheme 's3x'"),
    ("mlflow-empty", BASE, ["--mlflow", " "], 2, "--mlflow must not be empty"),
    ("mlflow-experiment-empty", BASE, ["--mlflow-experiment", ""], 2,
     "--mlflow-experiment must not be empty"),
]


def _mlflow_file_case(kind):
    def make(tmp):
        _csv(tmp, "not a store", "store")
        return BASE

    uri = {"path": "store", "file-uri": None, "under-file": "store/inner"}[kind]
    return make, uri


# --------------------------------------------------------------------------------------------
# spec reading: YAML the reader refuses, profiles of the wrong shape, overrides

READING = [
    ("control-char-soh", "name: x\x01\n", [], 2,
     "character U+0001 at line 1, column 8 is not allowed in YAML"),
    ("control-char-in-list", BASE + "metrics: [error\x02]\n", [], 2, "character U+0002 at line 8"),
    ("control-char-del", "name: bad\nseeds: \x7f\n", [], 2, "character U+007F at line 2"),
    ("control-char-nul", "name: bad\x00\n", [], 2, "character U+0000 at line 1"),
    ("control-char-escape", "name: a\x1b[31m\n", [], 2, "character U+001B"),
    ("nesting-3000-lists", "name: x\na: " + "[" * 3000 + "]" * 3000 + "\n", [], 2,
     "the YAML nests lists or mappings too deeply"),
    ("nesting-3000-mappings", "name: x\na: " + "{b: " * 3000 + "1" + "}" * 3000 + "\n", [], 2,
     "nests lists or mappings too deeply"),
    ("nesting-in-params", BASE + "    params: {C: " + "[" * 2000 + "]" * 2000 + "}\n", [], 2,
     "nests lists or mappings too deeply"),
    ("nesting-block-style", "name: x\n" + "".join(" " * i + "a:\n" for i in range(1500)), [], 2,
     "nests lists or mappings too deeply"),
    ("profiles-scalar", BASE + "profiles: 3\n", ["--profile", "ci"], 2,
     "profiles must be a mapping of profile names to changes, got 3"),
    ("profiles-list", BASE + "profiles: [ci]\n", ["--profile", "ci"], 2,
     "profiles must be a mapping of profile names to changes, got ['ci']"),
    ("profiles-entry-int", BASE + "profiles: {ci: 3}\n", ["--profile", "ci"], 2,
     "profiles.ci must be a mapping, got 3"),
    ("profiles-entry-int-unused", BASE + "profiles: {ci: 3}\n", [], 2,
     "profiles.ci must be a mapping, got 3"),
    ("profiles-entry-string", BASE + "profiles: {ci: fast}\n", ["--profile", "ci"], 2,
     "profiles.ci must be a mapping, got 'fast'"),
    ("profiles-method-patch-int", BASE + "profiles: {ci: {methods: {svm: 3}}}\n",
     ["--profile", "ci"], 2,
     "profiles.ci.methods.svm must be a mapping of changes to that method (or null to drop it), "
     "got 3"),
    ("profiles-dataset-patch-list", BASE + "profiles: {ci: {datasets: {iris: [1]}}}\n",
     ["--profile", "ci"], 2, "profiles.ci.datasets.iris must be a mapping of changes"),
    ("profiles-none-defined", BASE, ["--profile", "ci"], 2,
     "profiles: no profile 'ci' (the spec defines none)"),
    ("profile-suggests-another", BASE + "profiles: {ci: {seeds: 1}, full: {}}\n",
     ["--profile", "cii"], 2, "no profile 'cii' (did you mean 'ci'?)"),
    ("override-control-char", BASE, ["seeds=\x01"], 2,
     "override 'seeds=\x01': character U+0001 at line 1, column 1"),
    ("override-deep", BASE, ["methods[0].params.C=" + "[" * 3000 + "]" * 3000], 2,
     "nests lists or mappings too deeply"),
    ("override-name-300", BASE, ["name=" + "o" * 300], 2, "name must be at most 100 characters"),
]


# --------------------------------------------------------------------------------------------
# CSV cells and data paths

CELLS = [
    ("csv-empty-cell", _data("a,b,y\n1,2,0\n3,,1\n5,6,0\n7,8,1\n"), [], 2,
     "csv: feature column 'b' has an empty cell at line 3 of"),
    ("csv-empty-cell-line-23", _data("a,b,y\n" + "".join(
        f"{i},{'' if i == 21 else i},{i % 2}\n" for i in range(30))), [], 2,
     "feature column 'b' has an empty cell at line 23"),
    ("csv-empty-cell-after-blank-lines", _data("a,b,y\n1,2,0\n\n\n3,,1\n5,6,0\n7,8,1\n"), [], 2,
     "has an empty cell at line 5"),
    ("csv-empty-cell-after-quoted-newline", _data('a,b,y\n"x\ny",2,0\n3,,1\nz,6,0\nw,8,1\n'), [],
     2, "feature column 'b' has an empty cell at line 4"),
    ("csv-nan-text", _data("a,b,y\n1,2,0\n3,NaN,1\n5,6,0\n7,8,1\n"), [], 2,
     "feature column 'b' has an empty cell at line 3"),
    ("csv-inf-text", _data("a,b,y\n1,2,0\n3,inf,1\n5,6,0\n7,8,1\n"), [], 2,
     "feature column 'b' has the value inf at line 3"),
    ("csv-overflowing-number", _data("a,b,y\n1,2,0\n1e999,4,1\n5,6,0\n7,8,1\n"), [], 2,
     "feature column 'a' has the value inf at line 3"),
    ("csv-negative-inf", _data("a,b,y\n1,2,0\n-inf,4,1\n5,6,0\n7,8,1\n"), [], 2,
     "has the value -inf at line 3"),
    ("csv-empty-categorical", _data("a,c,y\n1,u,0\n3,,1\n5,v,0\n7,u,1\n"), [], 2,
     "feature column 'c' has an empty cell at line 3"),
    ("csv-unicode-column", _data("a,ñandú,y\n1,2,0\n3,,1\n5,6,0\n7,8,1\n"), [], 2,
     "feature column 'ñandú' has an empty cell at line 3"),
    ("csv-many-empty", _data("a,b,y\n,2,0\n3,,1\n,6,0\n7,8,1\n"), [], 2,
     "feature column 'a' has an empty cell at line 2 of"),
    ("csv-empty-target", _data("a,b,y\n1,2,0\n3,4,\n5,6,0\n7,8,1\n"), [], 2,
     "csv: target column 'y' has empty cells in"),
    ("csv-selected-feature-empty", _data("a,b,y\n1,2,0\n3,,1\n5,6,0\n7,8,1\n", ", features: [b]"),
     [], 2, "feature column 'b' has an empty cell at line 3"),
]


def _path_case(kind):
    def make(tmp):
        target = tmp / "data-path"
        if kind == "symlink-loop":
            os.symlink(tmp / "other-link", target)
            os.symlink(target, tmp / "other-link")
        elif kind == "fifo":
            os.mkfifo(target)
        elif kind == "folder":
            target.mkdir()
        elif kind == "dangling-symlink":
            os.symlink(tmp / "gone.csv", target)
        elif kind in ("dev-zero", "dev-null"):
            target = f"/dev/{kind[4:]}"
        return BASE.replace("- dataset: iris", f"- dataset: csv\n    params: {{path: {target}, "
                                               "target: y}")

    return make


PATHS = [
    ("data-symlink-loop", _path_case("symlink-loop"), [], 2,
     "is a symlink loop, not a regular file"),
    ("data-fifo", _path_case("fifo"), [], 2, "is a FIFO (named pipe), not a regular file"),
    ("data-dev-zero", _path_case("dev-zero"), [], 2,
     "csv: data file '/dev/zero' is a character device, not a regular file"),
    ("data-dev-null", _path_case("dev-null"), [], 2, "'/dev/null' is a character device"),
    ("data-folder", _path_case("folder"), [], 2, "is a folder, not a regular file"),
    ("data-dangling-symlink", _path_case("dangling-symlink"), [], 2, "does not exist"),
]

CASES = _param_cases() + PREFLIGHT + NAMES + OPTIONS + READING + CELLS + PATHS


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_caught_before_running(case, tmp_path, cli, monkeypatch):
    _, text, extra, code, fragment = case
    monkeypatch.chdir(tmp_path)  # relative --out and --mlflow paths land in tmp_path
    run_and_validate(cli, tmp_path, text, extra, code, fragment)


@pytest.mark.parametrize("kind", ["path", "file-uri", "under-file"])
def test_mlflow_store_that_is_a_file(kind, tmp_path, cli, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.chdir(tmp_path)
    make, uri = _mlflow_file_case(kind)
    uri = uri or (tmp_path / "store").as_uri()
    line = run_and_validate(cli, tmp_path, make, ["--mlflow", uri], 2, "--mlflow: ")
    assert "store" in line and (tmp_path / "store").read_text() == "not a store"


class _Answer(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server():
    """A local HTTP server; its handler answers every GET with ``_Answer.status``."""
    server = HTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_mlflow_server_that_does_not_answer_fails_fast(tmp_path, cli, monkeypatch):
    """A port that accepts connections and never answers: refused after the (short) timeout,
    before any job runs, not after every job ran."""
    pytest.importorskip("mlflow")
    import socket

    from safeclf.store import mlflow as tracking

    monkeypatch.setattr(tracking, "TIMEOUT", 0.5)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        uri = f"http://127.0.0.1:{listener.getsockname()[1]}"
        run_and_validate(cli, tmp_path, BASE, ["--mlflow", uri], 2,
                         f"--mlflow: no MLflow server answers at '{uri}' within 0.5 s")
    refused = f"http://127.0.0.1:{_silent_port()}"
    run_and_validate(cli, tmp_path, BASE, ["--mlflow", refused], 2,
                     f"--mlflow: no MLflow server answers at '{refused}'")


def test_mlflow_server_is_probed_at_health(tmp_path, cli, monkeypatch, http_server):
    """A server answering /health passes the check (validate exits 0); one answering 404
    there is refused as not an MLflow server."""
    pytest.importorskip("mlflow")
    uri = f"http://127.0.0.1:{http_server.server_address[1]}"
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE)
    assert cli("validate", spec, "--mlflow", uri).exit_code == 0
    monkeypatch.setattr(_Answer, "status", 404)
    run_and_validate(cli, tmp_path, BASE, ["--mlflow", uri], 2,
                     f"--mlflow: '{uri}' answers HTTP 404 at /health; is it an MLflow tracking "
                     "server?")


def test_mlflow_missing_is_said_before_running(tmp_path, cli, monkeypatch):
    """Without the mlflow package, --mlflow stops before any job with the install line."""
    import builtins

    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    run_and_validate(cli, tmp_path, BASE, ["--mlflow", str(tmp_path / "store")], 1,
                     "--mlflow needs the mlflow extra: pip install 'safeclf[mlflow]'")


def test_good_options_pass_validate(tmp_path, cli):
    """The same checks let good options through: a folder to create, a 100-character name, a
    well-formed scheduler address (not contacted by validate), a folder as MLflow store."""
    pytest.importorskip("mlflow")
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE)
    result = cli("validate", spec, "--out", tmp_path / "new" / "runs", "--name", "n" * 100,
                 "--backend", "dask", "--scheduler", "tcp://10.0.0.5:8786", "--mlflow",
                 tmp_path / "mlruns", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "new").exists() and not (tmp_path / "mlruns").exists()


def test_a_spec_without_error_gets_a_plot_of_its_own_metric(tmp_path, cli):
    """The implicit plot follows the metrics asked for: no error, no test_error plot."""
    from safeclf.spec.check import load_spec

    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE + "metrics: [balanced_accuracy]\n")
    assert cli("validate", spec).exit_code == 0
    plots = load_spec(spec).plots
    assert [(p.kind, p.model_extra) for p in plots] == [("bar", {"metric": "test_balanced_accuracy"})]
    spec.write_text(BASE + "metrics: [log_loss, error]\n")
    assert load_spec(spec).plots[0].model_extra == {"metric": "test_error"}
    spec.write_text(BASE + "metrics: [log_loss]\nplots: []\n")
    assert load_spec(spec).plots == []


def test_resume_with_an_override_as_the_spec(tmp_path, cli):
    """``run --resume RUN seeds=2``: seeds=2 is read as an override, not as the spec file;
    overrides need the spec, and the message says so; the run folder is untouched."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE)
    out = tmp_path / "runs"
    assert cli("run", spec, "--out", out, "-j", "1").exit_code == 0
    run_dir = next(out.iterdir())
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    result = cli("run", "--resume", run_dir, "seeds=2")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == ("error: key=value overrides apply to a spec file: give SPEC "
                                     "with --resume")
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_catalogue_size():
    """Issue 20 item 6: this file's share of the catalogue."""
    assert len(CASES) >= 120
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("entry, module, place", [
    ("{method: proset, name: proset_package, params: {engine: package}}", "proset",
     "methods[0]: method 'proset'"),
    ("{method: fairlearn_eg, params: {eps: 0.01}}", "fairlearn", "methods[0]: method 'fairlearn_eg'"),
])
def test_a_missing_extra_is_named_at_validate(entry, module, place, tmp_path, cli, monkeypatch):
    """issue 34: a config that needs a package of an extra says so when validated (one line,
    the extra to install, exit 2), not when its jobs run; the package is made missing here
    whether or not this machine has it."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == module else real(name, *a, **k))
    line = run_and_validate(cli, tmp_path, BASE.replace("- method: svm", f"- {entry}"), [], 2,
                            f"{place} needs the {module} package, which is not installed: "
                            "install the bench extra (pip install 'safeclf[bench]')")
    assert line.count("error:") == 1
    # with the package present the same spec validates (proset: its safeclf engine needs none)
    monkeypatch.setattr(importlib.util, "find_spec", real)
    if module == "proset":
        ok = tmp_path / "ok.yaml"
        ok.write_text(BASE.replace("- method: svm", "- {method: proset}"))
        assert cli("validate", ok).exit_code == 0
