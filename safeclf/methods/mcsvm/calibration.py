"""Choosing the offset b on a calibration set Z_c (section 3.2).

All functions take the scores s_i = wᵀφ(x̃_i) of the calibration points and ``safe`` (True for
y = +1 = S). A point is predicted safe when s − b < 0, i.e. s < b. Each returns an
:class:`Offset`: the value b, the guarantee it carries (one sentence), and details.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binom

from safeclf.errors import DataError

METHODS = ("bias_adjustment", "class_proportion", "z_svm", "probabilistic_scaling", "conformal",
           "conformal_all", "quantile")


@dataclass
class Offset:
    b: float
    guarantee: str
    details: dict = field(default_factory=dict)


def _split(scores, safe, where):
    s = np.asarray(scores, float)
    safe = np.asarray(safe, bool)
    su, ss = s[~safe], s[safe]
    if su.size == 0:
        raise DataError(f"{where}: the calibration set has no unsafe (y = −1) points, so no offset "
                        "can bound the unsafe points predicted safe")
    return ss, su


def _check_unit(name, value):
    if not (0 < value < 1):
        raise DataError(f"calibration: {name} must be in (0, 1), got {value}")


def _kth_smallest(v, k):
    return float(np.partition(v, k - 1)[k - 1])


def bias_adjustment(scores, safe) -> Offset:
    """(24) as the paper writes it: b = (max_{Z_c^U} wᵀφ + min_{Z_c^S} wᵀφ) / 2."""
    ss, su = _split(scores, safe, "bias_adjustment")
    if ss.size == 0:
        raise DataError("bias_adjustment: the calibration set has no safe (y = +1) points")
    b_u, b_s = float(su.max()), float(ss.min())
    return Offset((b_u + b_s) / 2, "none: heuristic offset (Núñez et al. 2017), no probabilistic guarantee",
                  {"b_U": b_u, "b_S": b_s})


def class_proportion(scores, safe) -> Offset:
    """3.2.1, (24) "extended to take into account the proportion of classes" (Núñez et al.
    2017; the paper gives no formula): the point between b_U and b_S that divides them in the
    ratio of the class counts, b = (n_S·b_U + n_U·b_S) / (n_S + n_U), so the boundary moves
    towards the minority class's extreme score; (24) on balanced data."""
    ss, su = _split(scores, safe, "class_proportion")
    if ss.size == 0:
        raise DataError("class_proportion: the calibration set has no safe (y = +1) points")
    b_u, b_s = float(su.max()), float(ss.min())
    n_s, n_u = ss.size, su.size
    return Offset((n_s * b_u + n_u * b_s) / (n_s + n_u),
                  "none: heuristic offset ((24) weighted by the class counts), no probabilistic "
                  "guarantee", {"b_U": b_u, "b_S": b_s, "n_S": int(n_s), "n_U": int(n_u)})


def z_svm(scores, safe) -> Offset:
    """3.2.1, the z-SVM approach (Imam et al. 2006) in the paper's setup: the offset that
    maximises the geometric mean √(TPR·TNR) of the accuracies on the safe and the unsafe
    points (safe predicted safe: s < b; unsafe predicted unsafe: s ≥ b), found exactly over
    every distinct rule (scores sorted once); ties go to the smallest such b, placed halfway
    between the neighbouring scores."""
    ss, su = _split(scores, safe, "z_svm")
    if ss.size == 0:
        raise DataError("z_svm: the calibration set has no safe (y = +1) points")
    cand = np.unique(np.r_[ss, su])
    # the rule s < b for b just above cand[k]: safe below or at cand[k] are predicted safe
    tpr = np.searchsorted(np.sort(ss), cand, side="right") / ss.size
    tnr = 1.0 - np.searchsorted(np.sort(su), cand, side="right") / su.size
    gm = np.sqrt(np.r_[0.0, tpr] * np.r_[1.0, tnr])  # k = −1: nothing predicted safe
    k = int(np.argmax(gm)) - 1
    if k < 0:
        b = float(cand[0] - 1.0)
    elif k == cand.size - 1:
        b = float(cand[-1] + 1.0)
    else:
        b = float(0.5 * (cand[k] + cand[k + 1]))
    return Offset(b, "none: heuristic offset (z-SVM, Imam et al. 2006), no probabilistic guarantee",
                  {"geometric_mean": float(gm[k + 1])})


def scaling_r(n_c: int, epsilon: float, delta: float) -> int:
    """The largest integer r ≥ 1 with BinomialCDF(r − 1; n_c, ε) ≤ δ (eq. 25–26), or 0 if none."""
    _check_unit("ε", epsilon)
    _check_unit("δ", delta)
    cdf = binom.cdf(np.arange(n_c + 1), n_c, epsilon)
    return int(np.searchsorted(cdf, delta, side="right"))  # count of k = r − 1 with cdf(k) ≤ δ


def min_scaling_size(epsilon: float, delta: float) -> int:
    """The smallest n_c with (1 − ε)^{n_c} ≤ δ, i.e. for which r = 1 exists."""
    return int(math.ceil(math.log(delta) / math.log1p(-epsilon)))


def probabilistic_scaling(scores, safe, epsilon, delta) -> Offset:
    """(25)–(27): b = the r-th smallest wᵀφ over Z_c^U, so at most r − 1 unsafe calibration points
    are predicted safe; b = +∞ (everything safe) when n_U < r, as the paper's S_ε = 𝒳."""
    ss, su = _split(scores, safe, "probabilistic_scaling")
    n_c = ss.size + su.size
    r = scaling_r(n_c, epsilon, delta)
    if r == 0:
        raise DataError(
            f"probabilistic_scaling: a calibration set of {n_c} points is too small for ε = {epsilon}, "
            f"δ = {delta}; it needs at least {min_scaling_size(epsilon, delta)} points"
        )
    b = _kth_smallest(su, r) if su.size >= r else float("inf")
    return Offset(
        b,
        f"with probability ≥ 1 − δ = {1 - delta:g} over the calibration draw, "
        f"P(y = U and x predicted S) ≤ ε = {epsilon:g}",
        {"r": r, "n_c": n_c, "n_U": int(su.size), "everything_safe": bool(su.size < r)},
    )


def conformal(scores, safe, epsilon) -> Offset:
    """3.2.3: b = the k-th smallest wᵀφ over the n_U unsafe calibration points with
    k = ⌊ε(n_U + 1)⌋; k = 0 predicts no point safe (b = −∞)."""
    _check_unit("ε", epsilon)
    _, su = _split(scores, safe, "conformal")
    k = int(math.floor(epsilon * (su.size + 1)))
    b = _kth_smallest(su, k) if k >= 1 else float("-inf")
    return Offset(
        b,
        f"in expectation over the calibration draw, P(x predicted S | y = U) ≤ ε = {epsilon:g}",
        {"k": k, "n_U": int(su.size), "nothing_safe": k == 0},
    )


def negative_score_quantile(scores, safe, epsilon) -> float:
    """3.2.3: the conformal (1 − ε)-quantile of the "negative" scores s(x, −1) = ρ̄(x) on
    Z_c^U — the ⌈(1 − ε)(n_U + 1)⌉-th smallest, +∞ past n_U — in the paper's scaling
    convention: f(x, ρ) = wᵀφ(x) + ρ, predicted safe when f < 0, so ρ̄(x) = −wᵀφ(x) and the
    offset is b = −ρ. The paper: it "coincides exactly with ρ̄_ε", the r-th largest ρ̄ over
    Z_c^U (25), for r = n_U + 1 − ⌈(1 − ε)(n_U + 1)⌉ (tests/methods/test_mcsvm_offsets.py);
    −(this) is :func:`conformal`'s offset."""
    _check_unit("ε", epsilon)
    _, su = _split(scores, safe, "negative_score_quantile")
    rho = np.sort(-su)
    k = int(math.ceil((1 - epsilon) * (su.size + 1)))
    return float(rho[k - 1]) if k <= su.size else float("inf")


def conformal_all(scores, safe, epsilon) -> Offset:
    """3.2.3 with every calibration score: s(x, y) = −y·ρ̄(x) = y·wᵀφ(x) on all of Z_c; q its
    conformal (1 − ε)-quantile (the ⌈(1 − ε)(n_c + 1)⌉-th smallest, +∞ past n_c) and, as the
    paper writes, ρ = |q|, b = −|q|. A point is predicted safe only where −1 is outside the
    conformal set {y : s(x, y) ≤ q}; an unsafe point predicted safe is a miss of that set, so
    P(y = U and x predicted S) ≤ ε in expectation over the calibration draw (the joint rate of
    (27), in expectation rather than with confidence 1 − δ); b = −|q| ≤ −q only shrinks the
    region when q < 0."""
    _check_unit("ε", epsilon)
    s = np.asarray(scores, float)
    y = np.where(np.asarray(safe, bool), 1.0, -1.0)
    _split(s, y > 0, "conformal_all")
    v = np.sort(y * s)
    k = int(math.ceil((1 - epsilon) * (v.size + 1)))
    q = float(v[k - 1]) if k <= v.size else float("inf")
    return Offset(
        -abs(q),
        f"in expectation over the calibration draw, P(y = U and x predicted S) ≤ ε = {epsilon:g}",
        {"q": q, "k": k, "n_c": int(v.size), "nothing_safe": not np.isfinite(q)},
    )


def quantile(scores, safe, epsilon, bound: str = "fpr") -> Offset:
    """(28): b minimising ½ Σ_i max(0, ((1 − 2ε')y_i + 1)(y_i(s_i − b) + 1)), solved exactly.

    ε' = ε bounds false negatives as the paper writes (28); ``bound="fpr"`` uses ε' = 1 − ε, as
    the paper says to bound false positives. The objective is convex piecewise linear in b:
    a safe point adds (1 − ε')·max(0, s_i + 1 − b), an unsafe one ε'·max(0, b − s_i + 1). Its
    right derivative −(1 − ε')·#{S: s_i + 1 > b} + ε'·#{U: s_i − 1 ≤ b} is non-decreasing; the
    minimiser is the smallest kink where it is ≥ 0 (found by sorting and a binary search).
    """
    _check_unit("ε", epsilon)
    if bound not in ("fpr", "fnr"):
        raise DataError(f"quantile: bound must be 'fpr' or 'fnr', got {bound!r}")
    ss, su = _split(scores, safe, "quantile")
    e = 1 - epsilon if bound == "fpr" else epsilon
    ks = np.sort(ss + 1.0)  # kinks of the safe terms
    ku = np.sort(su - 1.0)  # kinks of the unsafe terms
    kinks = np.concatenate([ks, ku])
    kinks.sort()

    def right_derivative(v):
        n_s_above = ks.size - np.searchsorted(ks, v, side="right")
        n_u_at_or_below = np.searchsorted(ku, v, side="right")
        return -(1 - e) * n_s_above + e * n_u_at_or_below

    lo, hi = 0, kinks.size - 1  # right_derivative(kinks[-1]) = e·n_U ≥ 0
    while lo < hi:
        mid = (lo + hi) // 2
        if right_derivative(kinks[mid]) >= 0:
            hi = mid
        else:
            lo = mid + 1
    b = float(kinks[lo])
    obj = 0.5 * (np.sum(np.maximum(0.0, 2 * (1 - e) * (ss - b + 1)))
                 + np.sum(np.maximum(0.0, 2 * e * (b - su + 1))))
    what = "false positives (unsafe predicted safe)" if bound == "fpr" else "false negatives"
    return Offset(
        b,
        f"none: weighted hinge quantile (28) with ε' = {e:g}; bounds {what} at ε only approximately",
        {"epsilon_prime": e, "objective": float(obj), "n_kinks": int(kinks.size)},
    )


def calibrate(method: str, scores, safe, epsilon: float, delta: float, bound: str = "fpr") -> Offset:
    """Dispatch to one of :data:`METHODS`."""
    if method == "bias_adjustment":
        return bias_adjustment(scores, safe)
    if method == "class_proportion":
        return class_proportion(scores, safe)
    if method == "z_svm":
        return z_svm(scores, safe)
    if method == "conformal_all":
        return conformal_all(scores, safe, epsilon)
    if method == "probabilistic_scaling":
        return probabilistic_scaling(scores, safe, epsilon, delta)
    if method == "conformal":
        return conformal(scores, safe, epsilon)
    if method == "quantile":
        return quantile(scores, safe, epsilon, bound)
    raise DataError(f"calibration: unknown method {method!r}; known: {', '.join(METHODS)}")
