"""The selection procedures: Algorithm 1 (bandit), the coarse grid (12), and the baselines
(uniform split, oracle in hindsight, scikit-learn's successive halving at an equal budget).

Each procedure spends a budget of T quanta; a quantum trains class i on n_i more samples
(``per_quantum[i]``). Each returns a :class:`Selection`: the chosen class, its trained model,
the quanta given to each class, the allocation path and the compute actually spent (in quanta:
samples processed by training / n_i, so refitting on everything seen is charged as such).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from safeclf.methods.selection.classes import ModelClass, Trainer
from safeclf.methods.selection.penalty import (
    coarse_grid,
    gamma,
    optimistic_criterion,
)


@dataclass
class Setting:
    """What every procedure shares."""

    classes: list[ModelClass]
    X: Any  # training stream, rows in stream order
    y: np.ndarray
    labels: np.ndarray
    per_quantum: np.ndarray  # n_i
    T: int
    c: float
    alpha: float
    random_state: int | None = None
    X_val: Any = None  # validation rows for the risk estimate (None: training risk, the paper's)
    y_val: Any = None

    @property
    def K(self) -> int:
        return len(self.classes)

    def d(self, i: int) -> float:
        return self.classes[i].complexity

    def penalty(self, i: int, n: float) -> float:
        return gamma(self.d(i), n, self.c, self.alpha)

    def trainer(self, i: int) -> Trainer:
        return Trainer(self.classes[i], self.X, self.y, self.labels, self.random_state,
                       self.X_val, self.y_val)


@dataclass
class Selection:
    chosen: int
    trainer: Trainer
    quanta: list[float]
    compute: float
    path: list[int] = field(default_factory=list)  # class index (0-based) per round
    extra: dict[str, Any] = field(default_factory=dict)
    rounds: list = field(default_factory=list)  # (class index, f_t) per round (bandit)


def _compute(setting: Setting, trainers: dict[int, Trainer]) -> float:
    return float(sum(tr.compute / setting.per_quantum[i] for i, tr in trainers.items()))


def bandit(setting: Setting, kappa2: float, confidence: str = "log_k",
           keep_rounds: bool = False) -> Selection:
    """Algorithm 1: one quantum to each class, then at each round t = K+1..T one quantum to
    argmin_i R̃_i(n_i(t)) (criterion (6)); output the most often selected class (the
    choice whose budget share Theorem 1 describes). ``keep_rounds`` also keeps a copy of the
    function f_t of the class queried at each round t = 1..T (``Selection.rounds``), for
    Theorem 2's average f̄_T."""
    import copy

    K, T, nq = setting.K, setting.T, setting.per_quantum
    trainers = {i: setting.trainer(i) for i in range(K)}
    rounds = []
    for i in range(K):
        trainers[i].add(nq[i])
        if keep_rounds:
            rounds.append((i, copy.deepcopy(trainers[i].model)))
    path = list(range(K))
    counts = np.ones(K)
    criteria = []
    for t in range(K + 1, T + 1):
        crit = [
            optimistic_criterion(
                trainers[i].empirical_risk(), setting.d(i), trainers[i].n_seen, T * nq[i], K,
                setting.c, setting.alpha, kappa2, t if confidence == "log_kt" else None,
            )
            for i in range(K)
        ]
        j = int(np.argmin(crit))
        trainers[j].add(nq[j])
        if keep_rounds:
            rounds.append((j, copy.deepcopy(trainers[j].model)))
        counts[j] += 1
        path.append(j)
        criteria.append([float(v) for v in crit])
    # most frequently selected; ties go to the smaller class (lower index)
    chosen = int(np.argmax(counts))
    return Selection(chosen, trainers[chosen], counts.tolist(), _compute(setting, trainers),
                     path, {"criterion": criteria,
                            "empirical_risk": [trainers[i].empirical_risk() for i in range(K)]},
                     rounds)


def _split(setting: Setting, members: list[int]) -> Selection:
    """Give each class in ``members`` T/|members| quanta (one fit on T·n_i/|members| samples)
    and pick the least penalised empirical risk R̂(f_i) + γ_i(T n_i / s)  (eq. (12))."""
    s = len(members)
    trainers, scores = {}, {}
    for i in members:
        tr = setting.trainer(i)
        n = max(1, int(round(setting.T * setting.per_quantum[i] / s)))
        tr.add(n)
        trainers[i] = tr
        scores[i] = tr.empirical_risk() + setting.penalty(i, n)
    chosen = min(members, key=lambda i: (scores[i], i))
    quanta = [setting.T / s if i in trainers else 0.0 for i in range(setting.K)]
    return Selection(chosen, trainers[chosen], quanta, _compute(setting, trainers), [],
                     {"penalized_risk": {str(i + 1): float(v) for i, v in scores.items()}})


def coarse(setting: Setting, lam: float) -> Selection:
    """Coarse-grid search: the smallest S with property (11), budget split evenly over S,
    class chosen by (12)."""
    S = coarse_grid(
        lambda i, s: setting.penalty(i, setting.T * setting.per_quantum[i] / s), setting.K, lam
    )
    sel = _split(setting, S)
    sel.extra["S"] = [i + 1 for i in S]
    return sel


def uniform(setting: Setting) -> Selection:
    """The naïve strategy: T/K quanta to every class, least penalised empirical risk."""
    return _split(setting, list(range(setting.K)))


def full_budget(setting: Setting) -> dict[int, Trainer]:
    """Every class trained with the whole budget (T·n_i samples): what the oracle compares."""
    out = {}
    for i in range(setting.K):
        tr = setting.trainer(i)
        tr.add(setting.T * setting.per_quantum[i])
        out[i] = tr
    return out


def oracle_choice(setting: Setting, trainers: dict[int, Trainer], X_h, y_h):
    """The best class in hindsight (5): argmin_i R(f_i) + γ_i(T n_i), with R(f_i) the risk on
    the hindsight data of class i trained on the whole budget. Returns (index, risks,
    penalised risks)."""
    risks = [float(np.mean(trainers[i].predict(X_h) != y_h)) for i in range(setting.K)]
    pen = [risks[i] + setting.penalty(i, setting.T * setting.per_quantum[i])
           for i in range(setting.K)]
    return int(np.argmin(pen)), risks, pen


def regret(quanta, penalized_risk) -> float:
    """Proposition 1's regret, the average excess penalised risk over the T rounds:
    Σ_i (T_i / T)·Δ_i with Δ_i = R*_i + γ_i(T n_i) − min_j (R*_j + γ_j(T n_j)) (13) and T_i
    the quanta class i received (for any allocation: a uniform split gives the mean Δ_i, the
    oracle 0). ``penalized_risk`` estimates R*_i + γ_i(T n_i) (the estimator uses the risk of
    class i trained on the whole budget, on the hindsight data, as the oracle (5) does)."""
    q = np.asarray(quanta, float)
    pen = np.asarray(penalized_risk, float)
    return float(np.sum(q / q.sum() * (pen - pen.min())))


def oracle(setting: Setting, trainers: dict[int, Trainer], X_h, y_h) -> Selection:
    """All of T on the best class, known in hindsight (compute: every class trained)."""
    best, risks, _ = oracle_choice(setting, trainers, X_h, y_h)
    quanta = [float(setting.T) if i == best else 0.0 for i in range(setting.K)]
    return Selection(best, trainers[best], quanta, _compute(setting, trainers), [],
                     {"hindsight_risk": risks})


def halving(setting: Setting, factor: int = 3, cv: int = 3) -> Selection:
    """scikit-learn's HalvingGridSearchCV over the K classes (resource: training samples),
    given the same budget: the largest resource is shrunk until the compute it actually
    spends (every CV fit and the final refit, each fit of m samples of class i costing m/n_i
    quanta) is at most T."""
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, StratifiedKFold

    from safeclf.methods.selection.wrappers import ClassChoice

    K, T, nq = setting.K, setting.T, setting.per_quantum
    N = len(setting.y)
    # first guess: spread T over the classes as the schedule would with equal costs
    M = int(min(N, T * np.mean(nq) / max(1.0, np.log(K) / np.log(factor) + 1) / max(1, cv - 1)))
    est = ClassChoice(classes=setting.classes, index=0, random_state=setting.random_state)
    min_res = 2 * cv * len(setting.labels)
    search, cost = None, np.inf
    for _ in range(8):
        M = max(M, min_res * factor)
        search = HalvingGridSearchCV(
            est, {"index": list(range(K))}, factor=factor, resource="n_samples",
            max_resources=M, min_resources="exhaust", cv=StratifiedKFold(cv),
            scoring="accuracy", refit=True, random_state=setting.random_state,
            error_score="raise",
        )
        search.fit(setting.X[:M], setting.y[:M])
        res = search.cv_results_
        fits = sum(
            (cv - 1) / cv * r * cv / nq[int(i)]
            for r, i in zip(res["n_resources"], res["param_index"], strict=True)
        )
        cost = fits + M / nq[search.best_params_["index"]]
        if cost <= T or M <= min_res * factor:
            break
        M = int(M * T / cost * 0.97)
    chosen = int(search.best_params_["index"])
    tr = setting.trainer(chosen)
    tr.model = search.best_estimator_.model_
    tr.n_seen = M
    quanta = [0.0] * K
    for r, i in zip(search.cv_results_["n_resources"], search.cv_results_["param_index"],
                    strict=True):
        quanta[int(i)] += (cv - 1) * r / nq[int(i)]
    quanta[chosen] += M / nq[chosen]
    return Selection(chosen, tr, quanta, float(cost), [],
                     {"max_resources": int(M), "n_iterations": int(search.n_iterations_)})
