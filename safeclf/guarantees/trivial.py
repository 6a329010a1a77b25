"""Better than trivial, or say so: the majority-class rule as the baseline every model must
beat, and the verdict that a model is *degenerate*.

The *trivial rule* predicts, for every row, the most frequent label of the **training** rows
(ties: the first label in sorted order). A model is **degenerate** when either

1. it gives one class to all but a negligible share of the rows: at most
   :data:`NEGLIGIBLE_SHARE` (1 %) of them get any other class; or
2. it is not better than the trivial rule beyond noise: on the rows where exactly one of the
   two is right, the exact one-sided sign test (McNemar's exact test) of "the model is right no
   more often than the trivial rule" is not rejected at :data:`LEVEL` (0.05). With ``b`` rows
   where only the model is right and ``c`` where only the trivial rule is, the p-value is
   P(Binomial(b + c, 1/2) ≥ b); no such row at all gives p = 1.

The test is paired (both rules on the same rows), so it needs no assumption on the error rates
and has the power of the rows where the rules disagree: an error of 0.170 against the majority
rule's 0.171 on 5,000 rows is *not* better beyond noise, an error of 0.15 on the same rows is.

Where it is used: every job reports ``test_trivial_error`` and ``degenerate`` on its test rows
(:mod:`safeclf.execution.job`); certification judges its candidates on the training rows and returns a
degenerate rule only where ``certify: {allow_degenerate: true}`` allows it
(:mod:`safeclf.guarantees.certify.threshold`, :mod:`safeclf.guarantees.certify.training`);
``safeclf deploy`` refuses a degenerate
model without ``--allow-degenerate``.

Why leaving degenerate rules out keeps a certificate valid. Post hoc (Learn-then-Test), the
rules that give one class to all but a negligible share of the *candidate* rows are left out of
the tested path: that is a function of the candidate part alone, like the rest of the path, so
the path is still fixed before the held-back rows are looked at. Among the certified rules the
choice skips those degenerate on the training rows: with probability ≥ 1 − δ *every* certified
rule keeps every promise, so any choice among them, by any criterion (looking at the held-back
rows or not), keeps them too. In training, the Seldonian safety test is passed or not before the
verdict; returning no model where the candidate passed but is degenerate only removes models, so
P(a model is returned and breaks its promise) stays ≤ δ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The share of rows that may get the minority prediction while the model still counts as
#: giving one class to everyone (at most 1 % of rows get another class).
NEGLIGIBLE_SHARE = 0.01
#: The level of the sign test: a model is better than the trivial rule beyond noise when the
#: test's p-value is at most this.
LEVEL = 0.05


@dataclass(frozen=True)
class Verdict:
    """Whether a model is degenerate on some rows, and why, in words.

    Attributes
    ----------
    degenerate : bool
    reason : str
        One line: why it is (or is not) degenerate.
    error, trivial_error : float
        The model's and the trivial rule's error on the rows.
    p_value : float
        The sign test's one-sided p-value (model better than the trivial rule).
    discordant : int
        The rows where exactly one of the two rules is right.
    top_share : float
        The share of rows given the model's most frequent prediction.
    """

    degenerate: bool
    reason: str
    error: float
    trivial_error: float
    p_value: float
    discordant: int
    top_share: float


def majority(y_train):
    """The most frequent label of ``y_train`` (ties: the first in sorted order)."""
    return top_class(y_train)[0]


def trivial_error(y_train, y) -> float:
    """The error on labels ``y`` of the rule predicting the majority of ``y_train`` for every
    row (nan for no row)."""
    y = np.asarray(y)
    return float(np.mean(y != majority(y_train))) if y.size else float("nan")


def top_class(pred) -> tuple[object, float]:
    """The most frequent prediction of ``pred`` and the share of rows given it."""
    pred = np.asarray(pred)
    if pred.dtype == bool and pred.size:  # counted, not sorted (a million rows a rule)
        k = int(np.count_nonzero(pred))
        top = k > pred.size - k  # a tie goes to False, as np.unique's order gives it
        return np.bool_(top), float(max(k, pred.size - k) / pred.size)
    values, counts = np.unique(pred, return_counts=True)
    i = int(np.argmax(counts))
    return values[i], float(counts[i] / max(1, counts.sum()))


def one_class(pred) -> bool:
    """Whether ``pred`` gives one class to all but a negligible share of its rows (at most
    :data:`NEGLIGIBLE_SHARE` get another class)."""
    pred = np.asarray(pred)
    return pred.size == 0 or top_class(pred)[1] >= 1.0 - NEGLIGIBLE_SHARE


def one_class_counted(positives: int, n: int) -> bool:
    """:func:`one_class` of 0/1 predictions given by their count of positives among ``n``."""
    return n == 0 or max(positives, n - positives) / n >= 1.0 - NEGLIGIBLE_SHARE


def sign_test(model_right, trivial_right) -> tuple[float, int]:
    """(p-value, discordant rows) of the exact one-sided sign test that the model is right more
    often than the trivial rule, on the rows where exactly one of them is right."""
    from scipy.stats import binom

    model_right, trivial_right = np.asarray(model_right, bool), np.asarray(trivial_right, bool)
    b = int(np.sum(model_right & ~trivial_right))
    n = b + int(np.sum(trivial_right & ~model_right))
    return (float(binom.sf(b - 1, n, 0.5)) if n else 1.0), n


def _label(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "positive" if value else "negative"
    return f"`{value}`"


def degenerate(y_train, y, pred, level: float = LEVEL, rows: str = "rows") -> Verdict:
    """Whether predictions ``pred`` of labels ``y`` are degenerate (see the module docstring),
    the trivial rule being the majority of ``y_train``.

    Parameters
    ----------
    y_train : array-like
        The training labels (they fix the trivial rule).
    y, pred : array-like of the same length (at least one row)
        The labels and the model's predictions on the rows judged.
    level : float
        The sign test's level.
    rows : str
        What the rows judged are, as the reason names them (``"the test rows"``).

    Returns
    -------
    Verdict
    """
    y, pred = np.asarray(y), np.asarray(pred)
    if y.size == 0 or y.shape != pred.shape:
        raise ValueError("degenerate needs labels and predictions for the same rows (at least one)")
    rule = majority(y_train)
    model_right, trivial_right = pred == y, y == rule
    err, trivial = float(1 - np.mean(model_right)), float(1 - np.mean(trivial_right))
    p, n = sign_test(model_right, trivial_right)
    top, share = top_class(pred)
    facts = dict(error=err, trivial_error=trivial, p_value=p, discordant=n, top_share=share)
    test = f"sign test p = {p:.2g} on {n} discordant rows"
    if one_class(pred):
        return Verdict(True, f"predicts {_label(top)} for {100 * share:.1f} % of {rows}",
                       **facts)
    if p > level:
        return Verdict(True, f"error {err:.3f} on {rows} is not below the majority rule's "
                             f"{trivial:.3f} beyond noise ({test})", **facts)
    return Verdict(False, f"error {err:.3f} on {rows} is below the majority rule's "
                          f"{trivial:.3f} ({test})", **facts)


def job_metrics(y_train, y_test, pred_test) -> tuple[dict[str, float], Verdict | None]:
    """A job's columns ``test_trivial_error`` and ``degenerate`` (0/1; nan without test rows)
    and the verdict behind them."""
    y_test = np.asarray(y_test)
    if y_test.size == 0:
        return {"test_trivial_error": float("nan"), "degenerate": float("nan")}, None
    v = degenerate(y_train, y_test, pred_test, rows="the test rows")
    return {"test_trivial_error": v.trivial_error, "degenerate": float(v.degenerate)}, v


# -- certification ----------------------------------------------------------------------------
def path_rules(positives) -> list[int]:
    """The positions of the rules (each given by its predictions on the candidate rows) that
    may enter a post-hoc path: those that do not give one class to all but a negligible share
    of the candidate rows."""
    return [i for i, pred in enumerate(positives) if not one_class(pred)]


def path_rules_counted(positives, n: int) -> list[int]:
    """:func:`path_rules` from each rule's count of positive predictions among the ``n``
    candidate rows."""
    return [i for i, k in enumerate(positives) if not one_class_counted(int(k), int(n))]


def first_useful(candidates, judge) -> tuple[object | None, Verdict | None]:
    """The first of ``candidates`` that ``judge`` (candidate → :class:`Verdict`) does not find
    degenerate, and the verdict of the first candidate when none is (None, None for no
    candidate)."""
    first = None
    for c in candidates:
        v = judge(c)
        if not v.degenerate:
            return c, None
        first = first or v
    return None, first


#: The way out said with every no-solution reason of this module.
ALLOW = "certify: {allow_degenerate: true} returns such a rule, flagged"
#: The note of the promises of a certification that returned no model for this reason.
NOTHING_PROMISED = ("only a degenerate model kept the promise, so none was returned: nothing "
                    "is promised")
#: What a no-solution reason of a group-blind certification adds (a promise comparing groups):
#: one threshold on scores that ignore the group keeps such a promise only where the scores
#: already treat the groups alike, and the ways out.
BLIND_NEXT = ("; the rule is group-blind (one threshold for everyone), which keeps a comparison "
              "of groups only where the model's scores treat them alike: more rows may help, "
              "or a threshold per group (leave out group_blind; on a csv dataset, "
              "group_as_feature: true), which reads the group")
#: The no-solution reason when no rule of a post-hoc family may enter the path.
NO_PATH = (f"no model: only a trivial rule is left: every decision rule gives one class to "
           f"all but "
           f"{100 * NEGLIGIBLE_SHARE:g} % of the candidate rows (the model's scores do not "
           f"separate them); {ALLOW}")


def no_solution_reason(verdict: Verdict) -> str:
    """The no-solution reason when only degenerate rules were certified (``verdict``: that of
    the best of them)."""
    return (f"no model: only a trivial rule keeps the promise: the certified rule "
            f"{verdict.reason}; {ALLOW}")


def left_out_note(verdict: Verdict) -> str:
    """What a post-hoc no-solution reason adds when a rule left out of the path as one-class
    would have passed the test (``verdict``: that rule's)."""
    return (f"; only a trivial rule, left out of the test, would keep the promise: it "
            f"{verdict.reason} ({ALLOW})")

