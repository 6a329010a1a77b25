"""BudgetedSelection: choose among model classes F_1..F_K under a budget of T quanta."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from safeclf.errors import SpecError
from safeclf.methods._solvers.status import of_estimator
from safeclf.methods.selection import procedures as P
from safeclf.methods.selection.classes import check_features, parse_classes
from safeclf.methods.selection.penalty import (
    coarse_grid,
    covers,
    gamma,
    penalties_nondecreasing,
    remark_terms,
)
from safeclf.methods.selection.wrappers import AveragedRounds

PROCEDURES = ("bandit", "coarse_grid", "uniform", "oracle", "halving")


class BudgetedSelection(ClassifierMixin, BaseEstimator):
    """Model selection under a compute budget (Agarwal, Duchi, Bartlett, Levrard 2011).

    Parameters
    ----------
    classes : list of mapping
        The model classes F_1..F_K, each ``{method, params, complexity, features, cost,
        incremental, name}`` (see :mod:`safeclf.methods.selection.classes`); for the coarse
        grid they must be nested, F_1 ⊂ … ⊂ F_K (Assumption B).
    procedure : {"bandit", "coarse_grid", "uniform", "oracle", "halving"}
        Algorithm 1, the coarse grid (12), T/K quanta to every class, all of T on the class
        that is best in hindsight (5) (needs ``X_hindsight``), or scikit-learn's
        HalvingGridSearchCV whose compute is held to T quanta.
    budget : int
        T, the number of quanta (T ≥ K).
    quantum : int
        Samples a quantum buys for the costliest class; class i gets
        n_i = round(quantum · max_j cost_j / cost_i) samples per quantum (n_i ∝ 1/cost_i).
    cost : {"complexity", "given", "measured"}
        Cost per sample: proportional to the complexity d_i (Example 1), each class's ``cost``,
        or measured by timing one fit of each class on ``cost_probe`` samples.
    penalty_c, penalty_alpha : float
        γ_i(n) = c·(d_i / n)^α.
    kappa2 : float
        κ₂ of Assumption A, the multiplier of the confidence term of (6); √2 is Hoeffding's
        constant for the 0-1 loss (P(|R̂_n − R| > κ₂ε) ≤ 2·exp(−4nε²)).
    confidence : {"log_k", "log_kt"}
        The confidence term of (6), κ₂·sqrt(log K / n), alone or plus κ₂·sqrt(log t / n) as in
        the proof of Theorem 1.
    lam : float
        λ > 0 of the coarse grid (Definition 1).
    incremental : {"auto", "partial_fit", "warm_start", "refit"}
        Default for classes that do not say: ``auto`` uses ``partial_fit`` and refuses a class
        without it when the procedure trains by quanta (bandit).
    halving_factor : int
        The ``factor`` of HalvingGridSearchCV.
    risk : {"empirical", "holdout"}
        The risk estimate R̂ in (6) and (12): the 0-1 risk on the samples the model was trained
        on (the paper's R̂_n(Â(i, n))), or on a validation set of ``holdout`` × the training
        rows set aside before the stream (never trained on; evaluating is not charged).
    oracle : bool
        With hindsight data, also train every class on the whole budget to find the oracle's
        class (5) and report the excess risk and Proposition 1's regret (K full-budget fits;
        outside the budget).
    output : {"most_selected", "average"}
        What Algorithm 1 returns: the model of the class selected most often (the choice
        whose budget share Theorem 1 bounds), or Theorem 2's averaged function
        f̄_T = (1/T) Σ_t f_t over the functions of the classes queried at rounds 1..T (class
        probabilities averaged; bandit only).

    Attributes
    ----------
    chosen_, model_, allocation_ (quanta per class), path_, compute_spent_, grid_ (the coarse
    grid S of (11)), grid_remark_ (whether S also has property (11) over the terms of the
    remark after Theorem 3, γ_i(T n_i/s) + sqrt(log i / 2T n_i)), grid_remark_size_ (the
    smallest such grid), and with hindsight data oracle_class_, hindsight_risk_,
    hindsight_penalized_risk_ and regret_ (Proposition 1's average excess penalised risk of
    the allocation, :func:`~safeclf.methods.selection.procedures.regret`).

    Examples
    --------
    Two nested classes, logistic regression on the first 2 features or on all 6, and a budget
    of 10 quanta shared between them by Algorithm 1:

    >>> from sklearn.datasets import make_classification
    >>> from safeclf.estimators import BudgetedSelection
    >>> X, y = make_classification(n_samples=600, n_features=6, n_informative=4, random_state=0)
    >>> classes = [{"method": "logreg", "features": 2, "incremental": "refit"},
    ...            {"method": "logreg", "features": 6, "incremental": "refit"}]
    >>> model = BudgetedSelection(classes=classes, budget=10, quantum=30, random_state=0)
    >>> model.fit(X, y).predict(X[:5])
    array([0, 1, 1, 1, 0])
    >>> model.model_classes_[model.chosen_].name, model.allocation_
    ('logreg[6]', array([2., 8.]))
    """

    _parameter_constraints = {
        "classes": [list, None],
        "procedure": [StrOptions(set(PROCEDURES))],
        "budget": [Interval(Integral, 1, None, closed="left")],
        "quantum": [Interval(Integral, 1, None, closed="left")],
        "cost": [StrOptions({"complexity", "given", "measured"})],
        "cost_probe": [Interval(Integral, 10, None, closed="left")],
        "penalty_c": [Interval(Real, 0, None, closed="left")],
        "penalty_alpha": [Interval(Real, 0, None, closed="neither")],
        "kappa2": [Interval(Real, 0, None, closed="left")],
        "confidence": [StrOptions({"log_k", "log_kt"})],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "incremental": [StrOptions({"auto", "partial_fit", "warm_start", "refit"})],
        "halving_factor": [Interval(Integral, 2, None, closed="left")],
        "risk": [StrOptions({"empirical", "holdout"})],
        "oracle": ["boolean"],
        "output": [StrOptions({"most_selected", "average"})],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, classes=None, procedure="bandit", budget=50, quantum=100,
                 cost="complexity", cost_probe=1000, penalty_c=1.0, penalty_alpha=0.5,
                 kappa2=1.4142135623730951, confidence="log_k", lam=1.0, incremental="auto",
                 halving_factor=3, risk="empirical", holdout=0.2, oracle=True,
                 output="most_selected", random_state=None):
        self.classes = classes
        self.procedure = procedure
        self.budget = budget
        self.quantum = quantum
        self.cost = cost
        self.cost_probe = cost_probe
        self.penalty_c = penalty_c
        self.penalty_alpha = penalty_alpha
        self.kappa2 = kappa2
        self.confidence = confidence
        self.lam = lam
        self.incremental = incremental
        self.halving_factor = halving_factor
        self.risk = risk
        self.holdout = holdout
        self.oracle = oracle
        self.output = output
        self.random_state = random_state

    # -- validation --------------------------------------------------------------------------
    def _validate_params(self):
        super()._validate_params()
        self.check_spec()

    def check_spec(self):
        """Validate what ``_parameter_constraints`` cannot: the classes, K ≥ 1, T ≥ K and
        costs; a ``ValueError`` naming the parameter's path. Returns the resolved classes."""
        classes = parse_classes(self.classes, self.incremental, where="classes",
                                by_quanta=self.procedure == "bandit")
        K = len(classes)
        if self.output == "average" and self.procedure != "bandit":
            raise ValueError(f"output 'average' is Theorem 2's average of Algorithm 1's round "
                             f"functions: it needs procedure 'bandit', not '{self.procedure}'")
        if self.budget < K:
            raise ValueError(f"budget T={self.budget} is smaller than the number of classes "
                             f"K={K}; every class needs at least one quantum")
        if self.cost == "given":
            missing = [m.index for m in classes if m.cost is None]
            if missing:
                raise ValueError(f"classes[{missing[0]}].cost is required when cost is 'given'")
        return classes

    # -- fitting -------------------------------------------------------------------------------
    def _costs(self, classes, X, y, labels) -> np.ndarray:
        if self.cost == "complexity":
            return np.array([m.complexity for m in classes])
        if self.cost == "given":
            return np.array([m.cost for m in classes])
        m_probe = min(len(y), self.cost_probe)
        out = []
        for m in classes:
            est = m.build(self.random_state)
            t0 = time.perf_counter()
            est.fit(m.columns(X[:m_probe]), y[:m_probe])
            out.append((time.perf_counter() - t0) / m_probe)
        return np.maximum(np.array(out), 1e-12)

    def _stream(self, X, y, rng):
        """The order in which samples are bought: a random permutation whose first rows hold
        every label (so the first quantum of any class can be fitted)."""
        order = rng.permutation(len(y))
        first = [int(np.flatnonzero(y[order] == lab)[0]) for lab in np.unique(y)]
        head = sorted(first)
        rest = np.delete(order, head)
        return np.r_[order[head], rest]

    def fit(self, X, y, X_hindsight=None, y_hindsight=None):
        """Run the procedure on the training stream (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training stream, consumed a quantum at a time.
        y : array-like of shape (n_samples,)
            Labels.
        X_hindsight, y_hindsight : array-like, optional
            Data that define the oracle (the runner passes the test part): every class
            trained on the whole budget, the best in hindsight by (5). Only
            ``procedure="oracle"`` uses them to choose, and it requires them.

        Returns
        -------
        self : BudgetedSelection
            The fitted estimator.
        """
        super()._validate_params()
        X, y = validate_data(self, X, y, accept_sparse=False)
        check_classification_targets(y)
        classes = self.check_spec()
        check_features(classes, X.shape[1])
        self.classes_ = np.unique(y)
        if self.procedure == "oracle" and X_hindsight is None:
            raise ValueError("procedure 'oracle' needs X_hindsight and y_hindsight (data to "
                             "judge the classes in hindsight)")
        rng = np.random.default_rng(self.random_state)
        order = self._stream(X, y, rng)
        Xs, ys = X[order], y[order]
        Xv = yv = None
        if self.risk == "holdout":
            n_val = int(round(self.holdout * len(ys)))
            if n_val < 1 or len(ys) - n_val < len(self.classes_):
                raise ValueError(f"holdout={self.holdout} leaves no validation or training rows "
                                 f"out of {len(ys)}")
            Xv, yv = Xs[len(ys) - n_val:], ys[len(ys) - n_val:]
            Xs, ys = Xs[: len(ys) - n_val], ys[: len(ys) - n_val]
        seed = None if self.random_state is None else int(rng.integers(2**31 - 1))
        costs = self._costs(classes, Xs, ys, self.classes_)
        per_q = np.maximum(1, np.round(self.quantum * costs.max() / costs)).astype(int)
        setting = P.Setting(classes, Xs, ys, self.classes_, per_q, int(self.budget),
                            float(self.penalty_c), float(self.penalty_alpha), seed, Xv, yv)
        K, T = len(classes), int(self.budget)

        full_pen = [setting.penalty(i, T * per_q[i]) for i in range(K)]
        self.grid_ = coarse_grid(lambda i, s: setting.penalty(i, T * per_q[i] / s), K,
                                 float(self.lam))
        if self.procedure == "coarse_grid":
            bad = penalties_nondecreasing(full_pen)
            if bad is not None:
                raise SpecError(
                    f"params.classes[{bad}]: the coarse grid needs penalties γ_i(T n_i) that do "
                    f"not decrease along the nested hierarchy (10), got {full_pen[bad]:.4g} after "
                    f"{full_pen[bad - 1]:.4g}; order the classes by complexity·cost"
                )

        full = None
        if X_hindsight is not None and (self.oracle or self.procedure == "oracle"):
            Xh, yh = np.asarray(X_hindsight, dtype=float), np.asarray(y_hindsight)
            full = P.full_budget(setting)
            self.oracle_class_, self.hindsight_risk_, self.hindsight_penalized_risk_ = (
                P.oracle_choice(setting, full, Xh, yh))

        remark = remark_terms(lambda i, s: setting.penalty(i, T * per_q[i] / s), per_q, T)
        self.grid_remark_ = covers(self.grid_, remark, K, float(self.lam))
        self.grid_remark_size_ = len(coarse_grid(remark, K, float(self.lam)))

        if self.procedure == "bandit":
            sel = P.bandit(setting, float(self.kappa2), self.confidence,
                           keep_rounds=self.output == "average")
        elif self.procedure == "coarse_grid":
            sel = P.coarse(setting, float(self.lam))
        elif self.procedure == "uniform":
            sel = P.uniform(setting)
        elif self.procedure == "oracle":
            sel = P.oracle(setting, full, Xh, yh)
        else:
            sel = P.halving(setting, int(self.halving_factor))

        self.model_classes_ = classes
        self.per_quantum_ = per_q
        self.costs_ = costs
        self.selection_ = sel
        self.chosen_ = sel.chosen
        self.model_ = sel.trainer.model
        self.n_iter_ = len(sel.path)  # rounds of the procedure
        self.solver_status_ = of_estimator(self.model_)[0]  # the chosen class's last fit
        if self.output == "average":
            self.model_ = AveragedRounds([(classes[i], m) for i, m in sel.rounds],
                                         self.classes_)
        self.allocation_ = np.asarray(sel.quanta, float)
        if hasattr(self, "hindsight_penalized_risk_"):
            self.regret_ = P.regret(self.allocation_, self.hindsight_penalized_risk_)
        self.path_ = np.asarray(sel.path, int)
        self.compute_spent_ = sel.compute
        self.full_penalty_ = np.asarray(full_pen)
        return self

    # -- prediction ----------------------------------------------------------------------------
    def _cols(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if isinstance(self.model_, AveragedRounds):  # each round model takes its own columns
            return X
        return self.model_classes_[self.chosen_].columns(X)

    def predict(self, X):
        cols = self._cols(X)
        return self.model_.predict(cols)

    def _has(name):
        return lambda self: hasattr(getattr(self, "model_", None), name) or not hasattr(
            self, "model_")

    @available_if(_has("decision_function"))
    def decision_function(self, X):
        cols = self._cols(X)
        return self.model_.decision_function(cols)

    @available_if(_has("predict_proba"))
    def predict_proba(self, X):
        cols = self._cols(X)
        return self.model_.predict_proba(cols)


def penalty_for(est: BudgetedSelection, i: int, n: float) -> float:
    """γ_i(n) for a fitted estimator (for plots and tests)."""
    return gamma(est.model_classes_[i].complexity, n, est.penalty_c, est.penalty_alpha)
