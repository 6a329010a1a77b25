"""The YAML experiment spec: schema, validation, profiles, expansion into jobs.

``load_spec(path, profile)`` reads the file with ``yaml.safe_load``, applies a profile, checks
the structure (pydantic) and the names (registry), and returns a :class:`Spec`. ``expand(spec)``
turns it into :class:`Job` objects: dataset × seed × fold × method × grid point. Every problem
is a :class:`~safeclf.errors.SpecError` whose message names the place in the file, e.g.
``methods[1].params.C must be > 0, got -1``.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from safeclf.errors import SpecError, closest

OPS = ("<=", "<", ">=", ">")
BUILTIN_PLOT_KEYS = {"bar": ("metric",), "scatter": ("x", "y"), "line": ("x", "y"),
                     "frontier": ("x", "y"), "seldonian": ("failure", "error")}
AGGS = ("mean", "median", "min", "max", "std", "count")
#: A profile's key saying, per full-profile expectation the profile leaves out or replaces,
#: why (``omitted: {"expect[4]": "needs fairlearn, which CI does not install"}``); it is not
#: merged into the spec (tests/test_config_profiles.py reads it)
OMITTED = "omitted"


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

    delta: float = 0.05
    fraction: float = 0.3
    how: Literal["threshold", "training"] | None = None
    bound: str = "clopper_pearson"
    test: Literal["fixed_sequence", "holm"] = "fixed_sequence"
    group_blind: StrictBool = False
    allow_degenerate: StrictBool = False

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
        """``how``, or its default for ``plugin``."""
        if self.how is not None:
            return self.how
        return "training" if hasattr(plugin, "tightened_params") else "threshold"

    def identity(self) -> dict:
        """The entry as it enters a job's id: the options left at their defaults are left
        out, so the jobs of a spec written before they existed keep their ids."""
        out = self.model_dump(mode="json")
        for key, default in (("how", None), ("bound", "clopper_pearson"),
                             ("test", "fixed_sequence"), ("group_blind", False),
                             ("allow_degenerate", False)):
            if out[key] == default:
                del out[key]
        return out


class MethodEntry(_Strict):
    method: str
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    preprocess: Preprocess | Preprocessing | None = None
    datasets: list[str] | None = Field(None, min_length=1)
    save_model: bool | None = None  # overrides the spec's save_models for this method
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


class Expectation(_Strict):
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
        """Whether jobs of method ``method_index`` keep their fitted model."""
        own = self.methods[method_index].save_model
        return self.save_models if own is None else own

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


@dataclass(frozen=True)
class Job:
    """One fit-and-evaluate unit: a dataset split by a seed (and fold), a method, a grid point."""

    id: str
    dataset_index: int
    method_index: int
    dataset: str
    method: str
    params: dict = field(hash=False)
    seed: int
    fold: int | None


# --------------------------------------------------------------------------------------------
# reading, profiles and error messages


#: Bounds that keep a hostile or mistaken spec from exhausting memory or time before any check.
MAX_SEEDS = 10_000
MAX_SEED = 2**31 - 1
MAX_JOBS = 100_000
MAX_YAML_NODES = 200_000  # nodes after alias expansion (a real spec has a few hundred)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Parse ``path`` as safe YAML; malformed YAML names the line. Duplicate keys in a mapping
    are refused (YAML would keep the last silently), and so is a document whose aliases expand
    to more than :data:`MAX_YAML_NODES` nodes (an "alias bomb")."""
    p = Path(path)
    if p.is_dir():
        raise SpecError(f"spec file '{path}' is a folder; give the YAML file inside it")
    if not p.is_file():
        raise SpecError(f"spec file '{path}' does not exist")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a UTF-8 text file") from None
    data = parse_yaml(text, str(path))
    if not isinstance(data, dict):
        raise SpecError(f"{path}: the spec must be a mapping with name, datasets and methods")
    return data


def parse_yaml(text: str, where: str) -> Any:
    """Safe-load one YAML document from ``text`` with the checks of :func:`read_yaml`;
    ``where`` names the source in messages."""
    import yaml

    loader = None
    try:
        loader = yaml.SafeLoader(text)  # the reader refuses control characters here
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, where)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError(f"{where}: character U+{code:04X} at line {line}, column {column} is not "
                        "allowed in YAML (a control character)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{where}: malformed YAML{at}: {problem}") from None
    except RecursionError:  # the composer and constructor recurse once per level
        raise SpecError(f"{where}: the YAML nests lists or mappings too deeply (a spec needs a "
                        "few levels, not hundreds)") from None
    finally:
        if loader is not None:
            loader.dispose()


def _check_nodes(root, where: str) -> None:
    """Refuse duplicate mapping keys and alias expansion beyond :data:`MAX_YAML_NODES`. The
    expanded size is computed once per distinct node (aliases share nodes), so the check itself
    stays linear in the file."""
    import yaml

    sizes: dict[int, int] = {}
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        kids = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) \
            else list(node.value)
        if not children_done:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key, _ in node.value:
                    if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                        continue
                    if key.value in seen:
                        raise SpecError(
                            f"{where}: duplicate key '{key.value}' at line {key.start_mark.line + 1} "
                            f"(first at line {seen[key.value]}); YAML would keep only the last")
                    seen[key.value] = key.start_mark.line + 1
            stack.append((node, True))
            stack.extend((c, False) for c in kids if id(c) not in sizes)
            continue
        sizes[id(node)] = 1 + sum(sizes.get(id(c), 1) for c in kids)
        if sizes[id(node)] > MAX_YAML_NODES:
            raise SpecError(
                f"{where}: the YAML expands to more than {MAX_YAML_NODES:,} values through its "
                f"aliases (line {node.start_mark.line + 1}); write the repeated parts out")


def apply_profile(data: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """Merge ``profiles[profile]`` into the spec: mappings merge key by key, lists are replaced,
    and for ``datasets``/``methods`` a mapping keyed by label patches those items only (a label
    mapped to ``null`` removes the item)."""
    data = copy.deepcopy(data)
    if profile is None:
        return data
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise SpecError(f"profiles must be a mapping of profile names to changes, got {profiles!r}")
    if profile not in profiles:
        raise SpecError(f"profiles: no profile '{profile}'{closest(profile, profiles)}"
                        f"{'' if profiles else ' (the spec defines none)'}")
    patch = profiles[profile] or {}
    if not isinstance(patch, dict):
        raise SpecError(f"profiles.{profile} must be a mapping, got {patch!r}")
    for key, value in patch.items():
        if key == OMITTED:  # reasons, not a patch (validated with the spec's profiles)
            continue
        if key in ("datasets", "methods") and isinstance(value, dict):
            items = data.get(key) or []
            labels = [it.get("name") or it.get(key[:-1]) for it in items if isinstance(it, dict)]
            removed = set()
            for label, item_patch in value.items():
                if label not in labels:
                    raise SpecError(
                        f"profiles.{profile}.{key}.{label}: no {key[:-1]} labelled '{label}'"
                        f"{closest(label, labels)}"
                    )
                i = labels.index(label)
                if item_patch is not None and not isinstance(item_patch, dict):
                    raise SpecError(
                        f"profiles.{profile}.{key}.{label} must be a mapping of changes to that "
                        f"{key[:-1]} (or null to drop it), got {item_patch!r}")
                if item_patch is None:
                    removed.add(i)
                else:
                    items[i] = _merge(items[i], item_patch)
            data[key] = [it for i, it in enumerate(items) if i not in removed]
        else:
            data[key] = _merge(data.get(key), value)
    return data


_OVERRIDE_STEP = re.compile(r"([A-Za-z_][\w-]*)((?:\[-?\d+\])*)$")
_OVERRIDE_TEXT = re.compile(r"~?[A-Za-z_][\w\-\[\].]*(=|$)")


def looks_like_override(text: str) -> bool:
    """Whether a command-line word is a ``key=value`` (or ``~key``) override rather than a
    file: the parser puts the first word after ``run`` into SPEC, so ``run --resume RUN
    seeds=2`` would read ``seeds=2`` as the spec file."""
    m = _OVERRIDE_TEXT.match(text)
    return bool(m) and (m.group(1) == "=" or text.startswith("~")) and not Path(text).exists()


def apply_overrides(data: dict[str, Any], overrides) -> dict[str, Any]:
    """Apply command-line overrides in the Hydra style, after the profile: ``key=value`` sets
    the value at a dotted path with list indices (``methods[0].params.C=10``), the value read
    as a YAML scalar or flow collection (``10`` an int, ``0.1`` a float, ``[1, 2]`` a list,
    ``{grid: [0.1, 1]}`` a grid); ``~key`` deletes a key. Each problem names the override."""
    data = copy.deepcopy(data)
    for text in overrides or ():
        delete = text.startswith("~")
        path, eq, raw = text[1:].partition("=") if delete else text.partition("=")
        if not delete and not eq:
            raise SpecError(f"override '{text}': write key=value (e.g. seeds=1 or "
                            "methods[0].params.C=10), or ~key to delete a key")
        steps = _override_steps(path.strip(), text)
        value = None if delete else parse_yaml(raw, f"override '{text}'")
        parent, where = data, ""
        for n, step in enumerate(steps):
            last = n == len(steps) - 1
            if isinstance(step, int):
                if not isinstance(parent, list):
                    raise SpecError(f"override '{text}': {where or 'the spec'} is not a list")
                if not -len(parent) <= step < len(parent):
                    raise SpecError(f"override '{text}': {where} has {len(parent)} items, "
                                    f"no index {step}")
            else:
                if not isinstance(parent, dict):
                    raise SpecError(f"override '{text}': {where or 'the spec'} is not a mapping")
                if step not in parent and delete:
                    raise SpecError(f"override '{text}': {where + '.' if where else ''}{step} is "
                                    f"not in the spec{closest(step, list(parent))}")
                if step not in parent and not last:  # methods[0].params.C=1 without params
                    if isinstance(steps[n + 1], int):
                        raise SpecError(f"override '{text}': {where + '.' if where else ''}{step} "
                                        "is not in the spec, so it has no index")
                    parent[step] = {}
            where += f"[{step}]" if isinstance(step, int) else (f".{step}" if where else step)
            if last:
                if delete:
                    del parent[step]
                else:
                    parent[step] = value
            else:
                parent = parent[step]
    return data


def _override_steps(path: str, text: str) -> list:
    steps: list = []
    for part in path.split(".") if path else [""]:
        m = _OVERRIDE_STEP.match(part)
        if not m:
            raise SpecError(f"override '{text}': '{part}' is not a key (letters, digits, _ or -, "
                            "then optional [index])")
        steps.append(m.group(1))
        steps += [int(i) for i in re.findall(r"-?\d+", m.group(2))]
    return steps


def _merge(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base.get(k), v)
        return out
    return copy.deepcopy(patch)


def parse(data: dict[str, Any]) -> Spec:
    """Structure check of already-profiled data; raises :class:`SpecError`."""
    from safeclf._utils.messages import explain, model_keys

    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(explain(exc, data, known_keys=model_keys(Spec))) from None


def load_spec(path: str | Path, profile: str | None = None, check_names: bool = True,
              overrides=()) -> Spec:
    """Read, profile, override, parse and (by default) check every name and parameter of a
    spec file; data-file parameters are made absolute against the spec's folder."""
    data = apply_overrides(apply_profile(read_yaml(path), profile), overrides)
    spec = parse(data)
    if check_names:
        check(spec)
        resolve_paths(spec, Path(path).resolve().parent)
    return spec


def path_params(dataset: str) -> list[str]:
    """The parameters of dataset loader ``dataset`` that name files: those annotated with
    :class:`pathlib.Path` (alone or in a union)."""
    import typing

    from safeclf.plugins import registry

    hints = typing.get_type_hints(registry.get_dataset(dataset).load)
    return [k for k, h in hints.items() if h is Path or Path in typing.get_args(h)]


def resolve_paths(spec: Spec, base: Path) -> None:
    """Make every data-file parameter absolute, relative paths taken from ``base`` (the spec's
    folder, as a reader of the spec expects), ``~`` expanded."""
    for d in spec.datasets:
        for key in path_params(d.dataset):
            value = d.params.get(key)
            if isinstance(value, str) and value:
                path = base / Path(value).expanduser()
                try:
                    d.params[key] = str(path.resolve())
                except (RuntimeError, OSError):  # a symlink loop: the loader says so
                    d.params[key] = os.path.abspath(path)


# --------------------------------------------------------------------------------------------
# semantic checks


def is_grid(value) -> bool:
    return isinstance(value, dict) and set(value) == {"grid"}


def grid_points(params: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """Every combination of the ``grid:`` parameters, in a stable order."""
    keys, values = [], []
    for k, v in params.items():
        if is_grid(v):
            if not isinstance(v["grid"], list):
                raise SpecError(f"{where}.{k}.grid must be a list, got {v['grid']!r}")
            if not v["grid"]:
                raise SpecError(f"{where}.{k}.grid is empty; give at least one value")
            keys.append(k)
            values.append(v["grid"])
        elif isinstance(v, dict) and "grid" in v:
            extra = sorted(set(v) - {"grid"})
            raise SpecError(f"{where}.{k}: a grid takes only the key 'grid', found {extra}")
    fixed = {k: v for k, v in params.items() if k not in keys}
    return [dict(fixed, **dict(zip(keys, combo))) for combo in itertools.product(*values)]


def check(spec: Spec) -> None:
    """Names, labels, parameters, metrics and plot kinds; raises :class:`SpecError`."""
    from safeclf.guarantees.metrics import METRICS
    from safeclf.plugins import registry

    for kind, labels in (("datasets", [spec.dataset_label(i) for i in range(len(spec.datasets))]),
                         ("methods", [spec.method_label(i) for i in range(len(spec.methods))])):
        seen = {}
        for i, label in enumerate(labels):
            if label in seen:
                raise SpecError(
                    f"{kind}[{i}] has the same label '{label}' as {kind}[{seen[label]}]; "
                    "give one of them a distinct 'name'"
                )
            seen[label] = i
    dataset_labels = [spec.dataset_label(i) for i in range(len(spec.datasets))]
    for i, m in enumerate(spec.methods):
        for k, label in enumerate(m.datasets or []):
            if label not in dataset_labels:
                raise SpecError(f"methods[{i}].datasets[{k}]: no dataset labelled '{label}'"
                                f"{closest(label, dataset_labels)}")
    if len(spec.seeds) > MAX_SEEDS:
        raise SpecError(f"seeds lists {len(spec.seeds):,} seeds; at most {MAX_SEEDS:,} are allowed")
    for i, seed in enumerate(spec.seeds):
        if not 0 <= seed <= MAX_SEED:
            raise SpecError(f"seeds[{i}] must be from 0 to {MAX_SEED} (2^31 - 1), got {seed}")
    if len(set(spec.seeds)) != len(spec.seeds):
        raise SpecError(f"seeds has duplicates: {spec.seeds}")
    n_jobs = count_jobs(spec)
    if n_jobs > MAX_JOBS:
        raise SpecError(f"the spec expands to {n_jobs:,} jobs (datasets × seeds × folds × methods × "
                        f"grid points); at most {MAX_JOBS:,} are allowed: split it into several specs")
    for i, d in enumerate(spec.datasets):
        plugin = registry.get_dataset(d.dataset, f"datasets[{i}].dataset")
        plugin.check_params(d.params, f"datasets[{i}].params")
    plot_kinds = set(BUILTIN_PLOT_KEYS)
    for i, m in enumerate(spec.methods):
        plugin = registry.get_method(m.method, f"methods[{i}].method")
        for point in grid_points(m.params, f"methods[{i}].params"):
            plugin.check_params(point, f"methods[{i}].params")
        if m.promises is not None:
            from safeclf.guarantees import declared

            try:
                declared.parse(m.promises, f"methods[{i}].promises")
            except ValueError as exc:
                raise SpecError(str(exc)) from None
        if m.certify is not None:
            _check_certify(m, plugin, f"methods[{i}]")
        if m.path is not None:
            if m.certify is not None:
                raise SpecError(f"methods[{i}].path: a method with certify is fitted by the "
                                "certified training, not as a path; drop one of the two")
            _check_path(m, plugin, f"methods[{i}].path")
        plot_kinds |= set(plugin.plots)
    for i, name in enumerate(spec.metrics):
        if name not in METRICS:
            raise SpecError(f"metrics[{i}]: unknown metric '{name}'{closest(name, METRICS)}; "
                            f"known: {', '.join(METRICS)}")
    for i, p in enumerate(spec.plots):
        if p.kind not in plot_kinds:
            raise SpecError(f"plots[{i}].kind: unknown plot kind '{p.kind}'"
                            f"{closest(p.kind, plot_kinds)}; known: {', '.join(sorted(plot_kinds))}")
        for key in BUILTIN_PLOT_KEYS.get(p.kind, ()):
            if key not in (p.model_extra or {}):
                raise SpecError(f"plots[{i}].{key} is required for a '{p.kind}' plot")
        _check_plot(spec, i, p)
    dlabels = {spec.dataset_label(i) for i in range(len(spec.datasets))}
    mlabels = {spec.method_label(i) for i in range(len(spec.methods))}
    for i, e in enumerate(spec.expect):
        sels = [(f"expect[{i}]", e)]
        op, rhs = e.condition
        if isinstance(rhs, Selection):
            sels.append((f'expect[{i}]."{op}"', rhs))
        for where, sel in sels:
            if sel.method is not None and sel.method not in mlabels:
                raise SpecError(f"{where}.method: no method labelled '{sel.method}'"
                                f"{closest(sel.method, mlabels)}")
            if sel.dataset is not None and sel.dataset not in dlabels:
                raise SpecError(f"{where}.dataset: no dataset labelled '{sel.dataset}'"
                                f"{closest(sel.dataset, dlabels)}")
    _check_metric_names(spec)


#: Columns of the metrics table besides metrics and ``param.<name>``.
TABLE_COLUMNS = ("fit_seconds", "predict_seconds", "seed", "fold")
#: Columns that say which job a row is (``where`` and ``per`` may name them).
IDENTITY_COLUMNS = ("job", "dataset", "method", "params", "status", "error", "solver_status",
                    "n_iter")
_PLOT_FILE = re.compile(r"[^/\\\x00]{1,100}")


def train_rows(spec: Spec, datasets=None, why: str = "") -> dict[str, int]:
    """Training-set size per dataset label (``split.train_rows``), for the datasets labelled
    in ``datasets`` (all by default); a :class:`SpecError` for one without, ``why`` saying who
    needs it."""
    out = {}
    for i, d in enumerate(spec.datasets):
        label = spec.dataset_label(i)
        if datasets and label not in datasets:
            continue
        if d.split.train_rows is None:
            raise SpecError(f"dataset '{label}' has no split.train_rows; {why or 'it is needed'},"
                            " so give each dataset entry its train_rows (or leave it out with "
                            "the plot's datasets:)")
        out[label] = int(d.split.train_rows)
    return out


def _check_plot(spec: Spec, i: int, p: PlotEntry) -> None:
    """A plot's name is a file name in the run's plots folder (no path, not two plots
    with one name); its built-in axes are column names (strings); its ``methods`` and
    ``datasets`` filters list labels of the spec; a bar's ``bound`` is a number."""
    extra = p.model_extra or {}
    if p.name is not None and (not _PLOT_FILE.fullmatch(p.name) or p.name in (".", "..")):
        raise SpecError(f"plots[{i}].name must be a file name (1 to 100 characters, no '/'), "
                        f"got {p.name!r}")
    if p.name is not None and any(q.name == p.name for q in spec.plots[:i]):
        raise SpecError(f"plots[{i}].name '{p.name}' is the name of an earlier plot; each plot "
                        "needs its own file")
    for key in BUILTIN_PLOT_KEYS.get(p.kind, ()):
        if not isinstance(extra[key], str):
            raise SpecError(f"plots[{i}].{key} must be a column name, got {extra[key]!r}")
    for key, kind in (("methods", "methods"), ("datasets", "datasets")):
        if key not in extra:
            continue
        labels = [spec.method_label(k) if kind == "methods" else spec.dataset_label(k)
                  for k in range(len(getattr(spec, kind)))]
        if not isinstance(extra[key], list) or not extra[key]:
            raise SpecError(f"plots[{i}].{key} must be a non-empty list of {kind[:-1]} labels, "
                            f"got {extra[key]!r}")
        for k, label in enumerate(extra[key]):
            if label not in labels:
                raise SpecError(f"plots[{i}].{key}[{k}]: no {kind[:-1]} labelled '{label}'"
                                f"{closest(str(label), labels)}")
    if p.kind == "seldonian":
        try:
            train_rows(spec, extra.get("datasets"), "the Seldonian plot draws against "
                       "training-set size")
        except SpecError as exc:
            raise SpecError(f"plots[{i}] (seldonian): {exc}") from None
    bound = extra.get("bound")
    if p.kind in ("bar", "frontier") and bound is not None and (
            isinstance(bound, bool) or not isinstance(bound, int | float)):
        raise SpecError(f"plots[{i}].bound must be a number, got {bound!r}")


def reported_metrics(spec: Spec, method_index: int) -> set[str] | None:
    """The metric columns method ``method_index`` will report (names or shell-style patterns):
    the spec's metrics for each part it is evaluated on (``train``, ``cal`` where a split has
    one, ``test``), the names its plugin declares for each parameter point
    (:meth:`~safeclf.plugins.contract.MethodPlugin.metric_names`, ``{part}`` expanded), the columns of
    the promises it declares (:meth:`~safeclf.plugins.contract.MethodPlugin.promise_names`:
    ``promise_<name>_*``, any ``promise_*`` when they are known only after fitting) and,
    with ``certify``, ``no_solution``; for every job ``test_trivial_error`` and ``degenerate``
    (safeclf/guarantees/trivial.py); ``None`` when the plugin's metric names are only known
    after fitting."""
    from safeclf.guarantees.groups import UNDIRECTED
    from safeclf.plugins import registry

    m = spec.methods[method_index]
    plugin = registry.get_method(m.method)
    parts = {"train", "test"}
    if any(d.split.calibration for i, d in enumerate(spec.datasets) if spec.runs_on(method_index, i)):
        parts.add("cal")
    own: set[str] = set()
    for point in grid_points(m.params, f"methods[{method_index}].params"):
        names, promises = plugin.metric_names(point), plugin.promise_names(point)
        if names is None:
            return None
        own.update(n.format(part=part) if "{part}" in n else n for n in names for part in parts)
        # promises known only after fitting: any promise column
        own.update(f"promise_{p}_*" for p in (("*",) if promises is None else promises))
    own.update(("test_trivial_error", "degenerate"))  # every job (safeclf/guarantees/trivial.py)
    if m.certify is not None:
        own.add("no_solution")
        if m.certify.route(plugin) == "threshold":
            own.add("certify_pass_probability")
    if m.promises:
        from safeclf.guarantees import declared

        own.update(f"promise_declared_{c.name}_*" for c in declared.parse(m.promises))
    names = set(spec.metrics) | ({UNDIRECTED} if "fairness_ratio" in spec.metrics else set())
    return {f"{part}_{name}" for part in parts for name in names} | own


def _check_metric_names(spec: Spec) -> None:
    """Expectations and built-in plots must name a column the run will have: a metric the
    selected methods report, a timing, or ``param.<name>`` of one of their parameters."""
    from safeclf.guarantees.metrics import METRICS
    from safeclf.plugins import registry

    def known_for(method_labels) -> set[str] | None:
        out = set(TABLE_COLUMNS)
        for mi in range(len(spec.methods)):
            if method_labels is not None and spec.method_label(mi) not in method_labels:
                continue
            reported = reported_metrics(spec, mi)
            if reported is None:
                return None
            out |= reported
            out |= {f"param.{k}" for k in registry.get_method(spec.methods[mi].method).defaults()}
        return out

    def verify(where: str, name: str, methods) -> None:
        if not isinstance(name, str):
            return
        known = known_for(methods)
        if known is None or any(fnmatch.fnmatchcase(name, k) for k in known):
            return
        part, _, base = name.partition("_")
        hint = ""
        if part in ("train", "cal", "test") and base in METRICS and base not in spec.metrics:
            hint = f"; add '{base}' to metrics to compute it"
        raise SpecError(f"{where}: no method {'selected ' if methods else ''}reports '{name}'"
                        f"{closest(name, known)}{hint}")

    def verify_column(where: str, key: str, methods) -> None:
        """A ``where`` or ``per`` key: a column, or a parameter's bare name."""
        known = known_for(methods)
        if known is None or key in IDENTITY_COLUMNS or f"param.{key}" in known or any(
                fnmatch.fnmatchcase(key, k) for k in known):
            return
        bare = [k.removeprefix("param.") for k in known if k.startswith("param.")]
        raise SpecError(f"{where}: no column '{key}' in the metrics table"
                        f"{closest(key, [*IDENTITY_COLUMNS, *known, *bare])}")

    for i, e in enumerate(spec.expect):
        methods = [e.method] if e.method else None
        verify(f"expect[{i}].metric", e.metric, methods)
        for k, key in enumerate(e.per):
            verify_column(f"expect[{i}].per[{k}]", key, methods)
        for key in e.where:
            verify_column(f"expect[{i}].where.{key}", key, methods)
        op, rhs = e.condition
        if isinstance(rhs, Selection):
            method = rhs.method or e.method
            if rhs.metric:
                verify(f'expect[{i}]."{op}".metric', rhs.metric, [method] if method else None)
            for key in rhs.where:
                verify_column(f'expect[{i}]."{op}".where.{key}', key, [method] if method else None)
    for i, p in enumerate(spec.plots):
        extra = p.model_extra or {}
        for key in BUILTIN_PLOT_KEYS.get(p.kind, ()):
            verify(f"plots[{i}].{key}", extra.get(key), extra.get("methods"))


def _check_certify(m: MethodEntry, plugin, where: str) -> None:
    """What a certification request needs before any data is read: a route the method has, a
    score for a threshold, and something to certify."""
    how = m.certify.route(plugin)
    if how == "training":
        if not hasattr(plugin, "tightened_params"):
            raise SpecError(f"{where}.certify.how: method '{m.method}' cannot be certified in "
                            "training (that needs a plugin with tightened_params, such as "
                            "ramp); use how: threshold")
        if m.promises:
            raise SpecError(f"{where}.promises: certify how: training certifies the method's "
                            "own constraints only; use how: threshold to certify declared "
                            "promises")
        if m.certify.test != "fixed_sequence":
            raise SpecError(f"{where}.certify.test: '{m.certify.test}' applies to how: "
                            "threshold (training makes one safety test)")
        if m.certify.group_blind:
            raise SpecError(f"{where}.certify.group_blind applies to how: threshold (a "
                            "certified threshold that never reads the group)")
        untightenable = getattr(plugin, "untightenable", None)
        for point in grid_points(m.params, f"{where}.params"):
            reason = untightenable(point) if untightenable else None
            if reason:
                raise SpecError(f"{where}.params.{reason}; certify it post hoc with "
                                f"{where}.certify.how: threshold")
        return
    est = plugin.estimator
    if not (hasattr(est, "decision_function") or hasattr(est, "predict_proba")):
        raise SpecError(f"{where}.certify: method '{m.method}' gives no score "
                        "(decision_function or predict_proba), so no threshold can be "
                        "certified for it")
    if not m.promises and all(plugin.promise_names(point) == ()
                              for point in grid_points(m.params, f"{where}.params")):
        raise SpecError(f"{where}.certify: method '{m.method}' makes no promise to certify; "
                        f"state one under {where}.promises (e.g. {{rate: fpr, max: 0.05}})")


def _check_path(m: MethodEntry, plugin, where: str) -> None:
    if m.path not in plugin.path_params:
        can = (f"it can for {', '.join(repr(p) for p in plugin.path_params)}"
               if plugin.path_params else "it declares no path parameter")
        raise SpecError(f"{where}: method '{m.method}' cannot solve a grid of '{m.path}' as a "
                        f"path ({can})")
    if not is_grid(m.params.get(m.path)):
        raise SpecError(f"{where}: '{m.path}' must be given as a grid "
                        f"(params.{m.path}: {{grid: [...]}}) to be solved as a path")


# --------------------------------------------------------------------------------------------
# expansion


def _job_id(dataset: dict, method: dict, params: dict, seed: int, fold: int | None) -> str:
    key = json.dumps([dataset, method, params, seed, fold], sort_keys=True, default=str)
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def count_jobs(spec: Spec) -> int:
    """How many jobs :func:`expand` would make, computed without making them."""
    sizes = []
    for m in spec.methods:
        size = 1
        for v in m.params.values():
            if is_grid(v) and isinstance(v["grid"], list):
                size *= len(v["grid"])
        sizes.append(size)
    total = 0
    for di, d in enumerate(spec.datasets):
        per_split = sum(sizes[mi] for mi in range(len(spec.methods)) if spec.runs_on(mi, di))
        total += len(spec.seeds) * (d.split.folds or 1) * per_split
    return total


def path_units(spec: Spec, jobs: list[Job]) -> list[list[Job]]:
    """``jobs`` grouped into what one worker runs: a method entry with ``path: <param>`` puts
    the jobs that differ only in that parameter into one unit, in grid order (solved as a
    path, each point starting from the previous one); every other job is a unit of its own."""
    units: list[list[Job]] = []
    where: dict[tuple, int] = {}
    for j in jobs:
        path = spec.methods[j.method_index].path
        if path is None:
            units.append([j])
            continue
        rest = json.dumps({k: v for k, v in j.params.items() if k != path}, sort_keys=True,
                          default=str)
        key = (j.dataset_index, j.seed, j.fold, j.method_index, rest)
        if key in where:
            units[where[key]].append(j)
        else:
            where[key] = len(units)
            units.append([j])
    return units


def expand(spec: Spec) -> list[Job]:
    """All jobs of the spec, in a stable order (dataset, seed, fold, method, grid point)."""
    jobs = []
    for di, d in enumerate(spec.datasets):
        dkey = dict(d.model_dump(mode="json"), name=spec.dataset_label(di))
        folds = list(range(d.split.folds)) if d.split.folds else [None]
        for seed in spec.seeds:
            for fold in folds:
                for mi, m in enumerate(spec.methods):
                    if not spec.runs_on(mi, di):
                        continue
                    # ``path`` only says how the jobs are run, not what they are: not in the id
                    mkey = dict(m.model_dump(mode="json", exclude={"params", "save_model", "path",
                                                                   "promises", "certify"}),
                                name=spec.method_label(mi))
                    # new options enter the id only when used (old specs keep their ids)
                    mkey["certify"] = None if m.certify is None else m.certify.identity()
                    if m.promises is not None:
                        mkey["promises"] = m.promises
                    for point in grid_points(m.params, f"methods[{mi}].params"):
                        jid = _job_id(dkey, mkey, point, seed, fold)
                        jobs.append(Job(jid, di, mi, spec.dataset_label(di),
                                        spec.method_label(mi), point, seed, fold))
    return jobs
