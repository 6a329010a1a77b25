"""The catalogue of bad inputs: each ends in one clear line and the right exit code, never a
traceback, and nothing is written."""

from __future__ import annotations

from pathlib import Path

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


GROUP_CSV = "a,sex,y\n" + "".join(f"{i},{'Male' if i % 3 else 'Female'},{i % 2}\n" for i in range(30))


THREE_CSV = "a,sex,origin,y\n" + "".join(
    f"{i},{'Male' if i % 2 else 'Female'},{('north', 'south', 'east')[i % 3]},{(i // 2) % 2}\n"
    for i in range(60))


#: A target of words (approve / deny), neither of which is favourable until a spec says so.
WORDS_CSV = "a,sex,y\n" + "".join(
    f"{i},{'Male' if i % 3 else 'Female'},{('approve', 'deny')[(i // 2) % 2]}\n" for i in range(40))


def _words(method, extra=""):
    """WORDS_CSV (groups by sex) through one method entry ``method`` (YAML lines)."""
    def make(tmp):
        return _with_csv(WORDS_CSV, extra=", group: sex" + extra)(tmp).replace(
            "- method: svm", method)

    return make


def _ramp_three(constraint, extra=", group: origin, privileged: north"):
    """A three-group CSV through ramp with one constraint item (YAML flow mapping)."""
    def make(tmp):
        path = _csv(tmp, THREE_CSV)
        return BASE.replace(
            "- dataset: iris",
            f"- dataset: csv\n    params: {{path: {path}, target: y{extra}}}").replace(
            "- method: svm", f"- method: ramp\n    params: {{constraints: [{constraint}], lam: 0.01}}")

    return make


def _with_csv(content, target="y", extra=""):
    def make(tmp):
        path = _csv(tmp, content)
        return BASE.replace("- dataset: iris",
                            f"- dataset: csv\n    params: {{path: {path}, target: {target}{extra}}}")

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
    ("proset-cv_rule-unknown", BASE.replace("method: svm", "method: proset")
     + "    params: {cv_rule: median}\n", [], 2, "methods[0].params.cv_rule must be a str among"),
    ("robust_socp-nu_method-unknown", BASE.replace("method: svm", "method: robust_socp")
     + "    params: {nu_method: grid}\n", [], 2, "methods[0].params.nu_method must be a str among"),
    ("budgeted_selection-average-not-bandit", BASE.replace("method: svm", "method: budgeted_selection")
     + "    params: {classes: [{method: logreg, features: 2, incremental: warm_start}], "
       "procedure: uniform, output: average}\n", [], 2,
     "methods[0].params.output 'average' is Theorem 2's average of Algorithm 1's round "
     "functions: it needs procedure 'bandit', not 'uniform'"),
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
    # issue 34: every expectation says where its reference comes from
    ("expect-without-source", BASE + 'expect: [{metric: test_error, "<=": 0.1}]\n', [], 2,
     "expect[0].source is required: say where the reference comes from, one of paper, figure,"
     " report, project, invariant"),
    ("expect-paper-source-without-where",
     BASE + 'expect: [{metric: test_error, "<=": 0.1, source: paper}]\n', [], 2,
     "expect[0].source needs 'where' for a 'paper' source: the page, table, equation"),
    ("expect-unknown-source",
     BASE + 'expect: [{metric: test_error, "<=": 0.1, source: papr}]\n', [], 2,
     "expect[0].source must be 'paper', 'figure', 'report', 'project' or 'invariant', got "
     "'papr' (did you mean 'paper'?)"),
    ("expect-figure-one-sided",
     BASE + 'expect: [{metric: test_error, paper: 0.2, tolerance: 0.01, compare: at_most, '
     'source: {kind: figure, where: Fig. 2}}]\n', [], 2,
     "expect[0] has a 'figure' source (a value read off a plot): give it as 'paper' with a "
     "two-sided 'tolerance' (compare: within)"),
    ("two-conditions", BASE + 'expect: [{metric: test_error, "<=": 0.1, ">=": 0.0}]\n', [], 2,
     "expect[0] needs exactly one condition"),
    ("expect-unknown-method", BASE + 'expect: [{metric: test_error, method: logrg, "<=": 0.1}]\n',
     [], 2, "expect[0].method: no method labelled 'logrg'"),
    ("unknown-plot", BASE + "plots: [{kind: barr, metric: test_error}]\n", [], 2,
     "plots[0].kind: unknown plot kind 'barr' (did you mean 'bar'?)"),
    ("plot-missing-axis", BASE + "plots: [{kind: scatter, x: test_error}]\n", [], 2,
     "plots[0].y is required for a 'scatter' plot"),
    # issue 34: a method's plot kind validates its own options
    ("mcsvm-plot-unknown-option",
     BASE.replace("method: svm", "method: mcsvm\n    params: {calibration: none}")
     + "plots: [{kind: safe_regions, colour: red}]\n", [], 2,
     "plots[0] (safe_regions): colour is not an option of this plot kind (options: none)"),
    ("mcsvm-plot-bad-epsilons",
     BASE.replace("method: svm", "method: mcsvm\n    params: {calibration: none}")
     + "plots: [{kind: sdr_regions, epsilons: [0.5, 2]}]\n", [], 2,
     "plots[0] (sdr_regions): epsilons must be a non-empty list of numbers in (0, 1), got "
     "[0.5, 2]"),
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
    ("nan-in-data", _with_csv(NAN_CSV), [], 2, "feature column 'b' has an empty cell at line 3 of"),
    ("one-class", _with_csv(ONE_CLASS_CSV), [], 2, "has only one class"),
    ("missing-column", _with_csv(TWO_ROWS_CSV, target="label"), [], 2, "column 'label' is not in"),
    ("expect-unknown-metric", BASE + 'expect: [{metric: test_eror, "<=": 0.1}]\n', [], 2,
     "expect[0].metric: no method reports 'test_eror' (did you mean 'test_error'?)"),
    ("expect-metric-not-computed", BASE + 'expect: [{metric: test_log_loss, "<=": 0.1}]\n', [], 2,
     "no method reports 'test_log_loss'"),
    ("plot-unknown-metric", BASE + "plots: [{kind: bar, metric: test_acuracy}]\n", [], 2,
     "plots[0].metric: no method reports 'test_acuracy'"),
    ("plot-unknown-param", BASE + "plots: [{kind: line, x: param.CC, y: test_error}]\n", [], 2,
     "plots[0].x: no method reports 'param.CC' (did you mean 'param.C'?)"),
    ("privileged-misspelt", _with_csv(GROUP_CSV, extra=", group: sex, privileged: male"), [], 2,
     "csv: privileged group 'male' is not a value of column 'sex'"),
    ("privileged-without-group", _with_csv(GROUP_CSV, extra=", privileged: Male"), [], 2,
     "'privileged' names a group, so 'group' must name the group column"),
    ("header-only-csv", _with_csv("a,y\n"), [], 2, "has no samples"),
    ("feature-index-out-of-range", BASE.replace(
        "- dataset: iris", "- dataset: iris\n    params: {features: [0, 99]}"), [], 2,
     "datasets[0] (iris): iris: features[1] is 99, but iris has 4 features"),
    ("zero-samples", BASE.replace(
        "- dataset: iris", "- dataset: checkerboard\n    params: {n_samples: 0}"), [], 2,
     "checkerboard: n_samples must be ≥ 2, got 0"),
    ("negative-samples", BASE.replace(
        "- dataset: iris", "- dataset: checkerboard\n    params: {n_samples: -5}"), [], 2,
     "checkerboard: n_samples must be ≥ 2, got -5"),
    ("loader-trips", BASE.replace(
        "- dataset: iris", "- dataset: nested\n    params: {n_samples: -5}"), [], 2,
     "datasets[0] (nested) cannot be loaded with params {'n_samples': -5}"),
    ("profiles-not-mapping", BASE + "profiles: true\n", [], 2, "profiles must be a mapping, got True"),
    ("seed-count-2^31", BASE.replace("seeds: 1", "seeds: 2147483648"), [], 2,
     "seeds must be ≤ 10,000 (a count of seeds), got 2147483648"),
    ("seed-count-2^63", BASE.replace("seeds: 1", "seeds: 9223372036854775808"), [], 2,
     "seeds must be ≤ 10,000"),
    ("seed-count-1e9", BASE.replace("seeds: 1", "seeds: 1000000000"), [], 2, "seeds must be ≤ 10,000"),
    ("seed-value-2^31", BASE.replace("seeds: 1", "seeds: [0, 2147483648]"), [], 2,
     "seeds[1] must be from 0 to 2147483647 (2^31 - 1), got 2147483648"),
    ("seed-value-2^63", BASE.replace("seeds: 1", "seeds: [9223372036854775808]"), [], 2,
     "seeds[0] must be from 0 to 2147483647"),
    ("seed-value-negative", BASE.replace("seeds: 1", "seeds: [-1]"), [], 2, "seeds[0] must be from 0"),
    ("too-many-jobs", BASE.replace("seeds: 1", "seeds: 10000") + "    params: {C: {grid: "
     + str(list(range(1, 12))) + "}}\n", [], 2,
     "the spec expands to 110,000 jobs (datasets × seeds × folds × methods × grid points); at most "
     "100,000"),
    ("duplicate-key", BASE + "seeds: 2\n", [], 2,
     "duplicate key 'seeds' at line 8 (first at line 3); YAML would keep only the last"),
    ("duplicate-nested-key", BASE + "    params: {C: 1, C: 2}\n", [], 2, "duplicate key 'C'"),
    ("csv-repeated-target-name", _with_csv("a,y,y\n1,0,0\n2,1,1\n3,0,0\n4,1,1\n"), [], 2,
     "csv: column name 'y' appears more than once in the header"),
    ("csv-repeated-feature-name", _with_csv("a,a,y\n1,5,0\n2,6,1\n3,7,0\n4,8,1\n"), [], 2,
     "csv: column name 'a' appears more than once"),
    ("csv-target-as-feature", _with_csv(GROUP_CSV, extra=", features: [a, y]"), [], 2,
     "csv: features[1] is 'y', the target column"),
    ("csv-group-as-feature", _with_csv(GROUP_CSV, extra=", group: sex, features: [sex, a]"), [], 2,
     "csv: features[0] is 'sex', the group column; a group is not listed as a feature; set "
     "group_as_feature: true"),
    ("csv-group-is-target", _with_csv(GROUP_CSV, extra=", group: y"), [], 2,
     "csv: group 'y' is also the target"),
    ("csv-empty-group-cell", _with_csv("a,g,y\n1,u,0\n2,,1\n3,u,0\n4,v,1\n", extra=", group: g"),
     [], 2, "csv: group column 'g' has empty cells"),
    ("csv-numeric-column-as-group", _with_csv("a,g,y\n" + "".join(
        f"{i},{i * 0.37:.2f},{i % 2}\n" for i in range(120)), extra=", group: g"), [], 2,
     "csv: group column 'g' in"),
    ("csv-group-as-feature-without-group", _with_csv(GROUP_CSV, extra=", group_as_feature: true"),
     [], 2, "csv: 'group_as_feature' needs 'group'"),
    # a rate among the predicted rows (precision) may be bounded, not minimised
    ("objective-precision", lambda tmp: BASE.replace("- dataset: iris", "- dataset: breast_cancer")
     .replace("- method: svm", "- method: ramp\n    params: {objective: precision}"), [], 2,
     "methods[0].params.objective[0].rate must be 'coverage', 'error'"),
    # more than two groups (issue 22): values out of range, groups the data lacks
    ("kappa-as-percent", _ramp_three("{rate: fairness_ratio, kappa: 80}"), [], 2,
     "methods[0].params.constraints[0].kappa must be ≤ 3, got 80"),
    ("difference-above-one", _ramp_three("{rate: fairness_difference, max: 10}"), [], 2,
     "methods[0].params.constraints[0].max must be ≤ 1, got 10"),
    ("compare-misspelt", _ramp_three("{rate: fairness_ratio, kappa: 0.8, compare: each_pair}"),
     [], 2, "constraints[0].compare must be"),
    ("protected-not-in-data", _ramp_three("{rate: fairness_ratio, kappa: 0.8, protected: west}"),
     [], 2, "constraints[0].protected 'west' is not a value of the data's groups"),
    ("privileged-not-in-data", _ramp_three("{rate: fairness_ratio, kappa: 0.8, privileged: west}",
                                           extra=", group: origin"),
     [], 2, "constraints[0].privileged 'west' is not a value of the data's groups"),
    ("protected-is-privileged", _ramp_three(
        "{rate: fairness_ratio, kappa: 0.8, protected: [north, south]}"), [], 2,
     "constraints[0].protected names the privileged group 'north'"),
    ("worst-pair-with-protected", _ramp_three(
        "{rate: fairness_ratio, kappa: 0.8, compare: worst_pair, protected: south}"), [], 2,
     "constraints[0]: protected names groups, which a worst_pair comparison does not take"),
    ("side-not-equalized-odds", _ramp_three("{rate: fairness_ratio, kappa: 0.8, side: fpr}"),
     [], 2, "side (tpr or fpr) is for equalized_odds"),
    ("intersection-privileged-length", _ramp_three(
        "{rate: fairness_ratio, kappa: 0.8}", extra=", group: [sex, origin], privileged: [Male]"),
     [], 2, "csv: privileged ['Male'] names 1 values for 2 group columns"),
    ("intersection-privileged-absent", _ramp_three(
        "{rate: fairness_ratio, kappa: 0.8}",
        extra=", group: [sex, origin], privileged: [Male, west]"),
     [], 2, "csv: privileged group 'Male & west' is not a value of the intersections"),
    ("group-list-empty", _with_csv(GROUP_CSV, extra=", group: []"), [], 2,
     "csv: group is an empty list"),
    ("group-list-twice", _with_csv(THREE_CSV, extra=", group: [sex, sex]"), [], 2,
     "csv: group names a column twice"),
    ("group-column-reserved", _with_csv("a,split,sex,y\n1,u,M,0\n2,v,F,1\n3,u,M,0\n4,v,F,1\n",
                                        extra=", group: [sex, split]"), [], 2,
     "csv: group column 'split' has the name of a row entry safeclf reserves"),
    ("adult-group-not-protected", BASE.replace(
        "- dataset: iris", "- dataset: adult\n    params: {n_rows: 200, group: [sex, age]}"), [], 2,
     "adult: group 'age' is not a protected attribute of Adult (known: sex, race)"),
    ("alias-bomb", "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")), [], 2,
     "the YAML expands to more than 200,000 values through its aliases"),
    # certification (issue 22): each refused before anything runs, naming the place
    ("certify-delta-above-one", BASE.replace("- method: svm", "- method: logreg")
     + "    promises: [{rate: fpr, max: 0.1}]\n    certify: {delta: 1.5}\n", [], 2,
     "methods[0].certify.delta must be in (0, 1), got 1.5"),
    ("certify-fraction-zero", BASE.replace("- method: svm", "- method: logreg")
     + "    promises: [{rate: fpr, max: 0.1}]\n    certify: {fraction: 0}\n", [], 2,
     "methods[0].certify.fraction must be in (0, 1), got 0"),
    ("certify-unknown-bound", BASE + "    promises: [{rate: fpr, max: 0.1}]\n"
     "    certify: {bound: wilson}\n", [], 2,
     "methods[0].certify.bound must be one of clopper_pearson, hoeffding, bentkus, ttest, got "
     "'wilson'"),
    ("certify-unknown-test", BASE + "    promises: [{rate: fpr, max: 0.1}]\n"
     "    certify: {test: bonferroni}\n", [], 2, "methods[0].certify.test"),
    ("certify-nothing-to-certify", BASE + "    certify: {delta: 0.05}\n", [], 2,
     "methods[0].certify: method 'svm' makes no promise to certify; state one under "
     "methods[0].promises"),
    ("certify-training-of-a-difference", BASE.replace("- method: svm", "- method: ramp")
     + "    params: {constraints: [{rate: fairness_difference, max: 0.1}]}\n"
     "    certify: {delta: 0.05}\n", [], 2,
     "methods[0].params.constraints[0]: certified training tightens rates and ratios, not a "
     "difference ('fairness_difference'); certify it post hoc"),
    ("certify-allow-degenerate-not-a-bool", BASE + "    promises: [{rate: fpr, max: 0.1}]\n"
     "    certify: {allow_degenerate: maybe}\n", [], 2, "methods[0].certify.allow_degenerate"),
    ("certify-training-without-hook", BASE + "    promises: [{rate: fpr, max: 0.1}]\n"
     "    certify: {how: training}\n", [], 2,
     "methods[0].certify.how: method 'svm' cannot be certified in training"),
    ("promise-unknown-rate", BASE + "    promises: [{rate: fpx, max: 0.1}]\n", [], 2,
     "methods[0].promises[0]"),
    ("promise-ratio-without-min", BASE + "    promises: [{rate: fairness_ratio}]\n", [], 2,
     "methods[0].promises[0] needs min"),
    # issue 32: bands and the group-blind route
    ("promise-band-reversed",
     BASE + "    promises: [{rate: fairness_ratio, min: 1.3, max: 1.25}]\n", [], 2,
     "methods[0].promises[0] is a band whose lower bound 1.3 exceeds its upper bound 1.25"),
    ("promise-band-min-and-kappa",
     BASE + "    promises: [{rate: fairness_ratio, min: 0.8, kappa: 0.7, max: 1.2}]\n", [], 2,
     "methods[0].promises[0] gives both min and kappa"),
    ("certify-group-blind-in-training",
     BASE.replace("- method: svm", "- method: ramp\n    params: {constraints: "
                  "[{rate: fairness_ratio, kappa: 0.8}]}\n    certify: {how: training, "
                  "group_blind: true}"), [], 2,
     "methods[0].certify.group_blind applies to how: threshold"),
    ("certify-group-blind-not-a-bool",
     BASE + "    promises: [{rate: fpr, max: 0.1}]\n    certify: {group_blind: 'yes'}\n", [], 2,
     "methods[0].certify.group_blind"),
    # issue 35: text columns that would hang a run
    ("csv-id-like-text-columns",
     _with_csv("a,name,ticket,y\n" + "".join(f"{i},n{i},t{i * 7},{i % 2}\n" for i in range(400))),
     [], 2, "text columns 'name' (400 distinct values), 'ticket' (400 distinct values)"),
    ("csv-one-hot-too-wide",
     _with_csv("a,c1,c2,c3,y\n" + "".join(f"{i},k{i % 2500},m{i % 2400},p{i % 2300},{i % 2}\n"
                                           for i in range(12000))), [], 2,
     "would make 7,200 feature columns"),
    ("promise-privileged-not-a-group",
     (lambda tmp: _with_csv(GROUP_CSV, extra=", group: sex")(tmp).replace(
         "- method: svm", "- method: logreg\n    promises: [{rate: fairness_ratio, min: 0.8, "
         "privileged: Alien}]")), [], 2,
     "methods[0].promises[0].privileged 'Alien' is not a value of the data's groups"),
    ("promise-subset-group-absent",
     (lambda tmp: _with_csv(GROUP_CSV, extra=", group: sex")(tmp).replace(
         "- method: svm", "- method: logreg\n    promises: [{rate: fpr, max: 0.1, subset: "
         "{groups: [Other]}}]")), [], 2,
     "methods[0].promises[0].subset.groups 'Other' is not a value of the data's 'groups'"),
    # the favourable outcome (issue 32): a rate of favourable decisions on words needs it named
    ("outcome-needed-by-a-fairness-promise",
     _words("- method: logreg\n    promises: [{rate: fairness_ratio, min: 0.8}]"), [], 2,
     "datasets[0].params.positive is needed: methods[0].promises[0] (fairness_ratio) counts "
     "favourable decisions, and the target 'y' holds 'approve', 'deny'; say which is "
     "favourable (positive: approve)"),
    ("outcome-needed-by-a-ramp-constraint",
     _words("- method: ramp\n    params: {constraints: [{rate: error, max: 0.4}, "
            "{rate: recall, min: 0.5}]}"), [], 2,
     "datasets[0].params.positive is needed: methods[0].params.constraints[1] (recall) counts "
     "favourable decisions"),
    ("outcome-needed-by-a-certificate",
     _words("- method: logreg\n    promises: [{rate: fpr, max: 0.3}]\n    certify: "
            "{fraction: 0.5}"), [], 2,
     "datasets[0].params.positive is needed: methods[0].promises[0] (fpr) counts favourable"),
    ("outcome-needed-by-group-thresholds",
     _words("- method: group_thresholds\n    params: {kappa: 0.8}"), [], 2,
     "datasets[0].params.positive is needed: methods[0].params.kappa (fairness_ratio)"),
    ("positive-not-a-label", _words("- method: logreg", ", positive: grant"), [], 2,
     "csv: positive is 'grant', which is not a value of target 'y'; it holds 'approve', 'deny'"),
    ("positive-wrong-case", _words("- method: logreg", ", positive: Approve"), [], 2,
     "which is not a value of target 'y' (did you mean 'approve'?)"),
    ("positive-on-three-labels", _with_csv(THREE_CSV.replace("a,sex,origin,y", "a,sex,y,origin"),
                                          extra=", positive: north"), [], 2,
     "csv: positive names the favourable value of target 'y', which needs exactly two values; "
     "it holds 3: 'east', 'north', 'south'"),
    ("positive-read-by-yaml-as-a-boolean",
     _with_csv("a,y\n" + "".join(f"{i},{('yes', 'no')[i % 2]}\n" for i in range(10)),
               extra=", positive: yes"), [], 2,
     "csv: positive is the boolean True (YAML reads an unquoted yes/no/true/false as one), "
     "but target 'y' holds 'no', 'yes'; quote the value"),
    ("certify-fraction-leaves-a-group-empty",
     (lambda tmp: _with_csv(GROUP_CSV, extra=", group: sex")(tmp).replace(
         "- method: svm", "- method: logreg\n    promises: [{rate: fairness_ratio, min: 0.8, "
         "privileged: Male}]\n    certify: {fraction: 0.05}")), [], 2,
     "methods[0].certify.fraction 0.05 leaves no held-back row for declared_fairness_ratio"),
]


def run_and_validate(cli, tmp_path, text, extra, code, fragment) -> str:
    """The harness of the catalogues: ``run SPEC --out DIR [extra]`` (``extra`` may name its
    own ``--out``) exits ``code`` with exactly one stderr line, ``error: ...`` holding
    ``fragment``, no traceback and nothing written under the output folder; ``validate`` with
    the same arguments gives the same exit code and stderr. ``text`` is the spec, or
    ``text(tmp_path)`` makes it. Returns the line."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(text(tmp_path) if callable(text) else text)
    out = tmp_path / "runs"
    args = [*extra] if "--out" in extra else ["--out", out, *extra]
    out = Path(args[args.index("--out") + 1])
    before = sorted(out.rglob("*")) if out.is_dir() else None
    result = cli("run", spec, *args)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert fragment in " ".join(result.stderr.split()), result.stderr
    after = sorted(out.rglob("*")) if out.is_dir() else None
    assert after == before or (before is None and after == []), "a bad input must write nothing"
    validated = cli("validate", spec, *args)
    assert (validated.exit_code, validated.stderr) == (result.exit_code, result.stderr)
    return lines[0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_exit_code(case, tmp_path, cli):
    _, text, extra, code, fragment = case
    run_and_validate(cli, tmp_path, text, extra, code, fragment)


@pytest.mark.parametrize("case", [c for c in CASES if not c[2]], ids=[c[0] for c in CASES if not c[2]])
def test_validate_gives_the_same_line_as_dry_run(case, tmp_path, cli):
    """validate runs every check run --dry-run does (data loaded, groups, metric names)."""
    _, text, _, code, _ = case
    spec = tmp_path / "spec.yaml"
    spec.write_text(text(tmp_path) if callable(text) else text)
    validated, dry = cli("validate", spec), cli("run", spec, "--dry-run")
    assert validated.exit_code == dry.exit_code == code
    assert validated.stderr == dry.stderr


def test_privileged_group_reaches_the_dataset(tmp_path):
    from safeclf.datasets.tabular import load_csv

    path = _csv(tmp_path, GROUP_CSV)
    assert load_csv(path, "y", group="sex", privileged="Male").info["privileged_group"] == "Male"
    assert "privileged_group" not in load_csv(path, "y", group="sex").info
    numeric = _csv(tmp_path, "a,g,y\n1,1,0\n2,2,1\n3,1,1\n4,2,0\n", "numeric.csv")
    assert load_csv(numeric, "y", group="g", privileged="2").info["privileged_group"] == 2


def test_relative_data_path_is_taken_from_the_spec_folder(tmp_path, monkeypatch, cli):
    """A spec run from another working directory finds its CSV; the stored spec holds the
    absolute path and the manifest the file's SHA-256."""
    import hashlib
    import json

    import yaml

    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    data = project / "data" / "d.csv"
    data.write_text(GROUP_CSV)
    spec = project / "spec.yaml"
    spec.write_text(BASE.replace("- dataset: iris", "- dataset: csv\n    params: {path: data/d.csv, "
                                 "target: y, group: sex, privileged: Male}"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = cli("run", spec, "--out", "runs", "-j", "1")
    assert result.exit_code == 0, result.output
    run_dir = next((elsewhere / "runs").iterdir())
    stored = yaml.safe_load((run_dir / "spec.yaml").read_text())
    assert stored["datasets"][0]["params"]["path"] == str(data.resolve())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["data"] == [{"dataset": "csv", "param": "path", "path": str(data.resolve()),
                                 "bytes": data.stat().st_size,
                                 "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}]
    assert manifest["workers"] >= 1


def test_negative_seed_count_message_is_not_doubled(cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE.replace("seeds: 1", "seeds: -3"))
    result = cli("run", spec, "--out", tmp_path / "runs")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: seeds must be ≥ 1, got -3"


def test_alias_bomb_is_refused_quickly(tmp_path):
    """The bound is checked on the composed nodes, before anything is expanded; time is
    measured by the bound, not asserted: the refusal must come from read_yaml itself."""
    import tracemalloc

    from safeclf.errors import SpecError
    from safeclf.spec.yaml import read_yaml

    spec = tmp_path / "bomb.yaml"
    spec.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")))
    tracemalloc.start()
    with pytest.raises(SpecError, match="expands to more than"):
        read_yaml(spec)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_anchors_within_the_bound_still_work(tmp_path):
    from safeclf.spec.yaml import read_yaml

    spec = tmp_path / "spec.yaml"
    spec.write_text("base: &b {C: 1}\nmethods: [{method: svm, params: *b}, {method: svm, params: *b}]\n"
                    "merged: {<<: *b, tol: 2}\n")
    data = read_yaml(spec)
    assert data["methods"][1]["params"] == {"C": 1}
    assert data["merged"] == {"C": 1, "tol": 2}


def test_validate_refuses_huge_seed_count_without_expanding(cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE.replace("seeds: 1", "seeds: 2147483648"))
    result = cli("validate", spec)
    assert result.exit_code == 2
    assert "seeds must be ≤ 10,000" in result.stderr


def test_spec_path_that_is_a_folder(cli, tmp_path):
    result = cli("run", tmp_path, "--out", tmp_path / "runs")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: spec file '{tmp_path}' is a folder; give the YAML file inside it"


@pytest.mark.parametrize("damage", ["empty-parquet", "corrupt-parquet", "empty-csv", "corrupt-csv",
                                    "corrupt-manifest"])
def test_compare_on_a_damaged_run(cli, tiny_spec, tmp_path, damage):
    import shutil

    out = tmp_path / "runs"
    assert cli("run", tiny_spec, "--profile", "ci", "--out", out, "-j", "1").exit_code == 0
    good = next(out.iterdir())
    bad = tmp_path / "bad-run"
    shutil.copytree(good, bad)
    kind, name = damage.split("-")
    target = bad / {"parquet": "metrics.parquet", "csv": "metrics.csv", "manifest": "manifest.json"}[name]
    if name == "csv":
        (bad / "metrics.parquet").unlink()
    target.write_bytes(b"" if kind == "empty" else b"\x00garbage\xff{[")
    result = cli("compare", good, bad)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: '"), result.stderr
    assert str(target) in " ".join(result.stderr.split())


def test_unreachable_scheduler_leaves_no_run_folder(cli, tiny_spec, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import socket

    from safeclf.execution import runner

    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", "1s")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "--profile", "ci", "--backend", "dask", "--scheduler",
                 f"tcp://127.0.0.1:{port}", "--out", out)
    assert result.exit_code == 2, result.output
    assert f"--scheduler: cannot reach a Dask scheduler at 'tcp://127.0.0.1:{port}'" in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_interrupt_hint_names_the_run_folder(cli, tiny_spec, tmp_path, monkeypatch):
    from safeclf.execution import runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "execute", interrupted)
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "--profile", "ci", "--out", out)
    assert result.exit_code == 130
    run_dir = next(out.iterdir())
    assert f"safeclf run --resume {run_dir}" in " ".join(result.stderr.split())


def test_git_state_is_read_without_taking_the_index_lock(tmp_path):
    """A plain ``git status`` after a file's timestamp changed rewrites .git/index (under
    index.lock); the manifest's reading must leave the index untouched."""
    import os
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from safeclf.store.folder import _git_commit

    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    (repo / "f.txt").write_text("x\n")
    for cmd in (["init", "-q"], ["add", "f.txt"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env)
    index = repo / ".git" / "index"

    def touch_and_stamp():
        stamp = os.stat(repo / "f.txt").st_mtime_ns + 5_000_000_000
        os.utime(repo / "f.txt", ns=(stamp, stamp))
        return os.stat(index).st_mtime_ns, index.read_bytes()

    before = touch_and_stamp()
    commit = _git_commit(repo)
    assert commit is not None and not commit.endswith("-dirty")
    assert (os.stat(index).st_mtime_ns, index.read_bytes()) == before
    subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], check=True, capture_output=True)
    assert (os.stat(index).st_mtime_ns, index.read_bytes()) != before, "control: plain status writes"


def test_numba_cache_is_outside_the_package(tmp_path):
    import os
    import subprocess
    import sys

    import safeclf

    code = "import safeclf, numba; print(numba.config.CACHE_DIR)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    package = os.path.dirname(safeclf.__file__)
    # one folder per version of the compiled modules (a caller's cached code keeps its callees)
    assert out == str(tmp_path / "cache" / "safeclf" / "numba"
                      / safeclf._compiled_fingerprint(package))
    assert not os.path.commonpath([out, package]) == package


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

    from safeclf.cli.app import app

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
