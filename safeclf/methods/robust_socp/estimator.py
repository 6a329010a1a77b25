"""RobustSOCPClassifier: the chance-constrained max-margin classifiers as a scikit-learn
estimator (Ben-Tal, Bhadra, Bhattacharyya, Nath 2011)."""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from safeclf.data.uncertainty import Uncertainty
from safeclf.errors import DataError
from safeclf.methods.robust_socp import evaluation
from safeclf.methods.robust_socp.formulations import (
    FORMULATIONS,
    bernstein_diag,
    kappa,
    kappa_chebyshev,
    problem_data,
)
from safeclf.methods.robust_socp.nu import NU_METHODS


def _box_binds(data) -> bool:
    """Whether some ellipsoid union ∪E(µ, D) over µ ∈ [µ⁻, µ⁺] leaves its support box (an
    axis-parallel ellipsoid's extent along feature j is Dⱼ)."""
    tol = 1e-12 * (1.0 + np.abs(data.upper) + np.abs(data.lower))
    return bool(np.any(data.mean_hi + data.D > data.upper + tol)
                or np.any(data.mean_lo - data.D < data.lower - tol))


class RobustSOCPClassifier(ClassifierMixin, BaseEstimator):
    """Max-margin classifier for uncertain points with chance constraints
    Prob(yᵢ(wᵀXᵢ − b) ≤ 1 − ξᵢ) ≤ ε (eq. 5), relaxed by Bernstein (MM-S*) or Chebyshev (MM-MC).

    Parameters
    ----------
    formulation : str
        One of MM-SBMV, MM-SBMV-I, MM-SMV, MM-SMV-I, MM-SBM, MM-SBM-I, MM-SM, MM-SM-I (Table 1),
        MM-M, MM-S, MM-MC (section 1.1) or SVM (eq. 1, on the observed X).
    C : float > 0
        Weight of the slacks in ½‖w‖² + C Σ ξᵢ.
    epsilon : float in (0, 1)
        ε, the allowed misclassification probability of each uncertain training point.
    solver : {"clarabel", "cvxpy"}
        "clarabel" builds the conic problem directly (fast path); "cvxpy" states the paper's
        model in cvxpy (readable reference). Both use Clarabel and reach the same optimum.
    test_set : {"intersection", "ellipsoids", "box"}
        The uncertainty set of a test point for the robust error and undecided rate: Lemma 3's
        R ∩ ∪E(µ, κΣ₁) (default), Lemma 2's ∪E(µ, κΣ₁), or the support box R, at this ε.
    nu_method : {"sup", "bisection"}
        How ν (eq. 14) is computed for the Bernstein formulations: "sup" maximises
        2(h − max(µ̂⁻t, µ̂⁺t))/t² with the maximising mean in closed form (fast, the default);
        "bisection" is the paper's own procedure (section 2.1.1: binary search on k between
        the Claim's bounds, checking f ≥ 0 by a 1-d minimisation). Both give the same ν to
        1e-7.
    n_monte_carlo : int ≥ 0
        Realisations per training point and law for the chance-constraint check (0: skip).
    random_state : int, RandomState or None
        Seeds the Monte-Carlo check.

    Attributes
    ----------
    coef_ : ndarray of shape (n,)
        w.
    intercept_ : float
        −b, so ``decision_function`` = Xw − b.
    slack_ : ndarray of shape (m,)
        ξ.
    objective_ : float
        The problem's optimal value.
    classes_ : ndarray of shape (2,)
        classes_[1] is y = +1.
    box_binding_ : bool
        For "-I": whether the support box cuts some point's set; if not, the plain twin is
        solved, which is the same problem.

    Notes
    -----
    ``fit(X, y, uncertainty=None, covariance=None)``: ``X`` (m, n) holds the observed points
    (SVM trains on them; they must lie inside their supports), ``uncertainty`` the partial
    information as a dict of (m, n) arrays (keys lower, upper, mean_lo, mean_hi,
    second_moment; see :mod:`.uncertainty`) or an :class:`Uncertainty`. Without it, X is
    taken as exact (zero-width supports, means X): every formulation is then the soft-margin
    SVM. ``covariance`` (MM-MC only) gives each point's covariance matrix Σᵢ, (n, n) shared or
    (m, n, n): eq. (4) with the full Σᵢ^{1/2} instead of the diagonal of the largest
    variances the per-entry information allows. The held-out check of the chance constraint
    (:meth:`safeclf_promise_evidence`) has no covariance for new points and uses the
    diagonal.

    Examples
    --------
    Forty points, each known only up to a box of half-width 0.5 around its observation, its mean
    there and its variance at most 0.05:

    >>> from sklearn.datasets import make_blobs
    >>> from safeclf.estimators import RobustSOCPClassifier
    >>> X, y = make_blobs(n_samples=40, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> uncertainty = {"lower": X - 0.5, "upper": X + 0.5, "mean_lo": X, "mean_hi": X,
    ...                "second_moment": X**2 + 0.05}
    >>> model = RobustSOCPClassifier("MM-SBMV-I", epsilon=0.1, random_state=0)
    >>> model.fit(X, y, uncertainty=uncertainty).predict(X[:4])
    array([1, 1, 1, 0])
    >>> model.coef_.round(2)
    array([1.5 , 0.92])
    """

    _parameter_constraints = {
        "formulation": [StrOptions(set(FORMULATIONS))],
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, 1, closed="neither")],
        "solver": [StrOptions({"clarabel", "cvxpy"})],
        "test_set": [StrOptions(set(evaluation.TEST_SETS))],
        "nu_method": [StrOptions(set(NU_METHODS))],
        "n_monte_carlo": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, formulation="MM-SBMV-I", C=1.0, epsilon=0.1, solver="clarabel",
                 test_set="intersection", nu_method="sup", n_monte_carlo=2000,
                 random_state=None):
        self.formulation = formulation
        self.C = C
        self.epsilon = epsilon
        self.solver = solver
        self.test_set = test_set
        self.nu_method = nu_method
        self.n_monte_carlo = n_monte_carlo
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X, y, uncertainty=None, covariance=None):
        """Solve the formulation's problem on the uncertain training points.

        Parameters
        ----------
        X : array-like of shape (m, n)
            The observed points (the SVM trains on them); they must lie inside their
            supports.
        y : array-like of shape (m,)
            Labels, two classes.
        uncertainty : dict or Uncertainty, optional
            Each entry's partial information: (m, n) arrays ``lower``, ``upper``,
            ``mean_lo``, ``mean_hi``, ``second_moment`` (NaN where unknown). Without it X is
            taken as exact and every formulation is the soft-margin SVM.
        covariance : array-like of shape (n, n) or (m, n, n), optional
            MM-MC only: each point's covariance matrix (symmetric positive semi-definite).

        Returns
        -------
        self : RobustSOCPClassifier
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise DataError(f"Only binary classification is supported: robust_socp got "
                            f"{self.classes_.size} class(es) {self.classes_.tolist()[:5]}")
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        unc = self._uncertainty(X, uncertainty, "fit: uncertainty")
        if covariance is not None and FORMULATIONS[self.formulation].radius != "chebyshev":
            raise DataError(f"fit: covariance is used by MM-MC only, not by {self.formulation}")
        try:
            data = problem_data(self.formulation, unc, X, y_pm, self.epsilon, self.nu_method,
                                covariance)
        except ValueError as exc:
            raise DataError(f"fit: {exc}") from None
        self.box_binding_ = data.lower is not None and _box_binds(data)
        if data.lower is not None and not self.box_binding_:
            # every point's ellipsoid union lies inside its support box, so Lemma 3's set is
            # Lemma 2's and (23)/(26)/(29)/(32) is exactly (16)/(24)/(27)/(30): solve that
            data = replace(data, lower=None, upper=None)
        if self.solver == "cvxpy":
            from safeclf.methods.robust_socp.cvxpy_model import solve_cvxpy

            sol = solve_cvxpy(data, self.C)
        else:
            from safeclf.methods.robust_socp.clarabel_path import solve_clarabel

            sol = solve_clarabel(data, self.C)
        self.coef_ = sol.w
        self.intercept_ = -sol.b
        self.slack_ = sol.xi
        self.objective_ = sol.objective
        self.solver_status_ = str(sol.status)
        self.n_iter_ = sol.n_iter
        return self

    #: relative accuracy claimed for ``objective_``: Clarabel's default tolerances (1e-8)
    #: leave ~1e-8 relative error, so optima equal in exact arithmetic are compared through
    #: the bracket objective ∓ 1e-6 relative (metrics objective_lo, objective_hi)
    OBJECTIVE_RTOL = 1e-6

    @staticmethod
    def _uncertainty(X, uncertainty, where) -> Uncertainty:
        if uncertainty is None:
            return Uncertainty.exact(X)
        unc = Uncertainty.from_rows(uncertainty, X.shape[1], where)
        if unc.shape[0] != X.shape[0]:
            raise DataError(f"{where} describes {unc.shape[0]} points but X has {X.shape[0]}")
        tol = 1e-7 * np.maximum(1.0, np.abs(X))
        out = (X < unc.lower - tol) | (X > unc.upper + tol)
        if out.any():
            i, j = (int(v) for v in np.argwhere(out)[0])
            raise DataError(
                f"{where}: X[{i}, {j}] = {X[i, j]:.6g} lies outside its support "
                f"[{unc.lower[i, j]:.6g}, {unc.upper[i, j]:.6g}]; a preprocess step rescales X "
                "but not the uncertainty rows, so use preprocess: none"
            )
        return unc

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X):
        """wᵀx − b for each row of X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_

    def predict(self, X):
        score = self.decision_function(X)
        return self.classes_[(score >= 0).astype(int)]

    # -- reporting -------------------------------------------------------------------------
    @property
    def margin_(self) -> float:
        """2/‖w‖ (inf when w = 0)."""
        check_is_fitted(self)
        nw = float(np.linalg.norm(self.coef_))
        return 2.0 / nw if nw > 0 else float("inf")

    def evaluate(self, X, y, uncertainty=None, realisations=None) -> dict:
        """Nominal, robust and realised error and undecided rate on uncertain points."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y_pm = np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)
        unc = self._uncertainty(X, uncertainty, "evaluate: uncertainty")
        w, b = self.coef_, -self.intercept_
        out = evaluation.test_errors(unc, y_pm, w, b, self.epsilon, self.test_set)
        if realisations is not None:
            R = np.asarray(realisations, float)  # (m, k, n)
            pred = np.where(R @ w - b >= 0, 1.0, -1.0)
            out["realised_error"] = float(np.mean(pred != y_pm[:, None]))
        else:
            out["realised_error"] = float("nan")
        return out

    def chance_check(self, X, y, uncertainty) -> dict:
        """The largest Monte-Carlo violation probability of (5) over training points, per law
        consistent with the partial information (see :func:`evaluation.consistent_sample`)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        y_pm = np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)
        unc = self._uncertainty(X, uncertainty, "chance_check: uncertainty")
        rng = check_random_state(self.random_state)
        rng = np.random.default_rng(rng.randint(2**31))
        return evaluation.chance_violations(unc, y_pm, self.coef_, -self.intercept_,
                                            self.slack_, self.n_monte_carlo, rng)

    def radius_ratios(self, X, uncertainty) -> np.ndarray:
        """Per entry (s > 0, positive variance): Bernstein's radius κ ν(µ̂, µ̂, σ̂) s over
        Chebyshev's √((1−ε)/ε) σ_std, at the exact mean (MM-SMV against MM-MC)."""
        X = np.asarray(X, float)
        unc = self._uncertainty(X, uncertainty, "uncertainty")
        bern = kappa(self.epsilon) * bernstein_diag(unc, exact_mean=True, second_moment=True,
                                                    nu_method=self.nu_method)
        cheb = kappa_chebyshev(self.epsilon) * np.sqrt(unc.variance())
        ok = (unc.half_width > 0) & (cheb > 0)
        return bern[ok] / cheb[ok]

    def safeclf_promises(self, task=None):
        """The chance constraint (5) at ε, for the formulations that impose it (Bernstein (14)
        for the MM-S… families, Chebyshev for MM-MC, the whole support box for MM-S, where the
        violation probability is 0); MM-M and the SVM promise nothing."""
        from safeclf.guarantees.promises import Promise, Quantity, no_promise

        f = FORMULATIONS[self.formulation]
        if f.radius == "none" and f.mean != "support":
            return [no_promise("robust_socp", f"{f.name} {f.equation} constrains "
                               f"{'the means' if f.mean == 'exact' else 'the observed X'} only, "
                               "no probability of misclassification")]
        eps = float(self.epsilon)
        return [Promise(
            "chance_constraint",
            f"for each point i and every law consistent with its information, "
            f"P(yᵢ(wᵀXᵢ − b) < 1 − ξᵢ) ≤ ε = {eps:g}",
            Quantity("chance_violation"), "<=", eps, "worst_case",
            f"Ben-Tal et al. 2011, eq. (5) via {f.name} {f.equation}",
            note=("checked on held-out points: ξ_j is the smallest slack the formulation's "
                  "uncertainty set certifies at point j; realisations (the true law) or, "
                  "without them, 20 draws per point from the adverse two-point law of eq. (12) "
                  "are counted against y_j(wᵀX_j − b) < 1 − ξ_j; a statement about the bound "
                  "at fresh points, not about the test error"))]

    def safeclf_promise_evidence(self, task, promise, part="test"):
        """Violations of (5) at the held-out points of ``part`` (see :meth:`safeclf_promises`):
        every draw is an independent Bernoulli with probability ≤ ε when the promise holds, so
        the count is checked with an exact binomial interval (a Poisson-binomial count with
        mean ≤ Nε is more concentrated than Binomial(N, ε), Hoeffding 1956)."""
        from safeclf.guarantees.promises import Evidence

        data = task.parts()[part]
        unc = data.rows.get("uncertainty")
        if unc is None:
            raise ValueError("the held-out points carry no uncertainty information")
        X = validate_data(self, data.X, reset=False, dtype=np.float64)
        unc = self._uncertainty(X, unc, "uncertainty")
        y_pm = np.where(np.asarray(data.y) == self.classes_[1], 1.0, -1.0)
        w, b = self.coef_, -self.intercept_
        pdata = problem_data(self.formulation, unc, X, y_pm, self.epsilon, self.nu_method)
        d = -y_pm[:, None] * w[None, :]
        sigma = evaluation.set_support(d, pdata.mean_lo, pdata.mean_hi, pdata.D,
                                       pdata.lower, pdata.upper)
        xi = np.maximum(0.0, 1.0 + sigma + y_pm * b)  # min over the set of y(wᵀx − b) = 1 − ξ
        R = data.rows.get("realisations")
        if R is not None:
            draws, how = np.transpose(np.asarray(R, float), (1, 0, 2)), "realisations"
        else:
            rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31))
            draws = evaluation.consistent_sample(unc, d, "two_point", 20, rng)
            how = "adverse two-point law"
        margin = y_pm[None, :] * (draws @ w - b)
        hits = margin < 1.0 - xi[None, :] - 1e-6
        return Evidence(int(hits.sum()), int(hits.size),
                        note=f"{hits.shape[1]} points × {hits.shape[0]} draws ({how})")
