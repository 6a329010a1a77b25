"""Compile safeclf's numba code into the user's cache, so that no run waits for the compiler.

    python -m safeclf.cli.warm

``make install`` runs it once after installing. It fits each estimator with compiled code on a
few hundred synthetic rows, in the configurations the built-in configs use (ramp on dense and
sparse rows, MC-SVM's dual solver on the whole problem and on subproblems, RBF and polynomial
kernels, proset), computes one exact comparison of two groups' rates (certification's) and
runs ramp's working-set polishes once, with and without the multiplier (they run on large
problems only, so no few-hundred-row fit reaches them), which compiles every function they
call into numba's on-disk cache (``NUMBA_CACHE_DIR``; by default
``$XDG_CACHE_HOME/safeclf/numba/<fingerprint of the compiled modules>``, never the source
tree).
A later process loads the compiled code instead of compiling it (benchmarks/NOTES.md, issue
37: about 19 s of compiling on a first run before, well under 1 s after).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np


def warm() -> float:
    """Fit every compiled estimator once on small synthetic data; returns the seconds numba
    spent compiling (0 when the cache already held everything)."""
    import scipy.sparse as sp

    from safeclf._utils import jit
    from safeclf.estimators import MultiCostSVM, ProsetClassifier, RampClassifier
    from safeclf.guarantees import pairtest

    jit.compile_seconds()  # numba is imported by now: start listening
    rng = np.random.default_rng(0)
    groups = rng.choice(["A", "B"], size=300)
    y = (rng.random(300) < np.where(groups == "B", 0.6, 0.3)).astype(int)
    X = rng.normal(size=(300, 3)) + np.c_[1.2 * (2 * y - 1), 0.8 * (groups == "B"), 0 * y]
    fair = [{"rate": "fairness_ratio", "kappa": 0.8, "privileged": "B"}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few hundred rows and few iterations: not converged
        for rows in (X, sp.csr_matrix(X)):
            RampClassifier(constraints=fair, lam=0.1, max_mm_iter=2,
                           random_state=0).fit(rows, y, groups=groups)
        for params in ({"kernel": "rbf"}, {"kernel": "rbf", "working_set": 20},
                       {"kernel": "poly", "degree": 2, "coef0": -1.0, "solver": "dual"}):
            MultiCostSVM(n_tau=3, calibration="none", **params).fit(X[:80], y[:80])
        ProsetClassifier(n_batches=1, n_candidates=50, random_state=0).fit(X, y)
        RampClassifier.warm_compiled_code()
        pairtest.p_values(30, 100, 40, 120, 0.8)  # certification's exact comparison of rates
    return jit.compile_seconds() or 0.0


def main() -> int:
    from safeclf._utils import jit

    t0 = time.perf_counter()
    compiled = warm()
    print(f"numba: {compiled:.1f} s compiling, {time.perf_counter() - t0:.1f} s in all "
          f"(cache: {jit.cache_dir()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
