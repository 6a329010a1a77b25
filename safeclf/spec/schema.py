"""The YAML experiment spec as pydantic models: datasets, methods (with ``promises`` and
``certify``), metrics, plots, expectations, profiles.

:func:`safeclf.spec.check.load_spec` reads a file (:mod:`safeclf.spec.yaml`), applies a
profile, checks the structure (these models) and the names (:mod:`safeclf.spec.check`), and
returns a :class:`Spec`; :func:`safeclf.spec.expand.expand` turns it into jobs. Every problem
is a :class:`~safeclf.errors.SpecError` whose message names the place in the file, e.g.
``methods[1].params.C must be > 0, got -1``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
    model_validator,
)

from safeclf.guarantees.certify import DEFAULTS as CERTIFY_DEFAULTS
from safeclf.guarantees.certify import route as certify_route
from safeclf.spec.yaml import OMITTED

OPS = ("<=", "<", ">=", ">")


BUILTIN_PLOT_KEYS = {"bar": ("metric",), "scatter": ("x", "y"), "line": ("x", "y"),
                     "frontier": ("x", "y"), "seldonian": ("failure", "error")}


AGGS = ("mean", "median", "min", "max", "std", "count")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Split(_Strict):
    """How a dataset is divided: a random test fraction, k folds, or the loader's own split;
    optionally a calibration share of the training part."""

    test: float | None = Field(None, gt=0, lt=1)
    folds: int | None = Field(None, ge=2)
    predefined: bool = False
    calibration: float = Field(0.0, ge=0, lt=1)
    stratify: bool = True
    #: keep only this many training rows, drawn from the job's seed (a small-data regime
    #: whose training sample changes with the seed while the test part stays the same)
    train_rows: int | None = Field(None, ge=2)

    @model_validator(mode="after")
    def _one_kind(self):
        kinds = [k for k, v in (("test", self.test), ("folds", self.folds),
                                ("predefined", self.predefined or None)) if v is not None]
        if len(kinds) > 1:
            raise ValueError(f"give only one of test, folds, predefined (got {', '.join(kinds)})")
        if not kinds:
            self.test = 0.3
        return self


Preprocess = Literal["none", "standardize", "minmax", "maxabs"]


class Preprocessing(BaseModel):
    """``preprocess: {impute: median, scale: standardize}``: fill empty feature cells with a
    statistic of the training rows, then rescale (safeclf/data/preprocessing.py); the plain form
    ``preprocess: standardize`` is ``{scale: standardize}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    impute: Literal["median", "mean", "most_frequent"] | None = None
    scale: Preprocess = "none"


class DatasetEntry(_Strict):
    dataset: str
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    split: Split = Field(default_factory=Split)
    preprocess: Preprocess | Preprocessing = "none"


class Certify(_Strict):
    """Certification of a method entry: the promises hold jointly on the population with
    probability ≥ 1 − ``delta``, tested on a held-back ``fraction`` of the training rows.
    ``how``: ``training`` (candidate selection with tightened bounds, then a safety test:
    safeclf/guarantees/certify/training.py; plugins with ``tightened_params``, the default for them) or
    ``threshold`` (any scoring method: a decision threshold, one per group where a promise
    compares groups, chosen by Learn-then-Test: safeclf/guarantees/certify/threshold.py; the default for every
    other plugin). ``bound``: the one-sided bound (safeclf/guarantees/bounds.py; ``ttest`` is
    approximate). ``test``: fixed-sequence testing along the path of rules, or Holm's
    procedure (``how: threshold`` only). ``group_blind``: a rule that never reads the group at
    prediction (the feature columns that encode it are left out of the fit; one threshold for
    everyone; ``how: threshold`` only); the group is still used to certify.
    ``allow_degenerate``: whether a degenerate model (one class for almost every row, or not
    better than the majority rule beyond noise: safeclf/guarantees/trivial.py) may be returned, flagged;
    by default it is no solution."""

    delta: float = CERTIFY_DEFAULTS["delta"]
    fraction: float = CERTIFY_DEFAULTS["fraction"]
    how: Literal["threshold", "training"] | None = CERTIFY_DEFAULTS["how"]
    bound: str = CERTIFY_DEFAULTS["bound"]
    test: Literal["fixed_sequence", "holm"] = CERTIFY_DEFAULTS["test"]
    group_blind: StrictBool = CERTIFY_DEFAULTS["group_blind"]
    allow_degenerate: StrictBool = CERTIFY_DEFAULTS["allow_degenerate"]

    @field_validator("delta", "fraction")
    @classmethod
    def _open_unit(cls, v):
        if not 0 < v < 1:
            raise ValueError("must be in (0, 1)")
        return v

    @field_validator("bound")
    @classmethod
    def _known_bound(cls, v):
        from safeclf.guarantees.bounds import BOUNDS

        if v not in BOUNDS:
            raise ValueError(f"must be one of {', '.join(BOUNDS)}")
        return v

    def route(self, plugin) -> str:
        """``how``, or its default for ``plugin`` (:func:`safeclf.guarantees.certify.route`)."""
        return certify_route(plugin, self.how)

    def identity(self) -> dict:
        """The entry as it enters a job's id: the options left at their defaults are left
        out, so the jobs of a spec written before they existed keep their ids."""
        out = self.model_dump(mode="json")
        for key in ("how", "bound", "test", "group_blind", "allow_degenerate"):
            if out[key] == CERTIFY_DEFAULTS[key]:
                del out[key]
        return out


class MethodEntry(_Strict):
    method: str
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    preprocess: Preprocess | Preprocessing | None = None
    datasets: list[str] | None = Field(None, min_length=1)
    save_model: bool | None = None  # overrides save_models (default: true when certified)
    certify: Certify | None = None
    path: str | None = None  # a grid parameter whose points one job solves in order (warm)
    #: promises the user requires of the method, in ramp's constraint vocabulary
    #: (safeclf/guarantees/declared.py): checked on the test split, certified with ``certify``
    promises: list[dict[str, Any]] | None = None


class PlotEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: str
    name: str | None = None


class Selection(_Strict):
    """Rows of the metrics table: by method label, dataset label, and column values."""

    method: str | None = None
    dataset: str | None = None
    where: dict[str, Any] = Field(default_factory=dict)
    metric: str | None = None
    agg: Literal[AGGS] | None = None  # type: ignore[valid-type]


#: Where an expectation's reference comes from: ``paper`` (a number or claim printed in the
#: paper: page, table, equation), ``figure`` (read off one of the paper's plots), ``report``
#: (proset's author's report), ``project`` (our own measurement or design choice),
#: ``invariant`` (true by construction: a solver or implementation check).
SOURCE_KINDS = ("paper", "figure", "report", "project", "invariant")


#: The kinds that cite someone else's figure or claim (counted apart from the others).
CITED_KINDS = ("paper", "figure", "report")


class Source(_Strict):
    """``source: {kind: paper, where: "Table 1, eq. (16)"}``; the plain word ``source:
    project`` (or ``invariant``) where there is nothing to cite."""

    kind: Literal[SOURCE_KINDS]  # type: ignore[valid-type]
    where: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _cited(self):
        if self.kind in CITED_KINDS and not (self.where or "").strip():
            raise ValueError(f"needs 'where' for a '{self.kind}' source: the page, table, "
                             "equation, figure or section it is read from")
        return self


#: The verdicts of an expectation that do not fail ``run --check``: met, or a stated
#: deviation's miss (``Expectation.deviation``); any other (``FAIL``) is a failure.
NOT_FAILED = ("pass", "deviation")


class Expectation(_Strict):
    """One condition on the metrics table. ``source`` says where its reference comes from
    (:data:`SOURCE_KINDS`); a spec file must give it (:func:`safeclf.spec.check.check_sources`),
    a stored run's spec from before it existed is read without."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    metric: str
    method: str | None = None
    dataset: str | None = None
    where: dict[str, Any] = Field(default_factory=dict)
    per: list[str] = Field(default_factory=list)
    agg: Literal[AGGS] = "mean"  # type: ignore[valid-type]
    le: float | Selection | None = Field(None, alias="<=")
    lt: float | Selection | None = Field(None, alias="<")
    ge: float | Selection | None = Field(None, alias=">=")
    gt: float | Selection | None = Field(None, alias=">")
    paper: float | None = None
    tolerance: float | None = Field(None, ge=0)
    compare: Literal["within", "at_most", "at_least"] = "within"
    note: str | None = None
    source: Source | None = None
    #: A stated known deviation: why our figure is expected to miss the cited one. The check
    #: still runs and is reported (verdict ``deviation`` when it misses, ``pass`` when it
    #: holds); a miss does not fail ``--check``. Only a cited figure (paper, figure, report)
    #: can deviate: a project choice or an invariant that fails is a failure.
    deviation: str | None = Field(None, min_length=20)

    @field_validator("source", mode="before")
    @classmethod
    def _plain_source(cls, v):
        return {"kind": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _one_condition(self):
        ops = [op for op, key in zip(OPS, ("le", "lt", "ge", "gt")) if getattr(self, key) is not None]
        if self.paper is not None:
            ops.append("paper")
            if self.tolerance is None:
                raise ValueError("a 'paper' value needs a 'tolerance'")
        if len(ops) != 1:
            raise ValueError(
                "needs exactly one condition: one of '<=', '<', '>=', '>' or 'paper' with "
                f"'tolerance' (got {len(ops)})"
            )
        if self.source is not None and self.source.kind == "figure" and (
                self.paper is None or self.compare != "within"):
            raise ValueError("has a 'figure' source (a value read off a plot): give it as "
                             "'paper' with a two-sided 'tolerance' (compare: within) that "
                             "covers the reading")
        if self.deviation is not None and (self.source is None
                                           or self.source.kind not in CITED_KINDS):
            raise ValueError("states a 'deviation': only a cited figure can deviate (source "
                             f"{', '.join(CITED_KINDS)}); a project choice or an invariant "
                             "that does not hold is a failure")
        return self

    @property
    def condition(self) -> tuple[str, Any]:
        if self.paper is not None:
            return "paper", self.paper
        for op, key in zip(OPS, ("le", "lt", "ge", "gt")):
            if getattr(self, key) is not None:
                return op, getattr(self, key)
        raise AssertionError("validated to have one condition")


#: A run name: it names the run folder ``<YYYYmmdd-HHMMSS>-<name>`` (a file name has at most
#: 255 bytes on common file systems; a name is for reading, so well below that).
NAME_PATTERN = r"^[A-Za-z0-9_.-]+$"


MAX_NAME = 100


class Spec(_Strict):
    name: str = Field(pattern=NAME_PATTERN, max_length=MAX_NAME)
    description: str | None = None
    seeds: list[int] = Field(default_factory=lambda: [0])
    datasets: list[DatasetEntry] = Field(min_length=1)
    methods: list[MethodEntry] = Field(min_length=1)
    metrics: list[str] = Field(default_factory=lambda: ["error", "balanced_accuracy"])
    confidence: float = Field(0.95, gt=0, lt=1)
    plots: list[PlotEntry] = Field(default_factory=list)  # default: see _default_plot
    expect: list[Expectation] = Field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    save_models: bool = False  # write each fitted model to models/<job>.skops

    @field_validator("profiles")
    @classmethod
    def _omitted(cls, v):
        for name, patch in v.items():
            why = patch.get(OMITTED)
            if why is not None and not (isinstance(why, dict) and all(
                    isinstance(k, str) and re.fullmatch(r"expect\[\d+\]", k)
                    and isinstance(r, str) and r.strip() for k, r in why.items())):
                raise ValueError(f"{name}.{OMITTED} must map 'expect[i]' (an expectation of "
                                 "the full spec) to the reason this profile leaves it out")
        return v

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, v):
        if isinstance(v, bool):
            raise ValueError("must be a positive integer or a list of integers")
        if isinstance(v, int):
            if v < 1:
                raise ValueError("must be ≥ 1")
            if v > MAX_SEEDS:
                raise ValueError(f"must be ≤ {MAX_SEEDS:,} (a count of seeds)")
            return list(range(v))
        if isinstance(v, list):
            if not v:
                raise ValueError("must not be empty")
        return v

    @model_validator(mode="after")
    def _default_plot(self):
        """Without ``plots``, one bar plot of a metric the spec asks for on the test part:
        ``test_error`` when ``error`` is among the metrics, else the first metric's."""
        if "plots" not in self.model_fields_set and self.metrics:
            shown = "error" if "error" in self.metrics else self.metrics[0]
            self.plots = [PlotEntry(kind="bar", metric=f"test_{shown}")]
        return self

    def dataset_label(self, i: int) -> str:
        return self.datasets[i].name or self.datasets[i].dataset

    def method_label(self, i: int) -> str:
        return self.methods[i].name or self.methods[i].method

    def saves_model(self, method_index: int) -> bool:
        """Whether jobs of method ``method_index`` keep their fitted model: the method's
        ``save_model``, else ``save_models``, else yes for a certified method (``certify``:
        its certified model is the one ``deploy`` copies, never refitted, so a run that did
        not keep it would have to be made again)."""
        entry = self.methods[method_index]
        if entry.save_model is not None:
            return entry.save_model
        return self.save_models or entry.certify is not None

    def runs_on(self, method_index: int, dataset_index: int) -> bool:
        """Whether method ``method_index`` runs on dataset ``dataset_index`` (a method entry's
        ``datasets`` lists the labels it is restricted to)."""
        only = self.methods[method_index].datasets
        return only is None or self.dataset_label(dataset_index) in only

    def resolved(self) -> dict[str, Any]:
        """The spec as plain data with labels and defaults filled in (written to the run)."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        for i, d in enumerate(data["datasets"]):
            d["name"] = self.dataset_label(i)
        for i, m in enumerate(data["methods"]):
            m["name"] = self.method_label(i)
        data["expect"] = [
            {k: v for k, v in e.items() if v not in ({}, [])} for e in data["expect"]
        ]
        return data


#: Bounds that keep a hostile or mistaken spec from exhausting memory or time before any check.
MAX_SEEDS = 10_000


MAX_SEED = 2**31 - 1


MAX_JOBS = 100_000
