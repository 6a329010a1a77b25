"""Kernels K(x, z) = φ(x)ᵀφ(z) and a bounded cache of kernel rows shared by the τ blocks.

The MC-SVM dual (Prop. 5) only touches the kernel through rows K[i, :]; every τ block uses the
same rows, so one cache serves them all.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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


#: ln 2 split in two (Cody–Waite): k·LN2_HI is exact for the |k| < 2¹¹ of a kernel row
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93145751953125e-1
_LN2_LO = 1.42860682030941723212e-6


@njit(cache=True, fastmath=True)
def _kernel_row(XT, i, code, gamma, degree, coef0, out, work):
    """out[t] = K(x_i, x_t) for every training point t, float64 arithmetic stored as float32.

    ``XT`` holds the points as columns (d, n), so every loop runs over t on contiguous memory
    and compiles to vector instructions; ``work`` (2, n) is scratch. RBF uses the difference
    x_i − x_t directly (no ‖a‖² + ‖b‖² − 2aᵀb cancellation) and :func:`_exp_rows`."""
    d, n = XT.shape
    s = work[0]
    s[:] = 0.0
    for c in range(d):
        xc = XT[c, i]
        if code == 2:
            for t in range(n):
                diff = xc - XT[c, t]
                s[t] += diff * diff
        else:
            for t in range(n):
                s[t] += xc * XT[c, t]
    if code == 2:
        for t in range(n):
            s[t] *= -gamma
        _exp_rows(s, work[1].view(np.int64), out)
    elif code == 1:
        for t in range(n):
            base = gamma * s[t] + coef0
            v = 1.0
            for _ in range(degree):
                v *= base
            out[t] = v
    else:
        for t in range(n):
            out[t] = s[t]


@njit(cache=True, fastmath=True)
def _exp_rows(x, bits, out):
    """out[t] = exp(x[t]) for x ≤ 0 (an RBF exponent), overwriting ``x``; ``bits`` is int64
    scratch. Range reduction x = k ln 2 + r, |r| ≤ ln 2 / 2, a degree-11 Taylor polynomial for
    eʳ (relative error < 1e-13, far below the float32 the row is stored in) and 2ᵏ built from
    its exponent bits; below −708 the value is 0 (it is below float32's smallest number
    anyway). Written without calls or branches so that it compiles to vector instructions:
    the library exponential, called per value, does not (benchmarks/mcsvm_exp.py)."""
    n = x.size
    for t in range(n):
        v = max(x[t], -708.0)
        k = np.floor(v * _LOG2E + 0.5)
        r = (v - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        bits[t] = (np.int64(k) + 1023) << 52
        x[t] = p
    scale = bits.view(np.float64)
    for t in range(n):
        out[t] = x[t] * scale[t]


@njit(cache=True)
def fetch_row(i, XT, code, gamma, degree, coef0, store, slot_of, owner, last_used, state, work):
    """The cache slot holding K[i, :], computing the row on a miss (least recently used slot
    evicted once the cache is full). ``state`` = [clock, slots in use, rows computed].

    The row fetched last is never the one evicted, so two rows (a pair) are valid together
    whenever the cache holds at least two."""
    state[0] += 1
    s = slot_of[i]
    if s < 0:
        if state[1] < store.shape[0]:
            s = state[1]
            state[1] += 1
        else:
            s = 0
            for u in range(1, store.shape[0]):
                if last_used[u] < last_used[s]:
                    s = u
            slot_of[owner[s]] = -1
        _kernel_row(XT, i, code, gamma, degree, coef0, store[s], work)
        owner[s] = i
        slot_of[i] = s
        state[2] += 1
    last_used[s] = state[0]
    return s


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
        self.store = np.empty((self.capacity, n), dtype=np.float32)
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.last_used = np.zeros(self.capacity, dtype=np.int64)
        self.state = np.zeros(3, dtype=np.int64)  # clock, slots in use, rows computed
        self.diag = np.ascontiguousarray(kernel.diag(self.X), dtype=np.float64)

    @property
    def nbytes(self) -> int:
        return int(self.store.nbytes)

    @property
    def computed_rows(self) -> int:
        return int(self.state[2])

    def arrays(self) -> tuple:
        """What the compiled solver takes: the points as columns, kernel code and parameters,
        then the cache arrays and the scratch."""
        k = self.kernel
        return (self.XT, KERNEL_CODES[k.name], k.gamma, k.degree, k.coef0, self.store,
                self.slot_of, self.owner, self.last_used, self.state, self.work)
