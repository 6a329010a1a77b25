"""The plugin contract: what a method or a dataset declares so the runner can use it.

A method plugin is a :class:`MethodPlugin` object exposed through the ``safeclf.methods`` entry
point group; a dataset plugin is a :class:`DatasetPlugin` exposed through ``safeclf.datasets``.
Adding a method is one package under ``safeclf/methods/`` plus one entry-point line.

The runner never knows a method's mathematics: it builds the estimator from the spec's
parameters (:meth:`MethodPlugin.build`), fits it on a :class:`~safeclf.data.task.Task`
(:meth:`MethodPlugin.fit`, which passes what the plugin ``needs`` as ``fit`` keywords), computes
the shared metrics from the estimator's predictions, and adds whatever the plugin reports
(:meth:`MethodPlugin.report`).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from safeclf._utils.messages import explain
from safeclf.errors import DataError, SpecError, closest

#: The special need for a calibration split; every other need names a ``rows`` entry of the
#: dataset (``groups``, ``uncertainty``, ``baseline``, ``role``, ...) passed to ``fit`` under
#: the same keyword.
CALIBRATION = "calibration"

#: The need for the dataset's privileged group (``info["privileged_group"]``; ``None`` when it
#: names none), passed to ``fit`` as ``privileged_group`` so that a fairness figure the model
#: trains on takes the direction :mod:`safeclf.guarantees.groups` gives every other figure.
PRIVILEGED = "privileged_group"


@dataclass
class Report:
    """What a plugin adds to a job's result.

    ``metrics`` are scalars with their full names (``margin``, ``test_robust_error``);
    ``details`` is JSON-serialisable data kept in the job's result file for plots and audits
    (an allocation path, final multipliers, the guarantee a calibrated model carries).
    """

    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


#: A plot a plugin adds: ``fn(table, details, fig, **options)`` where ``table`` is the run's
#: metrics table (one row per job, ``param.<name>`` columns), ``details`` maps job id to the
#: job's details, and ``fig`` is a fresh matplotlib Figure to draw on.
PlotFn = Callable[..., None]


@dataclass(frozen=True)
class MethodPlugin:
    """A method: a scikit-learn estimator class plus what it needs from the task.

    Parameters
    ----------
    name : str
        The name used in specs (``methods[i].method``).
    estimator : type
        A scikit-learn compatible estimator class; spec parameters are its constructor
        arguments. If it defines ``_parameter_constraints`` (as scikit-learn estimators do),
        spec parameters are checked against them before anything runs.
    summary : str
        One line for ``safeclf methods``.
    needs : tuple of str
        ``"calibration"`` for a calibration split (passed as ``X_cal``, ``y_cal``),
        ``"privileged_group"`` for the dataset's privileged group (:data:`PRIVILEGED`), or
        names of dataset ``rows`` entries passed to ``fit`` under the same keyword.
    uses : tuple of str
        Dataset ``rows`` entries the plugin's :meth:`report` reads when the dataset gives them
        (never required, never passed to ``fit``): mcsvm compares models per ``source``.
    plots : mapping of str to PlotFn
        Plot kinds this method adds to the spec's ``plots`` vocabulary.
    auto_plots : tuple of str
        Kinds among ``plots`` drawn in every run that uses this method, even when the spec's
        ``plots`` does not list them (the plots a method asks for).
    scaling : bool
        Whether a ``preprocess`` step may rescale X (false when the rows a method needs are
        in X's units, as robust_socp's uncertainty is).
    path_params : tuple of str
        Parameters whose grid a spec may ask to solve as a path (``path: <name>`` on the
        method entry): one job fits the grid points in order through :meth:`fit_path`.
    """

    name: str
    estimator: type
    summary: str = ""
    needs: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    plots: Mapping[str, PlotFn] = field(default_factory=dict)
    auto_plots: tuple[str, ...] = ()
    scaling: bool = True
    path_params: tuple[str, ...] = ()

    # -- parameters -----------------------------------------------------------------------
    def defaults(self) -> dict[str, Any]:
        """Constructor parameters and their defaults, in signature order."""
        return signature_defaults(self.estimator.__init__)

    def check_params(self, params: Mapping[str, Any], where: str) -> None:
        """Raise :class:`SpecError` naming ``where`` if ``params`` are not acceptable."""
        known = self.defaults()
        for key in params:
            if key not in known:
                raise SpecError(
                    f"{where}.{key} is not a parameter of method '{self.name}'"
                    f"{closest(key, known)}"
                )
        for key, value in params.items():
            if isinstance(value, float) and value != value:  # no estimator means anything by NaN
                raise SpecError(f"{where}.{key} is NaN; give a number")
        try:
            est = self.estimator(**params)
        except (TypeError, ValueError) as exc:
            raise SpecError(_join(where, str(exc), known)) from None
        validate = getattr(est, "_validate_params", None)
        if validate is None:
            return
        try:
            validate()
        except Exception as exc:  # sklearn's InvalidParameterError is a ValueError/TypeError
            raise SpecError(_sklearn_param_message(str(exc), where, known)) from None

    def build(self, params: Mapping[str, Any], random_state: int | None = None):
        """A fresh estimator with ``params``; ``random_state`` is set when the estimator has
        one and the spec did not fix it."""
        params = dict(params)
        if "random_state" in self.defaults() and "random_state" not in params:
            params["random_state"] = random_state
        return self.estimator(**params)

    def requires(self, params: Mapping[str, Any]) -> dict[str, str]:
        """Optional packages a model with these parameters imports, each with the extra of
        safeclf that installs it (``{"fairlearn": "bench"}``); checked when the spec is
        validated (:func:`safeclf.spec.check.check`), before anything runs. Default: none."""
        return {}

    def needs_for(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        """What a model with these parameters needs; override when it depends on them (a
        model without calibration needs no calibration split). Default: :attr:`needs`."""
        return tuple(self.needs)

    def named_groups(self, params: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
        """The privileged groups a model with ``params`` names itself, as ``(place, rows
        entry, group)``: by default its ``privileged`` parameter, a group of rows ``groups``.
        Override when groups are named inside structured parameters (ramp's constraints)."""
        named = params.get("privileged")
        if named is None or "privileged" not in self.defaults():
            return []
        return [("privileged", "groups", named)]

    def comparisons(self, params: Mapping[str, Any], task) -> list[str]:
        """The comparisons of groups a model with ``params`` will make on ``task``, one line
        each (``validate`` prints them); the default: none. Raises :class:`DataError` as
        :meth:`check_task` does."""
        return []

    def counts_favourable(self, params: Mapping[str, Any]) -> list[str]:
        """The places among ``params`` whose promise or constraint counts favourable decisions
        (a rate that changes when the labels are swapped, :func:`safeclf.guarantees.outcome.depends`),
        as ``params.constraints[0] (fairness_ratio)``: the runner refuses them on labels
        without a favourable outcome. The default: none."""
        return []

    # -- checks before fitting -------------------------------------------------------------
    def check_task(self, params: Mapping[str, Any], task, preprocess: str | None = None) -> None:
        """Every check a model with ``params`` allows before it is fitted on ``task`` (``X``
        after the ``preprocess`` step): its needs are there, each group it names
        (:meth:`named_groups`) is a group of the data and agrees with the dataset's privileged
        group (:func:`safeclf.guarantees.groups.resolve`), ``task`` has no more classes than the
        estimator takes (its ``multi_class`` tag), and X is not rescaled when
        :attr:`scaling` is false. Raises :class:`DataError` whose message is a predicate about
        the method ("needs ...", "takes ..."); the runner calls it on the first split before
        any job starts and puts the place in the spec in front. Extend it (calling ``super()``)
        for checks of your own."""
        for need in self.needs_for(params):
            problem = self.missing(need, task)
            if problem:
                raise DataError(problem)
        from safeclf.guarantees.groups import resolve

        for where, row, named in self.named_groups(params):
            if row in task.train.rows:  # the dataset's privileged group is one of rows groups
                resolve(named, task.info if row == "groups" else None, task.train.rows[row],
                        where=where)
        classes = np.unique(np.asarray(task.train.y))
        n_classes = classes.size
        _check_class_weight(params.get("class_weight"), classes, task.train.y)
        if n_classes > 2 and not _tags(self.estimator(**params)).classifier_tags.multi_class:
            raise DataError(f"takes two classes, but the dataset has {n_classes}")
        if not self.scaling and preprocess not in (None, "none"):
            raise DataError(f"takes X as the dataset gives it (its rows are in X's units), so "
                            f"preprocess must be none, not '{preprocess}'")

    @staticmethod
    def missing(need: str, task) -> str | None:
        """Why ``task`` cannot satisfy ``need`` (a predicate, "needs ..."), or ``None``."""
        if need == PRIVILEGED:
            return None  # a dataset that names none leaves the choice to safeclf.guarantees.groups
        if need == CALIBRATION:
            return None if task.cal is not None else (
                "needs a calibration set; give the dataset's split a 'calibration' fraction "
                "such as 0.3")
        if need in task.train.rows:
            return None
        return (f"needs '{need}', which the dataset does not provide (it provides "
                f"{sorted(task.train.rows) or 'nothing beyond X and y'})")

    # -- fitting and reporting -------------------------------------------------------------
    def fit_params(self, task, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The ``fit`` keywords for what a model with ``params`` needs, taken from ``task``."""
        out: dict[str, Any] = {}
        for need in (self.needs if params is None else self.needs_for(params)):
            problem = self.missing(need, task)
            if problem:
                raise DataError(f"method '{self.name}' {problem}")
            if need == CALIBRATION:
                out["X_cal"], out["y_cal"] = task.cal.X, task.cal.y
            elif need == PRIVILEGED:
                from safeclf.guarantees.groups import privileged_of

                out[PRIVILEGED] = privileged_of(task.info)
            else:
                out[need] = task.train.rows[need]
        return out

    def fit(self, estimator, task):
        """Fit ``estimator`` on ``task.train`` with the keywords this plugin needs."""
        params = estimator.get_params(deep=False)
        return estimator.fit(task.train.X, task.train.y, **self.fit_params(task, params))

    def fit_path(self, estimators, task):
        """Fit ``estimators`` (one per grid point, in grid order) on ``task``; yield each fitted
        estimator, or the exception its fit raised. Each fit after the first starts from the
        previous fitted model when the estimator has scikit-learn's ``warm_start`` parameter:
        the previous estimator takes the next point's parameters with ``warm_start=True`` and
        is fitted again (a copy is yielded). After a failed point the next starts cold."""
        import copy

        current = None
        for est in estimators:
            try:
                params = est.get_params(deep=False)
                if current is not None and "warm_start" in params:
                    current.set_params(**dict(params, warm_start=True))
                else:
                    current = est
                current = self.fit(current, task) or current
                yield copy.deepcopy(current)
            except Exception as exc:  # reported on this point's job; the path goes on
                current = None
                yield exc

    def metric_names(self, params: Mapping[str, Any]):
        """The metric names :meth:`report` gives a model with ``params``, so that expectations
        and plots naming a metric are checked before anything runs. ``{part}`` in a name
        stands for each part the job is evaluated on (``train``, ``cal`` where the split has
        one, ``test``); shell-style patterns (``threshold_*``) are for names only the data
        decides. A name may be declared that a particular dataset does not produce (a
        fairness figure without groups); a name reported must be declared. Every built-in
        plugin overrides this with its :meth:`report`; ``None`` (the default for a plugin that
        overrides :meth:`report` without declaring) means unknown before fitting, and names
        are then checked only against the finished table."""
        return () if type(self).report is MethodPlugin.report else None

    def promise_names(self, params: Mapping[str, Any]):
        """The names of the promises a model with ``params`` may make (:meth:`promises`), whose
        checks are the table's ``promise_<name>_*`` columns; ``()`` for none. ``None`` means
        unknown before fitting: the default when :meth:`promises` is overridden or the
        estimator states its own (``safeclf_promises``), for plugins that do not declare."""
        own = type(self).promises is not MethodPlugin.promises or hasattr(
            self.estimator, "safeclf_promises")
        return None if own else ()

    def report(self, estimator, task) -> Report:
        """Method-specific metrics and details of the fitted ``estimator`` on ``task``;
        override in a subclass (the estimator exposes fitted attributes, the plugin turns them
        into a report). The default reports nothing beyond the shared metrics."""
        return Report()

    # -- promises ----------------------------------------------------------------------------
    def promises(self, estimator, task) -> list:
        """The promises of the fitted ``estimator`` (:class:`safeclf.guarantees.promises.Promise`), from
        its parameters. The default asks the estimator for ``safeclf_promises(task)`` if it
        has one, else states explicitly that the method promises nothing."""
        hook = getattr(estimator, "safeclf_promises", None)
        if hook is not None:
            return list(hook(task))
        from safeclf.guarantees.promises import no_promise

        return [no_promise(self.name, "the method declares no guarantee")]

    def promise_evidence(self, estimator, task, promise, part: str):
        """Held-out evidence (:class:`safeclf.guarantees.promises.Evidence`) for a promise whose quantity
        is not a rate or a ratio of predictions (a chance-constraint violation, an excess
        risk). The default asks the estimator for ``safeclf_promise_evidence``."""
        hook = getattr(estimator, "safeclf_promise_evidence", None)
        if hook is None:
            raise ValueError(f"method '{self.name}' cannot measure a {promise.quantity.kind}")
        return hook(task, promise, part)


def _check_class_weight(weights, classes, y) -> None:
    """A ``class_weight`` mapping is checked as scikit-learn's fit checks it
    (:func:`sklearn.utils.class_weight.compute_class_weight`), against the task's classes."""
    if not isinstance(weights, Mapping):
        return
    from sklearn.utils.class_weight import compute_class_weight

    try:
        compute_class_weight(dict(weights), classes=classes, y=np.asarray(y))
    except (ValueError, TypeError):
        absent = [k for k in weights if k not in set(classes.tolist())]
        raise DataError(
            f"has class_weight naming {', '.join(repr(k) for k in absent) or list(weights)}, "
            f"not a class of the dataset (classes: {', '.join(repr(c) for c in classes.tolist())})"
        ) from None


def _tags(estimator):
    from sklearn.utils import get_tags

    return get_tags(estimator)


def signature_defaults(fn) -> dict[str, Any]:
    """Named parameters of ``fn`` (less ``self`` and ``*args``/``**kwargs``) with defaults,
    ``None`` where there is none."""
    return {
        k: (None if p.default is inspect.Parameter.empty else p.default)
        for k, p in inspect.signature(fn).parameters.items()
        if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


_SKLEARN_MSG = re.compile(
    r"The '(?P<p>\w+)' parameter of \w+ must be (?P<rule>.*)\. Got (?P<got>.*) instead\.?")


def _join(where: str, message: str, params) -> str:
    """``where.<message>`` when the message starts with a parameter's path
    (``constraints[0].kappa must be ...``), else ``where: <message>``."""
    head = re.split(r"[.\[\s]", message, maxsplit=1)[0]
    return f"{where}.{message}" if head in params else f"{where}: {message}"


def _sklearn_param_message(message: str, where: str, params=()) -> str:
    m = _SKLEARN_MSG.search(message)
    if not m:
        return _join(where, message, params)
    return f"{where}.{m['p']} must be {m['rule']}, got {m['got']}"


@dataclass(frozen=True)
class DatasetPlugin:
    """A dataset loader: ``load(**params) -> Dataset``.

    ``load`` must be a module-level function (so it pickles to worker processes) whose keyword
    parameters are the spec's ``datasets[i].params``, with type annotations: they are checked
    before anything runs.
    """

    name: str
    load: Callable[..., Any]
    summary: str = ""
    provides: tuple[str, ...] = ()

    def defaults(self) -> dict[str, Any]:
        """Loader parameters and their defaults (``None`` for required ones)."""
        return signature_defaults(self.load)

    def check_params(self, params: Mapping[str, Any], where: str) -> None:
        import pydantic

        sig = inspect.signature(self.load)
        for key in params:
            if key not in sig.parameters:
                raise SpecError(
                    f"{where}.{key} is not a parameter of dataset '{self.name}'"
                    f"{closest(key, sig.parameters)}"
                )
        missing = [
            k for k, p in sig.parameters.items()
            if p.default is inspect.Parameter.empty and k not in params
        ]
        if missing:
            raise SpecError(f"{where}.{missing[0]} is required by dataset '{self.name}'")
        hints = typing.get_type_hints(self.load)
        fields = {k: (hints.get(k, Any), ...) for k in params}
        model = pydantic.create_model(f"{self.name}_params", **fields)
        try:
            model.model_validate(dict(params), strict=False)
        except pydantic.ValidationError as exc:
            raise SpecError(explain(exc, dict(params), where)) from None
