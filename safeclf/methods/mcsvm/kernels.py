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


@njit(cache=True)
def _kernel_row(X, i, code, gamma, degree, coef0, out):
    """out[t] = K(x_i, x_t) for every training point t (float64 arithmetic, stored as float32).

    RBF uses the difference x_i − x_t directly (no ‖a‖² + ‖b‖² − 2aᵀb cancellation), and the
    library exponential (benchmarks/mcsvm_exp.py: faster here than a hand-written one)."""
    n, d = X.shape
    if code == 2:
        for t in range(n):
            s = 0.0
            for c in range(d):
                diff = X[i, c] - X[t, c]
                s += diff * diff
            out[t] = np.exp(-gamma * s)
    else:
        for t in range(n):
            s = 0.0
            for c in range(d):
                s += X[i, c] * X[t, c]
            if code == 1:
                base = gamma * s + coef0
                s = 1.0
                for _ in range(degree):
                    s *= base
            out[t] = s


@njit(cache=True)
def fetch_row(i, X, code, gamma, degree, coef0, store, slot_of, owner, last_used, state):
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
        _kernel_row(X, i, code, gamma, degree, coef0, store[s])
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
        n = X.shape[0]
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
        """What the compiled solver takes: X, kernel code and parameters, then the cache arrays."""
        k = self.kernel
        return (self.X, KERNEL_CODES[k.name], k.gamma, k.degree, k.coef0, self.store,
                self.slot_of, self.owner, self.last_used, self.state)
