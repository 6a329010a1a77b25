"""The prototype set classifier (Ruf, "Prototype set classifier", eq_pkx) as an estimator."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from scipy.optimize import Bounds, minimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from safeclf._utils.blas import limit_threads
from safeclf.errors import DataError
from safeclf.methods._solvers.status import SolverStatus, iteration_status, settle, worst
from safeclf.methods.proset.objective import BatchObjective, kernel_sum
from safeclf.methods.proset.sampling import check_min_cases, draw_candidates
from safeclf.methods.proset.search import CV_RULES

_EPS = np.finfo(float).eps


class ProsetClassifier(ClassifierMixin, BaseEstimator):
    """Prototype set classifier.

    P(Y = k | x) = (p0_k + sum_b sum_j 1{y_bj = k} w_bj K_{v_b}(x - x_bj))
                   / (1 + sum_b sum_j w_bj K_{v_b}(x - x_bj))                     (eq_pkx)

    fitted batch by batch (greedy): candidates drawn from the 2K bins with Algorithm alg_bins,
    weights by L-BFGS-B on the penalised, class-reweighted negative log-likelihood
    (eq_log_likelihood), equivalent prototypes merged afterwards. Features should be scaled to
    unit variance (the start value v = 10 / D assumes it): use ``preprocess: standardize``.

    Parameters
    ----------
    n_batches : int >= 0               B, the number of batches
    n_candidates : int >= 1            M, candidates per batch
    max_fraction : float in (0, 1)     η, the largest share of a bin drawn as candidates
    lambda_v, lambda_w : float >= 0    elastic-net penalty weights for feature / prototype weights
    alpha_v, alpha_w : float in [0, 1] the l2 share of each penalty (the paper's convention:
                                       penalty = λ (α/2 |.|² + (1 - α) |.|₁))
    search : "none" | "batches" | "full" | "lambda_v"
        hyperparameter selection by cross-validation on log-loss (the author's report,
        Algorithm alg_hyperparameters): "batches" picks B in 0..max_batches for the given λ's
        (the report's stage 2), "full" first picks (λ_v, λ_w) by random search with B = 1
        (stage 1), then B; "lambda_v" keeps λ_w and picks λ_v from ``n_search`` values
        equidistant on the log scale over (1e-6, 1e-1) (the report's E5, 11 values), then B.
    cv_rule : "sd" | "se" | "min"
        the threshold of the "one standard error rule" that trades CV log-loss for sparsity:
        the best mean plus the fold standard deviation ("sd", the report's and the author's
        package's rule, default), plus the standard error ("se" = SD / sqrt(cv), tighter), or
        the optimum itself ("min", the report's E4)
    max_batches, n_search, cv, n_jobs  the search grid, stage-1 sample size, folds, parallel jobs
    solver_factr, max_iter              L-BFGS-B's factr (ftol = factr · machine ε) and iterations
    solver_memory                       L-BFGS-B's number of stored corrections (maxcor)
    weight_scale                        L-BFGS-B sees w / weight_scale (a diagonal preconditioner;
                                       prototype weights end at ~10-1000)
    merge_tol : float >= 0             max-norm tolerance of the clean-up merging
    dtype : "float32" | "float64"      precision of the fit's kernel matrix products
                                       (predictions are computed in float64). float32 (the
                                       default, as in the author's package) costs ~3x less per
                                       L-BFGS-B iteration and reaches the same test log-loss;
                                       float64 resolves changes of the objective far below
                                       any effect on predictions and keeps L-BFGS-B creeping
                                       on such changes for thousands of iterations (README,
                                       proset speed)
    blas_threads : int or None         BLAS threads while fitting/predicting (None: unchanged)
    engine : "safeclf" | "package"     "package" fits the author's ``proset`` package instead
                                       (bench extra; a reference to compare against in the same
                                       run, with its own candidate sampling; α is converted to
                                       the package's l1-share convention)
    random_state                       candidate draws and search folds

    Attributes
    ----------
    classes_, marginals_ (p0_k), batches_ (per batch: active ``features``, their
    ``feature_weights`` v_b, training ``samples``, ``prototypes`` (full feature rows),
    ``classes`` (codes), ``weights`` w_b), n_iter_ (L-BFGS-B iterations per batch), fit_log_,
    solver_trace_ (per batch an array (iterations, 2): CPU seconds since ``fit`` started and
    the objective after each L-BFGS-B iteration), best_params_, search_ (the search table, or
    None).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from safeclf.estimators import ProsetClassifier
    >>> X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    >>> model = ProsetClassifier(n_batches=1, n_candidates=50, random_state=0).fit(X, y)
    >>> model.predict(X[:5])
    array([0, 0, 1, 1, 0])
    >>> model.predict_proba(X[:2]).round(2)
    array([[0.99, 0.01],
           [1.  , 0.  ]])
    """

    _parameter_constraints = {
        "n_batches": [Interval(Integral, 0, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "max_fraction": [Interval(Real, 0, 1, closed="neither")],
        "lambda_v": [Interval(Real, 0, None, closed="left")],
        "lambda_w": [Interval(Real, 0, None, closed="left")],
        "alpha_v": [Interval(Real, 0, 1, closed="both")],
        "alpha_w": [Interval(Real, 0, 1, closed="both")],
        "search": [StrOptions({"none", "batches", "full", "lambda_v"})],
        "cv_rule": [StrOptions(set(CV_RULES))],
        "max_batches": [Interval(Integral, 0, None, closed="left")],
        "n_search": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "n_jobs": [Integral, None],
        "solver_factr": [Interval(Real, 0, None, closed="neither")],
        "solver_memory": [Interval(Integral, 1, None, closed="left")],
        "weight_scale": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "merge_tol": [Interval(Real, 0, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "blas_threads": [Interval(Integral, 1, None, closed="left"), None],
        "engine": [StrOptions({"safeclf", "package"})],
        "random_state": ["random_state"],
    }

    def __init__(self, n_batches=1, n_candidates=1000, max_fraction=0.5, lambda_v=1e-3,
                 lambda_w=1e-8, alpha_v=0.95, alpha_w=0.95, search="none", cv_rule="sd",
                 max_batches=10, n_search=50, cv=5, n_jobs=None, solver_factr=1e7, solver_memory=50,
                 weight_scale=300.0, max_iter=15000,
                 merge_tol=1e-6, dtype="float32", blas_threads=1, engine="safeclf",
                 random_state=None):
        self.n_batches = n_batches
        self.n_candidates = n_candidates
        self.max_fraction = max_fraction
        self.lambda_v = lambda_v
        self.lambda_w = lambda_w
        self.alpha_v = alpha_v
        self.alpha_w = alpha_w
        self.search = search
        self.cv_rule = cv_rule
        self.max_batches = max_batches
        self.n_search = n_search
        self.cv = cv
        self.n_jobs = n_jobs
        self.solver_factr = solver_factr
        self.solver_memory = solver_memory
        self.weight_scale = weight_scale
        self.max_iter = max_iter
        self.merge_tol = merge_tol
        self.dtype = dtype
        self.blas_threads = blas_threads
        self.engine = engine
        self.random_state = random_state

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X, y):
        """Add batches of prototypes greedily (with the search the ``search`` parameter asks for).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points, best standardised (the start value assumes unit scale).
        y : array-like of shape (n_samples,)
            Labels: any hashable values, at least 2 classes.

        Returns
        -------
        self : ProsetClassifier
            The fitted estimator.
        """
        cpu_start = time.process_time()
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"proset needs at least 2 classes, got 1 class ({self.classes_[0]!r})")
        counts = np.bincount(codes, minlength=self.classes_.size)
        check_min_cases(counts, self.classes_, self.max_fraction)
        self.search_ = None
        self.reference_ = None
        params = {"n_batches": self.n_batches, "lambda_v": self.lambda_v,
                  "lambda_w": self.lambda_w}
        if self.search != "none":
            from safeclf.methods.proset.search import select

            self.search_ = select(self, X, y)
            params = dict(self.search_["chosen"])
        self.best_params_ = params
        if self.engine == "package":
            self._fit_package(X, codes, **params)
            return self
        with limit_threads(self.blas_threads):
            self._fit_batches(X, codes, counts, started=cpu_start, **params)
        return self

    def _fit_package(self, X, codes, n_batches, lambda_v, lambda_w):
        """The reference: the author's package with the same hyperparameters."""
        try:
            import proset
        except ImportError:
            raise DataError("proset: engine 'package' needs the reference package "
                            "(pip install proset, or the bench extra)") from None
        self.reference_ = proset.ClassifierModel(
            n_iter=n_batches, lambda_v=lambda_v, lambda_w=lambda_w, alpha_v=1 - self.alpha_v,
            alpha_w=1 - self.alpha_w, num_candidates=self.n_candidates,
            max_fraction=self.max_fraction, solver_factr=self.solver_factr,
            random_state=check_random_state(self.random_state).randint(2**31 - 1),
        ).fit(X, codes)
        self.marginals_ = np.bincount(codes, minlength=self.classes_.size) / codes.size
        self.batches_, self.fit_log_, self.solver_trace_ = [], [], []
        self.n_iter_ = np.ones(n_batches, dtype=int)
        self.solver_status_ = None  # the reference package does not say how its solves ended

    def _fit_batches(self, X, codes, counts, n_batches, lambda_v, lambda_w, started=None):
        N, D = X.shape
        Kc = self.classes_.size
        rng = check_random_state(self.random_state)
        dtype = np.dtype(self.dtype)
        self.marginals_ = counts / N                                   # p0_k (eq_p0k)
        q = np.tile(self.marginals_, (N, 1))                           # q_{c,k}(x_n), eq_qckx
        self.batches_ = []
        self.fit_log_ = []
        self.solver_trace_ = []
        self.n_iter_ = np.zeros(n_batches, dtype=int)
        statuses = []
        started = time.process_time() if started is None else started
        for c in range(n_batches):
            t0 = time.perf_counter()
            cand = draw_candidates(q, codes, Kc, self.n_candidates, self.max_fraction, rng)
            score = np.ones(N, bool)
            score[cand] = False
            J_ck = np.bincount(codes[cand], minlength=Kc)
            omega = (counts / (counts - J_ck))[codes[score]] / N
            obj = BatchObjective(X[score], codes[score], q[score], omega, X[cand], codes[cand],
                                 Kc, lambda_v, lambda_w, self.alpha_v, self.alpha_w, dtype=dtype)
            theta0 = np.r_[np.full(D, 10.0 / D), np.ones(cand.size)]   # start values
            res = _lbfgsb(obj, theta0, D, self.weight_scale, self.solver_memory,
                          self.solver_factr, self.max_iter, started)
            self.solver_trace_.append(res.trace)
            what = f"proset batch {c + 1}"
            if not np.all(np.isfinite(res.x)) or not np.isfinite(res.fun):
                settle(SolverStatus.ERROR, what, detail=(
                    f"L-BFGS-B ended with a non-finite objective (status '{res.message}')"))
            statuses.append(settle(iteration_status(res.status != 1), what,
                                   detail=f"L-BFGS-B stopped at max_iter ({self.max_iter})"))
            v, w = res.x[:D], res.x[D:]
            self.n_iter_[c] = res.nit
            batch = self._make_batch(X, codes, cand, v, w)
            self.batches_.append(batch)
            if batch["weights"].size:
                kernel_sum(X[:, batch["features"]], batch["prototypes"][:, batch["features"]],
                           batch["feature_weights"], batch["weights"],
                           _onehot(batch["classes"], Kc), q, dtype=dtype)
            self.fit_log_.append({
                "batch": c + 1, "candidates": int(cand.size), "scoring": int(score.sum()),
                "iterations": int(res.nit), "evaluations": int(obj.n_evaluations),
                "status": str(res.message), "objective": float(res.fun),
                "seconds": time.perf_counter() - t0, "kernel_buffer_bytes": obj.memory_bytes(),
                "prototypes": int(batch["weights"].size),
                "active_features": int(batch["features"].size),
            })
        self.solver_status_ = str(worst(statuses))
        return self

    def _make_batch(self, X, codes, cand, v, w):
        """Keep the positive weights and merge equivalent prototypes (the clean-up stage): two
        prototypes are equivalent when the max-norm of their difference in active features and
        target is within ``merge_tol``; connected components are merged into the sample that
        comes first in the training data, with the summed weight."""
        features = np.flatnonzero(v > 0)
        keep = w > 0
        cand, w = cand[keep], w[keep]
        if cand.size > 1:
            pts = np.column_stack([X[cand][:, features], codes[cand] * (2.0 * self.merge_tol + 1)])
            pairs = cKDTree(pts).query_pairs(r=self.merge_tol, p=np.inf, output_type="ndarray")
            if len(pairs):
                graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                                   shape=(cand.size, cand.size))
                n_comp, label = connected_components(graph, directed=False)
                first = np.full(n_comp, np.iinfo(np.intp).max)
                np.minimum.at(first, label, cand)
                merged_w = np.bincount(label, weights=w, minlength=n_comp)
                cand, w = first, merged_w
        order = np.argsort(cand, kind="stable")
        cand, w = cand[order], w[order]
        return {"features": features, "feature_weights": v[features], "samples": cand,
                "prototypes": X[cand].copy(), "classes": codes[cand], "weights": w}

    # -- prediction ---------------------------------------------------------------------------
    def _unscaled(self, X, n_batches=None):
        """q_{B,k}(x) for each row of X (eq_qckx), using the first ``n_batches`` batches."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        q = np.tile(self.marginals_, (X.shape[0], 1))
        batches = self.batches_ if n_batches is None else self.batches_[:n_batches]
        with limit_threads(self.blas_threads):
            for b in batches:
                self._add_batch(X, b, q)
        return q

    def _add_batch(self, X, batch, q):
        """q += batch b's kernel sums on X (eq_pkx's inner sum), in place."""
        if batch["weights"].size:
            kernel_sum(X[:, batch["features"]], batch["prototypes"][:, batch["features"]],
                       batch["feature_weights"], batch["weights"],
                       _onehot(batch["classes"], self.classes_.size), q)

    def predict_proba(self, X, n_batches=None):
        """P(Y = k | x) (eq_pkx), shape (n_samples, n_classes); ``n_batches`` truncates the
        model to its first batches (eq_pckx)."""
        if getattr(self, "reference_", None) is not None:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return self.reference_.predict_proba(X, n_iter=n_batches)
        q = self._unscaled(X, n_batches)
        return q / q.sum(axis=1, keepdims=True)

    def staged_predict_proba(self, X):
        """Yield the probabilities after 0, 1, ..., B batches."""
        check_is_fitted(self)
        if getattr(self, "reference_", None) is not None:
            for b in range(self.reference_.n_iter + 1):
                yield self.predict_proba(X, n_batches=b)
            return
        X = validate_data(self, X, dtype=np.float64, reset=False)
        q = np.tile(self.marginals_, (X.shape[0], 1))
        yield q / q.sum(axis=1, keepdims=True)
        with limit_threads(self.blas_threads):
            for b in self.batches_:
                self._add_batch(X, b, q)
                yield q / q.sum(axis=1, keepdims=True)

    def predict(self, X):
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    # -- reading the model --------------------------------------------------------------------
    @property
    def n_prototypes_(self) -> int:
        check_is_fitted(self)
        return int(sum(b["weights"].size for b in self.batches_))

    @property
    def active_features_(self) -> np.ndarray:
        """Indices of the features with a positive weight in at least one batch."""
        check_is_fitted(self)
        feats = [b["features"] for b in self.batches_ if b["weights"].size]
        return np.unique(np.concatenate(feats)) if feats else np.zeros(0, int)

    def _feature_names(self, feature_names=None):
        if feature_names is not None:
            return [str(f) for f in feature_names]
        if hasattr(self, "feature_names_in_"):
            return [str(f) for f in self.feature_names_in_]
        return [f"x{d}" for d in range(self.n_features_in_)]

    def export(self, feature_names=None):
        """The model as a table (pandas DataFrame): one row per class marginal p0_k
        (``kind = 'marginal'``), then one row per prototype with its batch, training sample
        index, class, weight w_bj, and for every active feature its value in the prototype
        (``<name>``) and the batch's feature weight v_bd (``<name> weight``); a feature inactive
        in a batch has weight 0 and an empty value."""
        import pandas as pd

        check_is_fitted(self)
        names = self._feature_names(feature_names)
        active = self.active_features_
        rows = [{"kind": "marginal", "batch": 0, "sample": -1, "target": self.classes_[k],
                 "weight": float(self.marginals_[k])} for k in range(self.classes_.size)]
        for i, b in enumerate(self.batches_, start=1):
            v = dict(zip(b["features"].tolist(), b["feature_weights"].tolist()))
            for j in range(b["weights"].size):
                row = {"kind": "prototype", "batch": i, "sample": int(b["samples"][j]),
                       "target": self.classes_[b["classes"][j]], "weight": float(b["weights"][j])}
                for d in active:
                    row[names[d]] = float(b["prototypes"][j, d]) if d in v else np.nan
                    row[f"{names[d]} weight"] = v.get(int(d), 0.0)
                rows.append(row)
        columns = ["kind", "batch", "sample", "target", "weight"]
        for d in active:
            columns += [names[d], f"{names[d]} weight"]
        return pd.DataFrame(rows, columns=columns)

    def explain(self, x, n_prototypes=None, feature_names=None):
        """Why the model predicts what it does at one point ``x`` (shape (n_features,)).

        eq_pkx splits exactly into additive parts: p_k(x) = p0_k / Z(x) + sum over prototypes
        of class k of w_bj K_b(x) / Z(x), with Z(x) the denominator. The table (pandas
        DataFrame) has one ``marginal`` row per class and one ``prototype`` row per prototype
        with its ``similarity`` K_{v_b}(x - x_bj), ``impact`` (its share of the probability
        mass, w K / Z), batch, sample, class and weight, sorted by impact; ``n_prototypes``
        keeps only the largest. Summing ``impact`` by ``target`` over all rows gives
        ``predict_proba(x)`` (exactly with ``dtype="float64"``; to float32 rounding, ~1e-7
        relative, with the default float32 products). The table's ``attrs`` hold the
        prediction and probabilities.
        """
        import pandas as pd

        check_is_fitted(self)
        x = validate_data(self, np.asarray(x, float).reshape(1, -1), reset=False)[0]
        rows = []
        for i, b in enumerate(self.batches_, start=1):
            if not b["weights"].size:
                continue
            f = b["features"]
            sim = np.exp(-0.5 * (((x[f] - b["prototypes"][:, f]) * b["feature_weights"]) ** 2)
                         .sum(axis=1))
            for j in range(b["weights"].size):
                rows.append({"kind": "prototype", "batch": i, "sample": int(b["samples"][j]),
                             "target": self.classes_[b["classes"][j]],
                             "weight": float(b["weights"][j]), "similarity": float(sim[j]),
                             "mass": float(b["weights"][j] * sim[j])})
        Z = 1.0 + sum(r["mass"] for r in rows)                       # sum_l q_{B,l}(x)
        base = [{"kind": "marginal", "batch": 0, "sample": -1, "target": self.classes_[k],
                 "weight": float(self.marginals_[k]), "similarity": 1.0,
                 "mass": float(self.marginals_[k])} for k in range(self.classes_.size)]
        table = pd.DataFrame(base + sorted(rows, key=lambda r: -r["mass"]),
                             columns=["kind", "batch", "sample", "target", "weight",
                                      "similarity", "mass"])
        table["impact"] = table["mass"] / Z
        table = table.drop(columns="mass")
        if n_prototypes is not None:
            keep = table["kind"].eq("marginal") | (table.index < self.classes_.size + n_prototypes)
            table = table[keep].reset_index(drop=True)
        proba = self.predict_proba(x.reshape(1, -1))[0]
        table.attrs["prediction"] = self.classes_[int(np.argmax(proba))].item()
        table.attrs["probabilities"] = dict(zip(self.classes_.tolist(), proba.tolist()))
        names = self._feature_names(feature_names)
        table.attrs["active_features"] = [names[d] for d in self.active_features_]
        return table

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags


def _lbfgsb(obj, theta0, D, weight_scale, memory, factr, max_iter, started=0.0):
    """Minimise ``obj`` over theta >= 0 by L-BFGS-B. The solver works on (v, w / weight_scale):
    the same problem, diagonally preconditioned so that feature and prototype weights are both
    of order one (benchmarks/proset.py records why the default is 300).

    ``res.trace`` holds, per iteration, the CPU seconds since ``started`` (a
    ``time.process_time()`` reading) and the objective."""
    scale = np.r_[np.ones(D), np.full(theta0.size - D, float(weight_scale))]
    trace = []

    def scaled(x):
        loss, grad = obj(x * scale)
        return loss, grad * scale

    def record(intermediate_result):
        trace.append((time.process_time() - started, float(intermediate_result.fun)))

    res = minimize(scaled, theta0 / scale, jac=True, method="L-BFGS-B",
                   bounds=Bounds(0.0, np.inf), callback=record,
                   options={"ftol": factr * _EPS, "gtol": 1e-5, "maxcor": int(memory),
                            "maxiter": max_iter, "maxfun": 2 * max_iter})
    res.x = res.x * scale
    res.trace = np.array(trace, dtype=float).reshape(-1, 2)
    return res


def _onehot(codes, n_classes):
    out = np.zeros((codes.size, n_classes))
    out[np.arange(codes.size), codes] = 1.0
    return out
