"""The working-set dual's interior-point solver (box_qp) against Clarabel on the same QP."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from safeclf.methods.ramp.box_qp import box_qp


def _clarabel_box_qp(Z, a, cap):
    """min ½‖a + Zᵀα‖² − Σα, 0 ≤ α ≤ C, as a QP in (α, u) with u = a + Zᵀα."""
    import clarabel

    from safeclf.methods._solvers.conic import solve_conic

    m, k = Z.shape
    P = sp.block_diag([sp.csc_matrix((m, m)), sp.identity(k)], format="csc")
    q = np.r_[-np.ones(m), np.zeros(k)]
    A = sp.vstack([sp.hstack([-Z.T, sp.identity(k)]),                   # u − Zᵀα = a
                   sp.hstack([-sp.identity(m), sp.csr_matrix((m, k))]),  # α ≥ 0
                   sp.hstack([sp.identity(m), sp.csr_matrix((m, k))])],  # α ≤ C
                  format="csc")
    b = np.r_[a, np.zeros(m), cap]
    cones = [clarabel.ZeroConeT(k), clarabel.NonnegativeConeT(2 * m)]
    sol, _ = solve_conic(P, q, A, b, cones, "test: box QP", tol_gap_abs=1e-10,
                         tol_gap_rel=1e-10, tol_feas=1e-10)
    alpha = np.clip(np.asarray(sol.x)[:m], 0.0, cap)
    return alpha


def _objective(Z, a, alpha):
    u = a + Z.T @ alpha
    return 0.5 * float(u @ u) - float(alpha.sum())


def _instance(seed, m, k, density):
    """An SVM working set: rows y_k x̃_k (one-hot-like sparse features, a bias column), caps
    of different sizes, a fixed part a of ũ."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, k - 1, density=density, random_state=rng, format="csr")
    X.data[:] = rng.uniform(0.2, 1.0, X.nnz)
    y = rng.choice([-1.0, 1.0], m)
    Z = sp.diags(y) @ sp.hstack([X, sp.csr_matrix(np.ones((m, 1)))], format="csr")
    return Z, rng.normal(scale=2.0, size=k), rng.uniform(0.1, 3.0, m)


@pytest.mark.parametrize("seed,m,k,density", [(0, 300, 8, 0.4), (1, 800, 30, 0.1),
                                               (2, 60, 40, 0.3), (3, 500, 2, 1.0)])
def test_box_qp_reaches_clarabels_optimum(seed, m, k, density):
    """Same optimal value to 1e-8 relative, a feasible α, a small certified gap; and from a
    warm start (a perturbed optimum) the same value again."""
    Z, a, cap = _instance(seed, m, k, density)
    ref = _objective(Z, a, _clarabel_box_qp(Z, a, cap))
    res = box_qp(Z, a, cap, tol=1e-10)
    assert res.converged
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= cap)
    assert _objective(Z, a, res.alpha) == pytest.approx(ref, rel=1e-8, abs=1e-8)
    assert res.gap <= 1e-9 * (1 + abs(ref))
    warm = box_qp(Z, a, cap, np.clip(res.alpha + 0.1, 0, cap), tol=1e-10)
    assert _objective(Z, a, warm.alpha) == pytest.approx(ref, rel=1e-8, abs=1e-8)


def test_box_qp_duplicate_and_unsorted_entries():
    """A CSR matrix with unsorted column indices and duplicate entries is read as the sum of
    its entries (the Gram factor visits each (row, column) once)."""
    Z, a, cap = _instance(5, 200, 6, 0.5)
    # every entry split into two halves, each row's entries in reversed order
    indptr = 2 * Z.indptr
    indices = np.concatenate([np.r_[Z.indices[i:j], Z.indices[i:j]][::-1]
                              for i, j in zip(Z.indptr[:-1], Z.indptr[1:])])
    data = np.concatenate([np.r_[Z.data[i:j], Z.data[i:j]][::-1] / 2
                           for i, j in zip(Z.indptr[:-1], Z.indptr[1:])])
    messy = sp.csr_matrix((data, indices, indptr), shape=Z.shape)
    assert messy.nnz == 2 * Z.nnz and not messy.has_sorted_indices
    ref = box_qp(Z, a, cap, tol=1e-10)
    res = box_qp(messy, a, cap, tol=1e-10)
    assert _objective(Z, a, res.alpha) == pytest.approx(_objective(Z, a, ref.alpha), rel=1e-9)


def test_box_qp_gives_up_honestly():
    """With too few iterations it says it did not converge and still returns α in the box."""
    Z, a, cap = _instance(6, 400, 10, 0.3)
    res = box_qp(Z, a, cap, tol=1e-12, max_iter=2)
    assert not res.converged and res.iterations == 2
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= cap)


def test_box_qp_refuses_an_empty_box():
    Z, a, cap = _instance(8, 50, 4, 0.5)
    cap[3] = 0.0
    with pytest.raises(ValueError, match="every upper bound C must be > 0"):
        box_qp(Z, a, cap)


def test_gram_factor_is_the_dense_product():
    """_gram (I + Zᵀ diag(w) Z, read from sorted CSR indices) equals the dense product."""
    from safeclf.methods.ramp.box_qp import _gram

    Z, _, _ = _instance(9, 300, 12, 0.4)
    Z.sort_indices()
    w = np.random.default_rng(9).uniform(0.1, 2.0, Z.shape[0])
    dense = Z.toarray()
    want = np.eye(Z.shape[1]) + dense.T @ (w[:, None] * dense)
    np.testing.assert_allclose(_gram(Z.data, Z.indices, Z.indptr, w, Z.shape[1]), want,
                               rtol=1e-12, atol=1e-12)
