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
rows are processed in chunks whose buffer is allocated once and reused by every L-BFGS-B
iteration; q_{c-1} of the scoring points, squared norms and class blocks are computed once per
batch, and only the active features (v_d > 0) enter the products. Points and candidates are
grouped by class, so R_{n, y_j} = base_n + extra_n 1{y_n = y_j} (base_n = -omega_n / Z_n,
extra_n = omega_n / q_n) is a constant plus diagonal class blocks. Per chunk that gives three
passes over K after the exponential, all matrix products:

    (K W)_{nk}  = K[:, class k] w[class k]                     (one product per class)
    P           = [x_n; 1]^T (base o K) + sum_k [x_n; 1]^T_{class k} (extra o K)_{class k blocks}
                = [X^T B; 1^T B]  with B_nj = K_nj R_{n, y_j}

so (K^T R)_{j, y_j} is the last row of P and the v-gradient's sum over (x - s)^2 expands into
X^2 terms (a per-point sum), the cross term sum_j (X^T B)_{dj} w_j s_jd and S^2 terms.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Default bytes for one chunk buffer (a few chunk rows times all candidates): small enough for
#: the passes after the product that fills it to read it from L2 (512 KiB measured fastest on
#: Checker, 3,480 x 1,000, and within 10% of the best on Digits)
CHUNK_BYTES = 1 << 19


def _exp_floor(dtype) -> float:
    """The smallest exponent used: exp(floor) times a weight stays a normal number."""
    return -60.0 if np.dtype(dtype) == np.float32 else -500.0


def exp_floored(E, floor):
    """E <- exp(max(E, floor)) in place. Kernel values below exp(floor) are negligible next to
    q >= p0_k, but as subnormal numbers they would slow every later product by an order of
    magnitude. float32 arrays (C-contiguous) go through one compiled pass, float64 through
    numpy."""
    if E.dtype == np.float32 and E.flags.c_contiguous:
        _exp_floored_f32(E.reshape(-1), np.float32(floor))
    else:
        np.maximum(E, floor, out=E)
        np.exp(E, out=E)
    return E


_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693359375)        # ln 2 split in two (Cody-Waite): k * _LN2_HI is exact
_LN2_LO = np.float32(-2.12194440e-4)


@njit(cache=True, fastmath={"nnan", "ninf", "nsz", "contract"})
def _exp_floored_f32(f, floor):
    """f[t] <- exp(max(f[t], floor)) for float32, floor >= -87 (results stay normal numbers),
    in one loop the compiler vectorises: exp(x) = 2^k exp(r), k = round(x / ln 2),
    |r| <= ln 2 / 2, exp(r) by its Taylor polynomial to degree 7 (relative error below 1e-7,
    about numpy's float32 exp), 2^k added to the exponent bits. Without a floor pass and with
    wider vectors this is about twice as fast as np.maximum + np.exp."""
    bits = f.view(np.int32)
    for t in range(f.size):
        x = max(f[t], floor)
        k = np.floor(x * _LOG2E + np.float32(0.5))
        r = (x - k * _LN2_HI) - k * _LN2_LO
        f[t] = np.float32(1.0) + r * (np.float32(1.0) + r * (np.float32(1 / 2) + r * (
            np.float32(1 / 6) + r * (np.float32(1 / 24) + r * (np.float32(1 / 120) + r * (
                np.float32(1 / 720) + r * np.float32(1 / 5040)))))))
        bits[t] = bits[t] + (np.int32(k) << 23)


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

    Internally the candidates are grouped by class (a stable sort; ``w`` and its gradient are
    permuted on the way in and out), so that everything indexed by a candidate's class is a
    contiguous block of columns.
    """

    def __init__(self, X, y, q0, omega, S, ys, n_classes, lambda_v, lambda_w, alpha_v, alpha_w,
                 dtype=np.float64, chunk_bytes=CHUNK_BYTES):
        self.dtype = np.dtype(dtype)
        self.K = int(n_classes)
        center = S.mean(axis=0) if S.shape[0] else np.zeros(X.shape[1])
        y, ys = np.asarray(y, dtype=np.intp), np.asarray(ys, dtype=np.intp)
        # scoring points and candidates grouped by class (stable sorts): the loss is a sum over
        # points, and w and its gradient are permuted on the way in and out
        by_class = np.argsort(y, kind="stable")
        self.order = np.argsort(ys, kind="stable")
        # distances are shift invariant; centring keeps the expanded form accurate
        self.X = np.ascontiguousarray((X - center)[by_class], dtype=np.float64)
        self.S = np.ascontiguousarray((S - center)[self.order], dtype=np.float64)
        self.X2 = self.X ** 2
        self.S2 = self.S ** 2
        self.y = y[by_class]
        self.ys = ys[self.order]
        self.n, self.D = self.X.shape
        self.J = self.S.shape[0]
        classes = np.arange(self.K + 1)
        self.row_segments = np.searchsorted(self.y, classes)   # points of class k: [a_k, a_k+1)
        self.col_segments = np.searchsorted(self.ys, classes)  # candidates of class k
        q0 = np.asarray(q0, float)[by_class]
        self.q0_own = q0[np.arange(self.n), self.y]
        self.z0 = q0.sum(axis=1)
        self.omega = np.asarray(omega, float)[by_class]
        self.lam = (float(lambda_v), float(lambda_w), float(alpha_v), float(alpha_w))
        self.rows = int(max(1, min(self.n, chunk_bytes // max(1, self.J * self.dtype.itemsize))))
        # buffers reused across evaluations
        self._buf = np.empty((self.rows, self.J), dtype=self.dtype)
        self._kw = np.empty((self.rows, self.K), dtype=self.dtype)
        self._active_key = None
        self.n_evaluations = 0
        self.floor = _exp_floor(self.dtype)

    # -- the parts that depend only on the active feature set --------------------------------
    def _active(self, active):
        """Feature columns of the active features (v_d > 0), cached until the set changes. An
        inactive feature contributes nothing: its kernel factor exp(-1/2 v_d^2 (x_d - s_d)^2)
        is 1 and the likelihood part of dl/dv_d carries the factor v_d = 0, so leaving it out
        of every product is exact, not an approximation."""
        key = active.tobytes()
        if key != self._active_key:
            self._active_key = key
            self._Xa = np.ascontiguousarray(self.X[:, active])
            self._X2a = np.ascontiguousarray(self.X2[:, active])
            self._Sa = np.ascontiguousarray(self.S[:, active])
            self._S2a = np.ascontiguousarray(self.S2[:, active])
            da = int(active.sum())
            self._left = np.empty((self.n, da + 2), dtype=self.dtype)
            self._left[:, da] = 1.0
            self._right = np.empty((da + 2, self.J), dtype=self.dtype)
            self._right[:da] = self._Sa.T
            self._right[da + 1] = 1.0
            # [x_n; 1] per point, scaled by a per-point factor before the products with K
            self._xt = np.vstack([self._Xa.T, np.ones(self.n)]).astype(self.dtype)
            self._lhs = np.empty((da + 1, self.rows), dtype=self.dtype)
            self._P = np.empty((da + 1, self.J), dtype=self.dtype)
        return self._Xa, self._X2a, self._Sa, self._S2a

    def memory_bytes(self) -> int:
        """Bytes of the per-chunk buffer (the bound on kernel memory)."""
        return self._buf.nbytes

    def __call__(self, theta):
        self.n_evaluations += 1
        theta = np.asarray(theta, dtype=np.float64)
        D, K = self.D, self.K
        v = theta[:D]
        w = theta[D:][self.order]                            # grouped by class
        wd = w.astype(self.dtype)
        lam_v, lam_w, al_v, al_w = self.lam
        grad = np.zeros_like(theta)
        active = v > 0
        Xa, X2a, Sa, S2a = self._active(active)
        va2 = v[active] ** 2
        da = va2.size
        left, right, xt, lhs, P = self._left, self._right, self._xt, self._lhs, self._P
        rs, cs = self.row_segments, self.col_segments
        # E_nj = -1/2 sum_d v_d^2 (x_nd - s_jd)^2 = [x v^2, 1, -a/2] . [s, -b/2, 1]
        left[:, :da] = Xa * va2
        left[:, da + 1] = -0.5 * (X2a @ va2)
        right[da] = -0.5 * (S2a @ va2)
        loss = 0.0
        row_term = np.zeros(da)
        for r0 in range(0, self.n, self.rows):
            r1 = min(self.n, r0 + self.rows)
            m = r1 - r0
            E = self._buf[:m]
            np.matmul(left[r0:r1], right, out=E)
            exp_floored(E, self.floor)                       # K_nj (eq_kernel)
            kw = self._kw[:m]                                # (K W)_nk: one product per class
            for k in range(K):
                np.matmul(E[:, cs[k]:cs[k + 1]], wd[cs[k]:cs[k + 1]], out=kw[:, k])
            KW = kw.astype(np.float64)
            yc = self.y[r0:r1]
            own_kw = KW[np.arange(m), yc]
            q = self.q0_own[r0:r1] + own_kw                  # q_{c,y_n}(x_n)
            Zk = KW.sum(axis=1)
            Z = self.z0[r0:r1] + Zk                          # sum_l q_{c,l}(x_n)
            om = self.omega[r0:r1]
            loss -= float(om @ (np.log(q) - np.log(Z)))
            # R_nk = base_n + extra_n 1{k = y_n}
            base, extra = -om / Z, om / q
            row_term += X2a[r0:r1].T @ (base * Zk + extra * own_kw)   # sum_k R_nk (K W)_nk
            # P = [x; 1]^T B with B_nj = K_nj R_{n, y_j}: the base part over all pairs, the
            # extra part only where the point's class equals the candidate's (class blocks)
            np.multiply(xt[:, r0:r1], base.astype(self.dtype), out=lhs[:, :m])
            if r0 == 0:
                np.matmul(lhs[:, :m], E, out=P)
            else:
                P += lhs[:, :m] @ E
            np.multiply(xt[:, r0:r1], extra.astype(self.dtype), out=lhs[:, :m])
            for k in range(K):
                a, b = max(rs[k], r0) - r0, min(rs[k + 1], r1) - r0
                if a < b and cs[k] < cs[k + 1]:
                    P[:, cs[k]:cs[k + 1]] += lhs[:, a:b] @ E[a:b, cs[k]:cs[k + 1]]
        own = P[da].astype(np.float64)                       # (K^T R)_{j, y_j}
        if da:
            # dl/dv_d = v_d sum_{n,j} B_nj w_j (x_nd - s_jd)^2, the square expanded
            cross = np.einsum("dj,jd->d", P[:da], Sa * w[:, None])
            col_term = S2a.T @ (w * own)
            grad[:D][active] = v[active] * (row_term - 2.0 * cross + col_term)
        grad[D:][self.order] = -own
        # elastic-net penalties (parameters are non-negative, so |.| is the identity)
        loss += lam_v * (0.5 * al_v * v @ v + (1 - al_v) * v.sum())
        loss += lam_w * (0.5 * al_w * w @ w + (1 - al_w) * w.sum())
        grad[:D] += lam_v * (al_v * v + (1 - al_v))
        grad[D:] += lam_w * (al_w * theta[D:] + (1 - al_w))
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
        np.minimum(E, 0.0, out=E)
        exp_floored(E, _exp_floor(np.dtype(dtype)))
        out[r0:r0 + rows] += E @ Wk
    return out
