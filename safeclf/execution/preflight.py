"""Every check that can be made before a job starts, so that bad input stops the run with one
line and exit code 2 (a :class:`SpecError` or :class:`DataError`) before anything is written.

Each dataset is loaded once, split as its first job splits it and preprocessed each way a
method asks for; the preprocessed features must be finite (a scaler turns values near ±1e308
into NaN). Every method's plugin then checks each of its parameter points against that task
(:meth:`~safeclf.plugins.contract.MethodPlugin.check_task`: needs, classes, class weights, scaling,
widths).

Parameters the estimators' own constraints accept can still be out of a solver's reach: an
integer wider than the C integer a compiled solver takes (``max_iter: 2^70`` passes
``Interval(Integral, 1, None)``, then liblinear raises ``OverflowError`` in every job). The
width a solver takes differs between solvers (liblinear's ``int``, L-BFGS takes any), so a
parameter point holding an integer of :data:`WIDE_INT` or more is fitted once on a small
stratified slice of the first split (:func:`trial_fit`); when that fit fails and the same fit
with those integers at their defaults succeeds, the integers are at fault and the run stops.
Points without such integers are not fitted: the constraints have seen everything else.
"""

from __future__ import annotations

import numpy as np

from safeclf.data.preprocessing import describe, scaler_of
from safeclf.errors import DataError, SpecError
from safeclf.spec.expand import grid_points
from safeclf.spec.schema import Spec

#: Integers from this value on may not fit a compiled solver's ``int`` (2^31).
WIDE_INT = 2**31

#: Rows per class of the slice a trial fit uses (train, calibration and test parts each).
TRIAL_ROWS = 8


def preflight(spec: Spec) -> None:
    """Load, split and preprocess each dataset as its first job does, then check every method's
    parameter points against it; raises :class:`SpecError` or :class:`DataError`."""
    import warnings

    from safeclf.data import preprocessing
    from safeclf.execution.job import load_dataset, preprocess, split_task
    from safeclf.plugins import registry

    for i, d in enumerate(spec.datasets):
        entry = dict(d.model_dump(mode="json"), name=spec.dataset_label(i))
        place = f"datasets[{i}] ({spec.dataset_label(i)})"
        methods = [j for j in range(len(spec.methods)) if spec.runs_on(j, i)]
        tasks, loaded = {}, None
        try:  # what every job does first, once: load, split, each preprocessing asked for
            for how in preprocesses(spec, i):
                ds = loaded = load_dataset(entry, how)
                with warnings.catch_warnings():  # an overflowing scaler is reported below
                    warnings.simplefilter("ignore")
                    tasks[how] = preprocess(
                        split_task(ds, entry, spec.seeds[0], 0 if d.split.folds else None), how)
                check_finite(tasks[how], how)
        except DataError as exc:
            raise DataError(f"{place}: {exc}") from None
        except Exception as exc:  # a loader tripping over its parameters: still the user's input
            raise DataError(
                f"{place} cannot be loaded with params {d.params}: {type(exc).__name__}: "
                f"{' '.join(str(exc).split())}") from None
        for j in methods:
            m = spec.methods[j]
            plugin = registry.get_method(m.method)
            how = m.preprocess or d.preprocess
            if loaded is not None:
                check_outcome(spec, i, j, plugin, loaded)
            for point in grid_points(m.params, f"methods[{j}].params"):
                try:
                    plugin.check_task(point, tasks[how], preprocessing.steps(how)[1])
                except DataError as exc:
                    raise SpecError(f"methods[{j}] ({spec.method_label(j)}) on {place} "
                                    f"{exc}") from None
                trial_fit(plugin, point, tasks[how], f"methods[{j}].params",
                          f"on {place}")
            if m.promises or m.certify is not None:
                from safeclf.guarantees.certify.posthoc import check_request

                try:
                    check_request(m, plugin, tasks[how], spec.seeds[0], f"methods[{j}]")
                except DataError as exc:
                    raise SpecError(f"{exc} (on {place})") from None


def preprocesses(spec: Spec, i: int) -> list:
    """The ``preprocess`` steps the jobs on dataset ``i`` apply (each method entry's, else the
    dataset's), each once, in the order of the methods."""
    d = spec.datasets[i]
    return list(dict.fromkeys(spec.methods[j].preprocess or d.preprocess
                              for j in range(len(spec.methods)) if spec.runs_on(j, i)))


def check_outcome(spec: Spec, i: int, j: int, plugin, ds) -> None:
    """Refuse method entry ``j`` on dataset ``i`` when its constraints or declared promises
    count favourable decisions and the dataset's labels name no favourable outcome
    (:func:`safeclf.guarantees.outcome.check_method`; a certificate certifies those same promises)."""
    from safeclf.guarantees import declared
    from safeclf.guarantees.outcome import check_method, counted
    from safeclf.plugins import registry

    m = spec.methods[j]
    places = [f"methods[{j}].{place}" for point in grid_points(m.params, f"methods[{j}].params")
              for place in plugin.counts_favourable(point)]
    try:
        places += counted(declared.parse(m.promises, f"methods[{j}].promises"))
    except ValueError:
        pass  # a malformed promise is the spec check's to report
    csv_like = "positive" in registry.get_dataset(spec.datasets[i].dataset).defaults()
    where = f"datasets[{i}]" if csv_like else f"datasets[{i}] ({spec.dataset_label(i)})"
    check_method(list(dict.fromkeys(places)), ds.info, ds.y, where, csv_like)


def check_finite(task, how) -> None:
    """Raise :class:`DataError` when the ``how`` step's statistics (means, variances, ranges)
    or the features of ``task`` after it hold NaN or infinite values, naming the first such
    column (a variance that overflows to infinity would silently turn a column into zeros)."""
    names = task.info.get("feature_names") if isinstance(task.info, dict) else None

    def fail(c: int, count: int, what: str):
        column = f"'{names[c]}'" if names is not None and c < len(names) else f"{c}"
        raise DataError(
            f"preprocess '{describe(how)}' {what.format(column=column)} ({count} column(s); "
            "values near ±1e308 overflow a scaler): rescale the column or use preprocess: none")

    scaler = scaler_of(task.preprocessor)
    for attr, label in (("mean_", "mean"), ("var_", "variance"), ("scale_", "scale"),
                        ("data_min_", "minimum"), ("data_range_", "range"),
                        ("max_abs_", "largest absolute value")):
        stat = getattr(scaler, attr, None)
        if stat is not None and not np.isfinite(stat).all():
            bad = np.flatnonzero(~np.isfinite(stat))
            fail(int(bad[0]), bad.size, f"overflows on feature column {{column}}: its {label} "
                 "is not finite")
    for name, part in task.parts().items():
        X = part.X
        if hasattr(X, "tocsr"):
            X = X.tocsc()
            bad_cols = np.unique(np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))[
                ~np.isfinite(X.data)])
        else:
            bad_cols = np.flatnonzero(~np.isfinite(np.asarray(X, dtype=float)).all(axis=0))
        if bad_cols.size:
            fail(int(bad_cols[0]), bad_cols.size,
                 f"turns feature column {{column}} into NaN or infinite values on the {name} part")


def wide_ints(value, path: str = "") -> list[tuple[str, int]]:
    """``(path, value)`` of every integer in ``value`` (nested lists and mappings too) whose
    magnitude is at least :data:`WIDE_INT`."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [(path, value)] if abs(value) >= WIDE_INT else []
    if isinstance(value, dict):
        return [w for k, v in value.items() for w in wide_ints(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list | tuple):
        return [w for n, v in enumerate(value) for w in wide_ints(v, f"{path}[{n}]")]
    return []


def trial_fit(plugin, params: dict, task, where: str, on: str) -> None:
    """Fit ``plugin`` with ``params`` on a small slice of ``task`` when ``params`` hold an
    integer of :data:`WIDE_INT` or more at the top level; raise :class:`SpecError` naming the
    integer(s) when that fit fails and the fit with them at their defaults does not."""
    wide = [(k, v) for k, v in params.items() if wide_ints(v)]
    if not wide:
        return
    small = _slice(task)
    failure = _try_fit(plugin, params, small)
    if failure is None:
        return
    defaults = plugin.defaults()
    control = {k: v for k, v in params.items() if k not in dict(wide)}
    control.update({k: defaults[k] for k, _ in wide if defaults.get(k) is not None})
    if _try_fit(plugin, control, small) is not None:
        return  # the slice, not the integers: the jobs will tell
    names = ", ".join(f"{where}.{k}" for k, _ in wide)
    values = ", ".join(str(v) if isinstance(v, int) else str(wide_ints(v)[0][1]) for _, v in wide)
    raise SpecError(f"{names} is {values}, too large for method '{plugin.name}' {on} (its fit "
                    f"fails: {failure})")


def _try_fit(plugin, params: dict, task) -> str | None:
    """``None`` when ``plugin`` fits ``params`` on ``task``, else the error in one line."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plugin.fit(plugin.build(params, random_state=0), task)
    except Exception as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
    return None


def _slice(task):
    """A copy of ``task`` with at most :data:`TRIAL_ROWS` rows of each class in each part."""
    import copy

    def take(part):
        if part is None:
            return None
        y = np.asarray(part.y)
        index = np.concatenate([np.flatnonzero(y == c)[:TRIAL_ROWS] for c in np.unique(y)])
        return part.take(np.sort(index))

    small = copy.copy(task)
    small.train, small.test, small.cal = take(task.train), take(task.test), take(task.cal)
    return small


def comparisons(spec: Spec) -> list[str]:
    """The comparisons of groups each method will make on each dataset, one line each
    (``validate`` prints them): ``methods[1] (ramp) on datasets[0] (applicants):
    constraints[0] (fairness_ratio_south): fairness_ratio: s_p(south) ≥ 0.8·s_p(north)``, from
    each plugin's :meth:`~safeclf.plugins.contract.MethodPlugin.comparisons` on the first split (the
    datasets were loaded by :func:`preflight`, and are cached). Without groups, none."""
    from safeclf.execution.job import load_dataset, split_task
    from safeclf.plugins import registry

    out = []
    for i, d in enumerate(spec.datasets):
        entry = dict(d.model_dump(mode="json"), name=spec.dataset_label(i))
        hows = preprocesses(spec, i)
        if not hows:
            continue
        ds = load_dataset(entry, hows[0])  # as preflight loaded it (empty cells kept to impute)
        if not ds.rows:
            continue
        task = split_task(ds, entry, spec.seeds[0], 0 if d.split.folds else None)
        if "fairness_ratio" in spec.metrics and "groups" in ds.rows:
            out.append(f"metrics: fairness_ratio on datasets[{i}] ({spec.dataset_label(i)}): "
                       + _metric_comparison(ds))
        for j in (j for j in range(len(spec.methods)) if spec.runs_on(j, i)):
            plugin = registry.get_method(spec.methods[j].method)
            points = grid_points(spec.methods[j].params, f"methods[{j}].params")
            lines = dict.fromkeys(line for point in points
                                  for line in plugin.comparisons(point, task))
            out += [f"methods[{j}] ({spec.method_label(j)}) on datasets[{i}] "
                    f"({spec.dataset_label(i)}): {line}" for line in lines]
    return out


def _metric_comparison(ds) -> str:
    """What the shared ``fairness_ratio`` metric compares on ``ds`` (:func:`safeclf.guarantees.groups.
    ratio`), in words."""
    from safeclf.guarantees import groups as G

    names = G.values(ds.rows["groups"])
    privileged = ds.info.get("privileged_group")
    if privileged is None:
        return (f"min over groups / max over groups of s_p ({len(names)} groups; no privileged "
                "group named: reported as fairness_ratio_minmax)")
    pairs = G.comparisons(ds.rows["groups"], privileged)
    if len(pairs) == 1:
        return f"s_p({pairs[0].numerator()}) / s_p({privileged})"
    return (f"the smallest of s_p(g) / s_p({privileged}) over g in "
            f"{', '.join(p.protected for p in pairs)}")
