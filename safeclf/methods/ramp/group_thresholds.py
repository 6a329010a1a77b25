"""Baseline of the fairness comparisons: logistic regression with one decision threshold for
the privileged group and one for the protected rows (every other group), chosen on the training
data to minimise the training error subject to s_p(protected) ≥ κ s_p(privileged) (the ramp
method's ``fairness_ratio`` constraint, deterministic; the direction as in
:mod:`safeclf.guarantees.groups`). With more than two groups (or ``compare: each``) every group gets its
own threshold and its own constraint s_p(g) ≥ κ s_p(privileged), so one group's disparity is
not hidden by another's rate (``compare: pooled`` keeps the two thresholds).

A threshold per group means the group must be known when predicting; ``predict`` only sees X,
so the group is read from the feature column that encodes it (found at ``fit``: the column
holding one value per group on the training rows, e.g. Adult's one-hot ``sex_Male``
with ``sensitive_as_feature: true``; where no one column does, the columns constant within every
group together, e.g. a one-hot encoded group of three values)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from safeclf.errors import DataError


def best_counts(scores, positive, groups, privileged, kappa):
    """How many rows of each group to predict positive (the highest scores first) so that the
    training error is smallest subject to k_g / n_g ≥ κ k_B / n_B for every group g ≠ B.

    Returns ``{group: k}`` and the training error count. Exact, O(n log n): for every k_B the
    other groups are independent, each taking the best count at or above its bound (a suffix
    minimum of its error curve)."""
    curves = {}
    for g in np.unique(groups):
        mask = groups == g
        pos = positive[mask][np.argsort(-scores[mask], kind="stable")]
        # error with the top k positive: negatives among them + positives outside them
        err = np.r_[0, np.cumsum(~pos)] + pos.sum() - np.r_[0, np.cumsum(pos)]
        suffix_arg = np.empty(err.size, dtype=int)  # argmin of err[k:] (smallest k on ties)
        best = err.size - 1
        for k in range(err.size - 1, -1, -1):
            best = k if err[k] <= err[best] else best
            suffix_arg[k] = best
        curves[g] = (int(mask.sum()), err, err[suffix_arg], suffix_arg)
    n_b, err_b, _, _ = curves[privileged]
    best, best_total = None, np.inf
    for k_b in range(n_b + 1):
        total, counts = float(err_b[k_b]), {privileged: k_b}
        for g, (n_g, _, suffix, suffix_arg) in curves.items():
            if g == privileged:
                continue
            need = int(np.ceil(kappa * k_b * n_g / n_b - 1e-9))
            total += suffix[need]
            counts[g] = int(suffix_arg[need])
        if total < best_total:
            best, best_total = counts, total
    return best, best_total


class GroupThresholds(ClassifierMixin, BaseEstimator):
    """LogisticRegression(C) scores, then a threshold per group meeting the ratio κ on the
    training data at the smallest training error (see :func:`best_counts`).

    Parameters
    ----------
    kappa : float in (0, 1]        the ratio bound s_p(protected) ≥ κ s_p(privileged)
    privileged : str or None       the privileged group (default: the dataset's, else the
                                   :data:`safeclf.guarantees.groups.FALLBACK` group)
    compare : "each", "pooled" or None   a threshold and a ratio per group, or one for
                                   every non-privileged row pooled; None: pooled with two
                                   groups, each with more (:func:`safeclf.guarantees.groups.comparisons`)
    C, max_iter                    the logistic regression's
    random_state                   unused (kept so a spec's seed can be passed)

    Attributes
    ----------
    model_ (the LogisticRegression), thresholds_ ({"privileged" / "protected", or each group
    with ``compare: each``: threshold on the LR's decision function}), group_column_ (index of
    the feature holding the group; group_columns_ the indices when several do it together),
    group_values_ ({feature value(s): "privileged" / "protected" or the group}), compare_,
    privileged_, classes_.

    Examples
    --------
    The group is a keyword of ``fit`` and must be readable from a feature column (here the last):

    >>> import numpy as np
    >>> from safeclf.estimators import GroupThresholds
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.choice(["A", "B"], size=400)
    >>> y = (rng.random(400) < np.where(groups == "B", 0.6, 0.3)).astype(int)
    >>> X = np.c_[rng.normal(size=(400, 2)) + 1.2 * (2 * y[:, None] - 1), groups == "B"]
    >>> model = GroupThresholds(kappa=0.9, privileged="B").fit(X, y, groups=groups)
    >>> model.group_column_
    2
    >>> pred = model.predict(X)
    >>> bool(pred[groups == "A"].mean() >= 0.9 * pred[groups == "B"].mean())
    True
    """

    _parameter_constraints = {
        "kappa": [Interval(Real, 0, 1, closed="right")],
        "privileged": [str, None],
        "compare": [StrOptions({"each", "pooled"}), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, kappa=0.8, privileged=None, C=1.0, max_iter=1000, random_state=None,
                 compare=None):
        self.kappa = kappa
        self.privileged = privileged
        self.compare = compare
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y, groups=None, privileged_group=None):
        """Fit on X (n, d), labels y (two classes), ``groups`` (n,) and the dataset's
        ``privileged_group`` (used when the ``privileged`` parameter is None)."""
        from sklearn.linear_model import LogisticRegression

        from safeclf.guarantees.groups import default_compare, resolve

        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        if groups is None:
            raise ValueError("GroupThresholds needs groups")
        groups = np.asarray(groups).astype(str)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise ValueError(f"GroupThresholds needs two classes, got {self.classes_.size}")
        positive = y == self.classes_[1]
        self.privileged_ = resolve(self.privileged, {"privileged_group": privileged_group},
                                   groups, positive, "group_thresholds: privileged").privileged
        if not (groups == self.privileged_).any() or (groups == self.privileged_).all():
            raise DataError(f"group_thresholds: the training rows need both the privileged "
                            f"group '{self.privileged_}' and others")
        self.compare_ = self.compare or default_compare(groups)
        self.group_columns_, self.group_values_ = _group_columns(X, groups)
        self.group_column_ = self.group_columns_[0]
        if self.compare_ == "pooled":
            groups = np.where(groups == self.privileged_, "privileged", "protected")
            self.group_values_ = {k: "privileged" if g == self.privileged_ else "protected"
                                  for k, g in self.group_values_.items()}
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(X, y)
        scores = self.model_.decision_function(X)
        reference = "privileged" if self.compare_ == "pooled" else self.privileged_
        counts, _ = best_counts(scores, positive, groups, reference, self.kappa)
        self.thresholds_ = {}
        for g, k in counts.items():
            s = np.sort(scores[groups == g])[::-1]
            # midway between the last score predicted positive and the first one not
            self.thresholds_[str(g)] = float(s[0] + 1.0 if k == 0 else s[-1] - 1.0 if k == s.size
                                        else 0.5 * (s[k - 1] + s[k]))
        return self

    def _groups_of(self, X):
        cols = X[:, self.group_columns_]
        cols = cols.toarray() if sp.issparse(cols) else np.asarray(cols)
        out = np.array([self.group_values_.get(_key(r)) for r in cols], dtype=object)
        if any(g is None for g in out):
            raise DataError("group_thresholds: a row's group column holds a value not seen at fit")
        return out

    def decision_function(self, X):
        """The LR's score minus the row's group threshold (positive: predicted positive)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        thr = np.array([self.thresholds_[g] for g in self._groups_of(X)], dtype=float)
        return self.model_.decision_function(X) - thr

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def _group_column(X, groups):
    """The first feature column holding one value per group (so it encodes the group)."""
    Xc = X.tocsc() if sp.issparse(X) else X
    n_groups = np.unique(groups).size
    for j in range(X.shape[1]):
        col = Xc[:, [j]].toarray().ravel() if sp.issparse(Xc) else Xc[:, j]
        values = np.unique(col)
        if values.size != n_groups:
            continue
        members = [np.unique(groups[col == v]) for v in values]
        if all(m.size == 1 for m in members):
            return j, {float(v): str(m[0]) for v, m in zip(values, members)}
    raise DataError("group_thresholds: no feature column determines the group, so the group "
                    "cannot be known when predicting; keep the group among the features "
                    "(Adult: sensitive_as_feature: true)")


def _key(values):
    """The key of a row's group-column values in ``group_values_`` (JSON-plain: the value of
    one column, the values of several joined with commas)."""
    values = np.asarray(values, dtype=float).ravel()
    return float(values[0]) if values.size == 1 else ",".join(f"{v:g}" for v in values)


def _group_columns(X, groups):
    """The feature columns that together determine the group: one column when one does
    (:func:`_group_column`), else every column constant within each group and not constant
    overall (a one-hot encoded group), provided their values tell the groups apart."""
    try:
        j, values = _group_column(X, groups)
        return [j], values
    except DataError:
        pass
    Xc = X.tocsc() if sp.issparse(X) else X
    names = np.unique(groups)
    cols = []
    for j in range(X.shape[1]):
        col = Xc[:, [j]].toarray().ravel() if sp.issparse(Xc) else Xc[:, j]
        if np.unique(col).size > 1 and all(np.unique(col[groups == g]).size == 1 for g in names):
            cols.append(j)
    if cols:
        keys = {}
        for g in names:
            row = np.flatnonzero(groups == g)[0]
            vals = Xc[row, cols].toarray().ravel() if sp.issparse(Xc) else Xc[row, cols]
            keys[_key(vals)] = str(g)
        if len(keys) == names.size:
            return cols, keys
    raise DataError("group_thresholds: no feature column determines the group (nor several "
                    "together), so the group cannot be known when predicting; keep the group "
                    "among the features (Adult: sensitive_as_feature: true; csv: "
                    "group_as_feature: true)")
