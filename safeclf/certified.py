"""Post-hoc certification of any scoring classifier: a decision threshold (one, or one per
group) chosen on held-back rows by Learn-then-Test (:mod:`safeclf.ltt`).

Procedure (``certify: {delta, fraction, how: threshold, bound}`` in a spec, or
:class:`CertifiedClassifier` around any estimator in Python):

1. The training rows are split, stratified by label and group, into a candidate part and a
   held-back part of share ``fraction``.
2. The model is fitted on the candidate part only; it gives a score per row
   (``decision_function``, else the positive class's ``predict_proba``).
3. From the candidate part only, a family of decision rules is built: global thresholds at the
   candidate scores' quantiles (and "no row positive"); where a promise compares groups, rules
   with one threshold per group that lower a group's threshold until its candidate rate
   reaches ρ times the reference group's, for ρ from 1 down to the promise's κ. Each rule gets
   a *predicted* p-value (its candidate-part counts taken to the held-back part's sizes) and a
   candidate error; the rules on the front of the two (none both likelier to pass and more
   accurate) are ordered by predicted p-value, smallest first.
4. On the held-back rows, each rule gets the joint p-value of all promises; fixed-sequence
   testing (or Holm's procedure) at level δ certifies a set of rules with family-wise error
   ≤ δ. Among them the one with the smallest training error (all training rows) is returned;
   choosing after the test keeps the guarantee, since every certified rule keeps every
   promise simultaneously with probability ≥ 1 − δ.
5. No rule certified: no model (``no_solution`` with its reason), never an unsafe one.

Why it is valid: the model, the family and its order are functions of the candidate part,
independent of the held-back rows, which are drawn from the population like the rows the
model will meet (the assumption of every held-out guarantee). Conditional on the candidate
part, each rule's joint p-value is super-uniform under "some promise is violated", and
fixed-sequence testing controls the family-wise error at δ (Angelopoulos et al. 2021,
Learn-then-Test, Proposition on fixed-sequence testing). So with probability ≥ 1 − δ over the
held-back rows the returned rule keeps all its promises on the population. The held-back rows
are touched only through the tests and the final choice among certified rules. The model is
not refitted on all rows: that would void the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone

from safeclf import bounds as B
from safeclf import ltt
from safeclf.errors import DataError, SafeclfError
from safeclf.promises import Evidence, Promise, rate_evidence

#: Quantity kinds certification can decide from counts.
CERTIFIABLE = ("rate", "ratio")


class NoSolution(SafeclfError):
    """Certification found no rule that passes: there is no model to use."""


def scores_of(estimator, X) -> np.ndarray:
    """A score that orders rows (larger: more positive)."""
    if hasattr(estimator, "decision_function"):
        s = np.asarray(estimator.decision_function(X), dtype=float)
        if s.ndim == 1:
            return s
    if hasattr(estimator, "predict_proba"):
        return np.asarray(estimator.predict_proba(X), dtype=float)[:, -1]
    raise DataError(f"{type(estimator).__name__} gives no score (decision_function or "
                    "predict_proba), so no threshold can be certified for it")


@dataclass
class Part:
    """Rows of one part: scores, labels (positive or not) and row entries (groups, ...)."""

    score: np.ndarray
    y_pos: np.ndarray
    rows: dict = field(default_factory=dict)

    def take(self, idx) -> Part:
        return Part(self.score[idx], self.y_pos[idx],
                    {k: np.asarray(v)[idx] for k, v in self.rows.items()})


@dataclass(frozen=True)
class Rule:
    """Positive when the score exceeds the threshold (of the row's group, if ``per_group``)."""

    threshold: float
    per_group: tuple = ()  # ((group, threshold), ...)
    groups: str = "groups"

    def thresholds(self, rows) -> np.ndarray | float:
        if not self.per_group:
            return self.threshold
        table = dict(self.per_group)
        g = np.asarray(rows[self.groups]).astype(str)
        return np.array([table.get(x, self.threshold) for x in g], dtype=float)

    def positive(self, part: Part) -> np.ndarray:
        return part.score > self.thresholds(part.rows)

    def describe(self) -> dict:
        out = {"threshold": self.threshold}
        if self.per_group:
            out["per_group"] = {g: t for g, t in self.per_group}
        return out


def _grid(score: np.ndarray, n: int) -> np.ndarray:
    """Candidate global thresholds: midpoints between the scores' quantiles, and ±inf."""
    q = np.unique(np.quantile(score, np.linspace(0, 1, n + 1)))
    mids = (q[:-1] + q[1:]) / 2 if q.size > 1 else q
    return np.concatenate([[-np.inf], mids, [np.inf]])


def _threshold_for_rate(score: np.ndarray, rate: float) -> float:
    """The largest threshold putting at least ``rate`` of ``score`` above it."""
    if score.size == 0:
        return np.inf
    k = int(np.ceil(rate * score.size - 1e-9))
    if k <= 0:
        return float(np.max(score))
    s = np.sort(score)[::-1]
    return float(s[k - 1] - 1e-12 * max(1.0, abs(s[k - 1]))) if k <= s.size else -np.inf


def _group_rules(promises, cand: Part, base: float, n_steps: int) -> list[Rule]:
    """For each ratio promise over groups: rules lowering the lagging groups' thresholds until
    each reaches ρ × the reference group's candidate rate (the privileged group, else the
    highest), ρ from 1 down to κ."""
    out = []
    for p in promises:
        q = p.quantity
        if q.kind != "ratio" or p.sense != ">=" or q.groups not in cand.rows:
            continue
        g = np.asarray(cand.rows[q.groups]).astype(str)
        among = cand.y_pos if q.label == "positive" else np.ones_like(cand.y_pos)
        names = np.unique(g)
        rates = {a: float(np.mean(cand.score[(g == a) & among] > base))
                 if np.any((g == a) & among) else 0.0 for a in names}
        ref = str(q.privileged) if q.privileged is not None and str(q.privileged) in rates \
            else max(rates, key=rates.get)
        for rho in np.linspace(1.0, min(1.0, p.bound), n_steps):
            target = rho * rates[ref]
            per = tuple((a, min(base, _threshold_for_rate(cand.score[(g == a) & among], target)))
                        for a in names if a != ref and rates[a] < target)
            out.append(Rule(base, per, q.groups))
    return out


def _evidence(promises, part: Part, rule: Rule) -> list[Evidence]:
    pred = rule.positive(part)
    return [rate_evidence(p.quantity, part.y_pos, pred, part.rows) for p in promises]


def _scaled(ev: Evidence, size: Evidence) -> Evidence:
    """``ev``'s rates at ``size``'s sizes (the counts a part of that size would show)."""
    def at(k, n, m):
        return (k / n) * m if n else 0.0

    if ev.k2 is None:
        return Evidence(at(ev.k, ev.n, size.n), size.n)
    return Evidence(at(ev.k, ev.n, size.n), size.n, at(ev.k2, ev.n2, size.n2), size.n2)


def _front(predicted, errors) -> list[int]:
    """The rules on the front of (predicted p-value, candidate error), in increasing predicted
    p-value: a rule is tested only if its error is below that of every rule tested before it
    (a dominated rule could only end the sequence early, and is never the best certified)."""
    out, best = [], np.inf
    for i in sorted(range(len(errors)), key=lambda i: (predicted[i], errors[i])):
        if errors[i] < best:
            out.append(i)
            best = errors[i]
    return out


def search(promises: list[Promise], cand: Part, safe: Part, delta: float, bound: str = B.DEFAULT,
           per_group: bool = True, test: str = "fixed_sequence", n_thresholds: int = 100
           ) -> tuple[Rule | None, dict]:
    """Steps 3–4 of the module docstring: the certified rule with the smallest training
    error, or None; and the record of the search."""
    bnd = B.get(bound)
    grid = _grid(cand.score, n_thresholds)
    rules = [Rule(float(t)) for t in grid]
    errors = [float(np.mean(r.positive(cand) != cand.y_pos)) for r in rules]
    if per_group:
        base = rules[int(np.argmin(errors))].threshold
        extra = _group_rules(promises, cand, base, 41)
        rules += extra
        errors += [float(np.mean(r.positive(cand) != cand.y_pos)) for r in extra]
    sizes = [rate_evidence(p.quantity, safe.y_pos, np.zeros_like(safe.y_pos), safe.rows)
             for p in promises]
    predicted = [ltt.joint_p_value(promises, [_scaled(e, s) for e, s in
                                              zip(_evidence(promises, cand, r), sizes)], bnd)
                 for r in rules]
    order = _front(predicted, errors)
    record = {"how": "threshold", "bound": bnd.name, "approximate": bnd.approximate,
              "test": test, "delta": delta, "n_candidate": int(cand.score.size),
              "n_safety": int(safe.score.size), "rules": len(rules)}
    def p_values(i):
        return [ltt.promise_p_value(p, e, bnd)
                for p, e in zip(promises, _evidence(promises, safe, rules[i]))]

    if test == "fixed_sequence":  # lazily: the sequence stops at its first non-rejection
        pv = []
        for i in order:
            pv.append(p_values(i))
            if not max(pv[-1]) <= delta:
                break
        joint = [max(v) for v in pv]
        passed = order[:ltt.fixed_sequence(joint, delta)]
    elif test == "holm":
        pv = [p_values(i) for i in order]
        joint = [max(v) for v in pv]
        passed = [i for i, ok in zip(order, ltt.holm(joint, delta)) if ok]
    else:
        raise ValueError(f"test must be 'fixed_sequence' or 'holm', got {test!r}")
    record["certified_rules"] = len(passed)
    if not passed:
        first = int(np.argmax(pv[0]))
        record["reason"] = (f"no rule certified at δ = {delta:g}: the first rule tested "
                            f"(predicted p-value {predicted[order[0]]:.3g}) has p-value "
                            f"{joint[0]:.3g} for {promises[first].name}")
        return None, record
    both = Part(np.concatenate([cand.score, safe.score]), np.concatenate([cand.y_pos, safe.y_pos]),
                {k: np.concatenate([np.asarray(cand.rows[k]), np.asarray(safe.rows[k])])
                 for k in cand.rows if k in safe.rows})
    best = min(passed, key=lambda i: float(np.mean(rules[i].positive(both) != both.y_pos)))
    at = order.index(best)
    record.update(rule=rules[best].describe(), p_value=joint[at],
                  p_values={p.name: v for p, v in zip(promises, pv[at])},
                  predicted_p_value=predicted[best])
    return rules[best], record


def certified_promises(promises: list[Promise], delta: float, record: dict) -> list[Promise]:
    """The promises as the certificate states them: high-confidence at δ, about predict."""
    how = (f"certified post hoc by Learn-then-Test ({record['test'].replace('_', '-')} testing, "
           f"{record['bound']} p-values) on {record['n_safety']} held-back training rows")
    approx = "; approximate: the t-test bound's coverage is not guaranteed" \
        if record.get("approximate") else ""
    return [replace(p, kind="high_confidence", delta=delta,
                    statement=p.statement.replace("(training data)", "").strip()
                    + f" (population), with probability ≥ {1 - delta:g}",
                    source=f"{p.source}; {how}", rule="predict",
                    note=f"all {len(promises)} promises hold jointly with probability ≥ "
                         f"{1 - delta:g}{approx}")
            for p in promises]


def split_rows(y_pos, groups, fraction: float, seed: int):
    """(candidate, held-back) row indices, stratified by label and group where possible."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y_pos))
    strata = np.asarray(y_pos).astype(str)
    if groups is not None:
        strata = np.char.add(np.char.add(strata, "|"), np.asarray(groups).astype(str))
    for by in (strata, np.asarray(y_pos)):
        try:
            return train_test_split(idx, test_size=fraction, random_state=seed + 104729,
                                    stratify=by)
        except ValueError:
            continue
    return train_test_split(idx, test_size=fraction, random_state=seed + 104729)


class CertifiedClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Wrap any scoring classifier so that its decision rule carries high-confidence promises.

    Parameters
    ----------
    estimator : estimator
        A binary classifier with ``decision_function`` or ``predict_proba``.
    promises : list of dict or Promise
        What must hold on the population, in ramp's constraint vocabulary
        (``{"rate": "fpr", "max": 0.05}``, ``{"rate": "fairness_ratio", "min": 0.8}``, ...;
        see :mod:`safeclf.declared`), or :class:`~safeclf.promises.Promise` objects.
    delta : float in (0, 1)
        The promises hold jointly with probability ≥ 1 − δ.
    fraction : float in (0, 1)
        Share of the training rows held back for the test.
    bound : {"clopper_pearson", "hoeffding", "bentkus", "ttest"}
        The p-values' bound (:mod:`safeclf.bounds`; ``ttest`` is approximate).
    thresholds : {"auto", "global", "per_group"}
        One threshold, or one per group where a promise compares groups ("auto": per group
        when the features encode the group).
    test : {"fixed_sequence", "holm"}
    n_thresholds : int
        Size of the global threshold grid.
    random_state : int
        Seed of the split.

    Attributes
    ----------
    estimator_ : the model fitted on the candidate part.
    rule_ : :class:`Rule` or None (no solution).
    promises_ : list of Promise, as certified.
    certificate_ : dict, the record of the search (sizes, p-values, the reason for no solution).
    group_encoding_ : :class:`~safeclf.group_encoding.GroupEncoding` or None.
    classes_ : ndarray of shape (2,).
    """

    _parameter_constraints: dict = {}

    def __init__(self, estimator=None, promises=None, delta=0.05, fraction=0.3,
                 bound=B.DEFAULT, thresholds="auto", test="fixed_sequence", n_thresholds=100,
                 random_state=None):
        self.estimator = estimator
        self.promises = promises
        self.delta = delta
        self.fraction = fraction
        self.bound = bound
        self.thresholds = thresholds
        self.test = test
        self.n_thresholds = n_thresholds
        self.random_state = random_state

    def _check_params(self):
        if not (isinstance(self.delta, float | int) and 0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if not (isinstance(self.fraction, float | int) and 0 < self.fraction < 1):
            raise ValueError(f"fraction must be in (0, 1), got {self.fraction!r}")
        B.get(self.bound)
        if self.thresholds not in ("auto", "global", "per_group"):
            raise ValueError(f"thresholds must be 'auto', 'global' or 'per_group', got "
                             f"{self.thresholds!r}")

    def fit(self, X, y, groups=None, rows=None, **fit_params):
        """Fit on the candidate part, certify a rule on the held-back part.

        ``groups`` (n,) are the rows' groups (rows entry ``groups``); ``rows`` may give other
        row entries named by the promises' subsets; ``fit_params`` go to the estimator's fit
        (arrays of length n are split with the rows)."""
        from safeclf import declared
        from safeclf import group_encoding as GE

        self._check_params()
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise ValueError(f"CertifiedClassifier needs two classes, got {self.classes_.size}")
        y_pos = y == self.classes_[-1]
        rows = dict(rows or {})
        if groups is not None:
            rows["groups"] = np.asarray(groups)
        seed = 0 if self.random_state is None else int(self.random_state)
        cand, safe = split_rows(y_pos, rows.get("groups"), self.fraction, seed)
        promises = [p for p in (self.promises or []) if isinstance(p, Promise)] + \
            declared.promises([p for p in (self.promises or []) if not isinstance(p, Promise)],
                              y_pos[cand], {k: v[cand] for k, v in rows.items()})
        n = y.shape[0]
        params = {k: (v[cand] if hasattr(v, "__len__") and len(v) == n else v)
                  for k, v in fit_params.items()}
        est = clone(self.estimator).fit(_rows(X, cand), y[cand], **params)
        self._certify(est, promises, X, y_pos, rows, cand, safe, GE)
        return self

    def _certify(self, est, promises, X, y_pos, rows, cand, safe, GE):
        if not promises or any(p.quantity.kind not in CERTIFIABLE for p in promises):
            raise ValueError("certification needs at least one rate or ratio promise")
        self.estimator_ = est
        encoding = None
        if self.thresholds != "global" and "groups" in rows:
            encoding = GE.find(_rows(X, cand), rows["groups"][cand])
            if encoding is None and self.thresholds == "per_group":
                GE.require(_rows(X, cand), rows["groups"][cand], "thresholds='per_group'")
        self.group_encoding_ = encoding
        parts = [Part(scores_of(est, _rows(X, i)), y_pos[i], {k: v[i] for k, v in rows.items()})
                 for i in (cand, safe)]
        rule, record = search(promises, *parts, self.delta, self.bound,
                              per_group=encoding is not None, test=self.test,
                              n_thresholds=self.n_thresholds)
        self.rule_ = rule
        self.certificate_ = record
        self.promises_ = certified_promises(promises, self.delta, record)
        return self

    @classmethod
    def from_fitted(cls, est, promises, X, y_pos, rows, cand, safe, **params):
        """A certified classifier around ``est`` already fitted on rows ``cand`` (the
        runner's path: the plugin fits the model its own way)."""
        from safeclf import group_encoding as GE

        self = cls(estimator=est, **params)
        self._check_params()
        self.classes_ = np.asarray(est.classes_)
        return self._certify(est, promises, X, np.asarray(y_pos, bool), dict(rows), cand, safe, GE)

    @property
    def no_solution_(self) -> str | None:
        return None if self.rule_ is not None else self.certificate_.get("reason")

    def decision_function(self, X):
        """The model's score minus the rule's threshold (of the row's group): positive means
        predicted positive; it orders rows, unlike a 0/1 clip."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "certificate_")
        if self.rule_ is None:
            raise NoSolution(f"no certified model: {self.no_solution_}")
        score = scores_of(self.estimator_, X)
        rows = {}
        if self.rule_.per_group:
            rows[self.rule_.groups] = self.group_encoding_.groups_of(X)
        return score - self.rule_.thresholds(rows)

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def _rows(X, idx):
    return X[idx] if not hasattr(X, "iloc") else X.iloc[idx]
