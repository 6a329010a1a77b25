"""The ν function of Ben-Tal et al. (2011), eqs. (12)–(14) and section 2.1.1.

All arguments are *normalised* (X̂ = (X − c)/s ∈ [−1, 1]): mean bounds µ̂⁻ ≤ µ̂⁺ and a bound σ̂
on the root second moment, with |µ̂±| ≤ σ̂ ≤ 1.

g (eq. 12) is the largest moment generating function E exp(t X̂) of a variable on [−1, 1] with
mean µ̂ and second moment σ̂² (attained by a two-point distribution), h = log g (eq. 13) and

    ν(µ̂⁻, µ̂⁺, σ̂) = min{k ≥ 0 : h_µ̂(t) ≤ max(µ̂⁻t, µ̂⁺t) + k²t²/2  ∀t, ∀µ̂ ∈ [µ̂⁻, µ̂⁺]}   (14)

For t ≠ 0 the condition reads k² ≥ 2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t², so

    ν² = max(0, sup over t ≠ 0 and µ̂ ∈ [µ̂⁻, µ̂⁺] of 2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t²).

The side t < 0 is the side t > 0 of the mirrored variable −X̂ (bounds −µ̂⁺, −µ̂⁻). For t > 0
the supremum is taken over µ̂ first, in closed form, then over t:

* g_µ̂(t) is the largest E e^{tX̂} over the laws with mean µ̂ and second moment σ̂²; a mixture
  of two such laws has the mixed mean and the same second moment, so g (and h = log g) is
  concave in µ̂. Writing the law by its lower atom x = (µ̂ − σ̂²)/(1 − µ̂), µ̂ = (x + σ̂²)/(1 + x),
  the stationarity condition of g in x is t(1 − x²) + 2x = 2x e^{t(1−x)}, free of σ̂: its root
  x*(t) is 1 for t ≤ 1 and falls from 1 to 0 as t grows (tabulated once). The maximiser over
  [µ̂⁻, µ̂⁺] is therefore the clip of µ̂*(t) = (x*(t) + σ̂²)/(1 + x*(t)) to the interval.
* W(t) = 2(h_{µ̂(t)}(t) − µ̂⁺t)/t² is not unimodal in t (two interior maxima occur, e.g. near
  t = 0.9 and t = 3 for µ̂± = (0.54, 0.68), σ̂ = 0.735). It is evaluated on a grid over
  t ∈ [10⁻⁶, 10⁶] (log-spaced); the best local maximum of the grid, and the second best where
  it is within 0.05 of it, is polished by Illinois false position on dW/d log t (by the
  envelope theorem, ∂R/∂t at the maximising mean). The result is the largest of: those
  values, every grid value, the limit t → 0⁺ (σ̂² − (µ̂⁺)², the Claim's lower bound), and a
  closed-form bound of W on [10⁶, ∞) (h ≤ t + log(q_max + e^{−t(1 − x₁)}), q the mass of
  the atom at 1).
* h is evaluated without cancellation for small t (log1p of the centred moment generating
  function, written with e^z − 1 − z), so the ratio keeps ~1e-13 absolute accuracy down to
  t = 10⁻⁶; for larger t the log-sum-exp form avoids overflow.

Everything is vectorised over the triples, and identical triples are solved once. The tests
compare ν² with an independent brute force over (µ̂, t) on 3,000 random triples and the edges
(µ̂± = ±σ̂, σ̂ → |µ̂|, σ̂ = 1, µ̂⁻ = µ̂⁺): never more than 1e-13 below it.

(An earlier version maximised over t for each mean and located the best mean from the slope at
the upper bound; that function of µ̂ is not unimodal, and where µ̂⁺ = σ̂ it returned 0 for
ν(−0.3, 0.3, 0.3), whose value is 0.3197.)
"""

from __future__ import annotations

import numpy as np

# t grid (log-spaced): sparse where the ratio is a low-order polynomial in t (t ≤ 10⁻²) or a
# slow 1/t tail (t ≥ 10⁴), 6 points a decade in between
_LT_GRID = np.log(np.concatenate([
    [1e-6, 1e-4, 1e-3], np.logspace(-2, 4, 37), [1e5, 1e6]]))
_N_ROOT = 10  # Illinois steps on dW/d log t inside a grid bracket
_RIVAL = 0.05  # a second local maximum of the grid this close to the best is polished too
_T_SMALL = 0.5  # below: h − µ̂t as log1p of the centred MGF; above: log-sum-exp
_T_TAIL = float(np.exp(_LT_GRID[-1]))


_T_X_MAX = 800.0  # above: x*(t) < 1e-300, taken as 0


def _xstar_table(n: int = 4097):
    """x*(t) on a log grid of t ∈ [1, 800]: the root in (0, 1) of
    t u(2 − u) = 2(1 − u)(e^{tu} − 1), u = 1 − x (negative left of the root, positive right)."""
    lt = np.linspace(0.0, np.log(_T_X_MAX), n)
    t = np.exp(lt)
    lo, hi = np.zeros(n), np.ones(n)
    for _ in range(60):
        u = 0.5 * (lo + hi)
        with np.errstate(over="ignore", invalid="ignore"):  # e^{tu} = inf: right side wins
            neg = t * u * (2.0 - u) < 2.0 * (1.0 - u) * np.expm1(t * u)
        lo, hi = np.where(neg, u, lo), np.where(neg, hi, u)
    x = 1.0 - 0.5 * (lo + hi)
    x[0] = 1.0
    return lt, x


_LT_X, _X_STAR = _xstar_table()


_DLT_X = _LT_X[1] - _LT_X[0]


def _mu_star(t, s):
    """The unconstrained maximiser over µ̂ of h_µ̂(t), t > 0 (may exceed σ̂: then it is σ̂)."""
    # linear interpolation in the uniform log-t table (np.interp searches; this indexes)
    u = np.clip(np.log(t) / _DLT_X, 0.0, _LT_X.size - 1.0)
    i = np.minimum(u.astype(np.intp), _LT_X.size - 2)
    w = u - i
    x = _X_STAR[i] * (1.0 - w) + _X_STAR[i + 1] * w
    x = np.where(t > _T_X_MAX, 0.0, x)
    return (x + s) / (1.0 + x)


def _e2(z):
    """e^z − 1 − z without cancellation."""
    series = z * z * (0.5 + z * (1 / 6 + z * (1 / 24 + z / 120)))
    return np.where(np.abs(z) < 1e-3, series, np.expm1(z) - z)


def _law(mu, sigma):
    """The extremal two-point law for t ≥ 0 (eq. 12 and the remark after it) as a tuple
    (µ̂, x₁, p, q, log p, log q): lower atom x₁ with mass p, upper atom 1 with mass q. With no
    variance (µ̂ = ±σ̂) the formulas give the one-atom law at µ̂ (q = 0, x₁ = µ̂); µ̂ = σ̂ = 1,
    where they are 0/0, is set to it explicitly."""
    mu, sigma = np.broadcast_arrays(mu, sigma)
    var = np.maximum((sigma - mu) * (sigma + mu), 0.0)
    one = 1.0 - mu
    den = one * one + var  # 1 − 2µ̂ + σ̂²
    with np.errstate(divide="ignore", invalid="ignore"):
        p = one * one / den
        q = var / den
        # x₁ = (µ̂ − σ̂²)/(1 − µ̂), with µ̂ − σ̂² = (µ̂ − σ̂) + σ̂(1 − σ̂)
        x1 = ((mu - sigma) + sigma * (1.0 - sigma)) / one
        logden = np.log(den)
        logp = 2.0 * np.log(one) - logden
        logq = np.log(var) - logden
    at_one = den <= 0.0
    if at_one.any():
        p, q, x1, logp, logq = (np.where(at_one, v, w) for v, w in
                                ((1.0, p), (0.0, q), (mu, x1), (0.0, logp), (-np.inf, logq)))
    return mu, x1, p, q, logp, logq


def _centred_small(t, law):
    """h_µ̂(t) − µ̂t for t(1 − x₁) ≤ 1, without cancellation: log1p(p e2(t(x₁ − µ̂)) +
    q e2(t(1 − µ̂))), e2(z) = e^z − 1 − z (the first-order terms cancel: p x₁ + q = µ̂)."""
    mu, x1, p, q, _, _ = law
    return np.log1p(p * _e2(t * (x1 - mu)) + q * _e2(t * (1.0 - mu)))


def _logit_upper(t, law):
    """z = log(q e^t / (p e^{t x₁})): the log-odds of the upper atom under the tilted law."""
    _, x1, _, _, logp, logq = law
    with np.errstate(invalid="ignore"):
        return logq - logp + t * (1.0 - x1)


def _softplus(z):
    """log(1 + e^z), stable; 0 at z = −∞."""
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))  # z = −∞ gives 0


def _centred_large(t, law):
    """h_µ̂(t) − µ̂t in log-sum-exp form (no overflow at any t)."""
    mu, x1, _, _, logp, _ = law
    return logp + t * (x1 - mu) + _softplus(_logit_upper(t, law))


def _ratio(t, law, b):
    """R = 2(h_µ̂(t) − b t)/t² for t > 0 (elementwise), each t by the accurate form."""
    small = t < _T_SMALL
    hc = np.where(small, _centred_small(np.where(small, t, 0.0), law),
                  _centred_large(np.where(small, 1.0, t), law))
    return 2.0 * hc / (t * t) - 2.0 * (b - law[0]) / t


def h(t, mu, sigma):
    """h_{µ̂,σ̂}(t) = log g_{µ̂,σ̂}(t), eqs. (12)–(13), broadcasting over all arguments."""
    t, mu, sigma = np.broadcast_arrays(*(np.asarray(v, float) for v in (t, mu, sigma)))
    m = np.where(t >= 0, mu, -mu)  # t < 0 is t > 0 for −X̂ (mean −µ̂, same second moment)
    ta = np.where(t == 0, 1.0, np.abs(t))
    out = 0.5 * ta * ta * _ratio(ta, _law(m, sigma), m) + m * ta
    return np.where(t == 0, 0.0, out)


def _best_law(t, a, b, sigma):
    """The two-point law of the mean in [a, b] that maximises h_µ̂(t)."""
    return _law(np.clip(_mu_star(t, sigma * sigma), a, b), sigma)


def _envelope(lt, a, b, sigma):
    """W and dW/d log t at t = e^{lt}, W(t) = max over µ̂ ∈ [a, b] of 2(h_µ̂(t) − b t)/t².
    By the envelope theorem dW/dt is ∂R/∂t at the maximising µ̂, and h′ = x₁ + (1 − x₁)π with
    π the tilted mass of the upper atom: dW/d log t = 2(h′ − b)/t − 2W."""
    t = np.exp(lt)
    law = _best_law(t, a, b, sigma)
    W = _ratio(t, law, b)
    z = _logit_upper(t, law)
    pi = np.exp(z - _softplus(z))  # 0 at z = −∞ (no upper atom)
    x1 = law[1]
    return W, 2.0 * (x1 + (1.0 - x1) * pi - b) / t - 2.0 * W


def _grid(a, b, sigma):
    """W on the t grid, (rows, nodes). For t ≤ 1 the maximising mean is b (x*(t) = 1), so
    those nodes share one law per row."""
    t = np.exp(_LT_GRID)
    col = lambda v: v[:, None]  # noqa: E731
    A, B, S = col(a), col(b), col(sigma)
    law_b = _law(B, S)
    lo, mid = t < _T_SMALL, (t >= _T_SMALL) & (t <= 1.0)
    hi = t > 1.0
    W = np.empty((a.size, t.size))
    W[:, lo] = 2.0 * _centred_small(t[lo], law_b) / t[lo] ** 2
    W[:, mid] = 2.0 * _centred_large(t[mid], law_b) / t[mid] ** 2
    th = t[hi]
    law = _best_law(th, A, B, S)
    W[:, hi] = 2.0 * _centred_large(th, law) / th**2 - 2.0 * (B - law[0]) / th
    return W


def _tail(a, b, sigma):
    """An upper bound of W on [T, ∞), T the last grid point: for t ≥ T,
    h_µ̂(t) ≤ t + L with L = log min(1, q_max + e^{−T(1 − x₁(b))}) (q ≤ q_max, p ≤ 1, and
    x₁ increases with µ̂), and 2((1 − b)t + L)/t² is maximal at t = −2L/(1 − b)."""
    s = sigma * sigma
    T = _T_TAIL
    q_max = _law(np.clip(s, a, b), sigma)[3]  # q(µ̂) rises up to µ̂ = σ̂², then falls
    x1_b = _law(b, sigma)[1]
    with np.errstate(divide="ignore"):  # L = −∞: no mass at 1, the tail is 0
        L = np.log(np.minimum(1.0, q_max + np.exp(-T * (1.0 - x1_b))))
    c = 1.0 - b
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where((L < 0) & (c > 0), -2.0 * L / c, 0.0)
        inner = c * c / (-2.0 * L)
    return np.where(t_star > T, inner, 2.0 * (c * T + L) / (T * T))


def _polish(j, a, b, sigma):
    """The largest W found by Illinois false position on dW/d log t = 0 next to grid node j
    (the side where W rises); −∞ where that side has no sign change."""
    lt, n = _LT_GRID, _LT_GRID.size
    Wj, gj = _envelope(lt[j], a, b, sigma)
    up = gj > 0
    other = np.where(up, np.minimum(j + 1, n - 1), j - 1)
    lo_end = np.where(j == 0, lt[0] - 2.0, lt[np.maximum(other, 0)])  # below the grid: t ≥ 10⁻⁸
    x_other = np.where(up, lt[other], lo_end)
    Wo, go = _envelope(x_other, a, b, sigma)
    x0, g0 = np.where(up, lt[j], x_other), np.where(up, gj, go)
    x1, g1 = np.where(up, x_other, lt[j]), np.where(up, go, gj)
    live = (g0 > 0) & (g1 < 0)
    best = np.maximum(Wj, Wo)
    last = np.zeros(x0.shape, bool)  # the previous step replaced x0 (g > 0)
    prev = np.zeros(x0.shape, bool)  # ... and that is not the first step
    for _ in range(_N_ROOT):
        with np.errstate(divide="ignore", invalid="ignore"):
            x = x0 - g0 * (x1 - x0) / (g1 - g0)
        x = np.where(np.isfinite(x) & (x > np.minimum(x0, x1)) & (x < np.maximum(x0, x1)),
                     x, 0.5 * (x0 + x1))
        W, g = _envelope(x, a, b, sigma)
        best = np.where(live, np.maximum(best, W), best)
        pos = g > 0
        # Illinois: halve the retained end's slope when the same end is kept twice running
        again = prev & (last == pos)
        g1 = np.where(pos, np.where(again, 0.5 * g1, g1), g)
        g0 = np.where(pos, g, np.where(again, 0.5 * g0, g0))
        x1 = np.where(pos, x1, x)
        x0 = np.where(pos, x, x0)
        last, prev = pos, np.ones(x0.shape, bool)
    return best


def _side(a, b, sigma):
    """sup over t > 0 and µ̂ ∈ [a, b] of 2(h_µ̂(t) − b t)/t², with the limit t → 0⁺; 1-D arrays."""
    W = _grid(a, b, sigma)
    best = np.maximum(W.max(axis=1), sigma * sigma - b * b)  # t → 0⁺: µ̂ = b, R → var
    # the best local maximum of the grid, polished in its bracket, and the second best where
    # its grid value is within _RIVAL of the best (polishing gained at most 0.014 on 40,000
    # random and edge rows)
    peak = np.ones(W.shape, bool)
    peak[:, 1:] = W[:, 1:] >= W[:, :-1]
    peak[:, :-1] &= W[:, :-1] >= W[:, 1:]
    score = np.where(peak, W, -np.inf)
    rows = np.arange(a.size)
    j1 = np.argmax(score, axis=1)
    w1 = score[rows, j1]
    score[rows, j1] = -np.inf
    j2 = np.argmax(score, axis=1)
    rival = np.flatnonzero(score[rows, j2] > w1 - _RIVAL)
    polished = _polish(np.concatenate([j1, j2[rival]]),
                       *(np.concatenate([v, v[rival]]) for v in (a, b, sigma)))
    second = polished[a.size:]
    polished = polished[: a.size]
    polished[rival] = np.maximum(polished[rival], second)
    return np.maximum.reduce([best, polished, _tail(a, b, sigma)])


def _unique_triples(mu_lo, mu_hi, sigma):
    """The checked, clipped triples as (unique (k, 3) array, inverse index, shape)."""
    lo, hi, sg = np.broadcast_arrays(*(np.asarray(v, float) for v in (mu_lo, mu_hi, sigma)))
    shape = lo.shape
    lo, hi, sg = lo.ravel(), hi.ravel(), sg.ravel()
    tol = 1e-12
    bad = (~np.isfinite(lo) | ~np.isfinite(hi) | ~np.isfinite(sg) | (lo > hi + tol)
           | (sg > 1 + tol) | (np.abs(lo) > sg + tol) | (np.abs(hi) > sg + tol))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"nu needs mu_lo <= mu_hi and |mu| <= sigma <= 1; entry {i} has "
            f"mu_lo={lo[i]!r}, mu_hi={hi[i]!r}, sigma={sg[i]!r}"
        )
    sg = np.minimum(sg, 1.0)
    lo, hi = np.clip(lo, -sg, sg), np.clip(hi, -sg, sg)
    hi = np.maximum(hi, lo)
    # identical triples are common (one per feature and noise level): solve each once
    rows = np.ascontiguousarray(np.stack([lo, hi, sg], axis=1)).view(np.dtype((np.void, 24)))
    trip, inv = np.unique(rows.ravel(), return_inverse=True)  # bytewise: sorts fast
    return trip.view(float).reshape(-1, 3), inv.ravel(), shape


def nu(mu_lo, mu_hi, sigma, chunk: int = 4096):
    """ν(µ̂⁻, µ̂⁺, σ̂) of eq. (14) for arrays of normalised triples (broadcast together).

    Requires µ̂⁻ ≤ µ̂⁺, |µ̂±| ≤ σ̂ ≤ 1 (checked; a ValueError names the first bad entry).
    Returns an array of the broadcast shape with 0 ≤ ν ≤ 1.
    """
    trip, inv, shape = _unique_triples(mu_lo, mu_hi, sigma)
    out = np.empty(trip.shape[0])
    for s in range(0, trip.shape[0], chunk):
        a, b, c = trip[s:s + chunk].T
        k2 = np.maximum(_side(a, b, c), _side(-b, -a, c))
        out[s:s + chunk] = np.sqrt(np.clip(k2, 0.0, 1.0))
    return out[inv].reshape(shape)


# -- the paper's own procedure (section 2.1.1): bisection on k ---------------------------------
_GOLD = (np.sqrt(5.0) - 1.0) / 2.0
_BISECT_T = np.logspace(-4, 4, 97)  # |t| nodes of the 1-d search, 12 a decade, both signs
_GOLDEN_STEPS = 40  # 0.618^40 ≈ 4e-9 of the bracket


def _golden_min(fun, lo, hi, steps=_GOLDEN_STEPS):
    """Vectorised golden-section search: the smallest value of ``fun`` found on [lo, hi]
    (elementwise brackets), exact for a unimodal ``fun``."""
    x1 = hi - _GOLD * (hi - lo)
    x2 = lo + _GOLD * (hi - lo)
    f1, f2 = fun(x1), fun(x2)
    for _ in range(steps):
        left = f1 <= f2  # the minimum is in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x2n = np.where(left, x1, lo + _GOLD * (hi - lo))
        x1n = np.where(left, hi - _GOLD * (hi - lo), x2)
        f2n = np.where(left, f1, np.nan)
        f1n = np.where(left, np.nan, f2)
        new1, new2 = fun(x1n), fun(x2n)
        f1 = np.where(left, new1, f1n)
        f2 = np.where(left, f2n, new2)
        x1, x2 = x1n, x2n
    return np.minimum(np.minimum(f1, f2), np.minimum(fun(lo), fun(hi)))


def _g_scaled(t, a, b, sigma):
    """min over µ̂ ∈ [a, b] of (max(µ̂⁻t, µ̂⁺t) − h_µ̂(t))/t², the part of section 2.1.1's
    f(t; µ̂, σ̂, k)/t² = k²/2 + (max(µ̂⁻t, µ̂⁺t) − h_µ̂(t))/t² that does not depend on k
    (dividing by t² > 0 keeps f's sign at every t ≠ 0 and removes its vanishing scale near
    t = 0). f is convex in µ̂ (h is concave in µ̂), so the minimum over µ̂ is a golden-section
    search: the paper's "checked at various values of µ̂" made exact for a unimodal function."""
    top = np.maximum(a * t, b * t)
    return _golden_min(lambda mu: (top - h(t, mu, sigma)) / (t * t), a + 0.0 * t, b + 0.0 * t)


def _g_min(a, b, sigma):
    """min over t ≠ 0 of :func:`_g_scaled` (1-D arrays): a grid of ±|t|, then a
    golden-section search in log|t| between the best node's neighbours."""
    col = lambda v: v[:, None]  # noqa: E731
    lt = np.log(_BISECT_T)
    best = np.full(a.shape, np.inf)
    for sign in (1.0, -1.0):
        grid = _g_scaled(sign * _BISECT_T[None, :], col(a), col(b), col(sigma))
        j = np.argmin(grid, axis=1)
        lo, hi = lt[np.maximum(j - 1, 0)], lt[np.minimum(j + 1, lt.size - 1)]
        polished = _golden_min(lambda x, sg=sign: _g_scaled(sg * np.exp(x), a, b, sigma), lo, hi)
        best = np.minimum(best, np.minimum(grid.min(axis=1), polished))
    return best


def nu_bisection(mu_lo, mu_hi, sigma, tol: float = 1e-7, chunk: int = 256):
    """ν(µ̂⁻, µ̂⁺, σ̂) by the paper's binary search (section 2.1.1): start from the Claim's
    bracket k_l = √(σ̂² − µ̂²_min) ≤ ν ≤ k_u = 1 (µ̂_min = min(|µ̂⁻|, |µ̂⁺|)); at the midpoint k
    check whether min over t and µ̂ ∈ [µ̂⁻, µ̂⁺] of f(t; µ̂, σ̂, k) = k²t²/2 + max(µ̂⁻t, µ̂⁺t)
    − h_µ̂(t) is ≥ 0 (then k_u = k, else k_l = k), until k_u − k_l ≤ ``tol``; returns k_u.

    The check uses f/t² = k²/2 + g(t, µ̂): the k-free minimum of g over t and µ̂ is found once
    per triple (a grid of 97 values of |t| in [10⁻⁴, 10⁴] per sign refined by golden-section
    search in log|t|, and a golden-section search over µ̂, where f is convex) and each step
    adds its k²/2 — the same decisions as minimising afresh at every step. An independent
    route to the ν of :func:`nu` (which takes the maximising mean in closed form and polishes
    the maximum over t by false position), selectable as ``nu_method: bisection``; it misses
    a violation that lies only at |t| outside [10⁻⁴, 10⁴] (the Claim's bound covers t → 0).
    """
    trip, inv, shape = _unique_triples(mu_lo, mu_hi, sigma)
    a, b, c = trip.T
    g = np.concatenate([_g_min(a[s:s + chunk], b[s:s + chunk], c[s:s + chunk])
                        for s in range(0, a.size, chunk)]) if a.size else np.zeros(0)
    mu_min = np.minimum(np.abs(a), np.abs(b))
    k_lo = np.sqrt(np.clip(c * c - mu_min * mu_min, 0.0, 1.0))
    k_hi = np.ones_like(k_lo)
    while np.any(k_hi - k_lo > tol):
        k = 0.5 * (k_lo + k_hi)
        ok = 0.5 * k * k + g >= 0.0  # f_min(k) ≥ 0
        live = k_hi - k_lo > tol
        k_hi = np.where(live & ok, k, k_hi)
        k_lo = np.where(live & ~ok, k, k_lo)
    return k_hi[inv].reshape(shape)


#: ``nu_method`` values: the function computing ν
NU_METHODS = {"sup": nu, "bisection": nu_bisection}
