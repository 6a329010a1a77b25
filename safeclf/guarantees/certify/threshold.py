"""Post-hoc certification of any scoring classifier: a decision threshold (one, or one per
group) chosen on held-back rows by Learn-then-Test (:mod:`safeclf.guarantees.ltt`).

Procedure (``certify: {delta, fraction, how: threshold, bound, test}`` in a spec, or
:class:`CertifiedClassifier` around any estimator in Python):

1. The training rows are split by a plain random draw (:func:`split_rows`, from the seed
   alone) into a candidate part and a held-back part of share ``fraction``.
2. The model is fitted on the candidate part only; it gives a score per row
   (``decision_function``, else the positive class's ``predict_proba``).
3. From the candidate part only, a family of decision rules is built: global thresholds at the
   candidate scores' quantiles (and ±inf); where a promise holds a ratio of group rates from
   below (s_p(A) ≥ κ s_p(B)) and the features encode the group (:mod:`safeclf.guarantees.group_encoding`),
   rules with one threshold per group (:func:`_group_rules`: a reference threshold t and a level
   ρ from :data:`RHO_CAP` down to κ; the top group keeps t, every other group gets the
   candidate rate ρ × the top group's), for any number of groups. Each rule gets a
   candidate error and a *predicted pass probability* (:func:`pass_probabilities`: the
   chance that its held-back p-value is ≤ δ, simulated from its candidate rates with the
   held-back part's sampling noise at its predicted sizes and the candidate rates' own). The
   path tested is the front of the two (:func:`_front`): most likely to pass first, keeping a
   rule only if it is more accurate than every rule before it, so the path runs from the
   surest rule to the most accurate and testing stops where the held-back rows stop
   supporting the promises. (Ordering by the predicted p-value at the candidate rates, as
   before, put rules that pass about half the time — their predicted p-value floored at the
   exact test's γ — ahead of surer ones, and the sequence stopped there.)
4. On the held-back rows, each rule of the path gets the joint p-value of all promises (the
   largest of theirs, :func:`safeclf.guarantees.ltt.joint_p_value`); fixed-sequence testing along the path
   (or Holm's procedure over it) at level δ certifies a set of rules with family-wise error
   ≤ δ. Among them the one with the smallest training error (all training rows) is returned;
   choosing after the test keeps the guarantee, since every certified rule keeps every promise
   simultaneously with probability ≥ 1 − δ.
   Unless ``allow_degenerate``, rules giving one class to all but a negligible share of the
   candidate rows are left out of the path, and the choice skips the certified rules that are
   degenerate on the training rows (:mod:`safeclf.guarantees.trivial`, where the reason it keeps the
   guarantee is given); none left is no solution.
5. No rule certified: no model (``no_solution`` with its reason), never an unsafe one. The
   record also gives the predicted probability that the path's first rule passes (that a
   solution is found) and that the returned rule would (:func:`pass_probabilities`).

Why it is valid: the training rows are i.i.d. draws from the population and the split depends on
the seed alone, so the held-back rows are an i.i.d. sample independent of the candidate part.
The model, the family, the predicted pass probabilities (their simulation's seed is fixed)
and the path's order are functions of the candidate part (and of the held-back part's size,
fixed by the split) only. Conditional on the
candidate part, a promise's count on the held-back rows is binomial given the number of
held-back rows it is counted on (a rate among negatives, a group's rate), so its p-value
(:mod:`safeclf.guarantees.ltt`) is super-uniform when the promise is violated, and the joint p-value when
any promise is. Fixed-sequence testing along an order fixed in advance then rejects a true null
with probability ≤ δ (Angelopoulos et al. 2021, Learn-then-Test; the first true null of the
path is reached only if every rule before it was rejected, and it is rejected with probability
≤ δ); Holm's procedure controls it for any set of p-values. So with probability ≥ 1 − δ over the
held-back rows the returned rule keeps all its promises on the population. The held-back rows
are touched only through the tests and the final choice among certified rules. The model is not
refitted on all rows: that would void the certificate. (A split stratified by label or group
would fix the held-back part's composition to the training sample's and break the binomial law
of a pooled count: the split is not stratified.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone

from safeclf._utils.pages import small_pages
from safeclf.data.task import _take
from safeclf.errors import SafeclfError
from safeclf.guarantees import bounds as B
from safeclf.guarantees import ltt, trivial
from safeclf.guarantees.certify import counting
from safeclf.guarantees.certify import parts as parts_module
from safeclf.guarantees.certify.parts import (  # noqa: F401  (callers use them here)
    Part,
    beside,
    prepared,
    rows_of,
    scores_of,
)
from safeclf.guarantees.certify.path import (  # noqa: F401  (tests and callers use them here)
    PASS_DRAWS,
    RHO_CAP,
    _front,
    _grid,
    _rho_range,
    _threshold_for_rate,
    pass_probabilities,
    simulated_p_values,
    with_fallback,
)
from safeclf.guarantees.group_encoding import blind_columns, drop_columns
from safeclf.guarantees.promises import Evidence, Promise, rate_evidence

#: Quantity kinds certification can decide from counts.
CERTIFIABLE = ("rate", "ratio", "difference")


class NoSolution(SafeclfError):
    """Certification found no rule that passes: there is no model to use."""


@dataclass(frozen=True)
class Rule:
    """Positive when the score exceeds the threshold (of the row's group, if ``per_group``)."""

    threshold: float
    per_group: tuple = ()  # ((group, threshold), ...)
    groups: str = "groups"

    def thresholds(self, rows) -> np.ndarray | float:
        if not self.per_group:
            return self.threshold
        g = np.asarray(rows[self.groups])
        g = g if g.dtype.kind == "U" else g.astype(str)
        out = np.full(g.shape[0], self.threshold, dtype=float)
        for group, t in self.per_group:
            out[g == group] = t
        return out

    def positive(self, part: Part) -> np.ndarray:
        if not self.per_group:
            return part.score > self.threshold
        names, codes = part.codes(self.groups)
        own = dict(self.per_group)
        return part.score > np.array([own.get(a, self.threshold) for a in names])[codes]

    def describe(self) -> dict:
        out = {"threshold": self.threshold}
        if self.per_group:
            out["per_group"] = {g: t for g, t in self.per_group}
        return out


def group_entry(promises) -> str | None:
    """The rows entry whose groups per-group thresholds are for: that of the promises on a
    ratio of group rates of positive predictions held from below (s_p(A) ≥ κ s_p(B)), when
    there are such promises, or a difference held from above (s_p(B) − s_p(A) ≤ ε); None
    otherwise."""
    entries = [p.quantity.groups for p in promises if _levels_up(p)]
    return entries[0] if entries else None


def _levels_up(p: Promise) -> bool:
    q = p.quantity
    held_up = (q.kind == "ratio" and p.sense == ">=") or (q.kind == "difference" and
                                                          p.sense == "<=")
    return held_up and q.event == "predicted_positive"


#: The per-group rules' levels ρ are this factor apart (31 levels from 3 down to 0.8; 12
#: across a band [0.8, 1.25]), or closer (:data:`N_RHO_MIN`).
RHO_STEP = (RHO_CAP / 0.8) ** (1 / 30)
#: At least this many levels ρ (a narrow band, [0.9, 1/0.9], gets steps of 2 %).
N_RHO_MIN = 11
#: How many reference thresholds the per-group rules are built around (points of the global
#: grid): with 17, a band's path on Adult jumped ~6 % of positive predictions between two
#: references; 49 cut its error (5,000 rows, 30 seeds: 0.2001 → 0.1979; benchmarks/NOTES.md).
N_REF = 49


def _group_rules(promises, cand: Part, grid: np.ndarray, entry: str,
                 n_ref: int = N_REF) -> list[Rule]:
    """Rules with a threshold per group, from the candidate part only: a reference threshold
    t (``n_ref`` points spread over the finite ``grid``) and a level ρ; the group(s) with the
    highest candidate rate R at t keep t, every other group gets the largest threshold that
    gives it a candidate rate ≥ ρ R (never above t). ρ runs geometrically, :data:`RHO_STEP`
    apart, from :data:`RHO_CAP` (every group far above the promise: rules that pass on few
    held-back rows) down to κ (just at it) — across a band, from its upper side down to its
    lower (:func:`_rho_range`) — so the family spans the safest to the most accurate rules for
    each κ-promise about ``entry``, for any number of groups."""
    ups = [p for p in promises if _levels_up(p) and p.quantity.groups == entry]
    q = ups[0].quantity
    among = np.ones_like(cand.y_pos) if q.label is None else (
        cand.y_pos if q.label == "positive" else ~cand.y_pos)
    # each group's scores sorted once: its rate above t and the threshold for a rate are
    # then a binary search and an index (no pass over the rows per rule)
    if q.label is None:  # every row: the part's own sort by group
        sp = cand.sorted(entry)
        ascending = {str(a): s for a, s in zip(sp.names, sp.ascending) if s.size}
    else:
        names, codes = cand.codes(entry)
        ascending = {str(a): np.sort(cand.score[(codes == i) & among])
                     for i, a in enumerate(names)}
        ascending = {a: s for a, s in ascending.items() if s.size}
    names = list(ascending)
    kappa = max(min((p.bound if p.quantity.kind == "ratio" else 1.0 - p.bound) for p in ups),
                1e-3)
    hi, lo = _rho_range(promises, entry, kappa)
    rhos = np.geomspace(hi, lo, max(N_RHO_MIN, int(np.ceil(np.log(hi / lo) / np.log(RHO_STEP)
                                                           - 1e-9)) + 1))
    finite = np.flatnonzero(np.isfinite(grid))
    refs = np.unique(finite[np.linspace(0, finite.size - 1, min(n_ref, finite.size)).astype(int)])
    out = []
    for t in grid[refs]:
        t = float(t)
        rates = {a: float((s.size - np.searchsorted(s, t, side="right")) / s.size)
                 for a, s in ascending.items()}
        top = max(rates.values(), default=0.0)
        if top <= 0:
            continue
        for rho in rhos:
            per = tuple((str(a), t if rates[a] >= top else
                         min(t, _threshold_for_rate(ascending[a], rho * top, presorted=True)))
                        for a in names)
            out.append(Rule(t, per, entry))
    return list(dict.fromkeys(out))


def _entry_of(rules) -> str | None:
    return next((r.groups for r in rules if r.per_group), None)


def _counts(promises, part: Part, rules) -> list[tuple[np.ndarray, ...]]:
    """Per promise, the arrays (k, n, k2, n2) of its counts under each rule on ``part`` (the
    integers :func:`~safeclf.guarantees.promises.rate_evidence` gives for each rule's
    predictions, read off the part's sorted scores)."""
    sp = part.sorted(_entry_of(rules))
    return sp.counts(promises, sp.positives(rules))


def _errors(part: Part, rules) -> np.ndarray:
    """Each rule's count of rows of ``part`` it predicts wrong."""
    sp = part.sorted(_entry_of(rules))
    return sp.errors(sp.positives(rules))


def _n_positive(part: Part, rules) -> np.ndarray:
    """Each rule's count of rows of ``part`` it predicts positive."""
    return part.sorted(_entry_of(rules)).positives(rules).sum(axis=1)


def _sizes(promises, part: Part) -> list[Evidence]:
    """Each promise's sizes (rows counted) on ``part``, predictions not looked at (what
    :func:`~safeclf.guarantees.promises.sizes` gives, from the part's count terms)."""
    out = []
    for p in promises:
        k, n, k2, n2 = counting.sizes(part, p.quantity)
        out.append(Evidence(k, n, k2 if p.quantity.kind != "rate" else None,
                            n2 if p.quantity.kind != "rate" else None))
    return out


def predicted_sizes(promises, cand: Part, n_safe: int) -> list[Evidence]:
    """The sizes each promise will have on ``n_safe`` held-back rows, predicted from the
    candidate part (its sizes scaled by n_safe / n_candidate): the held-back part is not
    looked at."""
    scale = n_safe / max(1, cand.score.size)
    out = []
    for e in _sizes(promises, cand):
        n2 = None if e.n2 is None else int(round(e.n2 * scale))
        out.append(Evidence(0, int(round(e.n * scale)), None if n2 is None else 0, n2))
    return out


def _p_values(p, k, n, k2, n2, bnd, **kw) -> np.ndarray:
    """:func:`safeclf.guarantees.ltt.p_values` of one promise under each rule, with each
    rule's own sizes ``n``, ``n2`` (arrays): one size for all rules unless the promise is a
    rate among the predicted rows (precision), whose size is the rule's."""
    n, n2 = np.asarray(n, dtype=float), np.asarray(n2, dtype=float)
    if np.ptp(n) == 0 and np.ptp(n2) == 0:
        return ltt.p_values(p, k, int(n[0]), k2, int(n2[0]), bnd, **kw)
    return np.array([ltt.p_values(p, k[i:i + 1], int(n[i]), k2[i:i + 1], int(n2[i]), bnd,
                                  **kw)[0] for i in range(n.size)])


def search(promises: list[Promise], cand: Part, safe: Part, delta: float, bound: str = B.DEFAULT,
           per_group: bool = True, test: str = "fixed_sequence", n_thresholds: int = 100,
           allow_degenerate: bool = False) -> tuple[Rule | None, dict]:
    """Steps 3–4 of the module docstring: the certified rule with the smallest training
    error, or None; and the record of the search (sizes, the path's length, p-values, the
    predicted pass probabilities, the reason for no solution)."""
    if test not in ("fixed_sequence", "holm"):
        raise ValueError(f"test must be 'fixed_sequence' or 'holm', got {test!r}")
    bnd = B.get(bound)
    grid = _grid(cand.score[counting.by_score(cand)], n_thresholds)  # sorted: same quantiles
    rules = [Rule(float(t)) for t in grid]
    entry = group_entry(promises) if per_group else None
    if entry is not None and entry in cand.rows:
        rules += _group_rules(promises, cand, grid, entry)
    errors = list(_errors(cand, rules) / max(1, cand.score.size))
    # everything that orders the rules comes from the candidate part alone
    sizes = predicted_sizes(promises, cand, safe.score.size)
    counts = _counts(promises, cand, rules)
    level = delta  # fixed-sequence testing's; Holm's is δ over the path's length, below
    joint = simulated_p_values(promises, counts, sizes, bnd)  # once, read at every level
    prob = pass_probabilities(promises, counts, sizes, delta, bnd, joint=joint)
    # safeclf.guarantees.trivial: rules giving one class to (almost) every candidate row are not tested
    usable = list(range(len(rules))) if allow_degenerate else \
        trivial.path_rules_counted(_n_positive(cand, rules), cand.score.size)
    order = [usable[j] for j in _front(prob[usable], [errors[i] for i in usable])]
    if not order:
        return None, {"how": "threshold", "delta": delta, "reason": trivial.NO_PATH}
    if test == "fixed_sequence":
        order = with_fallback(order, usable, prob, errors, promises, counts, sizes, delta, bnd,
                              joint)

    if test == "holm":
        level = delta / len(order)
        prob = pass_probabilities(promises, counts, sizes, level, bnd, joint=joint)
    record = {"how": "threshold", "bound": bnd.name, "approximate": bnd.approximate,
              "test": test, "delta": delta, "n_candidate": int(cand.score.size),
              "n_safety": int(safe.score.size), "rules": len(rules), "path": len(order),
              "pass_probability": float(prob[order[0]])}
    sizes_safe = _sizes(promises, safe)

    def held_back_p_values(idx):  # (promises, rules) p-values on the held-back rows
        k = _counts(promises, safe, [rules[i] for i in idx])
        alpha = delta if test == "fixed_sequence" else None  # refined as far as p ≤ δ needs
        return np.array([_p_values(p, kk, nn, kk2, nn2, bnd, alpha=alpha)
                         for p, (kk, nn, kk2, nn2) in zip(promises, k, strict=True)])

    # every rule of the path at once; fixed-sequence testing reads them in order and stops at
    # the first non-rejection, so the p-values after it are not used
    tested, pv = order, held_back_p_values(order)
    joint = pv.max(axis=0)
    if test == "fixed_sequence":
        passed = tested[:ltt.fixed_sequence(joint, delta)]
    else:
        passed = [i for i, ok in zip(tested, ltt.holm(joint, delta)) if ok]
    record["certified_rules"] = len(passed)
    # safeclf.guarantees.trivial: the degenerate verdict on all training rows
    y_train = np.concatenate([cand.y_pos, safe.y_pos])

    def judge(i):
        pred = np.concatenate([rules[i].positive(part) for part in (cand, safe)])
        return trivial.degenerate(y_train, y_train, pred, rows="the training rows")

    if not passed:
        record.update(_no_rule_passes(promises, rules[tested[0]], safe, sizes_safe, pv[:, 0],
                                      level, bnd, delta, cand.score.size,
                                      record["pass_probability"]))
        left_out = sorted(set(range(len(rules))) - set(usable))  # safeclf.guarantees.trivial
        would = np.flatnonzero(held_back_p_values(left_out).max(axis=0) <= level) \
            if left_out else []
        if len(would):  # an explanation only: a rule left out is never returned
            record["reason"] += trivial.left_out_note(judge(left_out[would[0]]))
        return None, record
    wrong = dict(zip(passed, _errors(cand, [rules[i] for i in passed])
                     + _errors(safe, [rules[i] for i in passed])))
    # safeclf.guarantees.trivial: the choice skips rules degenerate on the training rows; by
    # training error (all training rows), ties in path order
    ranked = sorted(passed, key=lambda i: int(wrong[i]))
    best, why = (ranked[0], None) if allow_degenerate else trivial.first_useful(ranked, judge)
    if best is None:
        record.update(reason=trivial.no_solution_reason(why), degenerate_only=True)
        return None, record
    record["trivial"] = judge(best).reason
    at = tested.index(best)
    held = _counts(promises, safe, [rules[best]])  # the counts the p-values rest on
    record.update(rule=rules[best].describe(), p_value=float(joint[at]),
                  p_values={p.name: float(v) for p, v in zip(promises, pv[:, at])},
                  counts={p.name: {f: int(a[0]) for f, a in zip(("k", "n", "k2", "n2"), c)}
                          for p, c in zip(promises, held, strict=True)},
                  rule_pass_probability=float(prob[best]))
    return rules[best], record


def _no_rule_passes(promises, first: Rule, safe: Part, sizes_safe, p_first, level: float,
                    bnd, delta: float, n_candidate: int, pass_prob: float) -> dict:
    """The record of a search whose path's first (safest) rule already fails: the promise
    with the largest p-value there, its certified limit against its bound and the held-back
    rows that would certify the observed effect (:mod:`safeclf.guarantees.shortfall`); ``reason`` says
    it in one line."""
    from safeclf.guarantees import shortfall as S

    empty = [p.name for p, s in zip(promises, sizes_safe)
             if not s.n or (s.n2 is not None and not s.n2)]
    if empty:
        return {"reason": f"no rule certified at δ = {delta:g}: the held-back part has no row "
                          f"for {', '.join(empty)}; next: more rows, or a larger fraction"}
    worst = promises[int(np.argmax(p_first))]
    q = worst.quantity
    ev = rate_evidence(q, safe.y_pos, first.positive(safe), safe.rows)
    pair = S.pair_names(q, safe.rows[q.groups]) if q.kind in ("ratio", "difference") else None
    n_safe = int(safe.score.size)
    why = S.shortfall(worst, ev, level, bnd, n_safe, n_train=n_safe + n_candidate,
                      fraction=n_safe / max(1, n_safe + n_candidate), groups=pair)
    return {"failed": why,
            "reason": f"no model: the safest rule of the path (predicted pass probability "
                      f"{pass_prob:.2f}) fails; " + S.sentence(why, delta)}


def certified_promises(promises: list[Promise], delta: float, record: dict) -> list[Promise]:
    """The promises as the certificate states them: high-confidence at δ, about predict; when
    no rule passed (``record`` has no ``rule``), the statement says so and nothing is claimed
    to hold."""
    if "rule" not in record:
        return [replace(p, kind="high_confidence", delta=delta,
                        statement=p.statement.replace("(training data)", "").strip()
                        + " (population): not certified, no model returned",
                        note=trivial.NOTHING_PROMISED if record.get("degenerate_only") else
                        "no rule passed the test: nothing is promised")
                for p in promises]
    how = (f"certified post hoc by Learn-then-Test ({record['test'].replace('_', '-')} testing, "
           f"{record['bound']} p-values) on {record['n_safety']} held-back training rows")
    approx = "; approximate: the t-test bound's coverage is not guaranteed" \
        if record.get("approximate") else ""
    blind = decision_rule(record.get("reads_group", ""))
    return [replace(p, kind="high_confidence", delta=delta,
                    statement=p.statement.replace("(training data)", "").strip()
                    + f" (population), with probability ≥ {1 - delta:g}"
                    + (blind if p.quantity.kind in ("ratio", "difference") else ""),
                    source=f"{p.source}; {how}", rule="predict",
                    note=f"all {len(promises)} promises hold jointly with probability ≥ "
                         f"{1 - delta:g}{approx}")
            for p in promises]


def decision_rule(reads: str) -> str:
    """What a certified statement says of its decision rule, from the certificate's
    ``reads_group`` (:meth:`CertifiedClassifier.reads_group`): a threshold per group or one
    threshold for everyone, and whether the decision reads the group."""
    if reads.startswith("yes: a threshold per group"):
        return "; a threshold per group: the decision reads the group"
    if reads.startswith("yes"):
        return ("; one threshold for every group, but the decision reads the group through "
                "the model's features")
    if reads.startswith("no: group-blind"):
        return "; one threshold for every group, group-blind: the decision does not read the group"
    if reads.startswith("no"):
        return "; one threshold for every group: the decision does not read the group"
    return ""


def _in_order(idx, n: int) -> np.ndarray:
    """``np.sort(idx)`` for row positions of n rows: in O(n) (a mask, no sort) when they are
    distinct, as a split's are; sorted, repeats kept, when they are not."""
    idx = np.asarray(idx)
    at = np.zeros(n, dtype=bool)
    at[idx] = True
    ordered = np.flatnonzero(at)
    return ordered if ordered.size == idx.size else np.sort(idx)


def split_rows(n: int, fraction: float, seed: int):
    """(candidate, held-back) row positions: a plain random draw of ``fraction`` of the ``n``
    rows (not stratified, so the held-back rows are an i.i.d. sample of the population;
    :func:`safeclf.guarantees.certify.training.split_indices`)."""
    from safeclf.guarantees.certify.training import split_indices

    return split_indices(np.zeros(n), fraction, seed, stratify=False)


class CertifiedClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Wrap any scoring classifier so that its decision rule carries high-confidence promises.

    Parameters
    ----------
    estimator : estimator
        A binary classifier with ``decision_function`` or ``predict_proba``.
    promises : list of dict or Promise
        What must hold on the population, in ramp's constraint vocabulary
        (``{"rate": "fpr", "max": 0.05}``, ``{"rate": "fairness_ratio", "min": 0.8}``, ...;
        see :mod:`safeclf.guarantees.declared`), or :class:`~safeclf.guarantees.promises.Promise` objects.
    delta : float in (0, 1)
        The promises hold jointly with probability ≥ 1 − δ.
    fraction : float in (0, 1)
        Share of the training rows held back for the test.
    bound : {"clopper_pearson", "hoeffding", "bentkus", "ttest"}
        The p-values' bound (:mod:`safeclf.guarantees.bounds`; ``ttest`` is approximate).
    thresholds : {"auto", "global", "per_group"}
        One threshold, or one per group where a promise compares groups ("auto": per group
        when the features encode the group, or encode each column of an intersection).
    group_blind : bool, default False
        A rule that never reads the group: the feature columns that encode it (every column
        found by :func:`safeclf.guarantees.group_encoding.encoding_columns` for the groups and for each
        component of an intersection) are left out of the model's fit and of every
        prediction, and one threshold serves everyone. The groups are still used to certify.
        Proxies of the group among the other features are not removed.
    group_columns : list of str, optional
        The row entries whose intersection the groups are (``rows`` must hold them), so a
        per-group rule can read intersectional groups from their components' columns.
    test : {"fixed_sequence", "holm"}
    n_thresholds : int
        Size of the global threshold grid.
    random_state : int
        Seed of the split.
    allow_degenerate : bool, default False
        Whether a rule that is degenerate (one class for all but a negligible share of rows,
        or not better than the majority rule beyond noise: :mod:`safeclf.guarantees.trivial`) may be
        returned; by default such a rule is never tested or chosen, and only such rules
        certified is no solution.

    Attributes
    ----------
    estimator_ : the model fitted on the candidate part.
    rule_ : :class:`Rule` or None (no solution).
    promises_ : list of Promise, as certified.
    certificate_ : dict, the record of the search (sizes, p-values, the reason for no solution).
    group_encoding_ : :class:`~safeclf.guarantees.group_encoding.GroupEncoding` or None.
    blind_columns_ : tuple of int, the feature columns left out (``group_blind``).
    reads_group_ : str, whether and how the decision reads the group (:meth:`reads_group`).
    classes_ : ndarray of shape (2,).

    Examples
    --------
    A false-positive rate of at most 0.1 on the population, with confidence 95 %: the threshold
    is tested on the 30 % of the rows held back from the logistic regression's fit.

    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from safeclf.estimators import CertifiedClassifier
    >>> X, y = make_classification(n_samples=2000, n_features=4, random_state=0)
    >>> model = CertifiedClassifier(LogisticRegression(), promises=[{"rate": "fpr", "max": 0.1}],
    ...                             delta=0.05, random_state=0)
    >>> model.fit(X, y).predict(X[:5])
    array([1, 0, 1, 1, 1])
    >>> round(model.rule_.threshold, 3)
    -0.652
    """

    _parameter_constraints: dict = {}

    def __init__(self, estimator=None, promises=None, delta=0.05, fraction=0.3,
                 bound=B.DEFAULT, thresholds="auto", test="fixed_sequence", n_thresholds=100,
                 random_state=None, group_blind=False, group_columns=None,
                 allow_degenerate=False):
        self.estimator = estimator
        self.promises = promises
        self.delta = delta
        self.fraction = fraction
        self.bound = bound
        self.thresholds = thresholds
        self.test = test
        self.n_thresholds = n_thresholds
        self.random_state = random_state
        self.group_blind = group_blind
        self.group_columns = group_columns
        self.allow_degenerate = allow_degenerate

    def _check_params(self):
        if not (isinstance(self.delta, float | int) and 0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if not (isinstance(self.fraction, float | int) and 0 < self.fraction < 1):
            raise ValueError(f"fraction must be in (0, 1), got {self.fraction!r}")
        B.get(self.bound)
        if self.thresholds not in ("auto", "global", "per_group"):
            raise ValueError(f"thresholds must be 'auto', 'global' or 'per_group', got "
                             f"{self.thresholds!r}")
        if not isinstance(self.group_blind, bool | np.bool_):
            raise ValueError(f"group_blind must be True or False, got {self.group_blind!r}")
        if self.group_blind and self.thresholds == "per_group":
            raise ValueError("group_blind=True reads no group, so thresholds cannot be "
                             "'per_group'")
        if not isinstance(self.allow_degenerate, bool | np.bool_):
            raise ValueError(f"allow_degenerate must be True or False, got "
                             f"{self.allow_degenerate!r}")

    def fit(self, X, y, groups=None, rows=None, **fit_params):
        """Fit on the candidate part, certify a rule on the held-back part.

        ``groups`` (n,) are the rows' groups (rows entry ``groups``); ``rows`` may give other
        row entries named by the promises' subsets; ``fit_params`` go to the estimator's fit
        (arrays of length n are split with the rows)."""
        from safeclf.guarantees import declared
        from safeclf.guarantees import group_encoding as GE

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
        cand, safe = split_rows(y.shape[0], self.fraction, seed)
        promises = [p for p in (self.promises or []) if isinstance(p, Promise)] + \
            declared.promises([p for p in (self.promises or []) if not isinstance(p, Promise)],
                              y_pos[cand], {k: v[cand] for k, v in rows.items()})
        n = y.shape[0]
        params = {k: (v[cand] if hasattr(v, "__len__") and len(v) == n else v)
                  for k, v in fit_params.items()}
        blind = blind_columns(rows_of(X, cand), {k: v[cand] for k, v in rows.items()},
                              promises, self.group_columns) if self.group_blind else ()
        est = clone(self.estimator).fit(drop_columns(rows_of(X, cand), blind), y[cand], **params)
        self._certify(est, promises, X, y_pos, rows, cand, safe, GE, blind)
        return self

    @small_pages()  # many short-lived arrays of n rows: see safeclf._utils.pages
    def _certify(self, est, promises, X, y_pos, rows, cand, safe, GE, blind=()):
        if not promises or any(p.quantity.kind not in CERTIFIABLE for p in promises):
            raise ValueError("certification needs at least one rate or ratio promise")
        self.estimator_ = est
        self.blind_columns_ = tuple(int(c) for c in blind)
        # each part's rows in the order they are stored: every count is a sum over its rows,
        # whatever their order, and reading rows in order costs a third of reading them in
        # the split's random order on a million rows
        cand, safe = _in_order(cand, y_pos.shape[0]), _in_order(safe, y_pos.shape[0])
        entry = search_entry = group_entry(promises)
        groups_cand = rows[entry][cand] if entry is not None and entry in rows else None
        if groups_cand is not None:  # compared as text, converted once
            rows[entry] = np.asarray(rows[entry]).astype(str)

        # a per-group search sorts each part within the groups (the candidate part's once the
        # encoding is found; the held-back part's for the path's rules, most often per-group)
        per_group = self.thresholds != "global" and not self.group_blind

        # every row scored once (no copy of either part's rows: on a million rows the copies
        # cost more than the scores)
        score = scores_of(est, drop_columns(X, self.blind_columns_))

        def part(idx, *by):
            return prepared(Part(score[idx], y_pos[idx], {k: _take(v, idx) for k, v in
                                                          rows.items()}), promises, *by)

        # on a large table the held-back part and the search for the group's columns run in a
        # thread beside the candidate part (the sorts and passes over rows release the GIL);
        # the same arrays either way
        with beside(y_pos.shape[0] >= parts_module.THREADED_ROWS) as later:
            found = None
            if per_group and groups_cand is not None:
                comps = [rows[c][cand] for c in self.group_columns or () if c in rows] \
                    if entry == "groups" else None
                found = later(GE.find_any, X, groups_cand, comps, cand)
            safe_part = later(part, safe, entry if per_group else None)
            cand_part = part(cand)
            encoding = found() if found is not None else None
            if found is not None and encoding is None and self.thresholds == "per_group":
                GE.require(X, groups_cand, "thresholds='per_group'", cand)
            if encoding is None:
                search_entry = None
            parts = [prepared(cand_part, (), search_entry), safe_part()]
        self.group_encoding_ = encoding
        rule, record = search(promises, *parts, self.delta, self.bound,
                              per_group=search_entry is not None, test=self.test,
                              n_thresholds=self.n_thresholds,
                              allow_degenerate=bool(self.allow_degenerate))
        if rule is None and self.group_blind and entry is not None:
            record["reason"] += trivial.BLIND_NEXT  # the way out a group-blind rule leaves
        self.rule_ = rule
        self.reads_group_ = self.reads_group(X, parts[0].rows, entry, cand)
        record["reads_group"] = self.reads_group_
        self.certificate_ = record
        self.promises_ = certified_promises(promises, self.delta, record)
        return self

    def reads_group(self, X, rows, entry, at=None) -> str:
        """Whether the decision reads the group, in words: ``no`` (group-blind: its columns are
        left out), ``yes: a threshold per group ...``, ``yes: the model's features include the
        group ...`` or ``no: no feature column encodes the group``. ``rows``: the entries of
        X's rows ``at`` (None: all)."""
        from safeclf.guarantees.group_encoding import encodes_group

        if self.group_blind:
            k = len(self.blind_columns_)  # the group as a feature (group_as_feature) or not
            left = f"its {k} feature column(s) left out" if k else "no feature column encodes it"
            return f"no: group-blind ({left}; one threshold for everyone)"
        if self.rule_ is not None and self.rule_.per_group:
            return "yes: a threshold per group, read from the group's feature columns"
        if entry is not None and entry in rows and \
                encodes_group(X, rows, self.group_columns, entry, at):
            return "yes: one threshold, but the model's features include the group's columns"
        return "no: one threshold, and no feature column encodes the group"

    @classmethod
    def from_fitted(cls, est, promises, X, y_pos, rows, cand, safe, blind=(), **params):
        """A certified classifier around ``est`` already fitted on rows ``cand`` (the
        runner's path: the plugin fits the model its own way), with the feature columns
        ``blind`` left out of its fit (:func:`blind_columns`) when ``group_blind``."""
        from safeclf.guarantees import group_encoding as GE

        self = cls(estimator=est, promises=list(promises), **params)
        self._check_params()
        self.classes_ = np.asarray(est.classes_)
        return self._certify(est, promises, X, np.asarray(y_pos, bool), dict(rows), cand, safe,
                             GE, blind)

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
        score = scores_of(self.estimator_, drop_columns(X, getattr(self, "blind_columns_", ())))
        rows = {}
        if self.rule_.per_group:
            rows[self.rule_.groups] = self.group_encoding_.groups_of(X)
        return score - self.rule_.thresholds(rows)

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
