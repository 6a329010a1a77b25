"""The report's hyperparameter selection (Algorithm alg_hyperparameters of the author's report,
``doc/examples.tex``), with the "one standard error rule" as the report states it.

Stage 1 ("full"): ``n_search`` pairs (λ_v, λ_w) drawn log-uniformly from
(1e-6, 1e-1) x (1e-9, 1e-4), B = 1, ``cv``-fold stratified cross-validation on log-loss; among
the pairs whose mean CV log-loss is at most the threshold, the one with the largest
sqrt(λ_v λ_w) (the strongest penalty) wins. Stage 1 ("lambda_v", the report's E5): λ_w fixed,
``n_search`` values of λ_v equidistant on the log scale over (1e-6, 1e-1) (11 in E5: 1e-6,
10^-5.5, ..., 1e-1), the largest λ_v under the threshold wins.
Stage 2: B in 0..max_batches with the chosen λ's and the same folds; the smallest B whose mean
CV log-loss is under the threshold wins. The fit is greedy, so one fit with ``max_batches``
batches per fold gives every smaller B by truncation (``staged_predict_proba``).

The threshold (``cv_rule``): "sd", the report's and the author's package's rule (proset 0.6.1,
``utility/fit.py``): the smallest mean log-loss plus the *standard deviation* of that
candidate's fold scores (``ddof=1``); "se": plus its standard error (SD / sqrt(folds), a
tighter threshold, glmnet's rule); "min": no margin, the optimum itself (the report's E4).
Folds and candidates run in parallel (joblib, ``n_jobs``).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state

LAMBDA_V_RANGE = (1e-6, 1e-1)
LAMBDA_W_RANGE = (1e-9, 1e-4)


#: ``cv_rule`` values: the margin added to the smallest mean CV log-loss (module docstring).
CV_RULES = ("sd", "se", "min")


def one_standard_error(mean, spread, preference):
    """Index chosen by the one-standard-error rule: among the candidates with
    ``mean <= min(mean) + spread[argmin]``, the one with the largest ``preference``.

    ``spread`` is the margin per candidate: the fold standard deviation (the report's rule),
    the standard error, or zeros (the optimum)."""
    mean, spread, preference = map(np.asarray, (mean, spread, preference))
    best = int(np.argmin(mean))
    ok = np.flatnonzero(mean <= mean[best] + spread[best])
    return int(ok[np.argmax(preference[ok])])


def lambda_v_grid(n):
    """The report's E5 grid: ``n`` values of λ_v equidistant on the log scale over
    ``LAMBDA_V_RANGE`` (both ends included; one value: the lower end)."""
    return np.exp(np.linspace(*np.log(LAMBDA_V_RANGE), num=n))


def _fold_scores(est, X, y, train, test, params, staged):
    model = clone(est).set_params(search="none", n_jobs=None, **params)
    model.fit(X[train], y[train])
    labels = model.classes_
    if staged:
        return [log_loss(y[test], p, labels=labels) for p in model.staged_predict_proba(X[test])]
    return [log_loss(y[test], model.predict_proba(X[test]), labels=labels)]


def fold_summary(scores, rule="sd"):
    """Per candidate: mean fold score, fold standard deviation (ddof=1), standard error, and
    the margin ``rule`` adds to the best mean (see the module docstring).

    Parameters
    ----------
    scores : array-like of shape (n_folds, n_candidates)
    rule : "sd" | "se" | "min"

    Returns
    -------
    mean, sd, se, margin : ndarray of shape (n_candidates,)
    """
    scores = np.asarray(scores, float)
    mean = scores.mean(axis=0)
    sd = scores.std(axis=0, ddof=1)
    se = sd / np.sqrt(scores.shape[0])
    margin = {"sd": sd, "se": se, "min": np.zeros_like(sd)}[rule]
    return mean, sd, se, margin


def _rows(stage, lam_v, lam_w, B, summary, pick):
    mean, sd, se, margin = summary
    best = int(np.argmin(mean))
    return [{"stage": stage, "lambda_v": float(lam_v[i]), "lambda_w": float(lam_w[i]),
             "n_batches": int(B[i]), "cv_log_loss": float(mean[i]), "cv_sd": float(sd[i]),
             "cv_se": float(se[i]), "threshold": float(mean[best] + margin[best]),
             "optimal": bool(i == best), "chosen": bool(i == pick)} for i in range(mean.size)]


def select(est, X, y) -> dict:
    """Run the selection for estimator ``est`` (its ``search`` decides the stages, its
    ``cv_rule`` the threshold); returns ``{"chosen": {n_batches, lambda_v, lambda_w},
    "table": [rows]}``, a row per candidate with its mean CV log-loss, fold SD and SE, the
    stage's threshold, and whether it is the optimum and the choice."""
    rng = check_random_state(est.random_state)
    folds = list(StratifiedKFold(est.cv, shuffle=True,
                                 random_state=rng.randint(2**31 - 1)).split(X, y))
    parallel = Parallel(n_jobs=est.n_jobs)
    table = []
    lam_v, lam_w = float(est.lambda_v), float(est.lambda_w)
    if est.search in ("full", "lambda_v"):
        if est.search == "full":
            lv = np.exp(rng.uniform(*np.log(LAMBDA_V_RANGE), size=est.n_search))
            lw = np.exp(rng.uniform(*np.log(LAMBDA_W_RANGE), size=est.n_search))
        else:
            lv, lw = lambda_v_grid(est.n_search), np.full(est.n_search, lam_w)
        jobs = [(i, f) for i in range(est.n_search) for f in range(len(folds))]
        out = parallel(delayed(_fold_scores)(
            est, X, y, *folds[f], {"n_batches": 1, "lambda_v": lv[i], "lambda_w": lw[i]}, False)
            for i, f in jobs)
        scores = np.zeros((len(folds), est.n_search))
        for (i, f), s in zip(jobs, out):
            scores[f, i] = s[0]
        summary = fold_summary(scores, est.cv_rule)
        pick = one_standard_error(summary[0], summary[3], np.sqrt(lv * lw))
        lam_v, lam_w = float(lv[pick]), float(lw[pick])
        table += _rows(1, lv, lw, np.ones(est.n_search, int), summary, pick)
    out = parallel(delayed(_fold_scores)(
        est, X, y, tr, te, {"n_batches": est.max_batches, "lambda_v": lam_v, "lambda_w": lam_w},
        True) for tr, te in folds)
    summary = fold_summary(out, est.cv_rule)
    B = np.arange(est.max_batches + 1)
    pick = one_standard_error(summary[0], summary[3], -B)
    table += _rows(2, np.full(B.size, lam_v), np.full(B.size, lam_w), B, summary, pick)
    return {"chosen": {"n_batches": int(pick), "lambda_v": lam_v, "lambda_w": lam_w},
            "table": table}
