"""The ramp method's inner solver: our dual coordinate descent (``dcd.py``) reaches the optimum
of the weighted hinge SVM that Clarabel's interior point and LIBLINEAR reach, on dense and CSR
input, with per-row costs on both sides of a row, cold and warm, and its gap is a true bound."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from safeclf.methods.ramp.dcd import DualState, dcd_solve
from safeclf.methods.ramp.svm import weighted_hinge_svm


def _instance(seed, n=240, d=6, density=0.6):
    """Rows with a hinge on one side, the other or both (as the ramp majoriser makes them),
    weights of different sizes, some rows all zero, a sparse pattern."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 0.3
    X[rng.random(X.shape) > density] = 0.0
    X[:5] = 0.0
    up = X[:, 0] + 0.5 * rng.normal(size=n) > 0.2
    a_pos = rng.exponential(size=n) * (~up | (rng.random(n) < 0.3)) / n
    a_neg = rng.exponential(size=n) * (up | (rng.random(n) < 0.3)) / n
    return X, a_pos, a_neg


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("seed,lam,s", [(0, 1e-2, 1.0), (1, 1e-3, 1.0), (2, 1e-2, 0.0),
                                        (3, 3e-3, 2.0)])
def test_same_optimum_as_clarabel_and_liblinear(sparse, seed, lam, s):
    X, a_pos, a_neg = _instance(seed)
    Xin = sp.csr_matrix(X) if sparse else X
    qp = weighted_hinge_svm(Xin, a_pos, a_neg, lam, s, solver="clarabel")
    ours = weighted_hinge_svm(Xin, a_pos, a_neg, lam, s, solver="dcd", max_iter=200000,
                              gap_tol=1e-12 * qp.upper)
    # the certificate brackets the interior point's optimum, and the gap asked for is reached
    assert ours.lower <= qp.upper * (1 + 1e-9) and qp.lower <= ours.upper * (1 + 1e-9)
    assert ours.upper - ours.lower <= 1e-12 * qp.upper
    assert abs(ours.upper - qp.upper) <= 1e-6 * qp.upper
    # the primal is 1-strongly convex in ũ = (2w, 2b/s), so the optimum is unique
    assert _rel(np.r_[ours.w, ours.b], np.r_[qp.w, qp.b]) <= 1e-6 * 10  # Clarabel's own accuracy
    if s > 0:  # LIBLINEAR (scikit-learn) fits a regularised bias only
        ll = weighted_hinge_svm(Xin, a_pos, a_neg, lam, s, solver="liblinear", tol=1e-9,
                                max_iter=10**6)
        assert _rel(np.r_[ours.w, ours.b], np.r_[ll.w, ll.b]) <= 1e-6
        assert abs(ours.upper - ll.upper) <= 1e-6 * ll.upper


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_warm_start_reaches_the_cold_optimum(sparse):
    """A state carried across changed costs (a new multiplier, a new majoriser: sides switched
    on and off) ends at the same optimum as a cold solve of the new problem."""
    X, a_pos, a_neg = _instance(4)
    Xin = sp.csr_matrix(X) if sparse else X
    lam, n = 1e-2, X.shape[0]
    state = DualState(n, seed=0)
    rng = np.random.default_rng(5)
    for step in range(4):
        scale = 1.0 + rng.random(n) * (step > 0)
        off = rng.random(n) < 0.1 * step
        ap, an = a_pos * scale * ~off, a_neg / scale
        warm = weighted_hinge_svm(Xin, ap, an, lam, 1.0, solver="dcd", max_iter=200000,
                                  gap_tol=1e-13, state=state)
        cold = weighted_hinge_svm(Xin, ap, an, lam, 1.0, solver="dcd", max_iter=200000,
                                  gap_tol=1e-13)
        assert _rel(np.r_[warm.w, warm.b], np.r_[cold.w, cold.b]) <= 1e-6
        assert warm.upper - warm.lower <= 1e-13


def test_dense_and_csr_take_the_same_steps():
    X, a_pos, a_neg = _instance(6)
    c_pos, c_neg = 200 * a_pos, 200 * a_neg
    out = [dcd_solve(Xin, c_pos, c_neg, 1.0, DualState(X.shape[0], 3), 1e-9, 5000)
           for Xin in (X, sp.csr_matrix(X))]
    assert out[0][4] == out[1][4] > 0
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12, atol=1e-12)


def test_gap_is_a_true_bound_when_stopped_early():
    """An inexact solve (few epochs, loose tolerance) still brackets the exact optimum."""
    X, a_pos, a_neg = _instance(7, n=400)
    lam = 1e-3
    exact = weighted_hinge_svm(X, a_pos, a_neg, lam, 1.0, solver="clarabel").upper
    for epochs in (1, 3, 10):
        res = weighted_hinge_svm(X, a_pos, a_neg, lam, 1.0, solver="dcd", max_iter=epochs,
                                 gap_tol=0.0)
        assert res.lower <= exact * (1 + 1e-8) <= res.upper * (1 + 2e-8)
        assert res.n_iter <= epochs


def _messy(X):
    """X as CSR with every entry split in two halves and each row's entries reversed
    (unsorted, duplicate column indices: the same matrix)."""
    Z = sp.csr_matrix(X)
    rows = [(Z.indices[i:j], Z.data[i:j]) for i, j in zip(Z.indptr[:-1], Z.indptr[1:])]
    indices = np.concatenate([np.r_[c, c][::-1] for c, _ in rows])
    data = np.concatenate([np.r_[v, v][::-1] / 2 for _, v in rows])
    out = sp.csr_matrix((data, indices, 2 * Z.indptr), shape=Z.shape)
    assert not out.has_canonical_format
    return out


@pytest.mark.parametrize("sparse", [False, True, "messy"], ids=["dense", "csr", "messy-csr"])
def test_working_set_polish_keeps_the_optimum(monkeypatch, sparse):
    """The exact working-set sub-solve between epochs (used on large inputs) is a valid dual
    move: with it forced on small problems the optimum and the certificate are unchanged, and
    the solver takes fewer epochs than without it; also on CSR input with unsorted and
    duplicate column indices (the set's rows are read as the sum of their entries)."""
    from safeclf.methods.ramp import svm

    X, a_pos, a_neg = _instance(8, n=400, d=5)
    Xin = _messy(X) if sparse == "messy" else sp.csr_matrix(X) if sparse else X
    lam = 1e-3
    qp = svm.weighted_hinge_svm(Xin, a_pos, a_neg, lam, 1.0, solver="clarabel")
    plain = svm.weighted_hinge_svm(Xin, a_pos, a_neg, lam, 1.0, solver="dcd", max_iter=10**6,
                                   gap_tol=1e-7 * qp.upper)
    monkeypatch.setattr(svm, "POLISH_MIN_NNZ", 0)
    monkeypatch.setattr(svm, "POLISH_AFTER", 2)
    monkeypatch.setattr(svm, "POLISH_COST_RATIO", float("inf"))
    polished = svm.weighted_hinge_svm(Xin, a_pos, a_neg, lam, 1.0, solver="dcd",
                                      max_iter=10**6, gap_tol=1e-7 * qp.upper)
    assert polished.upper - polished.lower <= 1e-7 * qp.upper
    assert polished.lower <= qp.upper * (1 + 1e-9) and qp.lower <= polished.upper * (1 + 1e-9)
    assert _rel(np.r_[polished.w, polished.b], np.r_[qp.w, qp.b]) <= 1e-3
    assert polished.n_iter < plain.n_iter


@pytest.mark.parametrize("solver", ["dcd", "liblinear", "clarabel"])
def test_one_sided_and_empty_weights(solver):
    """Only a⁺ rows (every row's hinge on the same side: LIBLINEAR then needs a placeholder
    row of the other label) reach the same optimum as dcd's; no weight at all gives w = 0."""
    X, a_pos, _ = _instance(4)
    a_neg = np.zeros_like(a_pos)
    ref = weighted_hinge_svm(X, a_pos, a_neg, 1e-2, 1.0, solver="clarabel")
    res = weighted_hinge_svm(X, a_pos, a_neg, 1e-2, 1.0, tol=1e-8, max_iter=100_000,
                             solver=solver)
    assert res.upper == pytest.approx(ref.upper, rel=1e-5)
    assert res.lower <= ref.upper + 1e-9
    empty = weighted_hinge_svm(X, a_neg, a_neg, 1e-2, 1.0, solver=solver)
    assert not empty.w.any() and empty.b == 0.0 and empty.upper == empty.lower == 0.0


def test_a_small_problem_whose_epochs_stall_is_polished(monkeypatch):
    """Below ``POLISH_MIN_NNZ`` a solve polishes only once ``POLISH_STALLED`` epochs have not
    reached its gap: with a small λ (large costs) coordinate descent on 2,000 rows creeps for
    thousands of epochs (it did on the churn study's CI data, and the interior-point
    fallback then solved the QP again); with the polish it certifies the gap a few epochs
    after the threshold, at Clarabel's optimum."""
    from safeclf.methods.ramp import svm

    X, a_pos, a_neg = _instance(0, n=2000, d=10)
    lam = 1e-5
    qp = svm.weighted_hinge_svm(X, a_pos, a_neg, lam, 1.0, solver="clarabel")
    gap = 1e-6 * qp.upper
    res = svm.weighted_hinge_svm(X, a_pos, a_neg, lam, 1.0, solver="dcd", max_iter=5000,
                                 gap_tol=gap)
    assert res.upper - res.lower <= gap
    assert svm.POLISH_STALLED <= res.n_iter <= svm.POLISH_STALLED + 3 * svm.POLISH_AFTER
    assert res.upper == pytest.approx(qp.upper, rel=1e-6)
    monkeypatch.setattr(svm, "POLISH_STALLED", 10**9)  # epochs alone: the stall is real
    slow = svm.weighted_hinge_svm(X, a_pos, a_neg, lam, 1.0, solver="dcd", max_iter=2000,
                                  gap_tol=gap)
    assert slow.n_iter == 2000 and slow.upper - slow.lower > 100 * gap


def test_polish_is_used_where_its_factor_is_cheap_against_the_epochs():
    """The polish's cost rule: with the same rows and nonzeros a row, few features pass and
    many do not (the dense (d + 1)² factor grows as d³), and more rows make the epochs dearer,
    so a wide problem becomes worth polishing again."""
    from safeclf.methods.ramp import svm

    def rows(n, d, per_row=10, seed=0):
        rng = np.random.default_rng(seed)
        X = sp.random(n, d, density=per_row / d, random_state=rng, format="csr")
        X.data[:] = 1.0
        return X

    assert svm._polish_pays(rows(40_000, 105))
    assert not svm._polish_pays(rows(40_000, 500))
    assert svm._polish_pays(rows(400_000, 500))


def test_dual_path_starts_from_the_interpolated_duals():
    """Along one multiplier search the costs are affine in v: the duals of two solved points
    combined with the weights that make v lie in v's box, give ũ as the same combination and,
    where both points share which duals sit at 0, at their cost or between (no breakpoint of
    the solution path between them), are v's optimum to the solves' own accuracy,
    while the duals of the nearer point alone (rescaled to v's costs) are far from it."""
    from safeclf.methods.ramp.dcd import DualPath

    X, a_pos, a_neg = _instance(9, n=300)
    b_pos, b_neg = np.roll(a_pos, 7), np.roll(a_neg, 3)  # the constraint's weights
    lam, n = 1e-2, X.shape[0]

    def costs(v):
        return (2 / lam) * (a_pos + v * b_pos), (2 / lam) * (a_neg + v * b_neg)

    state = DualState(n, 0)
    path = DualPath(state)
    solved = {}
    for v in (0.300, 0.301):
        path.start(v)
        solved[v] = dcd_solve(X, *costs(v), 1.0, state, 1e-11, 10**6)
        path.record(v)
    v, t = 0.3002, 0.8  # v = 0.8 · 0.300 + 0.2 · 0.301
    path.start(v)
    c_pos, c_neg = costs(v)
    assert np.all((state.alpha_pos >= 0) & (state.alpha_pos <= c_pos * (1 + 1e-12)))
    assert np.all((state.alpha_neg >= 0) & (state.alpha_neg <= c_neg * (1 + 1e-12)))
    u, _, primal, dual, _ = dcd_solve(X, c_pos, c_neg, 1.0, state, 0.0, 0)
    np.testing.assert_allclose(u, t * solved[0.300][0] + (1 - t) * solved[0.301][0], atol=1e-9)
    scale = float(c_pos.sum() + c_neg.sum())  # P(0)
    assert primal - dual <= 1e-9 * scale
    near = DualState(n, 0)  # the nearer point's duals, carried to v's costs by rescaling
    dcd_solve(X, *costs(0.30), 1.0, near, 1e-11, 10**6)
    *_, p2, d2, _ = dcd_solve(X, c_pos, c_neg, 1.0, near, 0.0, 0)
    assert p2 - d2 > 1e6 * max(primal - dual, 1e-15)


def test_dual_path_keeps_the_latest_point_and_its_neighbours():
    """At most three copies of the duals: the latest point and the nearest on each side;
    outside the evaluated range the nearest point's duals are the start."""
    from safeclf.methods.ramp.dcd import DualPath

    state = DualState(4, 0)
    path = DualPath(state)
    for v in (0.0, 1.0, 0.5, 0.25, 0.4):
        state.alpha_pos[:] = v
        path.record(v)
    assert [p[0] for p in path.points] == [0.25, 0.4, 0.5]
    path.start(0.9)
    assert np.all(state.alpha_pos == 0.5)
    path.start(0.45)
    np.testing.assert_allclose(state.alpha_pos, 0.45)
