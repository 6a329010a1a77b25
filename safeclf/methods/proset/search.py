"""The report's hyperparameter selection, with the one-standard-error rule.

Stage 1 ("full" only): ``n_search`` pairs (λ_v, λ_w) drawn log-uniformly from
(1e-6, 1e-1) x (1e-9, 1e-4), B = 1, ``cv``-fold stratified cross-validation on log-loss; among
the pairs whose mean CV log-loss is at most the best mean plus its standard error, the one with
the largest sqrt(λ_v λ_w) (the strongest penalty) wins.
Stage 2: B in 0..max_batches with the chosen λ's and the same folds; the smallest B whose mean
CV log-loss is under the best plus its standard error wins. The fit is greedy, so one fit with
``max_batches`` batches per fold gives every smaller B by truncation (``staged_predict_proba``).
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


def one_standard_error(mean, se, preference):
    """Index chosen by the one-standard-error rule: among the candidates with
    ``mean <= min(mean) + se[argmin]``, the one with the largest ``preference``."""
    mean, se, preference = map(np.asarray, (mean, se, preference))
    best = int(np.argmin(mean))
    ok = np.flatnonzero(mean <= mean[best] + se[best])
    return int(ok[np.argmax(preference[ok])])


def _fold_scores(est, X, y, train, test, params, staged):
    model = clone(est).set_params(search="none", n_jobs=None, **params)
    model.fit(X[train], y[train])
    labels = model.classes_
    if staged:
        return [log_loss(y[test], p, labels=labels) for p in model.staged_predict_proba(X[test])]
    return [log_loss(y[test], model.predict_proba(X[test]), labels=labels)]


def _summary(scores):
    scores = np.asarray(scores, float)                 # (folds, candidates)
    return scores.mean(axis=0), scores.std(axis=0, ddof=1) / np.sqrt(scores.shape[0])


def select(est, X, y) -> dict:
    """Run the selection for estimator ``est`` (its ``search`` decides the stages); returns
    ``{"chosen": {n_batches, lambda_v, lambda_w}, "table": [rows]}``."""
    rng = check_random_state(est.random_state)
    folds = list(StratifiedKFold(est.cv, shuffle=True,
                                 random_state=rng.randint(2**31 - 1)).split(X, y))
    parallel = Parallel(n_jobs=est.n_jobs)
    table = []
    lam_v, lam_w = float(est.lambda_v), float(est.lambda_w)
    if est.search == "full":
        lv = np.exp(rng.uniform(*np.log(LAMBDA_V_RANGE), size=est.n_search))
        lw = np.exp(rng.uniform(*np.log(LAMBDA_W_RANGE), size=est.n_search))
        jobs = [(i, f) for i in range(est.n_search) for f in range(len(folds))]
        out = parallel(delayed(_fold_scores)(
            est, X, y, *folds[f], {"n_batches": 1, "lambda_v": lv[i], "lambda_w": lw[i]}, False)
            for i, f in jobs)
        scores = np.zeros((len(folds), est.n_search))
        for (i, f), s in zip(jobs, out):
            scores[f, i] = s[0]
        mean, se = _summary(scores)
        pick = one_standard_error(mean, se, np.sqrt(lv * lw))
        lam_v, lam_w = float(lv[pick]), float(lw[pick])
        table += [{"stage": 1, "lambda_v": float(lv[i]), "lambda_w": float(lw[i]),
                   "n_batches": 1, "cv_log_loss": float(mean[i]), "cv_se": float(se[i]),
                   "chosen": bool(i == pick)} for i in range(est.n_search)]
    out = parallel(delayed(_fold_scores)(
        est, X, y, tr, te, {"n_batches": est.max_batches, "lambda_v": lam_v, "lambda_w": lam_w},
        True) for tr, te in folds)
    mean, se = _summary(out)
    B = np.arange(est.max_batches + 1)
    pick = one_standard_error(mean, se, -B)
    table += [{"stage": 2, "lambda_v": lam_v, "lambda_w": lam_w, "n_batches": int(b),
               "cv_log_loss": float(mean[b]), "cv_se": float(se[b]), "chosen": bool(b == pick)}
              for b in B]
    return {"chosen": {"n_batches": int(pick), "lambda_v": lam_v, "lambda_w": lam_w},
            "table": table}
