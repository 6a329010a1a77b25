"""RampClassifier: a linear classifier trained with dataset constraints (Goh et al., 2016)."""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from safeclf._utils.blas import one_blas_thread
from safeclf._utils.routing import ROUTED_ROWS, ROUTING_HINT, requested
from safeclf.errors import DataError, InfeasibleError
from safeclf.guarantees.groups import as_labels
from safeclf.guarantees.rate_items import (
    expand_constraints,
    parse_constraints,
    parse_monitors,
    parse_objective,
)
from safeclf.guarantees.rates import FitData, RatioConstraint
from safeclf.methods._solvers.status import SolverStatus, iteration_status, settle, worst
from safeclf.methods.ramp import mm, threshold
from safeclf.methods.ramp.dcd import solver_rows
from safeclf.methods.ramp.linear import LinearBinaryClassifier
from safeclf.methods.ramp.starts import _start_at, coarse_rows  # noqa: F401

#: Below this many training rows, ``lam=None`` means "auto" (see RampClassifier's ``lam``)
LAM_AUTO_ROWS = 2000
#: From this many training rows on, ``start="auto"`` means "coarse" (see RampClassifier's
#: ``start``); each coarse level fits ``1 / COARSE_FACTOR`` of the rows, itself started
#: coarse while it has at least ``COARSE_FLOOR`` rows, to ``COARSE_LOOSENESS`` times the
#: fit's ``mm_tol`` and ``tol`` (it is only a starting point: the fit on all rows settles it)
COARSE_ROWS = 20_000
COARSE_FACTOR = 8
COARSE_FLOOR = 10_000
#: 30 (was 10 before the multiplier joined the polish, joint.py): on Adult, κ 0.5 / 0.8 / 0.9 ×
#: random_state 0-2, the coarse level's epochs fell by 42 % and the fit on all rows took the
#: same epochs and MM steps (benchmarks/NOTES.md, 2026-11-29)
COARSE_LOOSENESS = 30.0


class RampClassifier(LinearBinaryClassifier):
    """Linear f(x) = ⟨w, x⟩ + b minimising a rate objective subject to rate constraints on
    named subsets of the training data (Problems 1–3), by majorization–minimization
    (Algorithm 1) with a cutting-plane dual (Algorithm 2) around a weighted hinge SVM.

    Parameters
    ----------
    constraints : list of mappings or None
        The dataset constraints, e.g. ``[{rate: fairness_ratio, kappa: 0.8}]``; see
        :mod:`safeclf.guarantees.rates` for the vocabulary.
    kappa : float in (0, 1] or None
        κ of every ratio constraint that does not give its own (so a spec can grid over κ).
    target : float in [0, 1] or None
        The value of every bound written ``target`` (e.g. ``{rate: churn, max: target}``).
    objective : str or list of mappings, default "error"
        The rates minimised (Problem 1's α⁰, β⁰): a rate name or a list of terms.
    monitor : list of mappings or None
        Rates only reported (``{rate, subset, name}``), e.g. the error on D1 ∪ D2.
    lam : float, "auto", "1/n" or None
        λ, the ℓ2 regulariser. "1/n" is the paper's LIBLINEAR default; "auto" chooses λ from
        ``lam_grid`` by repeated ``cv``-fold cross-validation (:meth:`_choose_lam`): the
        objective rate on the validation folds, among the λ whose fits meet their constraints
        there, with the one-standard-error rule; None (the default) means "auto" when there
        are fewer than ``LAM_AUTO_ROWS`` (2,000) training rows and "1/n" otherwise: with 700
        rows λ = 1/n overfits (Adult, κ = 0.8: training error 0.15, test 0.22-0.26, where
        λ = 10/n gave 0.18-0.21), while from 3,500 rows on it was on or beyond its peers'
        frontier; the cross-validation costs len(lam_grid) × cv × cv_repeats + 1 fits
        (76 by default), affordable on small data.
    lam_grid : list of float or None
        The λ values "auto" tries; None means (1/n) × 10^{0, 0.5, 1, 1.5, 2}.
    cv : int ≥ 2
        Folds of the λ cross-validation (stratified by label).
    cv_repeats : int ≥ 1, default 5
        Times the ``cv``-fold cross-validation is repeated, each on a new random partition;
        the scores are averaged over all of them, and the one-standard-error rule uses the
        standard error of that average from the per-repeat means
        (:func:`~safeclf.methods.ramp.lam_cv.repeated_fold_se`). One 3-fold partition of 700
        rows is too noisy to choose by: on Adult subsamples of 1,000 rows (κ = 0.8, 30 seeds,
        4 λ each) the 3-fold standard error of the same λ on the same rows differed between 5
        random partitions by a median factor of 3.9 (median smallest 0.004, median largest
        0.017), and the one-standard-error rule's reach with it. The standard deviation of R per-repeat
        means has R − 1 degrees of freedom, so 5 repeats estimate it to about ±35 % (2: ±70 %).
        1 repeat: the usual k-fold standard error.
    n_jobs : int or None
        Repeats × folds × λ fitted in parallel by joblib in worker processes (None: one at a time).
        Not threads: the LIBLINEAR inner solver keeps a process-wide random state, and fits
        sharing it in threads were measured to give different multipliers from run to run.
        Leave it None inside the runner, whose workers already occupy every core.
    fit_intercept, intercept_scaling : the bias b is the weight of a constant feature s and is
        regularised by λ/2 (b/s)² (LIBLINEAR's convention).
    max_multiplier : v_max, the box of the multipliers V = [0, v_max]^m.
    max_mm_iter, mm_tol : Algorithm 1's iteration limit and relative merit tolerance: it stops
        when a step lowers the merit (Problem 2's objective plus the exact penalty) by at
        most ``mm_tol`` times its value. The limit (50) is a safeguard, not the stopping
        rule: the fits of the shipped configs settle in 6-24 steps (the earlier limit of 10
        stopped own_data's κ = 0.8 fits, Adult's and many λ-search fold fits short).
    max_cp_iter, tol : Algorithm 2's iteration limit and its ε on U_t − L_t.
    svm_tol, svm_max_iter : the inner solver's first projected-gradient tolerance and its
        epoch (LIBLINEAR: iteration) limit; each inner solve also stops once its certified
        duality gap is within a share of the cutting plane's remaining gap (``mm.inner_gap_target``).
    inner_solver : "auto" (our warm-started dual coordinate descent, then Clarabel's QP when its
        certified gap still exceeds the target after ``svm_max_iter`` epochs), "dcd",
        "liblinear" (scikit-learn's, cold) or "clarabel".
    start : "auto", "zero" or "coarse"
        Where Algorithm 1 starts. "zero": w = 0, b = 0, v = 0, the inner duals at 0 (the
        paper's experiments). "coarse": the same problem (same constraints and options, λ
        scaled by the row ratio, as λ = 1/n is) is first fitted on a random eighth of the rows
        (``COARSE_FACTOR``; stratified by label and ``groups``; itself started coarse while
        that eighth has at least ``COARSE_FLOOR`` (10,000) rows) to ten times looser
        tolerances (``COARSE_LOOSENESS``: ``mm_tol`` and ``tol``; it is only a starting
        point), and the full problem starts from its w, b and multipliers, each inner dual at
        its cap where its hinge is active at the coarse scores, its multiplier search from the
        coarse fit's slope dg/dv. Both end at local solutions of the non-convex Problem 2, not
        the same ones: the coarse start needs fewer majorization steps on all rows, each
        starting near its answer. Adult and 24,000-row subsamples of it, κ = 0.5/0.8/0.9
        (9 fits): 2.2× less time in all, mean training objective 0.16453 against the zero
        start's 0.16461, mean test error 0.1606 against 0.1603; random 10,000- and 16,000-row
        subsamples: 1.7–1.8× less time, test error 0.001–0.0015 higher; 6,000 rows: no faster.
        "auto" (the default): "coarse" from ``COARSE_ROWS`` (20,000) training rows on, "zero"
        below; ``start: zero`` reproduces the paper's algorithm at any size. A coarse fit that
        fails (e.g. a constraint's subset is empty on the sample) falls back to "zero".
    warm_start : bool, default False
        scikit-learn's: when True and the estimator is already fitted (same features, same
        number of constraints), Algorithm 1 starts from the fitted w, b and multipliers, each
        inner dual at its cap where its hinge is active at the fitted scores (as the coarse
        start does), instead of ``start``'s point. Where ``start`` would be the coarse start,
        the coarse fit is made too and the fit starts from whichever of the two points has
        the lower exact-penalty merit on all rows: a fitted point left far outside a
        constraint that moved (a large step of κ) is a worse start than a coarse fit of the
        new problem. A grid solved as a path (``path: kappa`` in a spec) fits each point this
        way from the previous one. Like the coarse start it ends at a local solution of the
        non-convex Problem 2 that may differ from the cold start's (``benchmarks/ramp.py``
        measures a κ path both ways).
    feasibility_tol : a constraint whose randomised training value exceeds its bound by more
        than this (in the constraint's linear form) makes ``fit`` raise InfeasibleError; one
        that the returned rule (``predict``'s) misses by more than this makes ``fit`` warn
        (ConvergenceWarning) and sets ``solver_status_`` to "inaccurate".
    prediction : the rule ``predict`` uses, and the one the constraints are promised for.
        "deterministic" (the default): positive where f(x) > 0, with the bias moved by
        ``threshold_``. Problem 2 constrains the randomised rule σ(f) (its expected rates),
        and where many training scores lie within the ramp's linear part (|f| < ½, as with a
        large λ) the thresholded rule can miss a constraint by far (a fairness ratio of 0.63
        at κ = 0.8); so after Algorithm 1 the threshold is chosen on the training scores:
        the rule 1[f(x) > t] with the smallest training objective among those meeting every
        constraint (t = 0 kept on ties; all n + 1 rules are scored at once from prefix sums
        of the constraints' linear forms over the sorted scores, O(n log n):
        :func:`~safeclf.methods.ramp.threshold.choose`), else the one with the smallest worst
        violation, which ``fit`` then reports. Without constraints t = 0.
        "randomized": positive with probability σ(f(x)), drawn with ``random_state``; its
        constraints hold in expectation over the draws, as Problem 2 states them; no
        threshold is moved.

    Attributes
    ----------
    coef_ (d,), intercept_ (float), classes_ (2,), multipliers_ (m,), n_mm_iter_,
    n_cp_iter_ (list per MM iteration), duality_gap_, constraint_values_ (list of dicts),
    lam_ (λ used), lam_cv_ (the cross-validation table when λ was chosen, else None),
    history_ (per MM iteration), coarse_rows_ (the row counts of the coarse fits this fit
    started from, outermost first; [] for the zero start), ramp_intercept_ (b of Problem 2's
    solution), threshold_ (t: ``intercept_ = ramp_intercept_ − t``; 0 for the randomised
    rule). ``constraint_values_`` rows give each constraint's ``train`` value and ``slack``
    for the returned rule, ``train_randomized`` and ``slack_randomized`` for σ(f) at the
    solution, and ``tolerance`` (``feasibility_tol`` in the constraint's units).

    Examples
    --------
    Group A's positive rate at least 0.8 times group B's (the groups are a keyword of ``fit``):

    >>> import numpy as np
    >>> from safeclf.estimators import RampClassifier
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.choice(["A", "B"], size=300)
    >>> y = (rng.random(300) < np.where(groups == "B", 0.6, 0.3)).astype(int)
    >>> X = rng.normal(size=(300, 2)) + np.c_[1.2 * (2 * y - 1), 0.8 * (groups == "B")]
    >>> fair = [{"rate": "fairness_ratio", "kappa": 0.8, "privileged": "B"}]
    >>> model = RampClassifier(constraints=fair, lam=0.1, random_state=0)
    >>> model.fit(X, y, groups=groups).predict(X[:5])
    array([1, 1, 1, 0, 1])
    >>> round(model.constraint_values_[0]["train"], 3)  # the ratio on the training rows
    0.829
    """

    _parameter_constraints = {
        "constraints": [list, None],
        "kappa": [Interval(Real, 0, 1, closed="right"), None],
        "target": [Interval(Real, 0, 1, closed="both"), None],
        "objective": [str, list],
        "monitor": [list, None],
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto", "1/n"}), None],
        "lam_grid": [list, None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "cv_repeats": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "max_multiplier": [Interval(Real, 0, None, closed="neither")],
        "max_mm_iter": [Interval(Integral, 1, None, closed="left")],
        "mm_tol": [Interval(Real, 0, None, closed="left")],
        "max_cp_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "svm_max_iter": [Interval(Integral, 1, None, closed="left")],
        "inner_solver": [StrOptions({"auto", "dcd", "liblinear", "clarabel"})],
        "start": [StrOptions({"auto", "zero", "coarse"})],
        "warm_start": ["boolean"],
        "feasibility_tol": [Interval(Real, 0, None, closed="left")],
        "prediction": [StrOptions({"deterministic", "randomized"})],
        "random_state": ["random_state"],
    }

    # the rows a constraint set commonly names, requested from scikit-learn's metadata routing
    # (rows under other names are passed to fit directly)
    __metadata_request__fit = requested(*ROUTED_ROWS, "privileged_group")

    def __init__(self, constraints=None, kappa=None, target=None, objective="error",
                 monitor=None, lam=None, lam_grid=None, cv=3, cv_repeats=5,
                 n_jobs=None,
                 fit_intercept=True, intercept_scaling=1.0,
                 max_multiplier=100.0, max_mm_iter=50, mm_tol=1e-3,
                 max_cp_iter=30, tol=1e-4, svm_tol=1e-2, svm_max_iter=5000, inner_solver="auto",
                 start="auto", warm_start=False, feasibility_tol=5e-3,
                 prediction="deterministic", random_state=None):
        self.constraints = constraints
        self.kappa = kappa
        self.target = target
        self.objective = objective
        self.monitor = monitor
        self.lam = lam
        self.lam_grid = lam_grid
        self.cv = cv
        self.cv_repeats = cv_repeats
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_multiplier = max_multiplier
        self.max_mm_iter = max_mm_iter
        self.mm_tol = mm_tol
        self.max_cp_iter = max_cp_iter
        self.tol = tol
        self.svm_tol = svm_tol
        self.svm_max_iter = svm_max_iter
        self.inner_solver = inner_solver
        self.start = start
        self.warm_start = warm_start
        self.feasibility_tol = feasibility_tol
        self.prediction = prediction
        self.random_state = random_state

    # -- parameters ---------------------------------------------------------------------------
    def _validate_params(self):
        super()._validate_params()
        if self.lam_grid is not None and (not self.lam_grid or not all(
                isinstance(v, Real) and not isinstance(v, bool) and v > 0 for v in self.lam_grid)):
            raise ValueError(f"lam_grid must be a non-empty list of numbers > 0, got "
                             f"{self.lam_grid!r}")
        self._parsed()

    def _parsed(self):
        """The constraints and objective; a ``ValueError`` naming the parameter's path."""
        parse_monitors(self.monitor)
        return (parse_constraints(self.constraints, defaults={"kappa": self.kappa,
                                                              "target": self.target}),
                parse_objective(self.objective))

    def rows_needed(self) -> set[str]:
        """The dataset ``rows`` entries the constraints and objective refer to."""
        cons, obj = self._parsed()
        return set().union(obj.rows_needed(), *(c.rows_needed() for c in cons))

    def monitors(self):
        return parse_monitors(self.monitor)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X, y, groups=None, role=None, baseline=None, privileged_group=None, **rows):
        """Fit Problem 2 by Algorithm 1, then choose ``predict``'s threshold on the training
        scores.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, d)
            Training rows.
        y : array-like of shape (n,)
            Labels, two classes.
        groups, role, baseline : array-like of shape (n,), optional
            Named per-row arrays the constraints refer to (group labels, the churn study's
            roles, a deployed model's predictions); also passed through scikit-learn's
            metadata routing (:mod:`safeclf._utils.routing`).
        privileged_group : str, optional
            The dataset's privileged group, used by ratio constraints that name none
            (:mod:`safeclf.guarantees.groups`).
        **rows : array-like of shape (n,)
            Further named per-row arrays the constraints refer to.

        Returns
        -------
        self : RampClassifier
            The fitted estimator.
        """
        if "sample_weight" in rows:
            raise TypeError("RampClassifier.fit does not take sample_weight: weigh the rates "
                            "with objective terms ({rate, subset, weight}) instead")
        # every product of a fit is matrix-vector (the rates' n-vectors, X @ w) or a factor
        # of (d + 1)²: BLAS threads only wake and spin (a rate's dot product over Adult's
        # rows took 7 ms at two threads on a busy host, against 30–60 µs at one), taking CPU
        # from the runner's other jobs
        with one_blas_thread():
            return self._fit(X, y, privileged_group, dict(rows, groups=groups, role=role,
                                                           baseline=baseline))

    def _fit(self, X, y, privileged_group, rows):
        """:meth:`fit` with its named rows in ``rows`` (None where not given)."""
        self._validate_params()
        X, y = self._check_binary(X, y)
        if self.inner_solver in ("auto", "dcd"):
            # the rows as the solver reads them (CSR), made once: the coarse sample and the
            # λ folds are cut from it, and its products X @ w cost what its nonzeros do
            X = solver_rows(X)
        n = X.shape[0]
        rows = {k: _row(v, k, n) for k, v in rows.items() if v is not None}
        if "groups" in rows:  # as text once: every rate and comparison reads them so
            rows["groups"] = as_labels(rows["groups"])
        missing = sorted(self.rows_needed() - set(rows))
        if missing:
            raise DataError(f"ramp: the constraints need rows '{missing[0]}': {ROUTING_HINT}")
        data = FitData(y == self.classes_[1], rows)
        cons, obj = self._parsed()
        try:
            cons = expand_constraints(cons, data, privileged_group)
            lin0 = obj.linear(data)
            pairs = [c.linear(data) for c in cons]
        except ValueError as exc:
            raise DataError(f"ramp: {exc}") from None
        lam, self.lam_cv_ = self._lam(X, y, rows, privileged_group)
        prob = mm.Problem(
            X=X,
            coef=np.vstack([lin0.coef] + [g.coef for g, _ in pairs]),
            const=np.r_[lin0.const, [g.const for g, _ in pairs]],
            gamma=np.array([gam for _, gam in pairs], dtype=float),
            lam=lam,
            s=float(self.intercept_scaling) if self.fit_intercept else 0.0,
        )
        # the iterate with the smallest worst violation seen (w = 0 included)
        best = {"viol": np.maximum(0.0, prob.values(mm.ramp(np.zeros(n)))[1:] - prob.gamma)}

        def track(t, res, cp):
            for cut in cp.cuts:
                z = cut.payload.z
                viol = np.maximum(0.0, prob.values(mm.ramp(z))[1:] - prob.gamma)
                if viol.size and viol.max() < best["viol"].max():
                    best["viol"] = viol

        started = time.perf_counter()
        seed = check_random_state(self.random_state).randint(2**31 - 1)
        start = self._start(X, y, rows, privileged_group, prob, seed)
        out = mm.solve(prob, v_max=self.max_multiplier, max_mm_iter=self.max_mm_iter,
                       mm_tol=self.mm_tol, max_cp_iter=self.max_cp_iter, cp_tol=self.tol,
                       svm_tol=self.svm_tol, svm_max_iter=self.svm_max_iter,
                       callback=track, seed=seed, inner_solver=self.inner_solver,
                       start_only=getattr(self, "_coarse_level", False), **start)
        self.fit_seconds_ = time.perf_counter() - started
        self.coef_, self.intercept_ = out.w, float(out.b)
        self.ramp_intercept_, self.threshold_ = float(out.b), 0.0
        self.lam_ = prob.lam
        self.multipliers_ = np.asarray(out.v, dtype=float)
        self._multiplier_slope = out.slope  # the start of a fit from this one (warm, coarse)
        self.n_mm_iter_ = self.n_iter_ = out.mm_iterations
        mm_status = settle(
            iteration_status(out.converged), "ramp: majorization-minimization",
            detail=f"reached max_mm_iter={self.max_mm_iter} before the merit settled")
        self.n_cp_iter_ = list(out.cp_iterations)
        self.duality_gap_ = float(out.duality_gaps[-1]) if out.duality_gaps else 0.0
        self.history_ = out.history
        self._constraints = cons
        self._objective = obj
        z = prob.z(self.coef_, self.intercept_)
        self.objective_value_ = float(prob.values(mm.ramp(z))[0] + prob.reg(out.w, out.b))
        # infeasible on training data: name the worst constraint and the best violation reached
        viol = prob.values(mm.ramp(z))[1:] - prob.gamma
        if cons and viol.max() > self.feasibility_tol:
            final = np.maximum(viol, 0.0)
            seen = best["viol"] if best["viol"].max() < final.max() else final
            j = int(np.argmax(seen))
            row = {"train_randomized": cons[j].value(data, mm.ramp(z)),
                   "target": cons[j].target(data)}
            hint = ("" if seen.max() > self.feasibility_tol else
                    "; an iterate within tolerance was seen, so raise max_multiplier or "
                    "max_mm_iter")
            raise InfeasibleError(
                f"ramp: constraint '{cons[j].name}' ({cons[j].where}: {cons[j].describe()}) is "
                f"infeasible on the training data: best violation reached {seen[j]:.4g} "
                f"(final randomised value {row['train_randomized']:.4g}, target "
                f"{row['target']:.4g}){hint}"
            )
        if self.prediction == "deterministic" and cons:
            self.threshold_ = threshold.choose(z, prob.coef, prob.const, prob.gamma).t
            self.intercept_ = self.ramp_intercept_ - self.threshold_
        z_rule = prob.z(self.coef_, self.intercept_)
        self.constraint_values_ = self._constraint_table(data, z_rule, z, pairs)
        self.solver_status_ = str(worst([mm_status, self._rule_status()]))
        return self

    @staticmethod
    def warm_compiled_code() -> None:
        """Run the compiled code that only large fits reach (for ``safeclf.cli.warm``)."""
        from safeclf.methods.ramp.joint import warm_joint
        from safeclf.methods.ramp.svm import warm_polish

        warm_polish()
        warm_joint()

    def _rule_status(self):
        """Optimal when the returned rule (``predict``'s) meets every training constraint
        within ``feasibility_tol`` (in the constraint's linear form); otherwise a
        ConvergenceWarning naming the worst one, and inaccurate."""
        rows = self.constraint_values_
        missed = [r for r in rows if -r["slack"] > self.feasibility_tol]
        if not missed:
            return SolverStatus.OPTIMAL
        r = max(missed, key=lambda r: -r["slack"])
        return settle(SolverStatus.INACCURATE, "ramp: the returned rule",
                      detail=f"predict ({self.prediction}) misses constraint '{r['name']}' "
                      f"({r['description']}) on the training data: {r['train']:.4g} against "
                      f"{r['target']:.4g}, by {-r['slack']:.4g} in its linear form, more than "
                      f"feasibility_tol={self.feasibility_tol:g}; promises.csv says so")

    # -- where Algorithm 1 starts ----------------------------------------------------------------
    def _can_warm_start(self, X, prob) -> bool:
        """Whether ``warm_start`` applies: a fitted estimator with as many features and
        constraints as this fit."""
        return bool(self.warm_start) and hasattr(self, "coef_") and (
            self.coef_.shape == (X.shape[1],) and self.multipliers_.shape == (prob.m,))

    def _start(self, X, y, rows, privileged_group, prob, seed) -> dict:
        """``mm.solve``'s start: ``start``'s point, or with ``warm_start`` the fitted one. A
        warm fit that would start coarse fits the coarse level too and starts from whichever
        of the two points has the lower exact-penalty merit on all rows (the fitted point can
        lie far outside a constraint that moved)."""
        coarse = self._coarse_start(X, y, rows, privileged_group, prob, seed)
        if not self._can_warm_start(X, prob):
            return coarse
        w, b, v_max = self.coef_, self.ramp_intercept_, self.max_multiplier
        if coarse and (prob.penalised(coarse["w0"], coarse["b0"], v_max)
                       < prob.penalised(w, b, v_max)):
            return coarse
        self.coarse_rows_ = []
        return _start_at(w, b, self.multipliers_, prob, seed,
                         getattr(self, "_multiplier_slope", None))

    def _coarse_start(self, X, y, rows, privileged_group, prob, seed) -> dict:
        """``mm.solve``'s start (w0, b0, v0 and the inner duals' state) from a fit on a
        random share of the rows (``start``), or {} for the zero start."""
        self.coarse_rows_ = []
        n = X.shape[0]
        coarse = self.start == "coarse" or (self.start == "auto" and n >= COARSE_ROWS)
        k = n // COARSE_FACTOR
        if not coarse or k < 2:
            return {}
        idx = coarse_rows(y, rows.get("groups"), k, seed)
        # the loosened tolerances once: a coarse fit's own coarse levels keep them
        loose = 1.0 if getattr(self, "_coarse_level", False) else COARSE_LOOSENESS
        try:
            est = self._fit_rows(idx, X, y, rows, privileged_group, coarse_level=True,
                                 lam=prob.lam * n / k,
                                 start="coarse" if k >= COARSE_FLOOR else "zero",
                                 mm_tol=self.mm_tol * loose, tol=self.tol * loose)
        except (DataError, InfeasibleError, ValueError):
            return {}
        self.coarse_rows_ = [k] + list(getattr(est, "coarse_rows_", []))
        return _start_at(est.coef_, est.ramp_intercept_, est.multipliers_, prob, seed,
                         est._multiplier_slope)

    # -- choosing λ ----------------------------------------------------------------------------
    def _lam(self, X, y, rows, privileged_group=None):
        """λ and the cross-validation table (None when λ was not chosen by it)."""
        if isinstance(self.lam, Real):
            return float(self.lam), None
        if not self._lam_by_cv(y):
            return 1.0 / X.shape[0], None  # "1/n", or too few rows of a class for cv folds
        return self._choose_lam(X, y, rows, privileged_group)

    def _lam_by_cv(self, y) -> bool:
        """Whether ``fit`` on these training labels chooses λ by cross-validation."""
        y = np.asarray(y)
        auto = self.lam == "auto" or (self.lam is None and y.shape[0] < LAM_AUTO_ROWS)
        return auto and np.bincount(np.unique(y, return_inverse=True)[1]).min() >= self.cv

    def _lam_values(self, n: int) -> list[float]:
        """The λ values "auto" chooses among for n training rows, ascending."""
        if self.lam_grid is not None:
            return sorted(float(v) for v in self.lam_grid)
        return [10.0 ** e / n for e in (0.0, 0.5, 1.0, 1.5, 2.0)]

    def _choose_lam(self, X, y, rows, privileged_group=None):
        """λ by ``cv_repeats`` × ``cv``-fold cross-validation (stratified by label, each repeat
        a new random partition) of the objective rate (the deterministic or randomised rule,
        as ``prediction`` says) among the λ whose fits meet their constraints on the
        validation folds, with the one-standard-error rule: :func:`lam_cv.select` (the
        eligibility test, the signed violations, the constant fits) and
        :func:`lam_cv.repeated_fold_se` (the standard error of a repeated-fold mean). A fit
        that raises InfeasibleError on its training folds counts as not eligible."""
        from joblib import Parallel, delayed
        from sklearn.model_selection import RepeatedStratifiedKFold

        from safeclf.methods.ramp import lam_cv

        n = X.shape[0]
        grid = self._lam_values(n)
        seed = check_random_state(self.random_state).randint(2**31 - 1)
        folds = list(RepeatedStratifiedKFold(n_splits=self.cv, n_repeats=self.cv_repeats,
                                             random_state=seed).split(X, y))

        def one(lam, train, val):
            # a fold fit that stops at max_mm_iter is counted (the table's "unsettled"),
            # not warned about once per fold
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                try:
                    est = self._fit_rows(train, X, y, rows, privileged_group, lam=lam)
                except InfeasibleError:
                    return np.nan, np.inf, False, False
            unsettled = est.solver_status_ == str(SolverStatus.INACCURATE)
            return (*est._validation_scores(X[val], y[val],
                                            {k: v[val] for k, v in rows.items()}), unsettled)

        scores = Parallel(n_jobs=self.n_jobs or 1, backend="loky")(
            delayed(one)(lam, tr, va) for lam in grid for tr, va in folds)
        scores = np.array(scores, dtype=float).reshape(len(grid), self.cv_repeats, self.cv, 4)
        unsettled = scores[..., 3].reshape(len(grid), -1).sum(axis=1).astype(int)
        try:
            sel = lam_cv.select(scores[..., 0], scores[..., 1], scores[..., 2] > 0,
                                self.feasibility_tol)
        except ValueError:
            raise InfeasibleError("ramp: lam 'auto': every λ of the grid was infeasible on "
                                  "some training fold") from None
        table = [{"lam": grid[i], "objective": float(sel.objective[i]),
                  "objective_se": float(sel.objective_se[i]),
                  "violation": float(sel.violation[i]), "violation_se": float(sel.violation_se[i]),
                  "constant": bool(sel.constant[i]), "eligible": bool(sel.eligible[i]),
                  "unsettled": int(unsettled[i]), "chosen": i == sel.chosen}
                 for i in range(len(grid))]
        if unsettled[sel.chosen]:
            warnings.warn(
                f"ramp: lam 'auto': {unsettled[sel.chosen]} of {len(folds)} cross-validation "
                f"fits at the chosen λ = {grid[sel.chosen]:.4g} reached max_mm_iter="
                f"{self.max_mm_iter} before the merit settled (lam_cv_ counts them per λ); "
                "raise max_mm_iter if the choice matters", ConvergenceWarning, stacklevel=5)
        return grid[sel.chosen], table

    def _fit_rows(self, idx, X, y, rows, privileged_group, coarse_level=False, **params):
        """A clone with ``params`` (run serially) fitted on the rows ``idx``, every named rows
        entry cut to them: the λ cross-validation's folds and the coarse start's sample
        (``coarse_level``)."""
        from sklearn.base import clone

        est = clone(self).set_params(n_jobs=None, **params)
        est._coarse_level = coarse_level
        return est.fit(X[idx], y[idx], privileged_group=privileged_group,
                       **{key: v[idx] for key, v in rows.items()})

    def _validation_scores(self, X, y, rows):
        """(objective rate, worst constraint value minus its bound in linear form, signed,
        whether f has one sign on every row: a constant prediction) on held-out rows. A rate
        undefined on them (an empty subset) is left out of the worst; with none defined (or no
        constraints) it is 0. Signed, not clipped at 0: see :func:`lam_cv.select`."""
        z = self.decision_function(X)
        p = mm.ramp(z) if self.prediction == "randomized" else (z > 0).astype(float)
        data = FitData(np.asarray(y) == self.classes_[1], rows)
        values = []
        for c in self._constraints:
            try:
                g, gamma = c.linear(data)
            except (ValueError, ZeroDivisionError):
                continue
            values.append(g.value(p) - gamma)
        try:
            objective = self._objective.linear(data).value(p)
        except ValueError:
            objective = np.nan
        constant = bool(np.all(z > 0) or np.all(z <= 0))
        return objective, max(values, default=0.0), constant

    def _constraint_table(self, data, z_rule, z, pairs):
        """Per constraint: its value for the returned rule (``train``: ``predict``'s, on the
        scores ``z_rule``; in expectation for the randomised rule) and for Problem 2's
        randomised rule σ(f) at the solution's scores ``z`` (``train_randomized``), each with
        its slack γ − g in the linear form; ``tolerance``: ``feasibility_tol`` in the
        constraint's own units for the returned rule (a ratio's linear form
        κ s_p(B) − s_p(A) ≤ tol is s_p(A)/s_p(B) ≥ κ − tol/s_p(B))."""
        rnd = mm.ramp(z)
        rule = mm.ramp(z_rule) if self.prediction == "randomized" else (z_rule > 0).astype(float)
        table = []
        for j, (c, (g, gamma)) in enumerate(zip(self._constraints, pairs, strict=True)):
            tol = float(self.feasibility_tol)
            if isinstance(c, RatioConstraint) and c.measure == "ratio":
                share = float(rule[c._sets(data)[1]].mean())
                tol = tol / share if share > 0 else float("inf")
            table.append({
                "name": c.name, "description": c.describe(), "target": c.target(data),
                "sense": "min" if getattr(c, "sense", "max") == "min" else "max",
                "privileged": getattr(c, "privileged", None),
                "protected": getattr(c, "protected", None),
                "privileged_source": getattr(c, "source", None),
                "train": c.value(data, rule), "train_randomized": c.value(data, rnd),
                "slack": float(gamma - g.value(rule)),
                "slack_randomized": float(gamma - g.value(rnd)),
                "tolerance": tol, "rule": self.prediction,
                "multiplier": float(self.multipliers_[j]),
            })
        return table

    # -- prediction ---------------------------------------------------------------------------
    def predict_proba(self, X):
        """σ(f(x)) (eq. 2) of the returned scores ``decision_function``, shape (n, 2): above ½
        exactly where the deterministic ``predict`` is positive. With ``prediction:
        randomized`` it is the rule ``predict`` draws from; Problem 2's randomised rule at the
        solution is :meth:`randomized_proba` either way."""
        p = mm.ramp(self.decision_function(X))
        return np.c_[1.0 - p, p]

    def randomized_proba(self, X):
        """P(positive | x) = σ(⟨w, x⟩ + b) of Problem 2's solution (before the deterministic
        rule's threshold, ``threshold_``): the randomised rule whose expected training rates
        the solver constrains; shape (n,)."""
        z = self.decision_function(X) + getattr(self, "threshold_", 0.0)
        return mm.ramp(z)

    def predict(self, X):
        """Deterministic (default): positive where f(x) = ⟨w, x⟩ + b > 0, the bias including
        the threshold chosen on the training scores (``threshold_``,
        :mod:`~safeclf.methods.ramp.threshold`), the rule whose training rates meet the
        constraints; randomised: a draw with probability σ(f(x)) of Problem 2's solution."""
        z = self.decision_function(X)
        if self.prediction == "randomized":
            rng = np.random.default_rng(
                self.random_state if isinstance(self.random_state, Integral | None) else None)
            pos = rng.random(z.shape[0]) < mm.ramp(z)
        else:
            pos = z > 0
        return self.classes_[pos.astype(int)]

    # -- reporting ----------------------------------------------------------------------------
    def rate_values(self, X, y, rows, randomized: bool):
        """Each constraint's value (user units) and the objective on (X, y, rows), for the
        deterministic rule 1[f(x) > 0] or (``randomized``) in expectation for Problem 2's
        randomised rule (:meth:`randomized_proba`)."""
        check_is_fitted(self)
        p = (self.randomized_proba(X) if randomized
             else (self.decision_function(X) > 0).astype(float))
        data = FitData(np.asarray(y) == self.classes_[1],
                       {k: v for k, v in rows.items() if not isinstance(v, dict)})
        out = {}
        for c in self._constraints:
            try:
                out[c.name] = c.value(data, p)
            except (ValueError, ZeroDivisionError):
                out[c.name] = float("nan")
        try:
            out["objective"] = self._objective.linear(data).value(p)
        except ValueError:
            out["objective"] = float("nan")
        out.update(monitor_values(self.monitors(), data, p))
        return out


def monitor_values(monitors, data, p) -> dict[str, float]:
    """``{"monitor_<name>": value}`` of each monitored rate at p (nan when undefined)."""
    out = {}
    for name, rate in monitors:
        try:
            out[f"monitor_{name}"] = rate.linear(data).value(p)
        except ValueError:
            out[f"monitor_{name}"] = float("nan")
    return out


def _row(value, key, n):
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise DataError(f"ramp: rows '{key}' must have one entry per training row ({n}), got "
                        f"shape {arr.shape}")
    return arr
