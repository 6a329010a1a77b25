"""The paper's experiments that do not fit a plain MC-SVM job, as plain ``(metrics, details)``
dictionaries; :class:`~safeclf.methods.mcsvm.plugin.MCSVMPlugin` turns them into a job's report:

* always: the offset, the guarantee the calibration carries, the trained b_k, the share of the
  data's bounding box predicted safe (the size of the predicted safe region);
* with the true distribution (dataset ``info["gaussians"]``): the exact ε-safe region Φ_ε of
  Prop. 3 for the same ε, its boundary (Appendix A), its FPR on the test part and its true FPR
  (Example 3), and the Monte-Carlo check that the unsafe share inside Φ_ε is ≤ ε;
* with a ``source`` row (several data sets with different p_S, Example 2): one model per source
  and the angle between their w;
* with ``guarantee_draws`` > 0: that many fresh calibration sets from the true distribution, the
  offset recalibrated on each, and the share of draws whose true rate exceeds ε.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.stats import binom, norm
from sklearn.base import clone

from safeclf.methods.mcsvm import calibration as cal
from safeclf.methods.mcsvm.safe_region import GaussianSafeRegion


def finite(v):
    """``v`` as a float, or ``"inf"``/``"-inf"`` (JSON has no infinities)."""
    v = float(v)
    return v if np.isfinite(v) else ("inf" if v > 0 else "-inf")


def safe_box_fraction(est, task, n: int = 20_000, seed: int = 0) -> float:
    """Share of the bounding box of the train and test points that is predicted safe."""
    X = np.vstack([np.asarray(task.train.X), np.asarray(task.test.X)])
    lo, hi = X.min(axis=0), X.max(axis=0)
    U = np.random.default_rng(seed).uniform(lo, hi, size=(n, X.shape[1]))
    return float(np.mean(est.score_samples_w(U) < est.offset_))


def unsafe_share(est, part) -> float:
    """P(y = U | x predicted S) on a part: the unsafe share among the points predicted safe,
    the quantity Example 3's closing remark bounds by ε, Pr{U | x ∈ Φ̃_ε} (nan when nothing
    is predicted safe)."""
    pred_safe = est.predict(part.X) == est.classes_[1]
    if not pred_safe.any():
        return float("nan")
    return float(np.mean(np.asarray(part.y)[pred_safe] != est.classes_[1]))


def safe_grid(est, task, size: int = 60):
    """For two features: the predicted-safe indicator on a ``size`` × ``size`` grid over the
    bounding box of the train and test points (rows along the second feature), as a string of
    0/1 with the box, for Figure 3's region plot; None otherwise."""
    X = np.vstack([np.asarray(task.train.X), np.asarray(task.test.X)])
    if X.shape[1] != 2:
        return None
    lo, hi = X.min(axis=0), X.max(axis=0)
    g0, g1 = np.linspace(lo[0], hi[0], size), np.linspace(lo[1], hi[1], size)
    G = np.c_[np.tile(g0, size), np.repeat(g1, size)]
    inside = est.score_samples_w(G) < est.offset_
    return {"x": [float(lo[0]), float(hi[0])], "y": [float(lo[1]), float(hi[1])], "size": size,
            "safe": "".join("1" if v else "0" for v in inside)}


def coordinates_match(task, g) -> bool:
    """True if the training features are plausibly draws from the Gaussian mixture in ``g``."""
    X = np.asarray(task.train.X, float)
    p = float(g["p_pos"])
    mp, mn = np.asarray(g["mean_pos"]), np.asarray(g["mean_neg"])
    cp, cn = np.asarray(g["cov_pos"]), np.asarray(g["cov_neg"])
    if X.shape[1] != mp.size:
        return False
    y = np.asarray(task.train.y)
    pos = y == np.unique(y)[-1]
    for mask, mean, cov in ((pos, mp, cp), (~pos, mn, cn)):
        if mask.sum() < 2:
            continue
        se = np.sqrt(np.diag(cov) / mask.sum())
        if np.any(np.abs(X[mask].mean(axis=0) - mean) > 6 * se + 1e-9):
            return False
    return 0 < p < 1


def exact_region(est, task, g):
    """Φ_ε for the test prior p_S and the estimator's ε (Prop. 3), evaluated on the test part."""
    region = GaussianSafeRegion.from_info(g, est.epsilon)
    Xt, yt = np.asarray(task.test.X, float), np.asarray(task.test.y)
    unsafe = yt != np.unique(np.asarray(task.train.y))[-1]
    inside = region.contains(Xt)
    true_fpr, se = region.unsafe_in_region_rate()
    n_u = int(unsafe.sum())
    emp = float(np.mean(inside[unsafe])) if n_u else float("nan")
    sampling_se = np.sqrt(max(true_fpr * (1 - true_fpr), 1e-12) / max(n_u, 1))
    metrics = {
        "exact_region_fpr": true_fpr,
        "exact_region_fpr_se": se,
        "test_exact_region_fpr": emp,
        "test_exact_region_fpr_z": float(abs(emp - true_fpr) / sampling_se),
        "test_exact_region_fnr": float(np.mean(~inside[~unsafe])) if (~unsafe).any() else float("nan"),
        "test_exact_region_unsafe_share": float(np.mean(unsafe[inside])) if inside.any() else 0.0,
        "test_exact_region_share": float(np.mean(inside)),
        "exact_region_rho": region.rho,
    }
    details = {"exact_region": {"p_S": region.p_safe, "epsilon": region.epsilon, "rho": region.rho,
                                **region.boundary()}}
    return metrics, details


def _w_inner(e1, e2) -> float:
    """⟨w₁, w₂⟩ in feature space (both fitted with the same kernel)."""
    if e1.solver_ == "primal" and e2.solver_ == "primal":
        return float(e1.w_ @ e2.w_)
    if e1.kernel == "linear":
        return float(e1.w_ @ e2.w_)
    return float(e1.dual_coef_ @ e1._kernel(e1.support_vectors_, e2.support_vectors_) @ e2.dual_coef_)


def angle_deg(e1, e2) -> float:
    """The angle between the w of two fitted models, in degrees."""
    c = _w_inner(e1, e2) / np.sqrt(_w_inner(e1, e1) * _w_inner(e2, e2))
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


def per_source_angle(est, X, y, source):
    """Example 2: fit the same model on each source's data; report the largest pairwise angle."""
    fits = {}
    for s in np.unique(source):
        m = source == s
        fits[s] = clone(est).set_params(calibration="none", guarantee_draws=0).fit(X[m], y[m])
    angles = {f"{a}|{b}": angle_deg(fits[a], fits[b]) for a, b in itertools.combinations(fits, 2)}
    details = {"w_angles_deg": angles, "sources": [str(s) for s in fits]}
    if est.kernel == "linear":  # Figure 2's hyperplanes wᵀx = b (b of the τ nearest ½)
        details["source_hyperplanes"] = {str(s): {"w": f.w_.tolist(), "b": float(f.offset_)}
                                         for s, f in fits.items()}
    return {"w_angle_deg": max(angles.values())}, details


#: the central share of single-split test FPRs that ``draws_split_fpr_lo``/``_hi`` bracket
SPLIT_LEVEL = 0.99


def split_fpr_interval(fpr, task, est, rng):
    """The central :data:`SPLIT_LEVEL` interval of the test FPR one split would show (what a
    paper reporting a single split prints): for each calibration draw, its true FPR plus the
    binomial noise of this job's test part, FP ~ Bin(n_U, fpr) / n_U with n_U the unsafe test
    count. Returns (lo, hi, n_U); nan without unsafe test points."""
    yt = np.asarray(task.test.y)
    n_u = int(np.sum(yt != est.classes_[1]))
    if n_u == 0 or len(fpr) == 0:
        return float("nan"), float("nan"), n_u
    single = rng.binomial(n_u, np.clip(fpr, 0.0, 1.0)) / n_u
    a = (1 - SPLIT_LEVEL) / 2
    lo, hi = np.quantile(single, [a, 1 - a], method="inverted_cdf")
    return float(lo), float(hi), n_u


def guarantee_draws(est, task, g):
    """Recalibrate on ``est.guarantee_draws`` fresh calibration sets from the true mixture and
    report, over the draws, the share whose true joint rate P(U and predicted S) exceeds ε
    (probabilistic scaling promises ≤ δ) and the mean true FPR P(predicted S | U) (conformal
    promises ≤ ε in expectation), and the interval of the FPR a single split of this job's
    sizes would show (:func:`split_fpr_interval`; Example 3 reports one split). True rates are
    exact for the linear kernel (wᵀx is Gaussian given the class) and Monte Carlo on 200,000
    points otherwise."""
    region = GaussianSafeRegion.from_info(g, est.epsilon)
    rng = np.random.default_rng(est.random_state if isinstance(est.random_state, int) else 0)
    n_c = len(task.cal) if getattr(task, "cal", None) is not None else max(est.n_cal_, 1000)
    p = region.p_safe
    if est.kernel == "linear":
        w = est.w_
        mu_u, sd_u = w @ region.mean_unsafe, np.sqrt(w @ region.cov_unsafe @ w)
        mu_s, sd_s = w @ region.mean_safe, np.sqrt(w @ region.cov_safe @ w)

        def rates(b):
            return norm.cdf((b - mu_u) / sd_u), norm.sf((b - mu_s) / sd_s)
        how = "exact (Gaussian wᵀx)"
    else:
        Xe, ye = region.sample(200_000, np.random.default_rng(987))
        se, safe_e = est.score_samples_w(Xe), ye > 0

        def rates(b):
            return float(np.mean(se[~safe_e] < b)), float(np.mean(se[safe_e] >= b))
        how = "Monte Carlo, 200,000 points"
    fpr, fnr = np.empty(est.guarantee_draws), np.empty(est.guarantee_draws)
    for j in range(est.guarantee_draws):
        Xc, yc = region.sample(n_c, rng)
        off = cal.calibrate(est.calibration, est.score_samples_w(Xc), yc > 0, est.epsilon,
                            est.delta, est.quantile_bound)
        fpr[j], fnr[j] = rates(off.b)
    joint = (1 - p) * fpr
    D, eps, delta = est.guarantee_draws, est.epsilon, est.delta
    lo, hi, n_u = split_fpr_interval(fpr, task, est, rng)
    metrics = {
        "draws_joint_rate_exceed": float(np.mean(joint > eps)),
        "draws_joint_rate_exceed_limit": float(binom.ppf(0.99, D, delta) / D),
        "draws_joint_rate_mean": float(joint.mean()),
        "draws_fpr_mean": float(fpr.mean()),
        "draws_fpr_mean_limit": (float(eps + norm.ppf(0.99) * fpr.std(ddof=1) / np.sqrt(D))
                                 if D > 1 else float("nan")),
        "draws_fpr_exceed": float(np.mean(fpr > eps)),
        "draws_fnr_mean": float(fnr.mean()),
        "draws_split_fpr_lo": lo,
        "draws_split_fpr_hi": hi,
    }
    details = {"guarantee_draws": {"draws": D, "n_c": n_c, "n_U_test": n_u, "p_S": p, "rates": how,
                                   "fpr": fpr.tolist(), "joint": joint.tolist()}}
    return metrics, details
