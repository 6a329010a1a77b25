"""MC-SVM: exact ε-safe regions, offset calibrations, dual / primal solvers, estimator, plugin."""

from __future__ import annotations

import numpy as np
import pytest
from memory_maps import kept_off_huge_pages
from scipy.stats import binom, multivariate_normal
from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.data.task import Task
from safeclf.datasets.mcsvm import load_gaussian_priors
from safeclf.errors import DataError, SpecError
from safeclf.methods.mcsvm import MultiCostSVM, plugin
from safeclf.methods.mcsvm import calibration as cal
from safeclf.methods.mcsvm.dual import solve_dual
from safeclf.methods.mcsvm.kernels import Kernel, KernelCache, fetch_row
from safeclf.methods.mcsvm.primal import poly_feature_map, solve_primal, solve_primal_cvxpy
from safeclf.methods.mcsvm.safe_region import GaussianSafeRegion, rho

EX1 = dict(mean_pos=[4, 6], cov_pos=[[1.3, 0.9], [0.9, 1.3]], mean_neg=[3, 8],
           cov_neg=[[0.6, 0.0], [0.0, 1.4]])


def ex1_region(p=0.5, eps=0.05, cov_neg=None):
    return GaussianSafeRegion(np.array([4.0, 6.0]), np.array([[1.3, 0.9], [0.9, 1.3]]),
                              np.array([3.0, 8.0]),
                              np.array([[0.6, 0.0], [0.0, 1.4]]) if cov_neg is None else cov_neg,
                              p, eps)


# -- exact ε-safe regions ------------------------------------------------------------------------
def test_example1_matrix_and_hyperbola():
    r = ex1_region()
    np.testing.assert_allclose(r.A, [[-0.19, -1.02], [-1.02, 0.76]], atol=0.01)
    b = r.boundary()
    assert b["kind"] == "hyperbola" and b["case"].startswith("Case 2")
    assert min(b["eigenvalues"]) < 0 < max(b["eigenvalues"])


def test_gamma_quadric_and_region_match_bayes_posterior():
    r = ex1_region(p=0.3, eps=0.1)
    X = np.random.default_rng(0).normal([3.5, 7], 2.0, size=(2000, 2))
    quad = 0.5 * np.einsum("ij,jk,ik->i", X, r.A, X) + X @ r.a + r.c
    np.testing.assert_allclose(r.gamma(X), quad, rtol=1e-10, atol=1e-10)
    fs = multivariate_normal(r.mean_safe, r.cov_safe).pdf(X)
    fu = multivariate_normal(r.mean_unsafe, r.cov_unsafe).pdf(X)
    post = 0.3 * fs / (0.3 * fs + 0.7 * fu)
    np.testing.assert_allclose(r.posterior_safe(X), post, rtol=1e-8, atol=1e-12)
    assert np.array_equal(r.contains(X), post >= 0.9)
    assert r.rho == pytest.approx(np.log(0.3 / 0.7) + np.log(0.1 / 0.9))


@pytest.mark.parametrize("k, kind, orientation", [(1.0, "hyperplane", None),
                                                  (2.0, "ellipsoid", "positive"),
                                                  (0.5, "ellipsoid_exterior", "negative")])
def test_boundary_cases_of_appendix_a(k, kind, orientation):
    cs = np.array([[1.3, 0.9], [0.9, 1.3]])
    r = GaussianSafeRegion(np.array([4.0, 6.0]), cs, np.array([3.0, 8.0]), k * cs, 0.5, 0.2)
    b = r.boundary()
    assert b["kind"] == kind and b["orientation"] == orientation
    if k != 1.0:
        assert b["k"] == pytest.approx(k)


def test_monte_carlo_unsafe_share_inside_region_at_most_epsilon():
    for p, eps in ((0.5, 0.05), (0.2, 0.1)):
        r = ex1_region(p, eps)
        X, y = r.sample(300_000, np.random.default_rng(1))
        inside = r.contains(X)
        share = np.mean(y[inside] < 0)
        se = np.sqrt(eps * (1 - eps) / inside.sum())
        assert share <= eps + 3 * se
        # and the region is not trivially empty
        assert inside.mean() > 0.05


def test_rho_rejects_values_outside_unit_interval():
    with pytest.raises(DataError, match="ε must be in"):
        rho(0.5, 1.2)


# -- calibrations --------------------------------------------------------------------------------
def test_scaling_r_matches_definition():
    for n_c, eps, delta in ((100, 0.05, 0.05), (1000, 0.1, 0.01), (59, 0.05, 0.05)):
        r = cal.scaling_r(n_c, eps, delta)
        assert r >= 1
        assert binom.cdf(r - 1, n_c, eps) <= delta < binom.cdf(r, n_c, eps)
    assert cal.scaling_r(58, 0.05, 0.05) == 0 and cal.min_scaling_size(0.05, 0.05) == 59


def test_probabilistic_scaling_offset_and_errors():
    rng = np.random.default_rng(0)
    s, safe = rng.normal(size=1000), rng.random(1000) < 0.5
    off = cal.probabilistic_scaling(s, safe, 0.05, 0.05)
    r = off.details["r"]
    assert np.sum(s[~safe] < off.b) <= r - 1 and np.sum(s[~safe] <= off.b) >= r
    assert "1 − δ" in off.guarantee
    with pytest.raises(DataError, match="at least 59 points"):
        cal.probabilistic_scaling(s[:40], safe[:40], 0.05, 0.05)
    with pytest.raises(DataError, match="no unsafe"):
        cal.probabilistic_scaling(s[safe], safe[safe], 0.05, 0.05)
    # fewer unsafe points than r: everything safe (S_ε = 𝒳)
    few = np.r_[np.ones(200, bool), np.zeros(3, bool)]
    assert cal.probabilistic_scaling(np.arange(203.0), few, 0.05, 0.05).b == np.inf


def test_probabilistic_scaling_guarantee_holds_over_draws():
    # scores of unsafe points ~ U(0, 1) with P(U) = 0.5: joint rate of offset b is 0.5·b
    rng, eps, delta, n_draws = np.random.default_rng(3), 0.05, 0.1, 400
    exceed = 0
    for _ in range(n_draws):
        safe = rng.random(300) < 0.5
        s = np.where(safe, 5.0, rng.random(300))
        exceed += 0.5 * min(cal.probabilistic_scaling(s, safe, eps, delta).b, 1.0) > eps
    assert exceed / n_draws <= binom.ppf(0.999, n_draws, delta) / n_draws


def test_conformal_offset():
    s, safe = np.arange(100.0), np.zeros(100, bool)
    off = cal.conformal(s, safe, 0.05)
    assert off.details["k"] == 5 and off.b == 4.0  # 5th smallest
    assert cal.conformal(s[:10], safe[:10], 0.05).b == -np.inf  # k = ⌊0.05·11⌋ = 0


def test_quantile_is_exact_minimiser():
    rng = np.random.default_rng(5)
    s, safe = rng.normal(size=301), rng.random(301) < 0.4
    s[safe] -= 1.0
    for bound in ("fpr", "fnr"):
        off = cal.quantile(s, safe, 0.05, bound)
        e = 0.95 if bound == "fpr" else 0.05
        y = np.where(safe, 1.0, -1.0)

        def h(b, e=e, y=y):
            return 0.5 * np.sum(np.maximum(0, ((1 - 2 * e) * y + 1) * (y * (s - b) + 1)))

        grid = np.r_[np.linspace(s.min() - 3, s.max() + 3, 4001), s + 1, s - 1]
        assert h(off.b) <= min(h(g) for g in grid) + 1e-9
        assert h(off.b) == pytest.approx(off.details["objective"])


def test_bias_adjustment_as_written():
    s = np.array([0.0, 1.0, 2.0, 3.0])
    safe = np.array([True, True, False, False])
    assert cal.bias_adjustment(s, safe).b == pytest.approx((3.0 + 0.0) / 2)


# -- solvers -------------------------------------------------------------------------------------
def _toy(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 1, (n // 2, 2)), rng.normal(1.2, 1, (n // 2, 2))]
    y = np.r_[np.ones(n // 2), -np.ones(n // 2)]
    tau = np.linspace(0, 1, 6)[1:-1]
    C = 0.5 * ((1 - 2 * tau)[:, None] * y[None, :] + 1)
    return X, y, C


def test_dual_solver_reaches_the_qp_optimum():
    import cvxpy as cp

    X, y, C = _toy()
    eta = 0.7
    ker = Kernel("rbf", gamma=0.5)
    sol = solve_dual(KernelCache(ker, X, 1e8), y, C, eta, tol=1e-6, working_set=40)
    K = ker(X, X)

    def obj(al):
        v = y * al.sum(0)
        return eta / 2 * v @ K @ v - al.sum()

    A = cp.Variable(C.shape)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(len(y)))
    v = cp.multiply(y, cp.sum(A, axis=0))
    prob = cp.Problem(cp.Minimize(eta / 2 * cp.sum_squares(L.T @ v) - cp.sum(A)),
                      [A >= 0, A <= C, A @ y == 0])
    prob.solve(solver="CLARABEL")
    assert obj(sol.alpha) == pytest.approx(prob.value, rel=1e-5)
    assert np.all(sol.alpha >= 0) and np.all(sol.alpha <= C + 1e-12)
    np.testing.assert_allclose(sol.alpha @ y, 0, atol=1e-9)


def test_primal_fast_path_equals_cvxpy_model_and_dual():
    X, y, C = _toy(seed=1)
    Phi = poly_feature_map(X, 2, 0.5, 1.0)
    np.testing.assert_allclose(Phi @ Phi.T, (0.5 * X @ X.T + 1) ** 2, rtol=1e-10)
    w, b = solve_primal(Phi, y, C, 0.5)
    w2, b2 = solve_primal_cvxpy(Phi, y, C, 0.5)
    np.testing.assert_allclose(w, w2, atol=1e-5)
    np.testing.assert_allclose(b, b2, atol=1e-5)
    sol = solve_dual(KernelCache(Kernel("poly", 0.5, 2, 1.0), X, 1e8), y, C, 0.5, tol=1e-6,
                     working_set=len(y))
    np.testing.assert_allclose(sol.F - y, Phi @ w, atol=2e-3)  # wᵀφ(x_i) from (23)
    np.testing.assert_allclose(sol.b, b, atol=5e-3)


@pytest.mark.parametrize("working_set", [20, None])
def test_small_kernel_cache_gives_same_model(working_set):
    # subproblems of 20 points, or the whole problem with rows recomputed as the cache evicts
    X, y, _ = _toy(n=300, seed=2)
    big = MultiCostSVM(kernel="rbf", gamma=0.5, n_tau=3, calibration="none", tol=1e-5).fit(X, y)
    tiny_mib = 40 * 300 * 4 / 2**20  # room for 40 of the 300 rows
    small = MultiCostSVM(kernel="rbf", gamma=0.5, n_tau=3, calibration="none", tol=1e-5,
                         cache_size=tiny_mib, working_set=working_set).fit(X, y)
    assert small.cache_bytes_ <= tiny_mib * 2**20 < big.cache_bytes_
    assert small.kernel_rows_computed_ > 300  # rows were evicted and computed again
    np.testing.assert_allclose(small.decision_function(X), big.decision_function(X), atol=5e-3)


@pytest.mark.parametrize("d", [1, 2, 5])
@pytest.mark.parametrize("gamma", [0.01, 0.5, 5.0])
def test_float32_kernel_rows_match_float64_kernel(d, gamma):
    # the cached rows (float32 exponential, float64 sums) against the float64 kernel matrix:
    # within float32's resolution of values in (0, 1], including rows far out in the tail
    rng = np.random.default_rng(d)
    # a tight cluster and a wide one: γ‖x − z‖² from 0 to far beyond 87
    X = rng.normal(0, 1, (300, d)) * np.r_[np.full(150, 0.3), np.full(150, 6.0)][:, None]
    X /= np.sqrt(gamma)
    cache = KernelCache(Kernel("rbf", gamma), X, 1e8)
    K = Kernel("rbf", gamma)(X, X)
    for i in range(0, 300, 7):
        s = fetch_row(i, *cache.arrays())
        np.testing.assert_allclose(cache.store[s], K[i], rtol=0, atol=1.2e-7)
    assert K.min() < 1e-38 and np.mean(K > 0.5) > 0.05  # the tail (exponents below −87) and the bulk


@pytest.mark.parametrize("rows, n", [(5, 60), (2, 1), (300, 5000)])
def test_kernel_cache_rows_are_kept_off_huge_pages(rows, n):
    # the cache's rows live in a mapping of their own (safeclf._utils.pages.small_page_array),
    # advised against transparent huge pages where the platform has that advice
    X = np.random.default_rng(0).normal(size=(n, 2))
    cache = KernelCache(Kernel("rbf", 0.5), X, rows * n * 4)
    store = cache.store
    assert store.shape == (cache.capacity, n) and store.dtype == np.float32
    assert store.flags.writeable and store.flags.c_contiguous
    assert kept_off_huge_pages(store) is not False  # numpy would advise an aligned middle


def test_kernel_cache_evicts_the_least_recently_used_row():
    # the bounded cache against a reference LRU over a random sequence of row requests: the
    # same rows computed, and every returned slot holds the requested row
    X, _, _ = _toy(n=60, seed=3)
    ker = Kernel("rbf", 0.5)
    K = ker(X, X)
    cache = KernelCache(ker, X, 5 * 60 * 4)  # room for 5 rows
    assert cache.capacity == 5
    rng = np.random.default_rng(0)
    held, computed = [], 0  # reference LRU, most recent last
    for i in rng.integers(0, 12, 400):
        i = int(i)
        if i in held:
            held.remove(i)
        else:
            computed += 1
            if len(held) == 5:
                held.pop(0)
        held.append(i)
        s = fetch_row(i, *cache.arrays())
        np.testing.assert_allclose(cache.store[s], K[i], atol=1.2e-7)
        assert cache.computed_rows == computed
    assert computed > 12  # rows were evicted and computed again


def test_reduced_memory_solve_matches_float64_reference():
    # the solver through a cache of 8 rows computed as it goes (the float32 exponential) against
    # the same solver given the whole kernel matrix, NumPy's float64 kernel rounded once:
    # the same objective to the tolerance, the same model
    X, y, C = _toy(n=200, seed=4)
    eta, ker = 0.7, Kernel("rbf", gamma=0.5)
    small = KernelCache(ker, X, 8 * 200 * 4)
    sol = solve_dual(small, y, C, eta, tol=1e-6)
    assert small.computed_rows > 200  # rows were evicted and recomputed
    K = ker(X, X)
    ref = KernelCache(ker, X, 1e8)
    ref.store = K.astype(np.float32)  # every row present, never computed by the solver
    ref.slot_of[:] = np.arange(200)
    ref.owner = np.arange(200)
    ref.links = np.full((2, 200), -1, dtype=np.int64)
    ref.state[:] = [0, 0, 200, 0]
    sol_ref = solve_dual(ref, y, C, eta, tol=1e-6)
    assert ref.computed_rows == 0  # the reference used NumPy's rows only

    def obj(al):
        v = y * al.sum(0)
        return eta / 2 * v @ K @ v - al.sum()

    assert obj(sol.alpha) == pytest.approx(obj(sol_ref.alpha), rel=1e-6)
    np.testing.assert_allclose(sol.F, sol_ref.F, atol=1e-4)
    np.testing.assert_allclose(sol.b, sol_ref.b, atol=1e-4)


# -- estimator ------------------------------------------------------------------------------------
@parametrize_with_checks([MultiCostSVM(calibration="quantile"),
                          MultiCostSVM(kernel="rbf", calibration="conformal", n_tau=3)])
def test_sklearn_estimator_checks(estimator, check):
    # scikit-learn itself skips its array-API checks (check_array_api_input_*) unless the
    # environment variable SCIPY_ARRAY_API is set; every other check runs.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "no calibration set" (checks pass none)
        check(estimator)


def test_any_two_labels_safe_is_larger():
    X, y, _ = _toy(n=200, seed=4)
    labels = np.where(y > 0, "s", "a")  # "s" > "a": safe
    rng = np.random.default_rng(0)
    Xc = np.r_[rng.normal(0, 1, (200, 2)), rng.normal(1.2, 1, (200, 2))]
    yc = np.r_[np.full(200, "s"), np.full(200, "a")]
    e = MultiCostSVM(calibration="conformal", epsilon=0.1).fit(X, labels, X_cal=Xc, y_cal=yc)
    pred = e.predict(Xc)
    assert set(pred) <= {"s", "a"}
    assert np.mean(pred[yc == "a"] == "s") <= 0.1  # FPR on calibration ≤ k/n_U ≤ ε
    assert np.array_equal(pred == "s", e.decision_function(Xc) > 0)


def test_no_calibration_set_is_stated_in_guarantee():
    X, y, _ = _toy(n=200)
    with pytest.warns(UserWarning, match="no calibration set"):
        e = MultiCostSVM(calibration="probabilistic_scaling").fit(X, y)
    assert e.guarantee_.startswith("none") and e.calibration_details_["on_training_data"]


@pytest.mark.parametrize("params, message", [
    ({"tau": [0.2, 1.5]}, r"^methods\[0\]\.params\.tau must be a non-empty list of values in "
                          r"the open interval \(0, 1\), got \[0\.2, 1\.5\]$"),
    ({"epsilon": 1.5}, r"^methods\[0\]\.params\.epsilon must be a float in the range "
                       r"\(0(\.0)?, 1(\.0)?\), got 1\.5$"),
    ({"delta": 0}, r"^methods\[0\]\.params\.delta must be a float in the range \(0(\.0)?, 1(\.0)?\), got 0$"),
    ({"kernel": "rbf", "solver": "primal"}, r"^methods\[0\]\.params\.solver must be"),
])
def test_bad_parameters_give_one_line_spec_errors(params, message):
    with pytest.raises(SpecError, match=message) as err:
        plugin.check_params(params, "methods[0].params")
    assert "\n" not in str(err.value)


def test_calibration_set_without_unsafe_points_is_one_line_error():
    X, y, _ = _toy(n=200)
    e = MultiCostSVM(calibration="conformal")
    with pytest.raises(DataError, match=r"^conformal: the calibration set has no unsafe") as err:
        e.fit(X, y, X_cal=X[y > 0], y_cal=y[y > 0])
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="too small"):
        MultiCostSVM(calibration="probabilistic_scaling").fit(X, y, X_cal=X[80:120], y_cal=y[80:120])


# -- plugin report and the experiments ------------------------------------------------------------
def _task(ds, n_test=2000, n_cal=600, seed=0):
    idx = np.random.default_rng(seed).permutation(ds.n_samples)
    t, c, r = idx[:n_test], idx[n_test:n_test + n_cal], idx[n_test + n_cal:]
    return Task("t", ds.all.take(r), ds.all.take(t), ds.all.take(c), info=ds.info, seed=seed)


def test_gaussian_priors_loader():
    # the source row is given only to compare sources (mcsvm's per-source models read it)
    assert "source" not in load_gaussian_priors(**EX1, p_pos=[0.1, 0.9], n_samples=400).rows
    ds = load_gaussian_priors(**EX1, p_pos=[0.1, 0.9], n_samples=4001, compare_sources=True)
    src = ds.rows["source"]
    assert np.sum(src == 0.1) == 2001 and np.sum(src == 0.9) == 2000
    assert abs(np.mean(ds.y[src == 0.1] > 0) - 0.1) < 0.03
    assert ds.info["gaussians"]["p_pos"] == pytest.approx((0.1 * 2001 + 0.9 * 2000) / 4001)


def test_report_exact_region_angles_and_guarantee_draws():
    ds = load_gaussian_priors(**EX1, p_pos=[0.45, 0.55], n_samples=6000, compare_sources=True)
    task = _task(ds)
    e = plugin.build({"kernel": "linear", "n_tau": 5, "calibration": "probabilistic_scaling",
                      "guarantee_draws": 100}, random_state=0)
    plugin.fit(e, task)
    rep = plugin.report(e, task)
    m = rep.metrics
    assert rep.details["exact_region"]["kind"] == "hyperbola"
    assert m["exact_region_fpr"] == pytest.approx(0.011, abs=0.001)
    assert m["test_exact_region_fpr_z"] < 4
    assert m["w_angle_deg"] < 10  # nearly the same law: nearly the same w
    assert 0 <= m["draws_joint_rate_exceed"] <= m["draws_joint_rate_exceed_limit"]
    assert 0 < m["safe_region_box_fraction"] < 1
    assert "1 − δ" in rep.details["guarantee"]


def test_single_split_fpr_interval_covers_fresh_single_splits():
    """draws_split_fpr_lo/_hi claim the central 99% of the test FPR one split of the job's
    sizes shows (the paper's Example 3 prints one split): fresh calibration and test sets of
    those sizes from the true law, (28) recalibrated on each, land inside about 99% of the
    time, and the interval is no wider than those splits' own spread."""
    ds = load_gaussian_priors(**EX1, p_pos=list(np.linspace(0.1, 0.9, 9)), n_samples=4000)
    task = _task(ds, n_test=3000, n_cal=600)
    e = plugin.build({"kernel": "linear", "eta": 1e-3, "n_tau": 9, "calibration": "quantile",
                      "epsilon": 0.05, "quantile_bound": "fpr", "guarantee_draws": 400},
                     random_state=0)
    plugin.fit(e, task)
    m = plugin.report(e, task).metrics
    lo, hi = m["draws_split_fpr_lo"], m["draws_split_fpr_hi"]
    assert 0 <= lo < m["draws_fpr_mean"] < hi
    region = GaussianSafeRegion.from_info(ds.info["gaussians"], 0.05)
    rng = np.random.default_rng(7)
    single = []
    for _ in range(300):
        Xc, yc = region.sample(len(task.cal), rng)
        Xt, yt = region.sample(len(task.test), rng)
        b = cal.quantile(e.score_samples_w(Xc), yc > 0, 0.05, "fpr").b
        single.append(np.mean(e.score_samples_w(Xt[yt < 0]) < b))
    single = np.asarray(single)
    assert np.mean((single >= lo) & (single <= hi)) >= 0.95
    q_lo, q_hi = np.quantile(single, [0.001, 0.999])
    assert hi - lo <= 1.5 * (q_hi - q_lo)


def test_example3_config_has_the_authors_split_and_kernel():
    """Example 3 as the authors' code runs it (AlbiCarle/Multi-Cost-SVM, Example_3_2.m): 10,000
    points, 500 training, n_cl = ⌈7.47/ε·ln(1/δ)⌉ = 1,033 calibration (ε = 0.05, δ = 10⁻³),
    the rest test; the polynomial kernel (1 + xᵀz)^d on raw features."""
    import math
    from pathlib import Path

    from safeclf.execution.job import split_task
    from safeclf.spec.check import load_spec

    spec = load_spec(Path(__file__).resolve().parents[2] / "configs" / "mcsvm_safety.yaml")
    entry = next(d for d in spec.datasets if d.name == "ex3")
    ds = load_gaussian_priors(**entry.params)
    assert ds.n_samples == 10_000 and entry.preprocess in (None, "none")
    n_cl = math.ceil(7.47 / 0.05 * math.log(1 / 1e-3))
    for seed in (0, 1):
        task = split_task(ds, entry.model_dump(), seed, None)
        assert (len(task.train), len(task.cal), len(task.test)) == (500, n_cl, 10_000 - 500 - n_cl)
    for m in spec.methods:
        if m.name in ("quadratic", "cubic"):
            p = m.params
            assert (p["kernel"], p["gamma"], p["coef0"], p["eta"]) == ("poly", 1.0, 1.0, 0.001)
