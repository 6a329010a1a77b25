"""Model classes F_1..F_K: parsing the ``classes`` parameter and training a class by quanta.

A class is a mapping ``{method, params, complexity, features, cost, incremental, name}``:

- ``method`` (required): a registered method plugin, built with ``params`` through
  ``plugin.build(params)``;
- ``complexity`` d_i > 0: the size entering the penalty γ_i(n) = c·(d_i/n)^α (number of
  features or parameters); defaults to ``features`` when that is given;
- ``features``: train on the first ``features`` columns only (a feature-prefix class), default
  all columns;
- ``cost``: cost per training sample, used when the estimator's ``cost="given"``;
- ``incremental``: how a quantum is spent (overrides the estimator's ``incremental``):
  ``partial_fit`` (n_i new samples through ``partial_fit``: the paper's linear, incremental
  cost), ``warm_start`` (refit on every sample seen, starting from the previous solution) or
  ``refit`` (refit from scratch on every sample seen). The last two are charged honestly: a
  quantum that refits on m samples costs m/n_i quanta of compute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from safeclf import registry
from safeclf.errors import DataError, SpecError, closest

KEYS = ("method", "params", "complexity", "features", "cost", "incremental", "name")
INCREMENTAL = ("auto", "partial_fit", "warm_start", "refit")


@dataclass
class ModelClass:
    """One resolved model class F_i."""

    index: int  # 0-based position in the hierarchy
    name: str
    method: str
    params: dict[str, Any]
    complexity: float
    features: int | None
    cost: float | None
    incremental: str  # partial_fit | warm_start | refit (resolved, never "auto")
    plugin: Any = field(repr=False, default=None)

    def build(self, random_state=None):
        est = self.plugin.build(self.params, random_state=random_state)
        if self.incremental == "warm_start":
            est.set_params(warm_start=True)
        return est

    def columns(self, X):
        return X if self.features is None else X[:, : self.features]


def _is_number(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and np.isfinite(v)


def parse_classes(classes, incremental_default: str = "auto", where: str = "classes",
                  resolve: bool = True, by_quanta: bool = True) -> list[ModelClass]:
    """Validate the ``classes`` parameter; every problem is a one-line :class:`SpecError`
    naming ``where[i].key``. ``by_quanta``: the procedure trains classes quantum by quantum
    (Algorithm 1), so ``incremental: auto`` must find ``partial_fit``; otherwise each class is
    fitted once and ``auto`` falls back to a plain fit."""
    if classes is None or (not isinstance(classes, (list, tuple))):
        raise SpecError(f"{where} must be a list of model classes (mappings with 'method'), "
                        f"got {type(classes).__name__}")
    if len(classes) == 0:
        raise SpecError(f"{where} is empty: model selection needs at least one class (K ≥ 1)")
    classes = expand_classes(classes, where)
    out = []
    for i, c in enumerate(classes):
        at = f"{where}[{i}]"
        if not isinstance(c, Mapping):
            raise SpecError(f"{at} must be a mapping with a 'method', got {c!r}")
        for key in c:
            if key not in KEYS:
                raise SpecError(f"{at}.{key} is not a class key{closest(key, KEYS)}; "
                                f"known: {', '.join(KEYS)}")
        if "method" not in c:
            raise SpecError(f"{at}.method is required (a registered method name)")
        method = c["method"]
        if method == "budgeted_selection":
            raise SpecError(f"{at}.method cannot be budgeted_selection itself")
        params = dict(c.get("params") or {})
        if not isinstance(c.get("params") or {}, Mapping):
            raise SpecError(f"{at}.params must be a mapping, got {c['params']!r}")
        features = c.get("features")
        if features is not None and not (isinstance(features, int) and not
                                         isinstance(features, bool) and features >= 1):
            raise SpecError(f"{at}.features must be an integer ≥ 1, got {features!r}")
        complexity = c.get("complexity", features)
        if complexity is None:
            raise SpecError(f"{at}.complexity is required (d_i in γ_i(n) = c·(d_i/n)^α), "
                            "or give 'features'")
        if not _is_number(complexity) or complexity <= 0:
            raise SpecError(f"{at}.complexity must be a number > 0, got {complexity!r}")
        cost = c.get("cost")
        if cost is not None and (not _is_number(cost) or cost <= 0):
            raise SpecError(f"{at}.cost must be a number > 0, got {cost!r}")
        inc = c.get("incremental", incremental_default)
        if inc not in INCREMENTAL:
            raise SpecError(f"{at}.incremental must be one of {', '.join(INCREMENTAL)}, "
                            f"got {inc!r}{closest(str(inc), INCREMENTAL)}")
        name = str(c.get("name") or (f"{method}[{features}]" if features else
                                     f"{method}#{i + 1}"))
        plugin = None
        if resolve:
            plugin = registry.get_method(method, where=f"{at}.method")
            plugin.check_params(params, f"{at}.params")
            inc = _resolve_incremental(plugin, params, inc, at, by_quanta)
        out.append(ModelClass(i, name, method, params, float(complexity), features,
                              None if cost is None else float(cost), inc, plugin))
    names = [m.name for m in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise SpecError(f"{where}: two classes are named '{dup}'; give each a distinct 'name'")
    return out


def expand_classes(classes, where: str = "classes") -> list:
    """An entry whose ``features`` is a list stands for one feature-prefix class per entry (in
    that order): ``{method: logreg, features: [1, 2, 4]}`` is three classes."""
    out = []
    for i, c in enumerate(classes):
        if isinstance(c, Mapping) and isinstance(c.get("features"), (list, tuple)):
            if not c["features"]:
                raise SpecError(f"{where}[{i}].features is an empty list")
            if "complexity" in c or "name" in c:
                raise SpecError(f"{where}[{i}]: with a list of features, complexity and name "
                                "come from each feature count; drop 'complexity'/'name'")
            out.extend({**c, "features": f} for f in c["features"])
        else:
            out.append(c)
    return out


def _resolve_incremental(plugin, params, inc: str, at: str, by_quanta: bool) -> str:
    est = plugin.build(params)
    has_partial = hasattr(est, "partial_fit")
    has_warm = "warm_start" in est.get_params()
    if inc == "auto":
        if has_partial:
            return "partial_fit"
        if not by_quanta:
            return "refit"
        hint = "warm_start or refit" if has_warm else "refit"
        raise SpecError(
            f"{at} ({plugin.name}) cannot train incrementally (no partial_fit); set "
            f"{at}.incremental to {hint} to retrain on all samples seen, charged as such"
        )
    if inc == "partial_fit" and not has_partial:
        raise SpecError(f"{at}.incremental is partial_fit but method '{plugin.name}' has no "
                        "partial_fit; use refit")
    if inc == "warm_start" and not has_warm:
        raise SpecError(f"{at}.incremental is warm_start but method '{plugin.name}' has no "
                        "warm_start parameter; use refit")
    return inc


def check_features(classes: list[ModelClass], n_features: int) -> None:
    for m in classes:
        if m.features is not None and m.features > n_features:
            raise DataError(f"classes[{m.index}].features={m.features} exceeds the "
                            f"{n_features} features of X")


class Trainer:
    """Class F_i trained by quanta on a fixed stream of samples (X, y in stream order).

    ``add(n)`` gives the class ``n`` more samples and returns the compute spent in samples
    processed: ``n`` for ``partial_fit``, every sample seen so far for ``warm_start`` and
    ``refit``. When the stream is exhausted, ``partial_fit`` starts another pass over it and
    the refitting modes stay at the whole stream (``n_seen`` keeps counting what was bought).
    """

    def __init__(self, cls: ModelClass, X, y, labels, random_state=None, X_val=None,
                 y_val=None):
        self.cls = cls
        self.X_val = None if X_val is None else cls.columns(X_val)
        self.y_val = y_val
        self.X = cls.columns(X)
        self.y = y
        self.labels = labels
        self.random_state = random_state
        self.model = cls.build(random_state)
        self.n_seen = 0  # samples bought (may exceed the stream for partial_fit passes)
        self.compute = 0.0  # samples processed by training
        self._risk = None

    @property
    def n_used(self) -> int:
        """Distinct samples the current model was trained on."""
        return min(self.n_seen, len(self.y))

    def add(self, n: int) -> float:
        n = int(n)
        if n <= 0:
            return 0.0
        N = len(self.y)
        start, self.n_seen = self.n_seen, self.n_seen + n
        if self.cls.incremental == "partial_fit":
            idx = np.arange(start, self.n_seen) % N
            self.model.partial_fit(self.X[idx], self.y[idx], classes=self.labels)
            spent = float(n)
        else:
            if self.cls.incremental == "refit":
                self.model = self.cls.build(self.random_state)
            m = self.n_used
            self.model.fit(self.X[:m], self.y[:m])
            spent = float(m)
        self.compute += spent
        self._risk = None
        return spent

    def empirical_risk(self) -> float:
        """R̂_n(Â(i, n)): the 0-1 risk of the current model on the samples it was trained on
        (the paper's), or on the held-out validation rows when the trainer has them."""
        if self._risk is None:
            if self.X_val is not None:
                self._risk = float(np.mean(self.model.predict(self.X_val) != self.y_val))
            else:
                m = self.n_used
                self._risk = float(np.mean(self.model.predict(self.X[:m]) != self.y[:m]))
        return self._risk

    def predict(self, X):
        return self.model.predict(self.cls.columns(X))
