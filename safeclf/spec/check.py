"""What a spec must satisfy before anything runs, beyond its schema: known plugins and
parameters, promises and certification requests that make sense, plots and expectations that
name columns the run will have, bounded size; and the one entry that reads, checks and
resolves a spec (:func:`load_spec`, :func:`parse`)."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from safeclf.errors import SpecError, closest
from safeclf.spec.expand import count_jobs, grid_points, is_grid
from safeclf.spec.schema import (
    BUILTIN_PLOT_KEYS,
    MAX_JOBS,
    MAX_SEED,
    MAX_SEEDS,
    MethodEntry,
    PlotEntry,
    Selection,
    Spec,
)
from safeclf.spec.yaml import apply_overrides, apply_profile, read_yaml


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
        check_sources(spec)
        resolve_paths(spec, Path(path).resolve().parent)
    return spec


def check_sources(spec: Spec) -> None:
    """Every expectation of a spec the user gives says where its reference comes from
    (``source``); a run folder's stored spec from before ``source`` existed is read without
    this check (it is a record, not a request)."""
    from safeclf.spec.schema import SOURCE_KINDS

    for i, e in enumerate(spec.expect):
        if e.source is None:
            raise SpecError(
                f"expect[{i}].source is required: say where the reference comes from, one of "
                f"{', '.join(SOURCE_KINDS)} (paper, figure and report with where: the page, "
                "table, equation or figure), e.g. source: {kind: paper, where: \"Table 2\"} "
                "or source: project")


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
    plugin_plots: dict = {}
    for i, m in enumerate(spec.methods):
        plugin = registry.get_method(m.method, f"methods[{i}].method")
        for point in grid_points(m.params, f"methods[{i}].params"):
            _check_installed(plugin, point, f"methods[{i}]")
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
        plugin_plots.update(plugin.plots)
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
        _check_plugin_plot(i, p, plugin_plots.get(p.kind))
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


def _check_plugin_plot(i: int, p: PlotEntry, fn) -> None:
    """A method's plot kind validates its own options: its ``check(options)`` (the options
    beside the ``methods``/``datasets`` filters) raises ``ValueError`` naming the option."""
    check = getattr(fn, "check", None)
    if check is None:
        return
    options = {k: v for k, v in (p.model_extra or {}).items() if k not in ("methods", "datasets")}
    try:
        check(options)
    except ValueError as exc:
        raise SpecError(f"plots[{i}] ({p.kind}): {exc}") from None


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


def _check_installed(plugin, params, where: str) -> None:
    """The optional packages the plugin needs for ``params`` are installed; otherwise one line
    naming the extra that installs them (before anything is read or run)."""
    import importlib.util

    for module, extra in plugin.requires(params).items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken parent package, a module without spec
            found = False
        if not found:
            raise SpecError(f"{where}: method '{plugin.name}' needs the {module} package, which "
                            f"is not installed: install the {extra} extra (pip install "
                            f"'safeclf[{extra}]')")


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
