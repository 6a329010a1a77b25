"""The RBF kernel row's exponential: the library exponential that
``safeclf/methods/mcsvm/kernels.py`` uses against the hand-written vectorisable one it used
before (kept here as the candidate: range reduction, degree-9 Taylor polynomial, 2^k from
exponent bits), measured in the same run.

Three timings over the same ``--n`` non-positive float64 values (−γ‖x − z‖² of Gaussian
data, as a kernel row holds them), written to a float32 row as the kernel cache stores them:

* ``hand``: ``_exp_nonpositive`` (compiled);
* ``libm``: a compiled loop calling ``np.exp`` per value (numba's libm exponential), what
  the kernel row uses;
* ``numpy``: ``np.exp`` on the whole array (NumPy's vectorised exponential), for reference.

Each is run ``--repeat`` times interleaved (after one warm-up that compiles); medians and the
ratios hand/libm and hand/numpy are printed with the load average, the machine being shared.
Also printed: the largest relative difference between hand and libm (both before the float32
rounding). The hand-written exponential would be worth having only if hand/libm < 1; measured
(load average 7.3, 5e6 values, 7 repeats): hand 94.6 ms, libm 67.4 ms, numpy 72.3 ms, hand/libm
1.40, largest relative difference 9.4e-12, so the kernel row uses the library exponential.

    .venv/bin/python benchmarks/mcsvm_exp.py [--n 5000000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit

import safeclf  # noqa: F401  (numba's cache folder, outside the source tree)

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93145751953125e-1  # ln 2 split in two (Cody–Waite) for an exact range reduction
_LN2_LO = 1.42860682030941723212e-6


@njit(cache=True)
def _exp_nonpositive(v, out):
    """out[t] = exp(v[t]) for v ≤ 0, in a loop the compiler vectorises (libm's exp is scalar):
    exp(v) = 2^k · exp(r), k = round(v / ln 2), |r| ≤ ln 2 / 2, exp(r) by its Taylor polynomial
    to degree 9 (relative error below 1e-11, far under the float32 rounding of the cache);
    2^k is built from its exponent bits. ``v`` is overwritten."""
    bits = np.empty(v.size, dtype=np.int64)
    scale = bits.view(np.float64)
    for t in range(v.size):
        x = max(v[t], -708.0)  # exp(−708) ≈ 3e−308: 0 in float32
        k = np.floor(x * _LOG2E + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        v[t] = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (
            1 / 720 + r * (1 / 5040 + r * (1 / 40320 + r / 362880))))))))
        bits[t] = (np.int64(k) + 1023) << 52
    for t in range(v.size):
        out[t] = v[t] * scale[t]


@njit(cache=True)
def _exp_libm(v, out):
    for t in range(v.size):
        out[t] = np.exp(v[t])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, 2))
    v0 = -0.5 * np.sum((X - X[0]) ** 2, axis=1)  # one RBF row, γ = 0.5
    out = np.empty(args.n, dtype=np.float32)

    def hand():
        _exp_nonpositive(v0.copy(), out)  # v is overwritten: a fresh copy each time

    def libm():
        v = v0.copy()  # the same copy as hand's, so both time the same work
        _exp_libm(v, out)

    def numpy():
        v = v0.copy()
        out[:] = np.exp(v, out=v)

    runs = {"hand": hand, "libm": libm, "numpy": numpy}
    for fn in runs.values():
        fn()  # compile / warm up
    times = {k: [] for k in runs}
    for _ in range(args.repeat):
        for k, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    a, b = np.empty(args.n), np.empty(args.n)
    _exp_nonpositive(v0.copy(), a)
    _exp_libm(v0, b)
    rel = float(np.max(np.abs(a - b) / np.maximum(b, np.finfo(float).tiny)))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; n = {args.n:,}, "
          f"{args.repeat} interleaved repeats, medians")
    for k, m in med.items():
        print(f"  {k:6s} {1e3 * m:8.1f} ms   (min {1e3 * min(times[k]):.1f}, "
              f"max {1e3 * max(times[k]):.1f})")
    pairs = [h / l for h, l in zip(times["hand"], times["libm"], strict=True)]
    print(f"  hand / libm  = {med['hand'] / med['libm']:.2f} (pairwise median "
          f"{np.median(pairs):.2f})")
    print(f"  hand / numpy = {med['hand'] / med['numpy']:.2f}")
    print(f"  max relative difference hand vs libm: {rel:.1e}")


if __name__ == "__main__":
    main()
