"""Certification: one entry for both routes.

:func:`certified_fit` is the only way in. It fills the defaults (:data:`DEFAULTS`), chooses the
route (:func:`route`) and returns an :class:`Outcome`: a model with a high-confidence promise,
or no solution with its reason.

- ``training`` (:mod:`.training`): candidate selection with tightened bounds, then one safety
  test on held-back rows (the Seldonian recipe); for plugins that can tighten their own
  constraints (``tightened_params``), and the default for them. It certifies the method's own
  constraints.
- ``threshold`` (:mod:`.posthoc`, :mod:`.threshold`, :mod:`.path`): any scoring model; its
  decision rule is chosen on held-back rows by Learn-then-Test. It certifies the method's own
  rate promises and the promises declared on the method entry, jointly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from safeclf.guarantees.certify.training import NO_SOLUTION, Outcome

__all__ = ["DEFAULTS", "NO_SOLUTION", "Outcome", "certified_fit", "recheck", "route"]

#: Every certification option and its default (the spec's ``certify:`` mapping is validated
#: against these names: :class:`safeclf.spec.schema.Certify`).
DEFAULTS: dict[str, Any] = {
    "delta": 0.05, "fraction": 0.3, "how": None, "bound": "clopper_pearson",
    "test": "fixed_sequence", "group_blind": False, "allow_degenerate": False,
}


def route(plugin, how: str | None = None) -> str:
    """``how``, or its default for ``plugin``: ``training`` for a plugin that can tighten its
    own constraints (``tightened_params``), else ``threshold``."""
    if how is not None:
        return how
    return "training" if hasattr(plugin, "tightened_params") else "threshold"


def certified_fit(plugin, params: dict, task, certify: Mapping[str, Any] | None = None,
                  promises: list[dict] | None = None, seed: int = 0) -> Outcome:
    """Fit ``plugin`` with ``params`` on ``task`` and certify it.

    Parameters
    ----------
    plugin : MethodPlugin
        The method (:func:`safeclf.plugins.get_method`).
    params : dict
        The method's parameters.
    task : Task
        The job's data; certification uses its training rows only.
    certify : mapping, optional
        The method entry's ``certify`` options (:data:`DEFAULTS` for those left out).
    promises : list of dict, optional
        The promises declared on the method entry (``threshold`` route only).
    seed : int
        Draws the held-back rows and seeds the fit.

    Returns
    -------
    Outcome
        ``passed`` with the certified estimator and its promises, or no solution with
        ``record["reason"]``.
    """
    options = _options(certify)
    if route(plugin, options["how"]) == "training":
        if promises:
            raise ValueError("how: training certifies the method's own constraints only; "
                             "use how: threshold to certify declared promises")
        from safeclf.guarantees.certify.training import certify_in_training

        return certify_in_training(plugin, params, task, options["delta"],
                                   options["fraction"], seed, options["bound"],
                                   bool(options["allow_degenerate"]))
    from safeclf.guarantees.certify.posthoc import certify_threshold

    return certify_threshold(plugin, params, task, options, promises, seed)


def _options(certify: Mapping[str, Any] | None) -> dict[str, Any]:
    options = {**DEFAULTS, **{k: v for k, v in (certify or {}).items() if v is not None}}
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unknown certification option(s): {', '.join(unknown)}")
    return options


def recheck(plugin, params: dict, task, certify: Mapping[str, Any] | None,
            promises: list[dict] | None, seed: int, model) -> dict[str, Any]:
    """The evidence of a certificate (:mod:`.evidence`) recomputed by the code that made it,
    for the stored model ``model`` (the pipeline's last step) on ``task`` (the job's data,
    loaded, split and preprocessed as the job did): the held-back rows re-drawn from
    ``seed``, the promises' counts under ``model``'s predictions, the test re-run.

    Training route: :func:`.training.recheck_training` (the safety test of ``model``).
    Threshold route: :func:`.posthoc.certify_fitted` on the model's scoring estimator (the
    path and the test re-run from the candidate part, then the held-back rows); the rule it
    finds must be the rule the model applies (``problem`` says so otherwise).
    """
    options = _options(certify)
    if route(plugin, options["how"]) == "training":
        from safeclf.guarantees.certify.training import recheck_training

        return recheck_training(plugin, params, task, options["delta"], options["fraction"],
                                seed, options["bound"], model)
    from safeclf.guarantees.certify.posthoc import certify_fitted
    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    if not isinstance(model, CertifiedClassifier):
        return {"route": "threshold", "passed": False,
                "problem": f"the model file holds a {type(model).__name__}, not the certified "
                           "rule (CertifiedClassifier) the certificate is about"}
    outcome = certify_fitted(plugin, model.estimator_, task, options, promises, seed)
    found = dict(outcome.record.get("evidence") or {})
    applied = None if model.rule_ is None else model.rule_.describe()
    from safeclf.guarantees.certify.evidence import same

    if not same(applied, found.get("rule")):
        found["problem"] = (f"the model applies the rule {applied}, but the test finds "
                            f"{found.get('rule')}")
    return found
