"""The paper's fairness baseline: an SVM under Zafar et al.'s covariance constraint.

Goh et al. (2016), eq. (8) and Section 4.1: with x̄ = |D_M|⁻¹ Σ_{x∈D_M} x − |D_F|⁻¹ Σ_{x∈D_F} x,

    minimise_{w,b}  (1/n) Σ_i max{0, 1 − y_i(⟨w, x_i⟩ + b)} + λ/2 ‖w‖²
    subject to      −c ≤ ⟨w, x̄⟩ ≤ c,

a QP (the covariance between group membership and the signed distance is proportional to
⟨w, x̄⟩). The bias is not regularised. Two paths reach the same optimum: a readable cvxpy model
(``solver="cvxpy"``) and the conic problem built directly for Clarabel (``solver="clarabel"``,
the default, fast on Adult).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from safeclf._utils.routing import ROUTING_HINT, requested
from safeclf.errors import DataError
from safeclf.guarantees.groups import resolve
from safeclf.methods._solvers.conic import solve_conic
from safeclf.methods._solvers.status import settle
from safeclf.methods.ramp.linear import LinearBinaryClassifier


def group_mean_difference(X, groups, privileged):
    """x̄ = mean of the privileged group's rows − mean of the others' (eq. 8)."""
    g = np.asarray(groups).astype(str)
    M = g == str(privileged)
    if not M.any() or M.all():
        raise DataError(f"zafar: privileged group '{privileged}' must hold some but not all rows")

    def mean(mask):
        return np.asarray(X[mask].mean(axis=0)).ravel()

    return mean(M) - mean(~M)


def solve_cvxpy(X, y_pm, xbar, c, lam):
    """The readable model (eq. 8 with the hinge SVM)."""
    import cvxpy as cp

    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    hinge = cp.pos(1 - cp.multiply(y_pm, X @ w + b))
    problem = cp.Problem(cp.Minimize(cp.sum(hinge) / n + lam / 2 * cp.sum_squares(w)),
                         [xbar @ w <= c, -xbar @ w <= c])
    problem.solve(solver=cp.CLARABEL)
    status = settle(problem.status, "zafar (cvxpy)")
    return (np.asarray(w.value), float(b.value), float(problem.value), status,
            int(problem.solver_stats.num_iters or 0))


def solve_clarabel(X, y_pm, xbar, c, lam):
    """The same QP in Clarabel's form min ½xᵀPx + qᵀx s.t. Ax + s = b, s ≥ 0, with
    x = (w, b, ξ): rows −y_i x_iᵀw − y_i b − ξ_i + s = −1, −ξ + s = 0, ±x̄ᵀw + s = c."""
    import clarabel

    n, d = X.shape
    Xs = sp.csr_matrix(X)
    P = sp.block_diag([lam * sp.identity(d), sp.csc_matrix((1 + n, 1 + n))], format="csc")
    q = np.r_[np.zeros(d + 1), np.full(n, 1.0 / n)]
    eye = sp.identity(n, format="csr")
    A = sp.vstack([
        sp.hstack([-sp.diags(y_pm) @ Xs, -y_pm[:, None], -eye]),
        sp.hstack([sp.csr_matrix((n, d + 1)), -eye]),
        sp.hstack([sp.csr_matrix(np.vstack([xbar, -xbar])), sp.csr_matrix((2, n + 1))]),
    ], format="csc")
    rhs = np.r_[-np.ones(n), np.zeros(n), c, c]
    sol, status = solve_conic(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * n + 2)], "zafar")
    x = np.asarray(sol.x)
    return x[:d], float(x[d]), float(sol.obj_val), status, int(sol.iterations)


class ZafarSVM(LinearBinaryClassifier):
    """Hinge-loss SVM with the covariance constraint |⟨w, x̄⟩| ≤ c (Zafar et al. 2015).

    Parameters
    ----------
    c : float ≥ 0 or None
        The covariance bound (None: unconstrained).
    lam : float or None
        The regularisation weight λ (None: 1/n).
    privileged : str or None
        The group D_M (None: the dataset's, else the group whose labels are most often
        positive: :func:`safeclf.guarantees.groups.resolve`).
    solver : {"clarabel", "cvxpy"}, default "clarabel"
        The direct conic form, or the readable cvxpy model.

    Examples
    --------
    >>> import numpy as np
    >>> from safeclf.estimators import ZafarSVM
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.choice(["A", "B"], size=200)
    >>> y = (rng.random(200) < np.where(groups == "B", 0.6, 0.3)).astype(int)
    >>> X = rng.normal(size=(200, 2)) + np.c_[1.2 * (2 * y - 1), 0.8 * (groups == "B")]
    >>> model = ZafarSVM(c=0.05, privileged="B").fit(X, y, groups=groups)
    >>> model.predict(X[:5])
    array([1, 1, 0, 0, 0])
    """

    _parameter_constraints = {
        "c": [Interval(Real, 0, None, closed="left"), None],
        "lam": [Interval(Real, 0, None, closed="neither"), None],
        "privileged": [str, None],
        "solver": [StrOptions({"clarabel", "cvxpy"})],
    }

    __metadata_request__fit = requested("groups", "privileged_group")

    def __init__(self, c=None, lam=None, privileged=None, solver="clarabel"):
        self.c = c
        self.lam = lam
        self.privileged = privileged
        self.solver = solver

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, groups=None, privileged_group=None):
        """X (n, d), y (n,) two classes, groups (n,) group labels (needed when c is set),
        ``privileged_group`` the dataset's privileged group (used when ``privileged`` is None;
        :mod:`safeclf.guarantees.groups`)."""
        self._validate_params()
        X, y = self._check_binary(X, y)
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        n = X.shape[0]
        lam = float(self.lam) if self.lam is not None else 1.0 / n
        if self.c is None or groups is None:
            if self.c is not None:
                raise DataError(f"zafar: a covariance bound c needs groups: {ROUTING_HINT}")
            xbar, c = np.zeros(X.shape[1]), 0.0
            xbar_used = False
        else:
            groups = np.asarray(groups)
            d = resolve(self.privileged, {"privileged_group": privileged_group}, groups,
                        y_pm > 0, where="zafar.privileged")
            self.privileged_, self.privileged_source_ = d.privileged, d.source
            xbar, c, xbar_used = group_mean_difference(X, groups, d.privileged), float(self.c), True
        solve = solve_clarabel if self.solver == "clarabel" else solve_cvxpy
        if not xbar_used:  # no constraint: the bound row is 0 ≤ 0, harmless
            c = 0.0
        self.coef_, self.intercept_, self.objective_, status, self.n_iter_ = solve(
            X, y_pm, xbar, c, lam)
        self.solver_status_ = str(status)
        self.covariance_ = float(xbar @ self.coef_)
        return self
