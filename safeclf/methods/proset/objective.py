"""The batch objective: penalised, class-reweighted negative log-likelihood and its gradient.

For batch c with candidates S_c (J prototypes x_{s_j} with classes y_{s_j}) and scoring set
T_c = {1..N} minus S_c, the paper's objective (eq_log_likelihood) is

    l(v, w) = -1/N sum_k N_k / (N_k - J_{c,k}) sum_{n in T_c} 1{y_n = k} log p_{c,k}(x_n)
              + lambda_v (alpha_v/2 |v|_2^2 + (1 - alpha_v) |v|_1)
              + lambda_w (alpha_w/2 |w|_2^2 + (1 - alpha_w) |w|_1)

with p_{c,k} = q_{c,k} / sum_l q_{c,l} (eq_pckx), q_{c,k}(x) = q_{c-1,k}(x)
+ sum_j 1{y_{s_j} = k} w_j K_v(x - x_{s_j}) (eq_qckx) and the unscaled Gaussian kernel
K_v(z) = exp(-1/2 sum_d (v_d z_d)^2) (eq_kernel). The gradient is the paper's
(eq_p_partial_v, eq_p_partial_w, eq_l_partial_v) written in matrix form:

    R_{nk}      = omega_n (1{k = y_n} / q_n - 1 / Z_n)         (omega_n includes 1/N)
    dl/dw_j     = -(K^T R)_{j, y_j}                            + lambda_w (alpha_w w_j + 1 - alpha_w)
    dl/dv_d     = v_d sum_{n,j} R_{n, y_j} w_j K_{nj} (x_{nd} - s_{jd})^2
                                                               + lambda_v (alpha_v v_d + 1 - alpha_v)

The kernel matrix K (scoring points x candidates) is the whole cost. It is never held in full:
rows are processed in chunks whose buffers are allocated once and reused by every L-BFGS-B
iteration; q_{c-1} of the scoring points, squared norms and class indicators are computed once
per batch. The squared distance is expanded into one matrix product per chunk (the ``augmented``
matrices below), and the v-gradient's sum over (x - s)^2 into products with K that are already
needed (``K W`` and ``K^T R``) plus one extra product, so no second N x J pass is made.
"""

from __future__ import annotations

import numpy as np

#: Default bytes for one chunk buffer (a few chunk rows times all candidates); fits in L2/L3.
CHUNK_BYTES = 1 << 21


def _exp_floor(dtype) -> float:
    """The smallest exponent used: exp(floor) times a weight stays a normal number."""
    return -60.0 if np.dtype(dtype) == np.float32 else -500.0


class BatchObjective:
    """Callable ``theta -> (l, grad)`` for one batch, ``theta = [v (D), w (J)]``.

    Parameters
    ----------
    X : ndarray (N_T, D)     scoring points (T_c)
    y : ndarray (N_T,)       their class codes 0..K-1
    q0 : ndarray (N_T, K)    q_{c-1,k}(x_n), the unscaled probabilities of the earlier batches
    omega : ndarray (N_T,)   per-point weight N_{y_n} / (N_{y_n} - J_{c,y_n}) / N
    S : ndarray (J, D)       candidate features
    ys : ndarray (J,)        candidate class codes
    """

    def __init__(self, X, y, q0, omega, S, ys, n_classes, lambda_v, lambda_w, alpha_v, alpha_w,
                 dtype=np.float64, chunk_bytes=CHUNK_BYTES):
        self.dtype = np.dtype(dtype)
        center = S.mean(axis=0) if S.shape[0] else np.zeros(X.shape[1])
        # distances are shift invariant; centring keeps the expanded form accurate
        self.X = np.ascontiguousarray(X - center, dtype=np.float64)
        self.S = np.ascontiguousarray(S - center, dtype=np.float64)
        self.X2 = self.X ** 2
        self.S2 = self.S ** 2
        self.y = np.asarray(y, dtype=np.intp)
        self.ys = np.asarray(ys, dtype=np.intp)
        self.K = int(n_classes)
        self.n, self.D = self.X.shape
        self.J = self.S.shape[0]
        self.q0_own = np.asarray(q0, float)[np.arange(self.n), self.y]
        self.z0 = np.asarray(q0, float).sum(axis=1)
        self.omega = np.asarray(omega, float)
        self.onehot_s = np.zeros((self.J, self.K))
        self.onehot_s[np.arange(self.J), self.ys] = 1.0
        self.lam = (float(lambda_v), float(lambda_w), float(alpha_v), float(alpha_w))
        self.rows = int(max(1, min(self.n, chunk_bytes // max(1, self.J * self.dtype.itemsize))))
        # buffers reused across evaluations
        self._buf = np.empty((self.rows, self.J), dtype=self.dtype)
        self._buf2 = None
        self._active_key = None
        self.n_evaluations = 0
        self.floor = _exp_floor(self.dtype)

    # -- the parts that depend only on the active feature set --------------------------------
    def _active(self, active):
        key = active.tobytes()
        if key != self._active_key:
            self._active_key = key
            self._Xa = np.ascontiguousarray(self.X[:, active])
            self._X2a = np.ascontiguousarray(self.X2[:, active])
            self._Sa = np.ascontiguousarray(self.S[:, active])
            self._S2a = np.ascontiguousarray(self.S2[:, active])
            da = int(active.sum())
            # fused path: one product K @ [W, W_k * S] gives K W and K (W_k * S) together;
            # direct path: K o (R W^T) times X; pick the cheaper per chunk
            self._fused = self.K * (da + 1) <= da + 2 * self.K + 4
            self._left = np.empty((self.n, da + 2), dtype=self.dtype)
            self._left[:, da] = 1.0
            self._right = np.empty((da + 2, self.J), dtype=self.dtype)
            self._right[da + 1] = 1.0
            if not self._fused and self._buf2 is None:
                self._buf2 = np.empty((self.rows, self.J), dtype=self.dtype)
        return self._Xa, self._X2a, self._Sa, self._S2a

    def memory_bytes(self) -> int:
        """Bytes of the per-chunk buffers (the bound on kernel memory)."""
        return self._buf.nbytes + (0 if self._buf2 is None else self._buf2.nbytes)

    def __call__(self, theta):
        self.n_evaluations += 1
        theta = np.asarray(theta, dtype=np.float64)
        D, J, K = self.D, self.J, self.K
        v, w = theta[:D], theta[D:]
        lam_v, lam_w, al_v, al_w = self.lam
        grad = np.zeros_like(theta)
        active = v > 0
        Xa, X2a, Sa, S2a = self._active(active)
        va2 = v[active] ** 2
        da = va2.size
        left, right = self._left, self._right
        # E_nj = -1/2 sum_d v_d^2 (x_nd - s_jd)^2 = [x v^2, 1, -a/2] . [s, -b/2, 1]
        left[:, :da] = Xa * va2
        left[:, da + 1] = -0.5 * (X2a @ va2)
        right[:da] = Sa.T
        right[da] = -0.5 * (S2a @ va2)
        W = self.onehot_s * w[:, None]                       # J x K, w_j in column y_j
        if self._fused:
            Wbig = np.concatenate([W] + [W[:, [k]] * Sa for k in range(K)], axis=1)
        else:
            Wbig = W
        Wbig = Wbig.astype(self.dtype, copy=False)
        Wt = np.ascontiguousarray(W.T, dtype=self.dtype)
        loss = 0.0
        KtR = np.zeros((J, K))
        row_term = np.zeros(da)
        cross = np.zeros(da)
        XtA = None if self._fused else np.zeros((da, J))
        for r0 in range(0, self.n, self.rows):
            r1 = min(self.n, r0 + self.rows)
            m = r1 - r0
            E = self._buf[:m]
            np.matmul(left[r0:r1], right, out=E)
            # kernel values below exp(floor) are negligible next to q >= p0_k, but as
            # subnormal numbers they would slow every later product by an order of magnitude
            np.maximum(E, self.floor, out=E)
            np.exp(E, out=E)                                 # K_nj (eq_kernel)
            G = E @ Wbig
            KW = G[:, :K].astype(np.float64)
            idx = np.arange(m)
            yc = self.y[r0:r1]
            q = self.q0_own[r0:r1] + KW[idx, yc]             # q_{c,y_n}(x_n)
            Z = self.z0[r0:r1] + KW.sum(axis=1)              # sum_l q_{c,l}(x_n)
            om = self.omega[r0:r1]
            loss -= float(om @ (np.log(q) - np.log(Z)))
            R = np.outer(-om / Z, np.ones(K))
            R[idx, yc] += om / q
            Rd = R.astype(self.dtype)
            KtR += E.T @ Rd
            row_term += X2a[r0:r1].T @ np.einsum("nk,nk->n", R, KW)
            if self._fused:
                GS = G[:, K:].reshape(m, K, da).astype(np.float64)
                cross += np.einsum("nk,nkd,nd->d", R, GS, Xa[r0:r1])
            else:
                A = self._buf2[:m]
                np.matmul(Rd, Wt, out=A)                     # R_{n, y_j} w_j
                A *= E
                XtA += Xa[r0:r1].T @ A
        own = KtR[np.arange(J), self.ys]                     # (K^T R)_{j, y_j}
        col_term = S2a.T @ (w * own)
        if not self._fused:
            cross = np.einsum("dj,jd->d", XtA, Sa)
        grad[:D][active] = v[active] * (row_term - 2.0 * cross + col_term)
        grad[D:] = -own
        # elastic-net penalties (parameters are non-negative, so |.| is the identity)
        loss += lam_v * (0.5 * al_v * v @ v + (1 - al_v) * v.sum())
        loss += lam_w * (0.5 * al_w * w @ w + (1 - al_w) * w.sum())
        grad[:D] += lam_v * (al_v * v + (1 - al_v))
        grad[D:] += lam_w * (al_w * w + (1 - al_w))
        return loss, grad


def kernel_sum(X, prototypes, features, weights, onehot, out, dtype=np.float64,
               chunk_bytes=CHUNK_BYTES):
    """Add sum_j onehot_{jk} w_j K_v(x_n - s_j) to ``out`` (N x K) for one batch, in chunks.

    ``prototypes`` (J x D_b) and ``features`` (the active v_d, length D_b) are already reduced
    to the batch's active features; ``X`` is reduced the same way by the caller.
    """
    J = prototypes.shape[0]
    if J == 0:
        return out
    v2 = np.asarray(features, float) ** 2
    center = prototypes.mean(axis=0)
    S = prototypes - center
    Xc = X - center
    da = S.shape[1]
    right = np.empty((da + 2, J), dtype=dtype)
    right[:da] = S.T
    right[da] = -0.5 * ((S ** 2) @ v2)
    right[da + 1] = 1.0
    Wk = (onehot * np.asarray(weights, float)[:, None]).astype(dtype)
    rows = int(max(1, chunk_bytes // max(1, J * np.dtype(dtype).itemsize)))
    for r0 in range(0, X.shape[0], rows):
        xc = Xc[r0:r0 + rows]
        left = np.empty((xc.shape[0], da + 2), dtype=dtype)
        left[:, :da] = xc * v2
        left[:, da] = 1.0
        left[:, da + 1] = -0.5 * ((xc ** 2) @ v2)
        E = left @ right
        np.clip(E, _exp_floor(np.dtype(dtype)), 0.0, out=E)
        np.exp(E, out=E)
        out[r0:r0 + rows] += E @ Wk
    return out
