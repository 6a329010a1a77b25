"""robust_socp performance (issue 3): the ν function and the MM-SBMV-I fast path.

1. ν for 100,000 random triples (target < 2 s), against the paper's own procedure (binary
   search on k with a 1-D minimisation inside, section 2.1.1) timed per triple in the same run.
All times are CPU seconds of this process (the machine is shared; wall time is not a measure).
2. MM-SBMV-I with m = 2,000 points, n = 20 features: the direct Clarabel path against the
   readable cvxpy model, end to end (problem data to solution), same optimum (target ≥ 3×,
   objectives within 1e-6 relative).
3. Seconds of the direct path for m ∈ {500, 2000, 8000, 32000} (near-linear growth) and the
   process's peak resident memory after each size.

Run: .venv/bin/python benchmarks/robust_socp.py [--quick]   (exit status 1 if a target is missed)
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _peak import peak_mib
from _record import figure
from scipy.optimize import minimize_scalar

from safeclf.methods.robust_socp import Uncertainty
from safeclf.methods.robust_socp.clarabel_path import solve_clarabel
from safeclf.methods.robust_socp.cvxpy_model import solve_cvxpy
from safeclf.methods.robust_socp.formulations import problem_data
from safeclf.methods.robust_socp.nu import h, nu


def random_triples(k, rng):
    s = rng.uniform(0.0, 1.0, k)
    a, b = rng.uniform(-1, 1, (2, k)) * s
    return np.minimum(a, b), np.maximum(a, b), s


def nu_paper(lo, hi, s, tol=1e-6):
    """Section 2.1.1 as written: bisection on k in [√(σ̂² − µ̂min²), 1]; for each k, the
    minimum over t of f(t; µ̂, σ̂, k) by a bounded 1-D minimisation, at 11 means in [µ̂⁻, µ̂⁺]."""
    mus = np.linspace(lo, hi, 11)

    grid = np.linspace(-7, 5, 49)

    def ok(k):
        for mu in mus:
            for side in (1.0, -1.0):
                def f(lt, mu=mu, side=side):
                    t = side * np.exp(lt)
                    return k * k * t * t / 2 + max(lo * t, hi * t) - float(h(t, mu, s))
                # f is not convex in log t: bracket its minimum on a grid first
                j = int(np.argmin([f(g) for g in grid]))
                lo_, hi_ = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
                if minimize_scalar(f, bounds=(lo_, hi_), method="bounded",
                                   options={"xatol": 1e-9}).fun < 0:
                    return False
        return True

    k_lo = np.sqrt(max(s * s - min(abs(lo), abs(hi)) ** 2, 0.0))
    k_hi = 1.0
    while k_hi - k_lo > tol:
        k = (k_lo + k_hi) / 2
        k_lo, k_hi = (k_lo, k) if ok(k) else (k, k_hi)
    return k_hi


def uncertain_problem(m, n, rng, spread="uniform"):
    """Two classes in Rⁿ, boxes of half-width s ~ U(0.1, 0.5), mean bounds ±0.1 s and
    E X² ≤ mean² + (τ s)²: τ² = 1/3 (uniform noise in the box: every slab of the box cuts
    the Bernstein ellipsoids at ε = 0.1), τ ~ U(0.02, 0.6) per entry ("mixed") or
    τ ~ U(0.02, 0.1) with exact means ("narrow": small variance in a wide box, no slab
    cuts; with mean bounds the bound on E X² is loose after normalisation and most slabs
    cut)."""
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    mu = y[:, None] * (3.0 / np.sqrt(n)) + 0.7 * rng.normal(size=(m, n))
    s = rng.uniform(0.1, 0.5, (m, n))
    width = 0.0 if spread == "narrow" else 0.1
    lo, hi = mu - width * s, mu + width * s
    tau = {"uniform": np.sqrt(1 / 3), "mixed": rng.uniform(0.02, 0.6, (m, n)),
           "narrow": rng.uniform(0.02, 0.1, (m, n))}[spread]
    unc = Uncertainty.from_bounds(mu - s, mu + s, lo, hi,
                                  np.maximum(lo**2, hi**2) + (tau * s) ** 2)
    return unc, mu, y


def main(quick: bool = False):
    rng = np.random.default_rng(0)
    print("== ν function")
    N = 100_000
    lo, hi, s = random_triples(N, rng)
    nu(lo[:1000], hi[:1000], s[:1000])  # warm up
    t0 = time.process_time()
    v = nu(lo, hi, s)
    t_fast = time.process_time() - t0
    k_ref = 10 if quick else 40
    t0 = time.process_time()
    ref = np.array([nu_paper(lo[i], hi[i], s[i]) for i in range(k_ref)])
    t_ref = (time.process_time() - t0) / k_ref
    print(f"nu, {N:,} random triples: {t_fast:.2f} s (target < 2 s: "
          f"{'met' if t_fast < 2 else 'NOT met'})")
    met = figure("nu of 100,000 triples", t_fast, 2, "<=", "s")
    print(f"paper's bisection + 1-D minimisation: {t_ref * 1e3:.1f} ms per triple "
          f"(measured on {k_ref}) -> {t_ref * N:.0f} s for {N:,}; ratio {t_ref * N / t_fast:.0f}x")
    print(f"largest |nu - bisection| on those {k_ref}: {np.max(np.abs(v[:k_ref] - ref)):.1e} "
          "(the bisection stops at 1e-6 and checks 11 means only)")

    print("\n== MM-SBMV-I, m = 2,000, n = 20, ε = 0.1: direct Clarabel vs cvxpy, end to end "
          "(problem data to solution; CPU seconds of this process)")
    for spread in ("uniform", "mixed", "narrow"):
        unc, X, y = uncertain_problem(2000, 20, rng, spread)
        data = problem_data("MM-SBMV-I", unc, X, y, 0.1)
        cut = np.mean((data.mean_hi + data.D > data.upper) | (data.mean_lo - data.D < data.lower))
        times = {}
        for name, solve in (("clarabel", solve_clarabel), ("cvxpy", solve_cvxpy)):
            t0 = time.process_time()
            sol = solve(problem_data("MM-SBMV-I", unc, X, y, 0.1), 1.0)
            times[name] = (time.process_time() - t0, sol.objective)
        (tc, oc), (tv, ov) = times["clarabel"], times["cvxpy"]
        met &= figure(f"direct / cvxpy, {spread} spreads", tv / tc, 3, ">=", "×",
                      f"direct {tc:.2f} s, cvxpy {tv:.2f} s") and abs(oc - ov) <= 1e-6 * abs(ov)
        print(f"{spread} spreads ({cut:.0%} of entries cut by their box): direct {tc:.2f} s, "
              f"cvxpy {tv:.2f} s: ratio {tv / tc:.1f}x (target >= 3x: "
              f"{'met' if tv / tc >= 3 else 'NOT met'}); objectives {oc:.8g} vs {ov:.8g} "
              f"(rel. diff {abs(oc - ov) / abs(ov):.1e})")

    print("\n== direct path, MM-SBMV-I, n = 20, uniform spreads: CPU seconds by m")
    sizes = [500, 2000, 8000] if quick else [500, 2000, 8000, 32000]
    print("| m | seconds | seconds per 1,000 points | peak RSS (MB) |\n|---|---|---|---|")
    for m in sizes:
        unc, X, y = uncertain_problem(m, 20, rng)
        t0 = time.process_time()
        solve_clarabel(problem_data("MM-SBMV-I", unc, X, y, 0.1), 1.0)
        el = time.process_time() - t0
        print(f"| {m:,} | {el:.2f} | {el / m * 1e3:.3f} | {peak_mib():.0f} |")
    print(f"\ntargets: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(quick="--quick" in sys.argv))
