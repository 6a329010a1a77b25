"""Kernels K(x, z) = φ(x)ᵀφ(z) and a bounded cache of kernel rows shared by the τ blocks.

The MC-SVM dual (Prop. 5) only touches the kernel through rows K[i, :]; every τ block uses the
same rows, so one cache serves them all.
"""

from __future__ import annotations

import numpy as np


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


class KernelCache:
    """Rows K[i, :] of the n × n training kernel, least recently used rows evicted first.

    At most ``max_bytes`` are held (rows stored as float32, as LIBSVM does); with room for all
    n rows the cache is the full kernel matrix computed on demand.
    """

    def __init__(self, kernel: Kernel, X: np.ndarray, max_bytes: float):
        self.kernel, self.X = kernel, X
        n = X.shape[0]
        self.capacity = int(max(2, min(n, max_bytes // (4 * max(n, 1)))))
        self.store = np.empty((self.capacity, n), dtype=np.float32)
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.last_used = np.zeros(self.capacity, dtype=np.int64)
        self.clock = 0
        self.n_free = self.capacity
        self.computed_rows = 0
        self.diag = kernel.diag(X)

    @property
    def nbytes(self) -> int:
        return int(self.store.nbytes)

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """K[idx, :] as a (len(idx), n) float32 array (a view into the cache when the rows sit
        in consecutive slots, else a copy); read only."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size > self.capacity:  # more rows than the cache holds: compute directly
            self.computed_rows += idx.size
            out = np.empty((idx.size, self.X.shape[0]), dtype=np.float32)
            step = max(1, int(2**21 // max(self.X.shape[0], 1)))
            for start in range(0, idx.size, step):
                out[start:start + step] = self.kernel(self.X[idx[start:start + step]], self.X)
            return out
        self.clock += 1
        slots = self.slot_of[idx]
        missing = idx[slots < 0]
        if missing.size:
            missing = np.unique(missing)
            new_slots = self._allocate(missing.size, protect=slots[slots >= 0])
            old = self.owner[new_slots]
            self.slot_of[old[old >= 0]] = -1
            step = max(1, int(2**21 // max(self.X.shape[0], 1)))  # ≤ 16 MiB of float64 at once
            for start in range(0, missing.size, step):
                rows = missing[start:start + step]
                self.store[new_slots[start:start + step]] = self.kernel(self.X[rows], self.X)
            self.owner[new_slots] = missing
            self.slot_of[missing] = new_slots
            self.computed_rows += missing.size
            slots = self.slot_of[idx]
        self.last_used[slots] = self.clock
        if slots.size and np.all(np.diff(slots) == 1):  # consecutive slots: a view, no copy
            return self.store[slots[0]:slots[0] + slots.size]
        return self.store[slots]

    def _allocate(self, k: int, protect: np.ndarray) -> np.ndarray:
        if self.n_free >= k:
            start = self.capacity - self.n_free
            self.n_free -= k
            return np.arange(start, start + k)
        self.n_free = 0
        age = self.last_used.copy()
        age[protect] = np.iinfo(np.int64).max  # never evict rows requested now
        return np.argpartition(age, k - 1)[:k]
