"""The MC-SVM estimator: train w on the τ blocks (MC-SVM, Prop. 5), then choose the offset b on a
calibration set (section 3.2). A point is predicted safe (the larger label, S = +1) when
wᵀφ(x) − b < 0; ``decision_function`` returns b − wᵀφ(x), positive for safe.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from safeclf.errors import DataError
from safeclf.methods.mcsvm import calibration as cal
from safeclf.methods.mcsvm.dual import solve_dual
from safeclf.methods.mcsvm.kernels import Kernel, KernelCache, resolve_gamma
from safeclf.methods.mcsvm.primal import poly_feature_count, poly_feature_map, solve_primal

#: polynomial kernels with at most this many monomial features go through the primal under "auto"
MAX_PRIMAL_FEATURES = 64


def tau_grid(n_tau: int) -> np.ndarray:
    """n_tau values linearly spaced inside (0, 1): 0.5 for 1, 0.1 … 0.9 for 9 (Examples 2, 3)."""
    return np.linspace(0.0, 1.0, n_tau + 2)[1:-1]


#: a calibration column whose mean is this many training standard deviations from the training
#: column's (a random split gives ~1/√n), or whose spread differs by this factor, is not in X's
#: feature space
SPACE_SHIFT, SPACE_SPREAD = 20.0, 100.0


def check_same_space(X, X_cal) -> None:
    """Refuse, before fitting, calibration rows that are not in X's feature space: a column
    (varying in training) whose calibration mean lies ``SPACE_SHIFT`` training standard
    deviations away, or whose spread differs by a factor ``SPACE_SPREAD``. This is what X_cal
    looks like when a Pipeline transformed X but passed X_cal through untransformed; the
    offset chosen on it would carry no guarantee."""
    Xc = np.asarray(X_cal, dtype=np.float64)
    if Xc.ndim != 2 or Xc.shape[1] != X.shape[1] or Xc.shape[0] == 0:
        return  # validate_data in calibrate names the shape error
    mx, sx = X.mean(axis=0), X.std(axis=0)
    mc, sc = Xc.mean(axis=0), Xc.std(axis=0)
    varies = sx > 1e-12 * (1.0 + np.abs(mx))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(varies, np.abs(mc - mx) / sx, 0.0)
        spread = np.where(varies & (sc > 0), np.maximum(sc / sx, sx / sc), 1.0)
    bad = np.flatnonzero((shift > SPACE_SHIFT) | (spread > SPACE_SPREAD))
    if bad.size:
        j = int(bad[0])
        raise DataError(
            f"MultiCostSVM: X_cal column {j} has mean {mc[j]:.4g} and sd {sc[j]:.4g} where the "
            f"training X has {mx[j]:.4g} and {sx[j]:.4g}, so it is not in X's feature space "
            "(inside a Pipeline use safeclf.pipeline.make_calibrated_pipeline, which "
            "transforms X_cal with the fitted steps)")


class MultiCostSVM(ClassifierMixin, BaseEstimator):
    """Multi Cost SVM with a calibrated offset (Carlevaro et al. 2024).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf"}
    eta : float > 0
        η in (1/2η)wᵀw; larger η means weaker regularisation (η plays the SVM's C).
    tau : list of float in (0, 1) or None
        The weights τ_1..τ_m (cost 1 − τ_k for a safe point, τ_k for an unsafe one).
    n_tau : int ≥ 1
        Used when ``tau`` is None: ``n_tau`` values linearly spaced in (0, 1).
    degree, gamma, coef0 : kernel parameters (as scikit-learn's SVC).
    calibration : {"probabilistic_scaling", "conformal", "conformal_all", "quantile", \
            "bias_adjustment", "class_proportion", "z_svm", "none"}
        How the offset b is chosen on the calibration set (section 3.2,
        :mod:`~safeclf.methods.mcsvm.calibration`): (25)-(27), the conformal quantile of the
        unsafe points' scores or of every point's (3.2.3), (28), (24), (24) weighted by the
        class counts, the z-SVM geometric-mean offset (3.2.1). ``"none"`` keeps the trained
        b_k of the τ nearest 0.5.
    epsilon, delta : float in (0, 1)
        ε (risk) and δ (confidence of probabilistic scaling).
    quantile_bound : {"fpr", "fnr"}
        What (28) aims to bound: "fpr" uses 1 − ε in place of ε, as the paper says to do for
        false positives; "fnr" is (28) as written.
    solver : {"auto", "dual", "primal"}
        "primal" (Clarabel) needs an explicit feature map: the linear kernel, or a polynomial
        kernel with coef0 ≥ 0; "auto" takes it for those (polynomials up to
        ``MAX_PRIMAL_FEATURES`` monomials) and the decomposition dual solver otherwise.
    tol : float
        KKT tolerance of the dual solver.
    max_iter : int
        Outer iterations of the dual solver.
    cache_size : float
        Kernel cache bound in MiB, shared by all τ blocks (default 200, scikit-learn SVC's):
        rows the cache cannot hold are recomputed, which on a few features is cheaper than
        holding them (benchmarks/mcsvm.py, benchmarks/NOTES.md). After a fit the process keeps
        the cache's memory for its next fit (one cache's worth at most, marked free so the
        system can take it back).
    working_set : int or None
        Points per decomposition subproblem; None (the default): the whole problem, the
        kernel rows read through the bounded cache (least recently used rows recomputed when
        it cannot hold them all), which was faster than subproblems at every size measured
        (benchmarks/mcsvm.py).
    guarantee_draws : int ≥ 0
        Report only: number of fresh calibration sets drawn from the true distribution (the
        dataset's ``info["gaussians"]``) to check the calibration guarantee empirically.
    random_state : int, RandomState or None
        Seeds the guarantee draws.

    Examples
    --------
    Trained on 200 rows, the offset calibrated on 100 others so that at most ε of the unsafe
    points (label 0) are predicted safe (label 1):

    >>> from sklearn.datasets import make_classification
    >>> from safeclf.estimators import MultiCostSVM
    >>> X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    >>> model = MultiCostSVM(n_tau=3, calibration="conformal", epsilon=0.1, random_state=0)
    >>> model.fit(X[:200], y[:200], X_cal=X[200:], y_cal=y[200:]).predict(X[:5])
    array([1, 0, 0, 1, 1])
    >>> round(model.offset_, 3)
    0.03
    """

    _parameter_constraints = {
        "kernel": [StrOptions({"linear", "poly", "rbf"})],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "tau": ["array-like", None],
        "n_tau": [Interval(Integral, 1, None, closed="left")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "coef0": [Real],
        "calibration": [StrOptions({"none", *cal.METHODS})],
        "epsilon": [Interval(Real, 0, 1, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "quantile_bound": [StrOptions({"fpr", "fnr"})],
        "solver": [StrOptions({"auto", "dual", "primal"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "working_set": [Interval(Integral, 2, None, closed="left"), None],
        "guarantee_draws": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, kernel="linear", eta=1.0, tau=None, n_tau=9, degree=3, gamma="scale",
                 coef0=1.0, calibration="probabilistic_scaling", epsilon=0.05, delta=0.05,
                 quantile_bound="fpr", solver="auto", tol=1e-3, max_iter=10_000,
                 cache_size=200.0, working_set=None, guarantee_draws=0, random_state=None):
        self.kernel = kernel
        self.eta = eta
        self.tau = tau
        self.n_tau = n_tau
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.calibration = calibration
        self.epsilon = epsilon
        self.delta = delta
        self.quantile_bound = quantile_bound
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.working_set = working_set
        self.guarantee_draws = guarantee_draws
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def _validate_params(self):
        super()._validate_params()
        if self.tau is not None:
            t = np.asarray(self.tau, dtype=float).ravel()
            if t.size == 0 or not np.all((t > 0) & (t < 1)):
                raise ValueError(f"tau must be a non-empty list of values in the open interval "
                                 f"(0, 1), got {self.tau!r}")
        if self.solver == "primal" and not self._explicit_map_possible():
            raise ValueError(f"solver must be 'auto' or 'dual' for kernel={self.kernel!r}, "
                             f"coef0={self.coef0!r} (no explicit feature map), got 'primal'")

    def _explicit_map_possible(self):
        return self.kernel == "linear" or (self.kernel == "poly" and self.coef0 >= 0)

    #: fit keywords that are rows in X's feature space: safeclf.pipeline.CalibratedPipeline
    #: passes them through its fitted transforms
    _safeclf_x_like_params = ("X_cal",)

    # -- training --------------------------------------------------------------------------
    def fit(self, X, y, X_cal=None, y_cal=None):
        """Learn w and the b_k on (X, y), then the offset b on (X_cal, y_cal).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Two classes: the larger label is safe (S), the smaller unsafe (U).
        X_cal, y_cal : array-like, optional
            The calibration split the offset is chosen on. Without it the offset is chosen
            on the training data and the model carries no guarantee (``guarantee_`` says so).

        Returns
        -------
        self : MultiCostSVM
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        if X_cal is not None and self.calibration != "none":
            check_same_space(X, X_cal)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise ValueError(
                f"Only binary classification is supported: MultiCostSVM takes the larger label "
                f"as safe and the smaller as unsafe; y has {self.classes_.size} class(es)"
            )
        ypm = np.where(y == self.classes_[1], 1.0, -1.0)
        self.tau_ = tau_grid(self.n_tau) if self.tau is None else np.asarray(self.tau, float).ravel()
        # C_ik = ½((1 − 2τ_k) y_i + 1): 1 − τ_k for a safe point, τ_k for an unsafe one
        C = 0.5 * ((1.0 - 2.0 * self.tau_)[:, None] * ypm[None, :] + 1.0)
        self.gamma_ = resolve_gamma(self.gamma, X)
        self._kernel = Kernel(self.kernel, self.gamma_, self.degree, self.coef0)
        self.solver_ = self._pick_solver(X.shape[1])
        if self.solver_ == "primal":
            w, b, its, status = solve_primal(self._phi(X), ypm, C, self.eta, return_status=True)
            self.w_, self.intercepts_ = w, b
            self.n_iter_ = max(its, 1)
            self.solver_status_ = str(status)
            self.support_ = np.arange(0)
        else:
            cache = KernelCache(self._kernel, X, self.cache_size * 2**20)
            sol = solve_dual(cache, ypm, C, self.eta, tol=self.tol, max_iter=self.max_iter,
                             working_set=self.working_set)
            abar = sol.alpha.sum(axis=0)
            self.support_ = np.flatnonzero(abar > 0)
            self.support_vectors_ = X[self.support_]
            # (23): wᵀφ(x) = −η Σ_i ᾱ_i y_i K(x_i, x)
            self.dual_coef_ = -self.eta * abar[self.support_] * ypm[self.support_]
            self.intercepts_ = sol.b
            self.n_iter_ = sol.n_outer
            self.solver_status_ = str(sol.status)
            self.kkt_gap_ = sol.gap
            self.cache_bytes_ = cache.nbytes
            self.kernel_rows_computed_ = cache.computed_rows
            if self.kernel == "linear":
                self.w_ = self.dual_coef_ @ self.support_vectors_
        if self.kernel == "linear":
            self.coef_ = self.w_.copy()
        self.calibrate(X_cal, y_cal, _train=(X, y))
        return self

    def _pick_solver(self, d):
        if self.solver != "auto":
            return self.solver
        if self.kernel == "linear":
            return "primal"
        if self.kernel == "poly" and self.coef0 >= 0 and \
                poly_feature_count(d, self.degree, self.coef0) <= MAX_PRIMAL_FEATURES:
            return "primal"
        return "dual"

    def _phi(self, X):
        if self.kernel == "linear":
            return X
        return poly_feature_map(X, self.degree, self.gamma_, self.coef0)

    # -- scores and calibration ------------------------------------------------------------
    def score_samples_w(self, X) -> np.ndarray:
        """wᵀφ(x) for each row (before the offset)."""
        check_is_fitted(self, "intercepts_")
        X = np.asarray(X, dtype=np.float64)
        if self.solver_ == "primal":
            return self._phi(X) @ self.w_
        if self.kernel == "linear":
            return X @ self.w_
        out = np.empty(X.shape[0])
        step = max(1, int(2**25 // max(1, self.support_.size)))
        for start in range(0, X.shape[0], step):
            Kx = self._kernel(X[start:start + step], self.support_vectors_)
            out[start:start + step] = Kx @ self.dual_coef_
        return out

    def calibrate(self, X_cal=None, y_cal=None, *, scores=None, safe=None, _train=None):
        """Choose the offset b (section 3.2) on a calibration set, or on precomputed ``scores``
        (wᵀφ) and ``safe`` flags; sets ``offset_``, ``guarantee_``, ``calibration_details_``."""
        check_is_fitted(self, "intercepts_")
        if self.calibration == "none":
            k = int(np.argmin(np.abs(self.tau_ - 0.5)))
            self.offset_ = float(self.intercepts_[k])
            self.guarantee_ = f"none: offset b_k of the trained τ = {self.tau_[k]:g}, not calibrated"
            self.calibration_details_ = {"tau": float(self.tau_[k])}
            self.n_cal_ = 0
            return self
        on_train = False
        if scores is None:
            if X_cal is None:
                if _train is None:
                    raise DataError("calibrate: give X_cal and y_cal, or scores and safe")
                X_cal, y_cal = _train
                on_train = True
            elif y_cal is None:
                raise DataError("calibrate: X_cal given without y_cal")
            X_cal = validate_data(self, X_cal, reset=False, dtype=np.float64)
            y_cal = np.asarray(y_cal)
            if y_cal.shape[0] != X_cal.shape[0]:
                raise DataError(f"calibrate: X_cal has {X_cal.shape[0]} rows but y_cal "
                                f"{y_cal.shape[0]} labels")
            unknown = np.setdiff1d(np.unique(y_cal), self.classes_)
            if unknown.size:
                raise DataError(f"calibrate: y_cal has labels {unknown.tolist()} not seen in training "
                                f"({self.classes_.tolist()})")
            scores, safe = self.score_samples_w(X_cal), y_cal == self.classes_[1]
        off = cal.calibrate(self.calibration, scores, safe, self.epsilon, self.delta, self.quantile_bound)
        self.offset_ = off.b
        self.guarantee_ = off.guarantee
        if on_train:
            self.guarantee_ = ("none: no calibration set was given, so the offset was chosen on the "
                               f"training data; with an independent one it would carry: {off.guarantee}")
            warnings.warn("MultiCostSVM: no calibration set given; calibrated on the training data "
                          "without a guarantee", UserWarning, stacklevel=2)
        self.calibration_details_ = dict(off.details, on_training_data=on_train)
        self.n_cal_ = int(np.asarray(scores).size)
        return self

    # -- prediction ----------------------------------------------------------------------------
    def decision_function(self, X):
        """b − wᵀφ(x): positive where x is predicted safe (``classes_[1]``)."""
        check_is_fitted(self, "offset_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.nan_to_num(self.offset_ - self.score_samples_w(X))

    def predict(self, X):
        """Safe (``classes_[1]``) where wᵀφ(x) − b < 0, else unsafe (``classes_[0]``)."""
        check_is_fitted(self, "offset_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.where(self.score_samples_w(X) < self.offset_, self.classes_[1], self.classes_[0])

    def safeclf_promises(self, task=None):
        """The calibration's promise (section 3.2), on the safe class S = ``classes_[1]``:
        probabilistic scaling bounds the *joint* rate P(y = U and x predicted S) with
        confidence 1 − δ (eq. 25–27); conformal bounds P(x predicted S | y = U) in expectation
        over the calibration draw (3.2.3), and with every score (``conformal_all``) the joint rate in
        expectation; the other offsets, and any offset chosen on the
        training data, promise nothing."""
        from safeclf.guarantees.promises import Promise, Quantity, no_promise

        check_is_fitted(self, "offset_")
        on_train = bool(getattr(self, "calibration_details_", {}).get("on_training_data"))
        eps = float(self.epsilon)
        if self.calibration == "probabilistic_scaling" and not on_train:
            return [Promise(
                "joint_fp_rate",
                f"P(y = U and x predicted S) ≤ ε = {eps:g}, with probability ≥ 1 − δ = "
                f"{1 - self.delta:g} over the calibration draw",
                Quantity("rate", "predicted_positive", label="negative", joint=True),
                "<=", eps, "high_confidence", "Carlevaro et al. 2024, eq. (25)-(27)",
                delta=float(self.delta),
                note="a joint rate over all points, not the FPR P(predicted S | U)")]
        if self.calibration == "conformal_all" and not on_train:
            return [Promise(
                "joint_fp_rate", f"P(y = U and x predicted S) ≤ ε = {eps:g}, in expectation "
                "over the calibration draw", Quantity("rate", "predicted_positive",
                                                      label="negative", joint=True),
                "<=", eps, "expectation", "Carlevaro et al. 2024, section 3.2.3 (all scores)",
                note="a joint rate over all points, in expectation over the calibration draw")]
        if self.calibration == "conformal" and not on_train:
            return [Promise(
                "fpr", f"P(x predicted S | y = U) ≤ ε = {eps:g}, in expectation over the "
                "calibration draw", Quantity("rate", "predicted_positive", label="negative"),
                "<=", eps, "expectation", "Carlevaro et al. 2024, section 3.2.3",
                note="one model's FPR may exceed ε; its mean over calibration draws may not")]
        return [no_promise("mcsvm", self.guarantee_)]

