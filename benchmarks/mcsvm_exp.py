"""The RBF kernel row's exponential: the branch-free float32 one
``safeclf/methods/mcsvm/kernels.py`` uses (``exp_rows`` over ``_exp32``: the exponent rounded to
float32, range reduction, degree-7 Taylor polynomial, 2ᵏ from exponent bits, compiled with
fastmath so that it becomes vector instructions) against the library exponential called per
value, which the kernel row used before, measured in the same run.

Three timings over the same ``--n`` non-positive float64 values (−γ‖x − z‖² of Gaussian
data, as a kernel row holds them), written to a float32 row as the kernel cache stores them:

* ``rows``: ``kernels.exp_rows``, what the kernel row uses;
* ``libm``: a compiled loop calling ``np.exp`` per value (numba's libm exponential);
* ``numpy``: ``np.exp`` on the whole array (NumPy's vectorised exponential), for reference.

Each is run ``--repeat`` times interleaved (after one warm-up that compiles); medians and the
ratios rows/libm and rows/numpy are printed with the load average, and the largest absolute
difference between rows and libm (the values are in (0, 1]; float32 rounding alone is 6e-8).
Measured with the float64 degree-11 polynomial this replaced (load 0.9, 5,000,000 values,
5 repeats): rows 22.9 ms, libm 33.5 ms, numpy 21.4 ms. Issue 37 moved the polynomial to float32
(twice the lanes per vector instruction, a shorter polynomial) and fused it into the row's
last pass over the points; largest absolute error against float64 6e-8 (tests/methods).

    .venv/bin/python benchmarks/mcsvm_exp.py [--n 5000000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit

from safeclf.methods.mcsvm.kernels import exp_rows


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

    def rows():
        exp_rows(v0, out)

    def libm():
        v = v0.copy()  # the same copy as rows', so both time the same work
        _exp_libm(v, out)

    def numpy():
        v = v0.copy()
        out[:] = np.exp(v, out=v)

    runs = {"rows": rows, "libm": libm, "numpy": numpy}
    for fn in runs.values():
        fn()  # compile / warm up
    times = {k: [] for k in runs}
    for _ in range(args.repeat):
        for k, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    a, b = np.empty(args.n, dtype=np.float32), np.empty(args.n)
    exp_rows(v0, a)
    _exp_libm(v0, b)
    err = float(np.max(np.abs(a - b)))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; n = {args.n:,}, "
          f"{args.repeat} interleaved repeats, medians")
    for k, m in med.items():
        print(f"  {k:6s} {1e3 * m:8.1f} ms   (min {1e3 * min(times[k]):.1f}, "
              f"max {1e3 * max(times[k]):.1f})")
    pairs = [h / lo for h, lo in zip(times["rows"], times["libm"], strict=True)]
    print(f"  rows / libm  = {med['rows'] / med['libm']:.2f} (pairwise median "
          f"{np.median(pairs):.2f})")
    print(f"  rows / numpy = {med['rows'] / med['numpy']:.2f}")
    print(f"  max absolute difference rows (float32) vs libm (float64): {err:.1e}")


if __name__ == "__main__":
    main()
