"""Kernels K(x, z) = φ(x)ᵀφ(z) and a bounded cache of kernel rows shared by the τ blocks.

The MC-SVM dual (Prop. 5) only touches the kernel through rows K[i, :]; every τ block uses the
same rows, so one cache serves them all.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from safeclf._utils.pages import small_page_array


def resolve_gamma(gamma, X) -> float:
    """``"scale"`` = 1 / (d · Var X), ``"auto"`` = 1 / d (as scikit-learn), or the number."""
    d = X.shape[1]
    if gamma == "scale":
        var = float(np.var(X))
        return 1.0 / (d * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / d
    return float(gamma)


class Kernel:
    """``linear``: xᵀz; ``poly``: (γ xᵀz + coef0)^degree; ``rbf``: exp(−γ ‖x − z‖²)."""

    def __init__(self, name: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0):
        self.name, self.gamma, self.degree, self.coef0 = name, float(gamma), int(degree), float(coef0)

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The |A| × |B| kernel matrix."""
        G = A @ B.T
        if self.name == "linear":
            return G
        if self.name == "poly":
            G *= self.gamma
            G += self.coef0
            return G**self.degree
        sq = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * G
        np.maximum(sq, 0.0, out=sq)
        sq *= -self.gamma
        return np.exp(sq, out=sq)

    def diag(self, A: np.ndarray) -> np.ndarray:
        """K(a, a) for each row a of A."""
        if self.name == "rbf":
            return np.ones(A.shape[0])
        G = np.einsum("ij,ij->i", A, A)
        return G if self.name == "linear" else (self.gamma * G + self.coef0) ** self.degree

    def params(self) -> dict:
        return {"kernel": self.name, "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}


#: kernel names as the compiled code knows them
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2}


#: ln 2 split in two (Cody–Waite, float32): k·LN2_HI is exact for the |k| ≤ 126 of a float32
_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693359375)
_LN2_LO = np.float32(-2.12194440e-4)
#: exponents below this are raised to it: e⁻⁸⁷ ≈ 1.6e-38 is near float32's smallest normal number
_X_MIN = -87.0


def bit_cast(source, target):
    """A compiled function giving the ``target`` value with the bits of its ``source`` value
    (a bit cast, no conversion: float64 ↔ int64, int32 → float32 here)."""
    @intrinsic
    def cast(typingctx, x):
        if x != source:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(source), codegen
    return cast


_float32_of_bits = bit_cast(types.int32, types.float32)


@njit(cache=True, fastmath=True)
def _kernel_row(XT, i, code, gamma, degree, coef0, out, work):
    """out[t] = K(x_i, x_t) for every training point t, stored as float32: the sums over the
    features in float64, the RBF exponential in float32 (:func:`_exp32`).

    ``XT`` holds the points as columns (d, n), so every loop runs over t on contiguous memory
    and compiles to vector instructions; ``work`` (2, n) float64 is scratch. RBF uses the
    difference x_i − x_t directly (no ‖a‖² + ‖b‖² − 2aᵀb cancellation); its last feature's
    pass writes the exponent rounded to float32 into ``out``, and one more pass takes its
    exponential there: on float32 lanes only, twice as many a vector instruction as in a pass
    that also holds the float64 sums (0.9–1.0 against 1.7–2.0 ns an entry on 2 features, the
    same values bit for bit)."""
    d, n = XT.shape
    s = work[0]
    if code == 2:
        for c in range(d - 1):
            xc = XT[c, i]
            if c == 0:
                for t in range(n):
                    diff = xc - XT[c, t]
                    s[t] = diff * diff
            else:
                for t in range(n):
                    diff = xc - XT[c, t]
                    s[t] += diff * diff
        xc = XT[d - 1, i]
        g = -gamma
        if d == 1:
            for t in range(n):
                diff = xc - XT[0, t]
                out[t] = _exponent32(g * (diff * diff))
        else:
            for t in range(n):
                diff = xc - XT[d - 1, t]
                out[t] = _exponent32(g * (s[t] + diff * diff))
        for t in range(n):
            out[t] = _exp32_of(out[t])
        return
    s[:] = 0.0
    for c in range(d):
        xc = XT[c, i]
        for t in range(n):
            s[t] += xc * XT[c, t]
    if code == 1:
        for t in range(n):
            base = gamma * s[t] + coef0
            v = 1.0
            for _ in range(degree):
                v *= base
            out[t] = v
    else:
        for t in range(n):
            out[t] = s[t]


@njit(cache=True, fastmath=True, inline="always")
def _exp32(x):
    """exp(x) in float32 for a float64 x ≤ 0 (an RBF exponent).

    The exponent is rounded to float32 (relative error 2⁻²⁴, so an absolute error of e^x below
    |x| e^x 2⁻²⁴ ≤ 2.2e-8: under the float32 the row is stored in), then range reduction
    x = k ln 2 + r, |r| ≤ ln 2 / 2, a degree-7 Taylor polynomial for eʳ (truncation < 6e-9
    relative) and 2ᵏ built from its exponent bits; below −87 the value is e⁻⁸⁷ ≈ 1.6e-38.
    float32 lanes are twice as many per vector instruction as float64 ones, and the polynomial
    is shorter than a float64 one would need. Without calls or branches, so that a loop over
    it compiles to vector instructions: the library exponential, called per value, does not
    (benchmarks/mcsvm_exp.py)."""
    return _exp32_of(_exponent32(x))


@njit(cache=True, fastmath=True, inline="always")
def _exponent32(x):
    """An RBF exponent x ≤ 0 as the float32 :func:`_exp32` works on (raised to −87)."""
    return np.float32(x if x > _X_MIN else _X_MIN)


@njit(cache=True, fastmath=True, inline="always")
def _exp32_of(v):
    """:func:`_exp32` of an exponent already rounded by :func:`_exponent32`."""
    k = np.floor(v * _LOG2E + np.float32(0.5))
    r = (v - k * _LN2_HI) - k * _LN2_LO
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    return p * _float32_of_bits(np.int32((np.int32(k) + np.int32(127)) << np.int32(23)))


@njit(cache=True, fastmath=True)
def exp_rows(x, out):
    """out[t] = :func:`_exp32` (x[t]) for a float64 array of exponents ≤ 0."""
    for t in range(x.size):
        out[t] = _exp32(x[t])


@njit(cache=True)
def fetch_row(i, XT, code, gamma, degree, coef0, store, slot_of, owner, links, state, work):
    """The cache slot holding K[i, :], computing the row on a miss (the least recently used
    slot evicted once the cache is full). ``state`` = [most recent slot, least recent slot,
    slots in use, rows computed]; ``links`` (2, slots): the previous (more recent) and next
    (less recent) slot of each slot in use, −1 at the ends: a list kept in order of use, so
    that a hit or an eviction costs O(1).

    The row fetched last is never the one evicted, so two rows (a pair) are valid together
    whenever the cache holds at least two."""
    s = slot_of[i]
    if s < 0:
        if state[2] < store.shape[0]:
            s = state[2]
            state[2] += 1
            links[0, s], links[1, s] = -1, -1
            if state[0] < 0:  # the first slot used
                state[0], state[1] = s, s
            else:
                _to_front(links, state, s, False)
        else:
            s = state[1]
            slot_of[owner[s]] = -1
            _to_front(links, state, s, True)
        _kernel_row(XT, i, code, gamma, degree, coef0, store[s], work)
        owner[s] = i
        slot_of[i] = s
        state[3] += 1
    elif s != state[0]:
        _to_front(links, state, s, True)
    return s


@njit(cache=True, inline="always")
def _to_front(links, state, s, linked):
    """Make slot ``s`` the most recent of the list (unlinking it first when ``linked``)."""
    prev, nxt = links[0], links[1]
    if linked:
        if prev[s] >= 0:
            nxt[prev[s]] = nxt[s]
        if nxt[s] >= 0:
            prev[nxt[s]] = prev[s]
        else:
            state[1] = prev[s]
    prev[s] = -1
    nxt[s] = state[0]
    prev[state[0]] = s
    state[0] = s


class KernelCache:
    """Rows K[i, :] of the n × n training kernel, computed on demand by the compiled solver,
    least recently used rows evicted first.

    At most ``max_bytes`` are held (rows stored as float32, as LIBSVM does); with room for all
    n rows the cache is the full kernel matrix, filled only with the rows the solver touches.
    """

    def __init__(self, kernel: Kernel, X: np.ndarray, max_bytes: float):
        self.kernel = kernel
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.XT = np.ascontiguousarray(self.X.T)  # points as columns: the row loops run over t
        n = X.shape[0]
        self.work = np.empty((2, n))  # the compiled row computation's scratch
        self.capacity = int(max(2, min(n, max_bytes // (4 * max(n, 1)))))
        # its own mapping of ordinary pages, reused by the process's next cache
        self.store = small_page_array((self.capacity, n), np.float32)
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.links = np.full((2, self.capacity), -1, dtype=np.int64)  # the order of use
        # most recent slot, least recent slot, slots in use, rows computed
        self.state = np.array([-1, -1, 0, 0], dtype=np.int64)
        self.diag = np.ascontiguousarray(kernel.diag(self.X), dtype=np.float64)

    @property
    def nbytes(self) -> int:
        return int(self.store.nbytes)

    @property
    def computed_rows(self) -> int:
        return int(self.state[3])

    def arrays(self) -> tuple:
        """What the compiled solver takes: the points as columns, kernel code and parameters,
        then the cache arrays and the scratch."""
        k = self.kernel
        return (self.XT, KERNEL_CODES[k.name], k.gamma, k.degree, k.coef0, self.store,
                self.slot_of, self.owner, self.links, self.state, self.work)
