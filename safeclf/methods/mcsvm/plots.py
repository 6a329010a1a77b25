"""Plot kinds the mcsvm method adds: Carlevaro et al. (2024), Figures 1-3.

Each is ``fn(table, details, fig, **options)`` on the run's metrics table (one row per job) and
the jobs' details (``{job id: details}``); each kind's ``check(options)`` refuses options it
does not know, or of the wrong type, before anything runs (``ValueError`` naming the option).

* ``sdr_regions`` — Figure 1: the exact ε-safe decision region of the dataset's Gaussians
  (``info["gaussians"]``, Prop. 3) for several p_S at ε = 0.5, and several ε at p_S = 0.5: one
  boundary Γ(x) = ρ(p_S, ε) each. Options: ``p_safe`` and ``epsilons`` (lists in (0, 1)).
* ``tau_hyperplanes`` — Figure 2: the hyperplanes wᵀx = b fitted on each source's data
  (Example 2: p_S = 0.05 and 0.95), one panel per number of τ values, with the angle between
  them. Options: ``methods``, ``datasets`` (filters).
* ``safe_regions`` — Figure 3: the predicted-safe region of each method (its boundary
  wᵀφ(x) = b on a grid) beside the exact ε-SDR of the test prior. Options: ``methods``,
  ``datasets`` (filters).
"""

from __future__ import annotations

import numpy as np

from safeclf.methods.mcsvm.safe_region import GaussianSafeRegion


def _unit_list(options, key, default):
    v = options.get(key, default)
    if not isinstance(v, list) or not v or not all(
            isinstance(e, int | float) and not isinstance(e, bool) and 0 < e < 1 for e in v):
        raise ValueError(f"{key} must be a non-empty list of numbers in (0, 1), got {v!r}")
    return [float(e) for e in v]


def _known(options, allowed):
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"{unknown[0]} is not an option of this plot kind (options: "
                         f"{', '.join(sorted(allowed)) or 'none'})")


def _first_details(t, details, key):
    for job in t["job"] if "job" in t else []:
        d = details.get(job) or {}
        if key in d:
            return d
    raise ValueError(f"no job of the plotted rows reports '{key}'")


def _grid_box(g, pad=3.0):
    m = np.vstack([g["mean_pos"], g["mean_neg"]])
    s = np.sqrt(np.r_[np.diag(np.asarray(g["cov_pos"])), np.diag(np.asarray(g["cov_neg"]))].max())
    return m.min(axis=0) - pad * s, m.max(axis=0) + pad * s


def _contour(ax, region, lo, hi, color, label, n=200):
    x, y = np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
    XX, YY = np.meshgrid(x, y)
    inside = region.contains(np.c_[XX.ravel(), YY.ravel()]).reshape(XX.shape).astype(float)
    ax.contour(XX, YY, inside, levels=[0.5], colors=[color], linewidths=1.2)
    ax.plot([], [], color=color, label=label)


def sdr_regions(t, details, fig, p_safe=None, epsilons=None):
    ps = _unit_list({"p": p_safe} if p_safe is not None else {}, "p", [0.1, 0.3, 0.5, 0.7, 0.9])
    es = _unit_list({"e": epsilons} if epsilons is not None else {}, "e", [0.1, 0.3, 0.5, 0.7, 0.9])
    g = _first_details(t, details, "gaussians")["gaussians"]
    lo, hi = _grid_box(g)
    for k, (values, title) in enumerate(((ps, "ε = 0.5, p_S varies"), (es, "p_S = 0.5, ε varies")),
                                        start=1):
        ax = fig.add_subplot(1, 2, k)
        for i, v in enumerate(values):
            region = (GaussianSafeRegion.from_info(g, 0.5, p_safe=v) if k == 1
                      else GaussianSafeRegion.from_info(g, v, p_safe=0.5))
            _contour(ax, region, lo, hi, f"C{i}", f"{'p_S' if k == 1 else 'ε'} = {v:g}")
        ax.set_title(f"Figure 1: ε-SDR boundaries, {title}", fontsize=8)
        ax.set_xlabel("x₁")
        ax.set_ylabel("x₂")
        ax.legend(fontsize=6)


sdr_regions.check = lambda options: (_known(options, {"p_safe", "epsilons"}),
                                     _unit_list(options, "p_safe", [0.5]),
                                     _unit_list(options, "epsilons", [0.5]))


def tau_hyperplanes(t, details, fig):
    jobs = sorted((float(r.get("n_tau", np.nan)), float(r.get("seed", 0)), r["job"])
                  for _, r in t.iterrows())
    first = {}  # one panel per #T: its lowest seed's fit (more seeds would only repeat it)
    for n, _, job in jobs:
        d = details.get(job) or {}
        if "source_hyperplanes" in d:
            first.setdefault(n, d)
    rows = list(first.items())
    if not rows:
        raise ValueError("no job reports per-source hyperplanes (a linear mcsvm on a dataset "
                         "with compare_sources: true)")
    for k, (m, d) in enumerate(rows, start=1):
        ax = fig.add_subplot(1, len(rows), k)
        lo, hi = _grid_box(d["gaussians"]) if "gaussians" in d else (np.r_[-5, -5], np.r_[5, 5])
        xs = np.linspace(lo[0], hi[0], 50)
        for i, (src, hp) in enumerate(d["source_hyperplanes"].items()):
            w, b = np.asarray(hp["w"]), hp["b"]
            ax.plot(xs, (b - w[0] * xs) / w[1], color=f"C{i}", label=f"source {src}")
        angles = d.get("w_angles_deg") or {}
        ax.set_title(f"#T = {m:g}: angle {max(angles.values(), default=np.nan):.1f}°", fontsize=8)
        ax.legend(fontsize=6)
    fig.suptitle("Figure 2: hyperplanes fitted on p_S = 0.05 and 0.95 data", fontsize=9)


tau_hyperplanes.check = lambda options: _known(options, set())


def safe_regions(t, details, fig):
    grids = [(r["method"], details.get(r["job"]) or {}) for _, r in t.iterrows()]
    grids = [(m, d) for m, d in grids if "safe_grid" in d]
    if not grids:
        raise ValueError("no job reports a safe-region grid (two features only)")
    ax = fig.add_subplot(1, 1, 1)
    seen = set()
    for i, (method, d) in enumerate(grids):
        if method in seen:
            continue
        seen.add(method)
        sg = d["safe_grid"]
        n = sg["size"]
        x, y = np.linspace(*sg["x"], n), np.linspace(*sg["y"], n)
        safe = np.frombuffer(sg["safe"].encode(), dtype=np.uint8).reshape(n, n) - ord("0")
        ax.contour(x, y, safe.astype(float), levels=[0.5], colors=[f"C{i}"], linewidths=1.2)
        ax.plot([], [], color=f"C{i}", label=f"{method}")
    d = grids[0][1]
    ex = d.get("exact_region")
    if "gaussians" in d and ex:
        sg = d["safe_grid"]
        region = GaussianSafeRegion.from_info(d["gaussians"], ex["epsilon"], p_safe=ex["p_S"])
        _contour(ax, region, (sg["x"][0], sg["y"][0]), (sg["x"][1], sg["y"][1]), "k",
                 f"exact ε-SDR (ε = {ex['epsilon']:g}, p_S = {ex['p_S']:g})")
    ax.set_xlabel("x₁")
    ax.set_ylabel("x₂")
    ax.set_title("Figure 3: predicted-safe regions (wᵀφ(x) < b) and the exact ε-SDR", fontsize=8)
    ax.legend(fontsize=6)


safe_regions.check = lambda options: _known(options, set())


PLOTS = {"sdr_regions": sdr_regions, "tau_hyperplanes": tau_hyperplanes,
         "safe_regions": safe_regions}
