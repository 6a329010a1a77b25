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

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from safeclf.errors import DataError
from safeclf.plugins import registry

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


_Positive = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
_Width = Annotated[int, Field(strict=True, ge=1)]


class ClassEntry(BaseModel):
    """One entry of ``classes`` as written in the spec (``features`` may list several
    widths: one feature-prefix class each)."""

    model_config = ConfigDict(extra="forbid")

    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    complexity: _Positive | None = None
    features: _Width | Annotated[list[_Width], Field(min_length=1)] | None = None
    cost: _Positive | None = None
    incremental: Literal[INCREMENTAL] | None = None  # type: ignore[valid-type]
    name: str | None = None

    @model_validator(mode="after")
    def _widths(self):
        if isinstance(self.features, list) and (self.complexity is not None or self.name):
            raise ValueError("with a list of features, complexity and name come from each "
                             "feature count; drop 'complexity'/'name'")
        if self.method == "budgeted_selection":
            raise ValueError("method cannot be budgeted_selection itself")
        return self


_ENTRIES = TypeAdapter(list[ClassEntry])


def parse_classes(classes, incremental_default: str = "auto", where: str = "classes",
                  resolve: bool = True, by_quanta: bool = True) -> list[ModelClass]:
    """Validate the ``classes`` parameter; every problem is a one-line ``ValueError`` naming
    ``where[i].key``. ``by_quanta``: the procedure trains classes quantum by quantum
    (Algorithm 1), so ``incremental: auto`` must find ``partial_fit``; otherwise each class is
    fitted once and ``auto`` falls back to a plain fit."""
    from pydantic import ValidationError

    from safeclf._utils.messages import explain, model_keys

    if isinstance(classes, list | tuple) and len(classes) == 0:
        raise ValueError(f"{where} is empty: model selection needs at least one class (K ≥ 1)")
    try:
        entries = _ENTRIES.validate_python(classes)
    except ValidationError as exc:
        keys = model_keys(ClassEntry)
        raise ValueError(explain(exc, classes, where, lambda parts: keys(parts[1:]))) from None
    expanded = [e.model_copy(update={"features": f}) for e in entries
                for f in (e.features if isinstance(e.features, list) else [e.features])]
    out = []
    for i, c in enumerate(expanded):
        at = f"{where}[{i}]"
        complexity = c.complexity if c.complexity is not None else c.features
        if complexity is None:
            raise ValueError(f"{at}.complexity is required (d_i in γ_i(n) = c·(d_i/n)^α), "
                             "or give 'features'")
        inc = c.incremental or incremental_default
        name = c.name or (f"{c.method}[{c.features}]" if c.features else f"{c.method}#{i + 1}")
        plugin = None
        if resolve:
            plugin = registry.get_method(c.method, where=f"{at}.method")
            plugin.check_params(c.params, f"{at}.params")
            inc = _resolve_incremental(plugin, c.params, inc, at, by_quanta)
        out.append(ModelClass(i, name, c.method, dict(c.params), float(complexity), c.features,
                              c.cost, inc, plugin))
    names = [m.name for m in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ValueError(f"{where}: two classes are named '{dup}'; give each a distinct 'name'")
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
        raise ValueError(
            f"{at} ({plugin.name}) cannot train incrementally (no partial_fit); set "
            f"{at}.incremental to {hint} to retrain on all samples seen, charged as such"
        )
    if inc == "partial_fit" and not has_partial:
        raise ValueError(f"{at}.incremental is partial_fit but method '{plugin.name}' has no "
                        "partial_fit; use refit")
    if inc == "warm_start" and not has_warm:
        raise ValueError(f"{at}.incremental is warm_start but method '{plugin.name}' has no "
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
