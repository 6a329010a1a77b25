"""The prototype set classifier: objective and gradient, candidate sampling, fit, clean-up,
export/explain, search, and the scikit-learn contract."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.datasets.synthetic import load_checkerboard
from safeclf.datasets.toy import load_iris, load_wine
from safeclf.errors import DataError
from safeclf.methods.proset import ProsetClassifier, plugin
from safeclf.methods.proset.objective import BatchObjective, exp_floored, kernel_sum
from safeclf.methods.proset.sampling import bin_counts, check_min_cases, draw_candidates
from safeclf.methods.proset.search import fold_summary, lambda_v_grid, one_standard_error


def _problem(K, D, n=120, J=40, seed=0):
    rng = np.random.default_rng(seed)
    X, S = rng.normal(size=(n, D)), rng.normal(size=(J, D))
    y, ys = rng.integers(0, K, n), rng.integers(0, K, J)
    q0 = rng.uniform(0.1, 1.0, size=(n, K))
    omega = rng.uniform(0.5, 1.5, n) / n
    theta = np.r_[rng.uniform(0.3, 2.0, D), rng.uniform(0.0, 2.0, J)]
    return X, y, q0, omega, S, ys, theta


def _naive_loss(X, y, q0, omega, S, ys, theta, K, lam):
    """eq_log_likelihood written out term by term, without the matrix tricks."""
    D = X.shape[1]
    v, w = theta[:D], theta[D:]
    lam_v, lam_w, a_v, a_w = lam
    total = 0.0
    for n in range(X.shape[0]):
        kern = np.exp(-0.5 * np.sum((v * (X[n] - S)) ** 2, axis=1))            # eq_kernel
        q = q0[n] + np.array([np.sum(w * kern * (ys == k)) for k in range(K)])  # eq_qckx
        total -= omega[n] * math.log(q[y[n]] / q.sum())                        # eq_pckx
    total += lam_v * (a_v / 2 * np.sum(v ** 2) + (1 - a_v) * np.sum(v))
    total += lam_w * (a_w / 2 * np.sum(w ** 2) + (1 - a_w) * np.sum(w))
    return total


@pytest.mark.parametrize("K,D", [(2, 2), (2, 7), (4, 5), (10, 3)])
def test_objective_matches_definition_and_gradient_matches_finite_differences(K, D):
    X, y, q0, omega, S, ys, theta = _problem(K, D)
    lam = (1e-2, 1e-3, 0.95, 0.7)
    # a small chunk so that several chunks are summed
    obj = BatchObjective(X, y, q0, omega, S, ys, K, *lam, chunk_bytes=8 * S.shape[0] * 17)
    loss, grad = obj(theta)
    assert obj.rows == 17
    assert loss == pytest.approx(_naive_loss(X, y, q0, omega, S, ys, theta, K, lam), rel=1e-10)
    numeric = approx_fprime(theta, lambda t: obj(t)[0], 1e-7)
    assert np.max(np.abs(grad - numeric)) < 1e-6 * max(1.0, np.max(np.abs(grad)))


def test_inactive_feature_has_only_the_penalty_gradient_and_no_effect():
    X, y, q0, omega, S, ys, theta = _problem(2, 3)
    lam = (1e-2, 1e-3, 0.95, 0.95)
    obj = BatchObjective(X, y, q0, omega, S, ys, 2, *lam)
    theta[1] = 0.0
    loss, grad = obj(theta)
    assert grad[1] == pytest.approx(lam[0] * (1 - lam[2]))
    shifted = X.copy()
    shifted[:, 1] += 5.0                                                   # feature 1 unused
    loss2, _ = BatchObjective(shifted, y, q0, omega, S, ys, 2, *lam)(theta)
    assert loss2 == pytest.approx(loss, rel=1e-12)


def test_inactive_features_are_left_out_exactly():
    """The active-feature shortcut: with v_d = 0 for some features the objective and the
    gradient of the other parameters equal those of the problem without these features, and
    the gradient of each inactive v_d is the penalty's alone (its likelihood part carries the
    factor v_d)."""
    X, y, q0, omega, S, ys, theta = _problem(3, 6, seed=4)
    lam = (1e-2, 1e-3, 0.95, 0.7)
    off = np.array([1, 4])
    theta[off] = 0.0
    keep = np.setdiff1d(np.arange(6), off)
    loss, grad = BatchObjective(X, y, q0, omega, S, ys, 3, *lam)(theta)
    reduced = BatchObjective(X[:, keep], y, q0, omega, S[:, keep], ys, 3, *lam)
    loss_r, grad_r = reduced(np.r_[theta[keep], theta[6:]])
    penalty_only = lam[0] * (1 - lam[2])
    assert loss == pytest.approx(loss_r, rel=1e-12)
    assert loss == pytest.approx(_naive_loss(X, y, q0, omega, S, ys, theta, 3, lam), rel=1e-10)
    np.testing.assert_allclose(grad[keep], grad_r[:4], rtol=1e-10)
    np.testing.assert_allclose(grad[6:], grad_r[4:], rtol=1e-10)
    assert np.all(grad[off] == penalty_only)
    # the numerical derivative from the right agrees (the kernel is flat in v_d at 0)
    for d in off:
        step = np.zeros_like(theta)
        step[d] = 1e-6
        slope = (BatchObjective(X, y, q0, omega, S, ys, 3, *lam)(theta + step)[0] - loss) / 1e-6
        assert slope == pytest.approx(penalty_only, rel=1e-3)


def test_objective_is_independent_of_chunking_order_and_empty_class_blocks():
    """Points and candidates are regrouped by class internally: the result must not depend on
    the input order, on where chunk boundaries fall, or on a class without candidates."""
    X, y, q0, omega, S, ys, theta = _problem(4, 3, n=90, J=30, seed=7)
    ys = np.where(ys == 2, 1, ys)                                   # no candidate of class 2
    lam = (1e-2, 1e-3, 0.95, 0.7)
    D = 3
    loss, grad = BatchObjective(X, y, q0, omega, S, ys, 4, *lam)(theta)
    assert loss == pytest.approx(_naive_loss(X, y, q0, omega, S, ys, theta, 4, lam), rel=1e-10)
    rng = np.random.default_rng(1)
    pn, pj = rng.permutation(90), rng.permutation(30)
    for rows in (1, 7, 90):
        obj = BatchObjective(X[pn], y[pn], q0[pn], omega[pn], S[pj], ys[pj], 4, *lam,
                             chunk_bytes=8 * 30 * rows)
        assert obj.rows == rows
        loss_p, grad_p = obj(np.r_[theta[:D], theta[D:][pj]])
        assert loss_p == pytest.approx(loss, rel=1e-12)
        np.testing.assert_allclose(grad_p[:D], grad[:D], rtol=1e-9)
        np.testing.assert_allclose(grad_p[D:], grad[D:][pj], rtol=1e-9, atol=1e-15)


def test_float32_products_agree_with_float64():
    X, y, q0, omega, S, ys, theta = _problem(3, 4, n=200, J=60, seed=2)
    lam = (1e-2, 1e-3, 0.95, 0.7)
    loss64, grad64 = BatchObjective(X, y, q0, omega, S, ys, 3, *lam)(theta)
    loss32, grad32 = BatchObjective(X, y, q0, omega, S, ys, 3, *lam, dtype=np.float32,
                                    chunk_bytes=4 * 60 * 30)(theta)
    assert loss32 == pytest.approx(loss64, rel=1e-6)
    assert np.max(np.abs(grad32 - grad64)) < 1e-5 * np.max(np.abs(grad64))


def test_float32_exponential_is_accurate_and_floored():
    x = np.r_[np.linspace(-60.0, 0.0, 1_000_000), -1e-30, 1e-7, -59.999, -60.0, -75.0,
              -1e4].astype(np.float32)
    got = exp_floored(x.reshape(-1, 2).copy(), -60.0).ravel()      # the compiled float32 pass
    exact = np.exp(np.maximum(x.astype(np.float64), -60.0))
    assert got.dtype == np.float32
    assert np.max(np.abs(got / exact - 1.0)) < 1.5 * np.finfo(np.float32).eps
    assert np.all(got[x <= -60.0] == got[x == -60.0][0])          # below the floor: exp(floor)
    np.testing.assert_array_equal(exp_floored(x.astype(np.float64), -60.0), exact)


def test_kernel_sum_matches_direct_evaluation():
    rng = np.random.default_rng(3)
    X, P = rng.normal(size=(50, 3)), rng.normal(size=(9, 3))
    v, w = np.array([0.5, 1.0, 2.0]), rng.uniform(0, 3, 9)
    cls = rng.integers(0, 3, 9)
    onehot = np.eye(3)[cls]
    out = kernel_sum(X, P, v, w, onehot, np.zeros((50, 3)), chunk_bytes=8 * 9 * 7)
    direct = np.exp(-0.5 * (((X[:, None, :] - P[None]) * v) ** 2).sum(-1)) @ (onehot * w[:, None])
    np.testing.assert_allclose(out, direct, rtol=1e-12, atol=1e-300)


def test_alg_bins_examples():
    # smallest bins give eta * g_i, the rest share the remaining budget evenly
    assert bin_counts([2, 10, 100, 100], 40, 0.5).tolist() == [1, 5, 17, 17]
    # order of the input is kept
    assert bin_counts([100, 2, 100, 10], 40, 0.5).tolist() == [17, 1, 17, 5]
    # all bins large: M / 2K each
    assert bin_counts([500, 400, 300, 600], 100, 0.5).tolist() == [25, 25, 25, 25]
    # not enough samples: the largest admissible share of every bin
    assert bin_counts([10, 21, 0, 40], 1000, 0.5).tolist() == [5, 11, 0, 20]


def test_min_cases_condition():
    # with eta = 0.5 a class needs 3 samples (the paper's remark)
    check_min_cases([3, 50], ["a", "b"], 0.5)
    with pytest.raises(DataError, match=r"class 'a' has 2 training samples.*at least 3"):
        check_min_cases([2, 50], ["a", "b"], 0.5)
    # eta = 0.1 needs ceil(N/2) >= 5
    with pytest.raises(DataError, match="at least 9"):
        check_min_cases([50, 8], ["a", "b"], 0.1)
    check_min_cases([50, 9], ["a", "b"], 0.1)


def _eq_min_cases(n_k: int, eta: Fraction) -> bool:
    """The lemma's original condition eq_min_cases, every split of the class into n correctly
    and N_k - n wrongly classified cases, in exact arithmetic."""
    return all((eta * n >= Fraction(1, 2) or eta * (n_k - n) >= Fraction(1, 2))
               and (eta * n < n - Fraction(1, 2) or eta * (n_k - n) < n_k - n - Fraction(1, 2))
               for n in range(n_k + 1))


@pytest.mark.parametrize("denominator", [20, 100, 1000])
def test_min_cases_agrees_with_exact_arithmetic_on_a_grid(denominator):
    # every η = i / denominator in (0, 1) (a sample of them for 1000), N_k = 1 ... 60: accepted
    # exactly when the paper's condition holds in fractions (floats accepted N_k = 19, 20 at
    # η = 0.95, where 0.5 / (1 - 0.95) rounds below 10)
    step = 7 if denominator == 1000 else 1
    disagree = []
    for i in range(1, denominator, step):
        eta = Fraction(i, denominator)
        for n_k in range(1, 61):
            try:
                check_min_cases([n_k], ["a"], float(eta))
                accepted = True
            except DataError:
                accepted = False
            if accepted != _eq_min_cases(n_k, eta):
                disagree.append((str(eta), n_k, accepted))
    assert not disagree, disagree[:5]


def test_min_cases_at_eta_095_needs_21():
    for n_k in (19, 20):
        with pytest.raises(DataError, match="at least 21"):
            check_min_cases([n_k, 50], ["a", "b"], 0.95)
    check_min_cases([21, 50], ["a", "b"], 0.95)


def test_fit_refuses_too_small_class_with_a_clear_error():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.array(["big"] * 28 + ["tiny"] * 2)
    with pytest.raises(DataError, match="class 'tiny' has 2 training samples"):
        ProsetClassifier().fit(X, y)


def test_first_batch_draws_from_the_non_empty_bins_only():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(300, int), np.ones(100, int)]
    q = np.tile([0.75, 0.25], (400, 1))            # marginals: class 0 correct, class 1 not
    cand = draw_candidates(q, y, 2, 100, 0.5, rng)
    assert cand.size == 100 and np.unique(cand).size == 100
    assert np.sum(y[cand] == 0) == 50 and np.sum(y[cand] == 1) == 50
    cand = draw_candidates(q, y, 2, 1000, 0.5, rng)      # capped at eta of each bin
    assert np.sum(y[cand] == 0) == 150 and np.sum(y[cand] == 1) == 50


@pytest.fixture(scope="module")
def wine():
    ds = load_wine()
    X = StandardScaler().fit_transform(ds.X)
    labels = np.array(["barolo", "grignolino", "barbera"])[ds.y]
    return X, labels


@pytest.fixture(scope="module")
def wine_model(wine):
    X, y = wine
    return ProsetClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X, y)


def test_fit_predicts_well_and_probabilities_are_distributions(wine, wine_model):
    X, y = wine
    p = wine_model.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.mean(wine_model.predict(X) == y) > 0.95
    # no batch: the marginal probabilities p0_k (eq_p0k)
    counts = np.array([np.mean(y == c) for c in wine_model.classes_])
    np.testing.assert_allclose(wine_model.predict_proba(X, n_batches=0), np.tile(counts, (len(y), 1)))
    staged = list(wine_model.staged_predict_proba(X))
    assert len(staged) == 3
    np.testing.assert_allclose(staged[1], wine_model.predict_proba(X, n_batches=1))
    np.testing.assert_allclose(staged[2], p)


def test_fit_is_greedy_batch_by_batch(wine, wine_model):
    X, y = wine
    one = ProsetClassifier(n_batches=1, n_candidates=60, random_state=0).fit(X, y)
    np.testing.assert_array_equal(one.batches_[0]["samples"], wine_model.batches_[0]["samples"])
    np.testing.assert_allclose(one.batches_[0]["weights"], wine_model.batches_[0]["weights"])


def test_l1_penalty_removes_prototypes_and_features(wine):
    X, y = wine
    light = ProsetClassifier(n_candidates=60, lambda_v=1e-4, random_state=0).fit(X, y)
    heavy = ProsetClassifier(n_candidates=60, lambda_v=3e-2, alpha_v=0.0, random_state=0).fit(X, y)
    assert heavy.active_features_.size < light.active_features_.size
    assert np.all(light.batches_[0]["weights"] > 0)


def test_clean_up_merges_duplicates_into_the_first_sample_with_the_summed_weight():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    X[7] = X[3]
    X[11, :2] = X[3, :2]              # equal in the active features 0 and 1 only
    X[12] = X[3]
    codes = (X[:, 0] > 0).astype(int)
    codes[12] = 1 - codes[3]          # same features, other class: not equivalent
    est = ProsetClassifier(merge_tol=1e-9)
    cand = np.array([3, 5, 7, 11, 12, 20])
    v = np.array([1.0, 2.0, 0.0])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.0])
    b = est._make_batch(X, codes, cand, v, w)
    assert b["samples"].tolist() == [3, 5, 12]
    assert b["weights"].tolist() == [8.0, 2.0, 5.0]
    assert b["features"].tolist() == [0, 1]
    np.testing.assert_array_equal(b["prototypes"][0], X[3])


def test_duplicated_training_data_leaves_no_equivalent_prototypes(wine):
    X, y = wine
    model = ProsetClassifier(n_candidates=400, random_state=0).fit(np.vstack([X, X]), np.r_[y, y])
    b = model.batches_[0]
    keys = {tuple(np.r_[b["prototypes"][j, b["features"]], b["classes"][j]])
            for j in range(b["weights"].size)}
    assert len(keys) == b["weights"].size


def test_export_lists_marginals_prototypes_weights_and_active_features(wine_model):
    table = wine_model.export()
    K = wine_model.classes_.size
    assert len(table) == K + wine_model.n_prototypes_
    assert table["kind"].tolist() == ["marginal"] * K + ["prototype"] * wine_model.n_prototypes_
    np.testing.assert_allclose(table["weight"][:K], wine_model.marginals_)
    protos = table[table["kind"] == "prototype"]
    b = wine_model.batches_[0]
    first = protos[protos["batch"] == 1]
    np.testing.assert_allclose(first["weight"], b["weights"])
    assert first["sample"].tolist() == b["samples"].tolist()
    name = f"x{b['features'][0]}"
    np.testing.assert_allclose(first[f"{name} weight"], b["feature_weights"][0])
    np.testing.assert_allclose(first[name], b["prototypes"][:, b["features"][0]])
    weight_cols = [c for c in table.columns if c.endswith(" weight")]
    assert len(weight_cols) == wine_model.active_features_.size


def test_explain_decomposes_the_prediction_exactly(wine, wine_model):
    X, _ = wine
    x = X[10]
    table = wine_model.explain(x)
    proba = wine_model.predict_proba(x[None])[0]
    by_class = table.groupby("target")["impact"].sum()
    np.testing.assert_allclose([by_class[c] for c in wine_model.classes_], proba, rtol=1e-10)
    protos = table[table["kind"] == "prototype"]
    assert len(protos) == wine_model.n_prototypes_
    assert np.all(np.diff(protos["impact"].to_numpy()) <= 0)
    assert table.attrs["prediction"] == wine_model.predict(x[None])[0]
    top = wine_model.explain(x, n_prototypes=3)
    assert (top["kind"] == "prototype").sum() == 3
    np.testing.assert_allclose(top["impact"].iloc[-3:], protos["impact"].iloc[:3])


def test_report_counts_active_features_and_prototypes(wine_model):
    rep = plugin.report(wine_model, task=None)
    assert rep.metrics["n_prototypes"] == wine_model.n_prototypes_ > 0
    assert rep.metrics["n_active_features"] == wine_model.active_features_.size
    assert rep.metrics["n_batches"] == 2
    assert [r["batch"] for r in rep.details["batches"]] == [1, 2]
    import json

    json.dumps(rep.details)


def test_one_standard_error_rule():
    mean = np.array([0.50, 0.42, 0.40, 0.45])
    se = np.array([0.01, 0.01, 0.03, 0.01])
    # threshold 0.43: candidates 1 and 2; prefer the largest preference among them
    assert one_standard_error(mean, se, [3, 2, 1, 0]) == 1
    assert one_standard_error(mean, se, [0, 1, 2, 3]) == 2


def test_fold_summary_is_the_reports_standard_deviation_rule():
    rng = np.random.default_rng(0)
    scores = rng.uniform(0.1, 0.9, size=(5, 7))
    mean, sd, se, margin = fold_summary(scores)                    # default: the report's rule
    assert np.allclose(mean, scores.mean(axis=0))
    assert np.allclose(sd, np.std(scores, axis=0, ddof=1))         # proset 0.6.1 utility/fit.py
    assert np.allclose(se * np.sqrt(5), sd) and np.array_equal(margin, sd)
    assert np.array_equal(fold_summary(scores, "se")[3], se)
    assert not fold_summary(scores, "min")[3].any()


def test_lambda_v_grid_is_the_reports_e5_grid():
    # E5: 11 points equidistant on the log scale over (1e-6, 1e-1); the report's table
    # shows 1.0e-5, 3.2e-4, 3.2e-3, 1.0e-2, 3.2e-2 and 1.0e-1 among the chosen values
    grid = lambda_v_grid(11)
    assert np.allclose(np.log10(grid), np.arange(-6.0, -0.9, 0.5))
    for value in (1.0e-5, 3.2e-4, 3.2e-3, 1.0e-2, 3.2e-2, 1.0e-1):
        assert np.min(np.abs(grid / value - 1)) < 0.02


def test_batch_search_picks_the_smallest_b_within_one_fold_standard_deviation():
    ds = load_iris()
    X = StandardScaler().fit_transform(ds.X)
    model = ProsetClassifier(search="batches", max_batches=3, cv=3, n_candidates=60,
                             random_state=0).fit(X, ds.y)
    rows = model.search_["table"]
    assert [r["n_batches"] for r in rows] == [0, 1, 2, 3]
    best = min(rows, key=lambda r: r["cv_log_loss"])
    assert best["optimal"] and sum(r["optimal"] for r in rows) == 1
    assert np.isclose(best["cv_sd"], best["cv_se"] * np.sqrt(3))
    assert rows[0]["threshold"] == best["cv_log_loss"] + best["cv_sd"]
    ok = [r["n_batches"] for r in rows if r["cv_log_loss"] <= best["cv_log_loss"] + best["cv_sd"]]
    assert model.best_params_["n_batches"] == min(ok) == len(model.batches_)
    assert model.best_params_["n_batches"] >= 1          # B = 0 is far worse on iris
    assert sum(r["chosen"] for r in rows) == 1


def test_full_search_runs_stage_one_then_stage_two():
    ds = load_iris()
    X = StandardScaler().fit_transform(ds.X)
    model = ProsetClassifier(search="full", n_search=4, max_batches=2, cv=3, n_candidates=40,
                             random_state=0, n_jobs=2).fit(X, ds.y)
    table = model.search_["table"]
    stage1 = [r for r in table if r["stage"] == 1]
    assert len(stage1) == 4
    chosen = [r for r in stage1 if r["chosen"]][0]
    assert 1e-6 <= chosen["lambda_v"] <= 1e-1 and 1e-9 <= chosen["lambda_w"] <= 1e-4
    assert model.best_params_["lambda_v"] == chosen["lambda_v"]
    rep = plugin.report(model, task=None)
    assert rep.metrics["chosen_lambda_w"] == chosen["lambda_w"]


def test_wider_threshold_never_picks_more_batches():
    # same folds and fits (same random_state): the SD threshold is sqrt(cv) times the SE one,
    # so its choice of B is at most the SE rule's, which is at most the optimum's ("min", E4)
    ds = load_wine()
    X = StandardScaler().fit_transform(ds.X)
    chosen, tables = {}, {}
    for rule in ("sd", "se", "min"):
        model = ProsetClassifier(search="batches", cv_rule=rule, max_batches=4, cv=4,
                                 n_candidates=40, random_state=3).fit(X, ds.y)
        chosen[rule] = model.best_params_["n_batches"]
        tables[rule] = model.search_["table"]
    assert [r["cv_log_loss"] for r in tables["sd"]] == [r["cv_log_loss"] for r in tables["min"]]
    assert chosen["sd"] <= chosen["se"] <= chosen["min"]
    assert [r["n_batches"] for r in tables["min"] if r["optimal"]] == [chosen["min"]]


def test_lambda_v_search_keeps_lambda_w_and_takes_the_largest_lambda_v_under_the_threshold():
    ds = load_iris()
    X = StandardScaler().fit_transform(ds.X)
    model = ProsetClassifier(search="lambda_v", n_search=5, lambda_w=1e-8, max_batches=1, cv=3,
                             n_candidates=40, random_state=0).fit(X, ds.y)
    stage1 = [r for r in model.search_["table"] if r["stage"] == 1]
    assert np.allclose([r["lambda_v"] for r in stage1], lambda_v_grid(5))
    assert {r["lambda_w"] for r in stage1} == {1e-8}
    ok = [r["lambda_v"] for r in stage1 if r["cv_log_loss"] <= r["threshold"]]
    assert model.best_params_["lambda_v"] == max(ok)
    assert model.best_params_["lambda_w"] == 1e-8


def test_checkerboard_structure_is_learned():
    ds = load_checkerboard(n=4, n_samples=1200, random_state=0)
    X = StandardScaler().fit_transform(ds.X)
    model = ProsetClassifier(n_batches=1, n_candidates=300, random_state=0).fit(X[:800], ds.y[:800])
    assert np.mean(model.predict(X[800:]) == ds.y[800:]) > 0.85


def test_plugin_rejects_bad_parameters():
    from safeclf.errors import SpecError

    with pytest.raises(SpecError, match=r"methods\[0\].params.max_fraction must be"):
        plugin.check_params({"max_fraction": 1.5}, "methods[0].params")
    with pytest.raises(SpecError, match="search"):
        plugin.check_params({"search": "grid"}, "methods[0].params")


@parametrize_with_checks([ProsetClassifier(n_candidates=30, random_state=0)])
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_package_engine_reports_the_reference_counts():
    """A job of the author's package (``engine: package``) reports the package's own prototype
    and active-feature counts, read from its set manager, so they can be set beside ours."""
    from types import SimpleNamespace

    class Manager:
        def __init__(self, n, feats):
            self.n, self.feats = n, feats

        def get_num_prototypes(self):
            return self.n

        def get_active_features(self):
            return np.asarray(self.feats)

    for n, feats in [(0, []), (7, [1]), (2147, [0, 1])]:
        est = SimpleNamespace(reference_=SimpleNamespace(set_manager_=Manager(n, feats)),
                              best_params_={"n_batches": 3}, search_=None)
        m = plugin.report(est, task=None).metrics
        assert (m["n_prototypes"], m["n_active_features"], m["n_batches"]) == (n, len(feats), 3)
