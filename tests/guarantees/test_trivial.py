"""Better than trivial, or say so (issue 32, item 3): the degenerate verdict as a property (a
random rule on random labels is degenerate, a rule with real signal is not, a one-class rule
always is), and certification that never returns a degenerate rule silently."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from safeclf.guarantees import trivial


def test_the_trivial_rule_is_the_majority_of_the_training_labels():
    y_train = np.array(["no"] * 7 + ["yes"] * 3)
    y = np.array(["yes", "yes", "no", "no", "no"])
    assert trivial.majority(y_train) == "no"
    assert trivial.trivial_error(y_train, y) == pytest.approx(2 / 5)
    # the same test rows, another training majority: the other error
    assert trivial.trivial_error(np.array(["yes"] * 6 + ["no"] * 4), y) == pytest.approx(3 / 5)


def test_the_sign_test_is_the_exact_binomial_tail_on_discordant_rows():
    rng = np.random.default_rng(0)
    model, rule = rng.random(400) < 0.8, rng.random(400) < 0.75
    b, c = int(np.sum(model & ~rule)), int(np.sum(rule & ~model))
    p, n = trivial.sign_test(model, rule)
    assert n == b + c
    assert p == pytest.approx(binom.sf(b - 1, b + c, 0.5))
    assert trivial.sign_test(model, model) == (1.0, 0)


def test_a_random_rule_on_random_labels_is_degenerate_with_high_frequency():
    """Labels and predictions independent (no signal): the model is not better than the
    majority rule, so the one-sided test at 0.05 rejects in at most about 5 % of draws (its
    size); over 200 draws, at least the 99.9 % binomial quantile's complement is flagged."""
    rng = np.random.default_rng(1)
    flagged = 0
    for _ in range(200):
        n = int(rng.integers(200, 3000))
        base = rng.uniform(0.1, 0.5)
        y_train, y = rng.random(n) < base, rng.random(n) < base
        pred = rng.random(n) < rng.uniform(0.05, 0.95)
        flagged += trivial.degenerate(y_train, y, pred).degenerate
    assert flagged >= 200 - binom.ppf(0.999, 200, trivial.LEVEL)


def test_a_rule_with_real_signal_is_not_degenerate():
    """Labels from a score with noise, the rule the score's sign: far better than the majority
    rule, on every draw of a few hundred rows."""
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = int(rng.integers(300, 2000))
        s = rng.normal(size=n)
        y = (s + rng.normal(scale=0.7, size=n)) > 0.4
        v = trivial.degenerate(y, y, s > 0.4)
        assert not v.degenerate, v.reason
        assert v.error < v.trivial_error and v.p_value <= trivial.LEVEL
        assert "is below the majority rule's" in v.reason


@pytest.mark.parametrize("labels", [(0, 1), ("deny", "approve"), (False, True)])
def test_a_one_class_rule_always_is_degenerate(labels):
    """Every row (or all but 1 %) given one class: degenerate whatever the labels, even where
    that class is right more often than the majority rule (labels drawn after the training
    majority changed)."""
    rng = np.random.default_rng(3)
    neg, pos = labels
    for _ in range(30):
        n = int(rng.integers(100, 5000))
        y_train = np.where(rng.random(n) < 0.3, pos, neg)
        y = np.where(rng.random(n) < 0.9, pos, neg)  # mostly positive: all-positive is right
        pred = np.full(n, pos, dtype=y.dtype)
        flip = rng.choice(n, int(n * trivial.NEGLIGIBLE_SHARE), replace=False)
        pred[flip] = neg
        v = trivial.degenerate(y_train, y, pred)
        assert v.degenerate
        word = "positive" if pos is True else f"`{pos}`"
        assert v.reason.startswith(f"predicts {word} for ") and v.reason.endswith("% of rows")


def test_the_reason_names_the_figures():
    """1,000 rows, 171 positive; the model calls 99 rows positive, 50 of them rightly: error
    0.170 against the majority rule's 0.171 on 99 discordant rows, p = P(Bin(99, 1/2) ≥ 50)."""
    y = np.arange(1000) < 171
    pred = np.zeros(1000, bool)
    pred[121:220] = True  # rows 121-170 positive (right), 171-219 negative (wrong)
    v = trivial.degenerate(y, y, pred, rows="the test rows")
    assert v.degenerate and v.discordant == 99
    assert v.p_value == pytest.approx(binom.sf(49, 99, 0.5))
    assert v.reason == ("error 0.170 on the test rows is not below the majority rule's 0.171 "
                        "beyond noise (sign test p = 0.5 on 99 discordant rows)")


def test_job_columns_are_nan_without_test_rows():
    columns, verdict = trivial.job_metrics(np.array([0, 1, 1]), np.array([]), np.array([]))
    assert verdict is None and all(np.isnan(v) for v in columns.values())
    columns, verdict = trivial.job_metrics(np.array([0, 1, 1]), np.array([0, 0]),
                                           np.array([1, 1]))
    assert columns == {"test_trivial_error": 1.0, "degenerate": 1.0} and verdict.degenerate


# -- certification -----------------------------------------------------------------------------
def _draw(n, seed):
    """Two groups, 15 % positives, a feature with real signal."""
    from group_data import two_groups

    return two_groups(n, seed, rates=(0.2, 0.1))


def _certified(items, seed, allow=False, n=2000):
    from sklearn.linear_model import LogisticRegression

    from safeclf._utils.blas import one_blas_thread
    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    X, y, g = _draw(n, seed)
    with one_blas_thread():
        return CertifiedClassifier(LogisticRegression(), items, random_state=seed,
                                   allow_degenerate=allow).fit(X, y, groups=g)


@pytest.mark.parametrize("items, left_out", [
    ([{"rate": "coverage", "min": 0.995}], True),  # only the all-positive rule can pass
    ([{"rate": "coverage", "min": 0.5}], False),   # rules pass, each far worse than the majority
])
def test_a_promise_only_a_trivial_rule_keeps_is_no_solution_unless_allowed(items, left_out):
    """Releasing (almost) everyone, or half the rows where 15 % are positive: the promise is
    kept only by a rule no better than the majority rule. No solution, with the reason; with
    allow_degenerate the rule is returned and is degenerate on new rows."""
    X, y, _ = _draw(20_000, 99)
    for seed in range(3):
        cc = _certified(items, seed)
        assert cc.rule_ is None
        assert "allow_degenerate: true" in cc.no_solution_
        if left_out:  # the rules tested fail; the reason says why, then the trivial rule's
            assert cc.no_solution_.startswith("no model: the safest rule of the path")
            assert ("; only a trivial rule, left out of the test, would keep the promise: it "
                    "predicts positive for ") in cc.no_solution_, cc.no_solution_
        else:
            assert cc.no_solution_.startswith("no model: only a trivial rule keeps the "
                                              "promise: the certified rule error ")
            assert all(p.note == trivial.NOTHING_PROMISED for p in cc.promises_)
        allowed = _certified(items, seed, allow=True)
        assert allowed.rule_ is not None
        assert trivial.degenerate(y, y, allowed.predict(X)).degenerate


def test_a_promise_a_useful_rule_keeps_still_has_a_solution():
    """The same data with a promise the scores can meet (FPR ≤ 0.1): a rule is returned and it
    is better than the majority rule on new rows."""
    X, y, _ = _draw(20_000, 99)
    for seed in range(3):
        cc = _certified([{"rate": "fpr", "max": 0.1}], seed)
        assert cc.rule_ is not None, cc.no_solution_
        assert not trivial.degenerate(y, y, cc.predict(X)).degenerate
        assert "is below the majority rule's" in cc.certificate_["trivial"]


def test_constant_scores_leave_no_rule_to_test():
    from safeclf.guarantees.certify.threshold import Part, search
    from safeclf.guarantees.promises import Promise, Quantity

    rng = np.random.default_rng(5)
    y = rng.random(600) < 0.3
    part = Part(np.zeros(600), y)
    p = Promise("cov", "coverage", Quantity("rate", "predicted_positive"), ">=", 0.5,
                "declared", "test")
    rule, record = search([p], part.take(np.arange(400)), part.take(np.arange(400, 600)), 0.05)
    assert rule is None and record["reason"] == trivial.NO_PATH
    rule, _ = search([p], part.take(np.arange(400)), part.take(np.arange(400, 600)), 0.05,
                     allow_degenerate=True)
    assert rule is not None and trivial.one_class(rule.positive(part))


# -- the runner, the tables and deploy ---------------------------------------------------------
SPEC = """
name: trivial
seeds: 2
save_models: true
datasets:
  - dataset: csv
    params: {{path: {data}, target: y, group: sex, privileged: M}}
    preprocess: standardize
methods:
  - method: logreg
    name: released
    promises: [{{rate: coverage, min: 0.5}}]
    certify: {{delta: 0.05{allow}}}
  - method: ramp
    name: ramp_released
    params: {{constraints: [{{rate: coverage, min: 0.5}}], lam: 0.01, max_mm_iter: 5}}
    certify: {{delta: 0.05{allow}}}
  - method: logreg
    name: plain
metrics: [error, positive_rate]
"""


def _run(tmp_path, cli, allow: bool):
    import pandas as pd

    X, y, g = _draw(1500, 7)
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "sex": g, "y": y}).to_csv(
        data, index=False)
    spec = tmp_path / f"spec_{allow}.yaml"
    spec.write_text(SPEC.format(data=data, allow=", allow_degenerate: true" if allow else ""))
    out = tmp_path / f"runs_{allow}"
    ran = cli("run", spec, "--out", out, "-j", "1")
    assert ran.exit_code == 0, ran.output
    (run,) = out.iterdir()
    return run, ran.stdout


def test_a_run_ends_in_no_solution_rather_than_a_trivial_model(tmp_path, cli):
    """Releasing half the rows where 15 % are positive: both certification routes (post hoc
    around logreg, in training for ramp) end in no_solution with the reason; every job has
    test_trivial_error, degenerate is nan without a model and 0 for plain logreg."""
    import pandas as pd

    run, _ = _run(tmp_path, cli, allow=False)
    table = pd.read_csv(run / "metrics.csv")
    assert {"test_trivial_error", "degenerate", "degenerate_reason"} <= set(table.columns)
    assert table.test_trivial_error.between(0.1, 0.2).all()
    certified = table[table.method != "plain"]
    assert (certified.status == "no_solution").all(), certified[["method", "error"]]
    trivial_reason = certified.error.str.startswith("no model: only a trivial rule keeps the "
                                                     "promise")
    assert trivial_reason[certified.method == "released"].all()
    # in training, a tightened candidate may also fail the safety test itself
    assert trivial_reason[certified.method == "ramp_released"].any()
    assert (trivial_reason | certified.error.str.startswith("no model: the safety test "
                                                            "failed")).all()
    assert certified.degenerate.isna().all()
    plain = table[table.method == "plain"]
    assert (plain.degenerate == 0).all() and plain.degenerate_reason.isna().all()
    promises = pd.read_csv(run / "promises.csv")
    released = promises[promises.method == "released"]
    assert released.note.str.contains("only a trivial rule keeps the promise").all()


def test_an_allowed_degenerate_model_is_flagged_everywhere_and_deploy_refuses_it(tmp_path,
                                                                                 cli):
    import json

    import pandas as pd

    run, stdout = _run(tmp_path, cli, allow=True)
    table = pd.read_csv(run / "metrics.csv")
    released = table[table.method == "released"]
    assert (released.status == "ok").all() and (released.degenerate == 1).all()
    assert released.degenerate_reason.str.contains("not below the majority rule's").all()
    assert (table.loc[table.method == "plain", "degenerate"] == 0).all()
    ramp = table[(table.method == "ramp_released") & (table.status == "ok")]
    assert len(ramp) and (ramp.degenerate == 1).all()
    assert "job(s) with a degenerate model" in stdout and "released" in stdout
    promises = pd.read_csv(run / "promises.csv")
    rel = promises[promises.method == "released"]
    assert rel.degenerate.str.contains("not below the majority rule's").all()
    assert "degenerate in 2/2 jobs" in (run / "promises.md").read_text()
    html = (run / "report.html").read_text()
    assert "Degenerate models" in html and "degenerate in 2/2 jobs" in html
    # deploy: refused in one line naming the flag, nothing written; allowed with the flag
    refused = cli("deploy", run, "--method", "released", "--out", tmp_path / "model")
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "is degenerate" in lines[0] and "--allow-degenerate" in lines[0]
    assert not (tmp_path / "model").exists()
    done = cli("deploy", run, "--method", "released", "--out", tmp_path / "model",
               "--allow-degenerate")
    assert done.exit_code == 0, done.output
    assert "warning: deployed with --allow-degenerate" in done.stdout
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert "is degenerate" in meta["deployment"]["degenerate"]
    # a model that is not degenerate deploys as before
    plain = cli("deploy", run, "--method", "plain", "--out", tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    assert json.loads((tmp_path / "plain" / "model.json").read_text())[
        "deployment"]["degenerate"] is None


# -- a utility promise certified jointly with a fairness promise -------------------------------
JOINT = [{"rate": "fairness_ratio", "min": 0.8, "privileged": "a"}, {"rate": "error", "max": 0.3}]


def test_an_error_promise_is_certified_jointly_with_the_fairness_promise():
    """Three groups (test_certified's population): {rate: error, max: 0.3} beside the ratio
    promise; every returned rule keeps the error bound and both group ratios on a 100,000-row
    sample of the population in all but δ of draws (within the 99.9 % binomial quantile), and
    the certificate states the three promises at δ."""
    from sklearn.linear_model import LogisticRegression
    from test_certified import draw

    from safeclf._utils.blas import one_blas_thread
    from safeclf.guarantees.certify.threshold import CertifiedClassifier
    from safeclf.guarantees.promises import rate_value

    Xp, yp, gp = draw(100_000, np.random.default_rng(12345))
    delta, trials, solved, failures = 0.1, 20, 0, 0
    for seed in range(trials):
        X, y, g = draw(2000, np.random.default_rng(seed))
        with one_blas_thread():
            cc = CertifiedClassifier(LogisticRegression(), JOINT, delta=delta,
                                     random_state=seed).fit(X, y, groups=g)
        if cc.rule_ is None:
            continue
        solved += 1
        names = {p.name: p for p in cc.promises_}
        assert set(names) == {"declared_fairness_ratio_b", "declared_fairness_ratio_c",
                              "declared_error"}
        assert {p.kind for p in cc.promises_} == {"high_confidence"}
        assert set(cc.certificate_["p_values"]) == set(names)
        assert max(cc.certificate_["p_values"].values()) <= delta
        pred = cc.predict(Xp) == 1
        kept = [(v <= p.bound) if p.sense == "<=" else (v >= p.bound)
                for p in cc.promises_ for v in [rate_value(p.quantity, yp == 1, pred,
                                                           {"groups": gp})]]
        failures += not all(kept)
    assert solved >= trials // 4  # measured 10/20 (the bound binds: population errors 0.23-0.27)
    assert failures <= binom.ppf(0.999, trials, delta)


def test_the_runner_certifies_a_declared_error_promise_beside_a_fairness_one(tmp_path, cli):
    import pandas as pd
    from group_data import two_groups

    X, y, g = two_groups(2000, 11)  # 37.5 % positives
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "sex": g, "y": y}).to_csv(
        data, index=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: joint
seeds: 2
datasets:
  - dataset: csv
    params: {{path: {data}, target: y, group: sex, privileged: M, group_as_feature: true}}
    preprocess: standardize
methods:
  - method: logreg
    promises: [{{rate: fairness_ratio, min: 0.8}}, {{rate: error, max: 0.3}}]
    certify: {{delta: 0.05}}
metrics: [error, fairness_ratio]
""")
    ran = cli("run", spec, "--out", tmp_path / "runs", "-j", "1")
    assert ran.exit_code == 0, ran.output
    (run,) = (tmp_path / "runs").iterdir()
    table = pd.read_csv(run / "metrics.csv")
    assert (table.status == "ok").all(), table.error
    assert (table.test_error <= 0.3).all() and (table.degenerate == 0).all()
    promises = pd.read_csv(run / "promises.csv")
    assert sorted(set(promises.promise)) == ["declared_error", "declared_fairness_ratio"]
    assert set(promises.kind) == {"high_confidence"}
    assert promises.note.str.contains("all 2 promises hold jointly").all()
