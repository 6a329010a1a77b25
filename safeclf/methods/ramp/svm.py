"""The inner problem of Algorithm 2 (SVMOptimizer): a weighted hinge-loss SVM.

For fixed multipliers v, minimising Ψ (eq. 7) over (w, b) is, up to a constant,

    min_{w,b}  Σ_x a⁺_x max{0, ½ + z_x} + a⁻_x max{0, ½ − z_x} + λ/2 (‖w‖² + (b/s)²),
    z_x = ⟨w, x⟩ + b,

where a⁺ (a⁻) weighs the rows whose upper bound on σ (on 1 − σ) is the hinge (Section 2.1 and
Appendix F). With u = 2w, c = 2b this is (λ/4) times the standard SVM

    P(ũ) = ½‖ũ‖² + Σ_i C_i max{0, 1 − y_i ⟨ũ, x̃_i⟩},   C_i = 2 a_i / λ,   x̃ = [x, s], ũ = [u, c/s],

with label −1 for the a⁺ rows and +1 for the a⁻ rows. The default solver is our dual
coordinate descent (``dcd.py``: LIBLINEAR's algorithm, compiled), which keeps the duals α between
calls (``state``) so the many closely related problems of Algorithms 1–2 start warm, and returns
the exact dual value D(α) as the lower bound (weak duality): the gap P(ũ(α)) − D(α) is an honest
bound on the sub-optimality, and the solve stops once it is within ``gap_tol`` (inexact solves
while the outer gap is large). **The bias is regularised** like LIBLINEAR's: it is the weight
of a constant feature s (``intercept_scaling``), penalised by λ/2 (b/s)².

References kept for tests and as fallbacks: LIBLINEAR through scikit-learn (cold; it does not
return its duals, so its lower bound is a certificate rebuilt from the primal solution: α_i =
C_i on rows inside the margin, 0 outside, and the rows on the margin fitted by bounded least
squares so that Σ α_i y_i x̃_i ≈ ũ), and Clarabel's interior point on the same QP, whose dual
objective is the lower bound.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit  # cache folder: set once in safeclf/__init__.py

from safeclf.methods._solvers.conic import solve_conic
from safeclf.methods._solvers.status import SolverStatus
from safeclf.methods.ramp.box_qp import solve_rows
from safeclf.methods.ramp.dcd import DualState, dcd_solve


@dataclass
class SVMResult:
    w: np.ndarray
    b: float
    upper: float  # the inner objective at (w, b)
    lower: float  # a certified lower bound on its minimum
    n_rows: int
    n_iter: int
    z: np.ndarray  # ⟨w, x⟩ + b on every row


def _sides(X, a_pos, a_neg):
    """The standard SVM's rows: (X_s, y, a) with the a⁺ rows (label −1) then the a⁻ rows
    (label +1), those of weight 0 left out (at least one weight is positive)."""
    idx_pos = np.flatnonzero(a_pos > 0)
    idx_neg = np.flatnonzero(a_neg > 0)
    Xs = (sp.vstack([X[idx_pos], X[idx_neg]], format="csr") if sp.issparse(X)
          else np.vstack([X[idx_pos], X[idx_neg]]))
    y = np.r_[-np.ones(idx_pos.size), np.ones(idx_neg.size)]
    return Xs, y, np.r_[a_pos[idx_pos], a_neg[idx_neg]]


def inner_objective(z, a_pos, a_neg, w, b, lam, s):
    """The weighted hinge objective in the (w, b) scale of eq. (7)."""
    reg = 0.5 * lam * (float(w @ w) + (b / s) ** 2 if s > 0 else float(w @ w))
    return float(a_pos @ np.maximum(0.0, 0.5 + z) + a_neg @ np.maximum(0.0, 0.5 - z)) + reg


def weighted_hinge_svm(X, a_pos, a_neg, lam, intercept_scaling=1.0, tol=1e-3, max_iter=5000,
                       random_state=0, solver="auto", gap_tol=None, state=None):
    """Minimise the weighted hinge objective above; returns an :class:`SVMResult`.

    ``solver``: "dcd" (our dual coordinate descent, warm from ``state`` when given: a
    :class:`~safeclf.methods.ramp.dcd.DualState` updated in place; it stops when the gap is
    within ``gap_tol``, default 1e-6 of the objective's scale λ/4·P(0), or after ``max_iter``
    epochs; ``tol`` is its first projected-gradient tolerance), "liblinear" (scikit-learn's,
    cold, ``tol`` and ``max_iter`` its own), "clarabel" (the QP by interior point, exact dual
    bound), or "auto": dcd, then Clarabel when dcd's certified gap still exceeds ``gap_tol``
    after ``max_iter`` epochs."""
    if not (np.any(a_pos > 0) or np.any(a_neg > 0)):  # no loss: w = 0, b = 0 is optimal
        return SVMResult(np.zeros(X.shape[1]), 0.0, 0.0, 0.0, 0, 0, np.zeros(X.shape[0]))
    if solver == "clarabel":
        return _clarabel_svm(X, a_pos, a_neg, lam, intercept_scaling)
    if solver == "liblinear":
        res = _liblinear_svm(X, a_pos, a_neg, lam, intercept_scaling, tol, max_iter,
                             random_state)
    else:
        res = _dcd_svm(X, a_pos, a_neg, lam, intercept_scaling, tol, max_iter, random_state,
                       gap_tol, state)
    if solver == "auto" and gap_tol is not None and res.upper - res.lower > gap_tol:
        alt = _clarabel_svm(X, a_pos, a_neg, lam, intercept_scaling)
        if alt.upper - alt.lower < res.upper - res.lower:
            return alt
    return res


def _dcd_svm(X, a_pos, a_neg, lam, intercept_scaling, tol, max_iter, random_state, gap_tol,
             state):
    """dcd from ``state``; every ``POLISH_AFTER`` epochs short of the gap,
    :func:`_working_set_polish` (the remaining free coordinates and the rows nearest the
    margin solved exactly, the others fixed), checked on every row and followed by more
    epochs if it did not certify. Below ``POLISH_MIN_NNZ`` nonzeros the epochs are cheaper, and
    the polish starts only once ``POLISH_STALLED`` epochs have not reached the gap (with large
    costs coordinate descent can creep for thousands of epochs on a few thousand rows)."""
    n, d = X.shape
    s = float(intercept_scaling)
    if state is None:
        state = DualState(n, random_state)
    X = state.rows(X)  # float64 CSR, converted once
    c_pos, c_neg = (2.0 / lam) * a_pos, (2.0 / lam) * a_neg
    if gap_tol is None:  # 1e-6 of the objective at w = 0 (P(0) = Σ C)
        gap_tol = 1e-6 * 0.25 * lam * float(c_pos.sum() + c_neg.sum())
    target = 4.0 * gap_tol / lam
    epochs = 0
    chunk = min(POLISH_AFTER, max_iter)
    polish = _polish_pays(X)
    # below POLISH_MIN_NNZ the epochs are cheaper while they converge: polish once they stall
    polish_from = 0 if X.nnz >= POLISH_MIN_NNZ else POLISH_STALLED
    while True:
        u, z, primal, dual, ep = dcd_solve(X, c_pos, c_neg, s, state, target, chunk, pg_tol=tol)
        epochs += ep
        if primal - dual <= target or epochs >= max_iter:
            break
        if polish and epochs >= polish_from:
            kept = (state.alpha_pos.copy(), state.alpha_neg.copy(), z.copy())
            # ũ(α): the returned ũ may be a mean of epochs' (dcd._solve), the set's part of
            # ũ is taken out of ũ(α)
            if _working_set_polish(X, c_pos, c_neg, s, state, state.u, z):
                u2, z2, p2, d2, _ = dcd_solve(X, c_pos, c_neg, s, state, target, 0)
                if p2 - d2 < primal - dual:
                    u, z, primal, dual = u2, z2, p2, d2
                    if primal - dual <= target:
                        break
                else:  # no better than the epochs (e.g. below the set solve's accuracy): undo, stop
                    state.alpha_pos[:], state.alpha_neg[:], state.z[:] = kept
                    polish = False
        chunk = min(POLISH_AFTER, max_iter - epochs)
    return dcd_result(u, z, dual, epochs, a_pos, a_neg, lam, s)


def dcd_result(u, z, dual, epochs, a_pos, a_neg, lam, s) -> SVMResult:
    """The :class:`SVMResult` of a dual coordinate descent's (ũ, z, D(α)) in the (w, b) scale:
    (w, b) = (u, c)/2 with c = s·ũ_last, z = ⟨w, x⟩ + b = ⟨ũ, x̃⟩/2, the bound λ/4·D."""
    d = u.size - 1
    w, b = 0.5 * u[:d], 0.5 * s * u[d]
    upper = inner_objective(0.5 * z, a_pos, a_neg, w, b, lam, s)  # = λ/4·P up to rounding
    lower = 0.25 * lam * dual
    n_rows = int(np.count_nonzero(a_pos) + np.count_nonzero(a_neg))
    return SVMResult(w, b, upper, min(lower, upper), n_rows, epochs, 0.5 * z)


POLISH_AFTER = 20  # dcd epochs between working-set polishes
POLISH_MAX = 3000  # the largest working set solved exactly
POLISH_MIN_NNZ = 100_000  # below this, epochs are cheaper than an exact solve of the set
POLISH_STALLED = 200  # ... unless this many epochs did not reach the gap (see _dcd_svm)
POLISH_COST_RATIO = 8.0  # a polish may cost this many times the epochs between two (below)
POLISH_IPM_ITERS = 25  # the set's solve: its typical interior-point iteration count
POLISH_TOL = 1e-7  # the set's solve: relative duality gap (the caller certifies every row)


def warm_polish(seed: int = 0) -> None:
    """Two solves (dense and CSR rows) large enough for the working-set polish
    (``POLISH_MIN_NNZ`` nonzeros) and asked for a gap the epochs before it cannot reach, so
    that its compiled code (``_set_rows``, the interior point of ``box_qp``) is in numba's
    cache: ``python -m safeclf.cli.warm`` fits ramp on a few hundred rows, which never reach
    it, and the first Adult-sized fit in a fresh cache compiled it (18 s at load 8,
    benchmarks/NOTES.md, issue 37, branch ramp2)."""
    rng = np.random.default_rng(seed)
    d = 10
    n = -(-POLISH_MIN_NNZ // d)
    y = rng.random(n) < 0.5
    X = rng.normal(size=(n, d)) + 0.5 * (2 * y[:, None] - 1)
    a_pos, a_neg = np.where(y, 0.0, 1.0), np.where(y, 1.0, 0.0)
    for rows in (X, sp.csr_matrix(X)):
        weighted_hinge_svm(rows, a_pos, a_neg, 1.0 / n, 1.0, max_iter=30, solver="dcd",
                           gap_tol=0.0)

def _polish_pays(X) -> bool:
    """Whether a polish's estimated cost is at most ``POLISH_COST_RATIO`` times that of the
    ``POLISH_AFTER`` epochs before it, counted in flops: an interior-point iteration factors a
    dense (d + 1)² matrix ((d + 1)³/3) and forms it from the set's rows (|W|·(r + 1)², r the
    nonzeros a row); an epoch reads each row twice for both sides (4·(nnz + n)). The factor
    grows as d³: on 40,000 random sparse rows with 10 nonzeros the polish sped the fit up at
    d = 105 and 250 (4.5 against 5.4 s, 4.1 against 4.4 s; cost ratios 0.5 and 4) and slowed
    it down at d = 500 (7.6 against 5.6 s; ratio 28); on Adult the ratio is 0.7. (Measured
    before the polish was compiled, which halved its time on Adult: the threshold is
    conservative now.)"""
    n, d = X.shape
    r = X.nnz / max(n, 1)
    m = min(POLISH_MAX, 2 * n)
    polish = POLISH_IPM_ITERS * ((d + 1) ** 3 / 3 + m * (r + 1) ** 2)
    epochs = POLISH_AFTER * 4 * (X.nnz + n)
    return polish <= POLISH_COST_RATIO * epochs


def _working_set_polish(X, c_pos, c_neg, s, state, u, z):
    """Solve the dual exactly over a working set W, every other dual fixed where it is: W
    holds the free duals (0 < α < C) and then the duals whose rows lie nearest their margin
    (|y⟨ũ, x̃⟩ − 1| smallest), |W| ≤ ``POLISH_MAX``. Over W this is the box QP

        max Σ_W α_k − ½‖a + Σ_W α_k y_k x̃_k‖²,  0 ≤ α_k ≤ C_k,  a = Σ_{k ∉ W} α_k y_k x̃_k,

    whose Hessian has rank at most d + 1 (``box_qp``: an interior-point method that solves
    each Newton system through a (d + 1) × (d + 1) factor). Coordinate descent is slow on this
    data along directions that many rows share (the bias column, the one-hot blocks that sum
    to it); the exact sub-solve moves along them at once. Only the duals change here: the
    caller rebuilds ũ from them and certifies the gap on every row. Returns whether the
    duals were updated."""
    n = X.shape[0]
    alpha = np.r_[state.alpha_pos, state.alpha_neg]
    cap = np.r_[c_pos, c_neg]
    W = working_set(alpha, cap, cap > 0, z, X.shape[1])
    if W.size == 0:
        return False
    zd, zi, zp, a = _set_rows(X.data, X.indices, X.indptr, n, s, W, alpha, u)
    try:
        res = solve_rows(zd, zi, zp, X.shape[1] + 1, a, cap[W], alpha[W], tol=POLISH_TOL)
    except np.linalg.LinAlgError:  # a failed polish leaves the duals as they were
        return False
    if not np.all(np.isfinite(res.alpha)):
        return False
    alpha[W] = np.clip(res.alpha, 0.0, cap[W])
    state.alpha_pos[:] = alpha[:n]
    state.alpha_neg[:] = alpha[n:]
    return True


def working_set(alpha, cap, live, z, d, least=0) -> np.ndarray:
    """The polish's set W of the 2n duals (the −1 side of row i at i, the +1 side at n + i),
    sorted: the free ones (0 < α < C) first, then those whose rows lie nearest their margin
    (|y z − 1| smallest, z = ⟨ũ, x̃⟩), among the ``live`` ones; |W| ≤ ``POLISH_MAX``, at least
    4(d + 1), ``least`` and twice the free count where there are so many."""
    n = z.size
    y = np.r_[-np.ones(n), np.ones(n)]
    free = live & (alpha > 0) & (alpha < cap)
    # distance to the margin; free duals first (they are the ones still moving)
    dist = np.abs(y * np.r_[z, z] - 1.0) - 1e300 * free
    dist[~live] = np.inf
    k = min(POLISH_MAX, max(4 * (d + 1), 2 * int(free.sum()), int(least)),
            int(np.isfinite(dist).sum()))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    W = np.argpartition(dist, k - 1)[:k] if k < dist.size else np.flatnonzero(np.isfinite(dist))
    return np.sort(W)  # the set's rows read from X in memory order


def polish_applies(X) -> bool:
    """Whether solves on these rows (as the solver reads them) use the working-set polish
    from the start: at least ``POLISH_MIN_NNZ`` nonzeros and a polish that pays
    (:func:`_polish_pays`)."""
    return X.nnz >= POLISH_MIN_NNZ and _polish_pays(X)


@njit(cache=True)
def _set_rows(data, indices, indptr, n, s, W, alpha, u):
    """The working set's rows y_k x̃_k as CSR arrays (X's sorted column indices, the bias
    column d last) and a = ũ − Σ_W α_k y_k x̃_k, the fixed duals' part of ũ (W indexes the
    2n duals: the −1 side of row i at i, the +1 side at n + i)."""
    d = u.size - 1
    zp = np.zeros(W.size + 1, dtype=np.int64)
    for q in range(W.size):
        i = W[q] % n
        zp[q + 1] = zp[q] + indptr[i + 1] - indptr[i] + 1
    zd = np.empty(zp[-1])
    zi = np.empty(zp[-1], dtype=np.int32)
    a = u.copy()
    for q in range(W.size):
        i = W[q] % n
        y = 1.0 if W[q] >= n else -1.0
        out = zp[q]
        for p in range(indptr[i], indptr[i + 1]):
            zd[out] = y * data[p]
            zi[out] = indices[p]
            a[indices[p]] -= alpha[W[q]] * y * data[p]
            out += 1
        zd[out] = y * s
        zi[out] = d
        a[d] -= alpha[W[q]] * y * s
    return zd, zi, zp, a


def _clarabel_svm(X, a_pos, a_neg, lam, intercept_scaling):
    """The same problem as a QP for Clarabel, in the (w, b) scale: x = (w, b, ξ),
    min λ/2 (‖w‖² + (b/s)²) + Σ a_i ξ_i  s.t.  ξ_i ≥ ½ − y_i (⟨w, x_i⟩ + b),  ξ ≥ 0."""
    import clarabel

    d = X.shape[1]
    s = float(intercept_scaling)
    Xs, y, a = _sides(X, a_pos, a_neg)
    Xs, r = sp.csr_matrix(Xs), y.size
    nb = 1 if s > 0 else 0
    P = sp.block_diag([lam * sp.identity(d)]
                      + ([sp.csc_matrix([[lam / s**2]])] if nb else [])
                      + [sp.csc_matrix((r, r))], format="csc")
    q = np.r_[np.zeros(d + nb), a]
    eye = sp.identity(r, format="csr")
    blocks = [-sp.diags(y) @ Xs] + ([sp.csr_matrix(-y[:, None])] if nb else []) + [-eye]
    A = sp.vstack([sp.hstack(blocks), sp.hstack([sp.csr_matrix((r, d + nb)), -eye])],
                  format="csc")
    rhs = np.r_[np.full(r, -0.5), np.zeros(r)]
    sol, status = solve_conic(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * r)],
                              "ramp: the inner SVM")
    x = np.asarray(sol.x)
    w, b = x[:d], (float(x[d]) if nb else 0.0)
    z = np.asarray(X @ w).ravel() + b
    upper = inner_objective(z, a_pos, a_neg, w, b, lam, s)
    lower = float(sol.obj_val_dual) if status is SolverStatus.OPTIMAL else 0.0
    return SVMResult(w, b, upper, min(max(lower, 0.0), upper), r, int(sol.iterations), z)


def _liblinear_svm(X, a_pos, a_neg, lam, intercept_scaling, tol, max_iter, random_state):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    d = X.shape[1]
    s = float(intercept_scaling)
    Xs, y, a = _sides(X, a_pos, a_neg)
    C = 2.0 * a / lam
    dummy = np.unique(y).size == 1
    if dummy:  # LIBLINEAR needs two classes: add one zero-weight row of the missing label
        Xs = sp.vstack([Xs, sp.csr_matrix((1, d))]) if sp.issparse(Xs) else np.vstack(
            [Xs, np.zeros((1, d))])
        y = np.r_[y, -y[0]]
        C = np.r_[C, 1e-300]
    model = LinearSVC(C=1.0, loss="hinge", dual=True, tol=tol, max_iter=max_iter,
                      fit_intercept=s > 0, intercept_scaling=s if s > 0 else 1.0,
                      random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(Xs, y, sample_weight=C)
    u = model.coef_.ravel().astype(float)
    c = float(model.intercept_[0]) if s > 0 else 0.0
    if dummy:
        Xs, y, C = Xs[:-1], y[:-1], C[:-1]
    lower_p = _dual_certificate(Xs, y, C, u, c, s)
    w, b = 0.5 * u, 0.5 * c
    z = np.asarray(X @ w).ravel() + b
    upper = inner_objective(z, a_pos, a_neg, w, b, lam, s)
    lower = 0.25 * lam * lower_p
    return SVMResult(w, b, upper, min(lower, upper), int(C.size), int(np.max(model.n_iter_)), z)


def _dual_certificate(Xs, y, C, u, c, s, band=2e-2, max_free=5000, iters=300):
    """A lower bound D(α) on min P from the primal solution (see module docstring): α fixed
    at C or 0 off the margin band, and maximised over the rows in the band by accelerated
    projected gradient (FISTA) on the box, starting from the clipped least-squares fit."""
    margin = y * (Xs @ u + c)
    alpha = np.where(margin < 1.0, C, 0.0)
    free = np.flatnonzero(np.abs(margin - 1.0) <= band)
    if free.size > max_free:
        free = free[np.argsort(np.abs(margin[free] - 1.0))[:max_free]]

    def combo(a):  # Σ α_i y_i x̃_i
        ay = a * y
        head = np.asarray(Xs.T @ ay).ravel()
        return np.r_[head, (s * ay.sum()) if s > 0 else 0.0]

    if not free.size:
        return _scaled_dual(alpha, combo)
    alpha[free] = 0.0
    base = combo(alpha)
    Xf = Xs[free]
    Xf = Xf.toarray() if sp.issparse(Xf) else np.asarray(Xf)
    A = np.c_[Xf, np.full(free.size, s if s > 0 else 0.0)] * y[free, None]  # rows y_i x̃_i
    hi = C[free]
    target = np.r_[u, c / s if s > 0 else 0.0]
    G = A.T @ A  # (d+1)×(d+1): the least-squares fit and the Lipschitz constant from it
    a0 = np.clip(A @ (np.linalg.pinv(G, hermitian=True) @ (target - base)), 0.0, hi)
    L = max(float(np.linalg.eigvalsh(G)[-1]), 1e-12)

    def q(a):
        r = base + A.T @ a
        return a.sum() - 0.5 * r @ r

    a, yk, tk = a0, a0.copy(), 1.0
    for _ in range(iters):  # maximise q on the box [0, C_F]
        grad = 1.0 - A @ (base + A.T @ yk)
        a_next = np.clip(yk + grad / L, 0.0, hi)
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * tk * tk))
        yk = a_next + ((tk - 1.0) / t_next) * (a_next - a)
        a, tk = a_next, t_next
    alpha[free] = a if q(a) >= q(a0) else a0
    return _scaled_dual(alpha, combo)


def _scaled_dual(alpha, combo):
    """max_{t∈[0,1]} D(tα) = t Σα − t²/2 ‖Σ α y x̃‖² (tα stays in the box; t = 0 gives 0)."""
    v = combo(alpha)
    lin, quad = float(alpha.sum()), float(v @ v)
    t = 1.0 if quad <= 0 else min(1.0, max(0.0, lin / quad))
    return t * lin - 0.5 * t * t * quad
