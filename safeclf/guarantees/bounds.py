"""Confidence bounds for a rate from a count: one small class per bound, one job each.

Every bound answers, for k events among n independent rows with an unknown rate p:

* :meth:`Bound.upper` ``(k, n, δ)``: U with P(p ≤ U) ≥ 1 − δ over the draw of k;
* :meth:`Bound.lower` ``(k, n, δ)``: L with P(p ≥ L) ≥ 1 − δ (by symmetry, 1 − U(n − k));
* :meth:`Bound.p_above` ``(k, n, b)``: a p-value for the null hypothesis p ≥ b (small when
  the count shows the rate is below b): super-uniform under the null, P(p_above ≤ α) ≤ α,
  and dual to :meth:`upper` (U(k, n, α) ≤ b exactly when p_above(k, n, b) ≤ α);
* :meth:`Bound.p_below` ``(k, n, b)``: the same for the null p ≤ b.

``k`` may be an array (one bound per count), and so may ``δ`` (broadcast with ``k``). The bounds:

``clopper_pearson``
    exact: U is the (1 − δ) quantile of Beta(k + 1, n − k); p_above = P(Bin(n, b) ≤ k).
``hoeffding``
    U = k/n + √(log(1/δ) / 2n); p_above = exp(−2n (b − k/n)₊²). Valid for any losses in
    [0, 1], looser than the exact bound for 0/1 events.
``bentkus``
    p_above = min(1, e · P(Bin(n, b) ≤ k)) (Bentkus 2004; the Hoeffding–Bentkus p-value of
    Learn-then-Test takes the smaller of this and Hoeffding's). For 0/1 events it is the
    Clopper–Pearson bound at δ/e, so it is here for comparison with tools that use it.
``ttest``
    **approximate**: the one-sided Student t bound k/n + t(1 − δ; n − 1) · s/√n on the mean of
    the 0/1 events (the Seldonian engine's default). Its coverage falls below 1 − δ for small
    n or rates near 0 or 1 (at k = 0 it gives U = 0); ``tests/guarantees/test_bounds.py`` shows where.

The coverage of each exact bound is checked in the tests over n from 10 to 10⁵ and rates from
0 to 1 by summing the binomial law exactly (no simulation noise).
"""

from __future__ import annotations

import math

import numpy as np


class Bound:
    """A one-sided confidence bound for a rate; subclasses define :meth:`upper` and
    :meth:`p_above`."""

    name = ""
    #: True for a bound whose coverage is not guaranteed (said in every promise using it).
    approximate = False

    def upper(self, k, n: int, delta: float):
        """Upper confidence limit U with P(p ≤ U) ≥ 1 − δ.

        Parameters
        ----------
        k : int or array of int
            Events counted (one limit per count).
        n : int
            Rows.
        delta : float
            δ, the probability the limit may fail.

        Returns
        -------
        float or ndarray
            U, shaped like ``k`` (1 when ``n`` is 0).
        """
        raise NotImplementedError

    def p_above(self, k, n: int, bound: float):
        """p-value of the null hypothesis p ≥ ``bound`` (small when the count shows the rate is
        below it); super-uniform under the null and dual to :meth:`upper`.

        Parameters
        ----------
        k : int or array of int
            Events counted.
        n : int
            Rows.
        bound : float
            b of the null hypothesis p ≥ b.

        Returns
        -------
        float or ndarray
            The p-value, shaped like ``k``.
        """
        raise NotImplementedError

    def lower(self, k, n: int, delta: float):
        """Lower confidence limit L with P(p ≥ L) ≥ 1 − δ: 1 − U(n − k, n, δ).

        Parameters
        ----------
        k : int or array of int
            Events counted.
        n : int
            Rows.
        delta : float
            δ, the probability the limit may fail.

        Returns
        -------
        float or ndarray
            L, shaped like ``k`` (0 when ``n`` is 0).
        """
        return 1.0 - self.upper(n - np.asarray(k), n, delta) if n > 0 else _scalar(k, 0.0)

    def p_below(self, k, n: int, bound: float):
        """p-value of the null hypothesis p ≤ ``bound``: :meth:`p_above` of the complementary
        count.

        Parameters
        ----------
        k : int or array of int
            Events counted.
        n : int
            Rows.
        bound : float
            b of the null hypothesis p ≤ b.

        Returns
        -------
        float or ndarray
            The p-value, shaped like ``k``.
        """
        return self.p_above(n - np.asarray(k), n, 1.0 - bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _out(arr):
    """``arr`` as floats: a float when it is a scalar."""
    arr = np.asarray(arr, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def _scalar(k, value):
    """``value`` shaped like ``k`` (a float for a scalar count)."""
    return _out(np.full(np.shape(k), value))


class ClopperPearson(Bound):
    name = "clopper_pearson"

    # scipy.special's ufuncs: the Beta quantile and the binomial CDF, without scipy.stats'
    # per-call overhead (certification evaluates thousands of them)
    def upper(self, k, n, delta):
        from scipy.special import betaincinv

        if n <= 0:
            return _scalar(k, 1.0)
        k = np.minimum(np.maximum(np.asarray(k, dtype=float), 0.0), n)
        with np.errstate(invalid="ignore"):
            u = betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - delta)
        return _out(np.where(k >= n, 1.0, u))

    def p_above(self, k, n, bound):
        from scipy.special import bdtr

        if n <= 0:
            return _scalar(k, 1.0)
        k = np.floor(np.asarray(k, dtype=float))
        if bound >= 1.0:
            return _scalar(k, 1.0)
        with np.errstate(invalid="ignore"):
            p = bdtr(np.minimum(k, n - 1), n, max(bound, 0.0))
        return _out(np.where(k < 0, 0.0, np.where(k >= n, 1.0, p)))


class Hoeffding(Bound):
    name = "hoeffding"

    def upper(self, k, n, delta):
        if n <= 0:
            return _scalar(k, 1.0)
        k = np.asarray(k, dtype=float)
        return _out(np.minimum(1.0, k / n + np.sqrt(np.log(1.0 / np.asarray(delta, dtype=float))
                                                    / (2.0 * n))))

    def p_above(self, k, n, bound):
        if n <= 0:
            return _scalar(k, 1.0)
        gap = np.maximum(bound - np.asarray(k, dtype=float) / n, 0.0)
        return _out(np.where(bound >= 1.0, 1.0, np.exp(-2.0 * n * gap ** 2)))


class Bentkus(Bound):
    name = "bentkus"

    def upper(self, k, n, delta):
        return ClopperPearson().upper(k, n, np.minimum(1.0, np.asarray(delta, dtype=float) / math.e))

    def p_above(self, k, n, bound):
        return _out(np.minimum(1.0, math.e * np.asarray(ClopperPearson().p_above(k, n, bound))))


class TTest(Bound):
    name = "ttest"
    approximate = True

    @staticmethod
    def _mean_se(k, n):
        k = np.asarray(k, dtype=float)
        mean = k / n
        var = np.where(n > 1, mean * (1 - mean) * n / max(n - 1, 1), 0.0)
        return mean, np.sqrt(var / n)

    def upper(self, k, n, delta):
        from scipy.stats import t

        if n <= 1:
            return _scalar(k, 1.0)
        mean, se = self._mean_se(k, n)
        return _out(np.minimum(1.0, mean + t.ppf(1.0 - delta, n - 1) * se))

    def p_above(self, k, n, bound):
        from scipy.stats import t

        if n <= 1:
            return _scalar(k, 1.0)
        mean, se = self._mean_se(k, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, (mean - bound) / np.where(se > 0, se, 1.0),
                         np.where(mean < bound, -np.inf, np.inf))
        return _out(t.cdf(z, n - 1))


#: The bounds by name, for specs (``bound: clopper_pearson``).
BOUNDS: dict[str, Bound] = {b.name: b for b in (ClopperPearson(), Hoeffding(), Bentkus(),
                                                  TTest())}
DEFAULT = "clopper_pearson"


def get(name: str) -> Bound:
    """The bound called ``name``; ValueError naming the known ones otherwise."""
    try:
        return BOUNDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown bound {name!r}; known: {', '.join(BOUNDS)}") from None
