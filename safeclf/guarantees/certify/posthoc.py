"""The runner's post-hoc certification route (``certify: {how: threshold}`` on a method entry):
the plugin fits its model its own way on the candidate part of the training rows, then
:class:`~safeclf.guarantees.certify.threshold.CertifiedClassifier` chooses the decision rule on the
held-back part
by Learn-then-Test (:mod:`safeclf.guarantees.certify.threshold`, where the validity argument is).

What is certified: the method's own promises about rates or ratios of rates (restated about the
certified rule) and the promises declared on the method entry (:mod:`safeclf.guarantees.declared`),
jointly. A promise of another kind (a chance-constraint violation, an excess risk) is about the
method's own rule, which the threshold replaces: it is left out and the record says so.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from safeclf.errors import DataError
from safeclf.guarantees.certify.training import Outcome


def split_task(task, fraction: float, seed: int):
    """(candidate task, candidate rows, held-back rows): a plain random draw of ``fraction`` of
    the training rows held back (:func:`safeclf.guarantees.certify.threshold.split_rows`)."""
    from safeclf.data.task import Task
    from safeclf.guarantees.certify.threshold import split_rows

    cand, safe = split_rows(len(task.train), fraction, seed)
    cand_task = Task(dataset=task.dataset, train=task.train.take(cand), test=task.test,
                     cal=task.cal, info=task.info, seed=task.seed,
                     preprocessor=task.preprocessor)
    return cand_task, cand, safe


def declared_promises(items, task, classes, where: str = "promises") -> list:
    """The promises declared on a method entry, resolved on ``task``'s training rows."""
    from safeclf.guarantees import declared

    if not items:
        return []
    y_pos = np.asarray(task.train.y) == np.asarray(classes)[-1]
    return declared.promises(items, y_pos, task.train.rows, task.info, where)


def certify_threshold(plugin, params: dict, task, certify: dict, items, seed: int) -> Outcome:
    """Fit ``plugin`` on the candidate part and certify its rule (see the module docstring);
    ``certify`` is the method entry's ``certify`` mapping, ``items`` its ``promises``."""
    from safeclf.errors import InfeasibleError, SolverError

    cand_task, cand, safe, _ = candidate_part(task, certify, items, seed)
    try:
        est = plugin.build(params, random_state=seed)
        est = plugin.fit(est, cand_task) or est
    except (InfeasibleError, SolverError) as exc:
        record = {"how": "threshold", "delta": certify["delta"],
                  "fraction": certify["fraction"], "n_candidate": int(cand.size),
                  "n_safety": int(safe.size),
                  "reason": f"the model cannot be fitted on the candidate part: {exc}"}
        return Outcome(None, [], record)
    return certify_fitted(plugin, est, task, certify, items, seed)


def candidate_part(task, certify: dict, items, seed: int):
    """(candidate task, candidate rows, held-back rows, blind columns): the split of
    :func:`split_task` and, with ``group_blind``, the candidate task without the feature
    columns that encode the group (found on the candidate rows, like everything the rule
    depends on)."""
    from safeclf.guarantees.group_encoding import blind_columns, drop_columns

    cand_task, cand, safe = split_task(task, certify["fraction"], seed)
    blind = ()
    if certify.get("group_blind"):
        stated = declared_promises(items, cand_task, np.unique(np.asarray(cand_task.train.y)))
        blind = blind_columns(cand_task.train.X, cand_task.train.rows, stated,
                              task.info.get("group_columns"))
        cand_task = replace(cand_task, train=replace(
            cand_task.train, X=drop_columns(cand_task.train.X, blind)))
    return cand_task, cand, safe, blind


def certify_fitted(plugin, est, task, certify: dict, items, seed: int) -> Outcome:
    """Steps after the fit of :func:`certify_threshold`: ``est`` (fitted on the candidate
    part) gets its promises and its rule, chosen and tested on the held-back rows; ``safeclf
    verify`` calls this with a stored model to re-check its certificate."""
    from safeclf.guarantees.certify.threshold import CERTIFIABLE, CertifiedClassifier

    cand_task, cand, safe, blind = candidate_part(task, certify, items, seed)
    delta, fraction = certify["delta"], certify["fraction"]
    group_blind = bool(certify.get("group_blind"))
    record = {"how": "threshold", "delta": delta, "fraction": fraction,
              "n_candidate": int(cand.size), "n_safety": int(safe.size)}
    classes = np.asarray(est.classes_)
    own = [p for p in plugin.promises(est, cand_task) if p.kind != "none"]
    kept = [p for p in own if p.quantity.kind in CERTIFIABLE]
    dropped = [p.name for p in own if p.quantity.kind not in CERTIFIABLE]
    promises = kept + declared_promises(items, cand_task, classes)
    if not promises:
        raise DataError(f"method '{plugin.name}' makes no promise about a rate to certify; "
                        "state one under the method entry's promises")
    y_pos = np.asarray(task.train.y) == classes[-1]
    cc = CertifiedClassifier.from_fitted(
        est, promises, task.train.X, y_pos, task.train.rows, cand, safe, blind=blind,
        delta=delta, fraction=fraction, bound=certify.get("bound") or "clopper_pearson",
        test=certify.get("test") or "fixed_sequence", random_state=seed,
        group_blind=group_blind, group_columns=task.info.get("group_columns"),
        allow_degenerate=bool(certify.get("allow_degenerate")))
    record.update(cc.certificate_)
    from safeclf.guarantees.certify.evidence import held_back

    found = cc.certificate_
    record["evidence"] = {
        "route": "threshold", "seed": int(seed), "fraction": fraction, "delta": delta,
        "bound": found.get("bound"), "test": found.get("test"),
        "held_back": held_back(safe, len(task.train)),
        "rule": found.get("rule"),
        "statistic": {name: {**found["counts"][name], "p_value": v}
                      for name, v in (found.get("p_values") or {}).items()},
        "p_value": found.get("p_value"),
        "passed": cc.rule_ is not None}
    if dropped:
        record["not_certified"] = {
            name: "about the method's own decision rule, which the certified threshold "
                  "replaces" for name in dropped}
    return Outcome(cc if cc.rule_ is not None else None, cc.promises_, record)


def check_request(m, plugin, task, seed: int, where: str) -> None:
    """The checks of a method entry's ``promises`` and ``certify`` that need the data, on the
    first split (``task``, after preprocessing): each declared promise resolves (its
    privileged group and each group its subset names are groups of the data), and the held-back
    part the job will draw keeps at least one row for every declared promise. Raises
    :class:`DataError` naming the place (``where``: ``methods[i]``)."""
    from safeclf.guarantees.groups import named_group
    from safeclf.guarantees.promises import sizes

    classes = np.unique(np.asarray(task.train.y))
    asked = [k for k, v in (("promises", m.promises), ("certify", m.certify)) if v]
    if classes.size > 2:
        raise DataError(f"{where}.{asked[0]}: promises and certificates are about "
                        f"two classes (a rate of positive decisions), but the dataset has "
                        f"{classes.size} ({', '.join(map(str, classes))}); leave out {' and '.join(asked)} "
                        "or give a dataset with two classes")
    _check_rows(m.promises, task, f"{where}.promises")
    try:
        promises = declared_promises(m.promises, task, classes, f"{where}.promises")
    except ValueError as exc:  # resolving the groups on the data: the user's input
        raise DataError(str(exc)) from None
    for k, p in enumerate(promises):
        for key, wanted in (p.quantity.subset or {}).items():
            if key not in task.train.rows:
                raise DataError(f"{where}.promises[{k}].subset names rows '{key}', which the "
                                f"data does not provide (it provides "
                                f"{sorted(task.train.rows) or 'nothing beyond X and y'})")
            for v in wanted if isinstance(wanted, list | tuple) else [wanted]:
                named_group(v, task.train.rows[key], f"{where}.promises[{k}].subset.{key}",
                            f"the data's '{key}'")
    if m.certify is None:
        return
    route = m.certify.route(plugin)
    _check_candidate(task, m.certify.fraction, seed, route, f"{where}.certify.fraction")
    if route != "threshold":
        return
    f = m.certify.fraction
    _, _, safe = split_task(task, f, seed)
    part = task.train.take(safe)
    y_pos = np.asarray(part.y) == classes[-1]
    for p in promises:
        ev = sizes(p.quantity, y_pos, part.rows)
        if not ev.n or (ev.n2 is not None and not ev.n2):
            raise DataError(f"{where}.certify.fraction {f:g} leaves no held-back row for "
                            f"{p.name} ({p.statement}) in the first split (seed {seed}); "
                            "raise the fraction or the training rows")


#: What a row entry a promise may need holds, for the message refusing it.
_ROW_MEANING = {"baseline": "a deployed model's predictions, to count the decisions that "
                            "differ from them",
                "groups": "the group of each row: name the dataset's group column"}


def _check_rows(items, task, where: str) -> None:
    """Raise :class:`DataError` naming the first declared promise of ``items`` that needs a
    row entry (``baseline`` for churn, ``groups`` for a comparison of groups) the training
    rows of ``task`` lack; the entries a ``subset`` names are checked with their values."""
    from safeclf.guarantees import declared

    try:
        parsed = declared.parse(items, where)
    except ValueError:
        return  # a malformed promise is the spec check's to report
    have = task.train.rows
    provides = ", ".join(sorted(have)) or "nothing beyond X and y"
    for c in parsed:
        rate = getattr(c, "rate", None)
        subset = set(getattr(c, "subset", None) or getattr(rate, "subset", None) or {})
        for row in sorted(c.rows_needed() - subset - set(have)):
            meaning = _ROW_MEANING.get(row)
            raise DataError(f"{c.where} ({c.name}) needs rows '{row}'"
                            f"{f' ({meaning})' if meaning else ''}, which the dataset does "
                            f"not provide (it provides {provides})")


def _check_candidate(task, fraction: float, seed: int, route: str, where: str) -> None:
    """Raise :class:`DataError` when holding back ``fraction`` of the first split's training
    rows (drawn as ``route`` draws them from ``seed``) leaves a candidate part without a row
    of every class: the candidate model could not be fitted in any job."""
    from safeclf.guarantees.certify.training import split_indices

    y = np.asarray(task.train.y)
    try:
        cand, _ = split_indices(y, fraction, seed, stratify=route != "threshold")
    except ValueError:  # scikit-learn refuses a split leaving no row on one side
        cand = np.arange(0)
    classes, kept = np.unique(y), np.unique(y[cand])
    if kept.size < classes.size:
        missing = ", ".join(map(str, np.setdiff1d(classes, kept)))
        which = f", none of them labelled {missing}" if cand.size else ""
        raise DataError(f"{where} {fraction:g} leaves {cand.size} of the {y.size} training "
                        f"rows of the first split (seed {seed}) for fitting the candidate "
                        f"model{which}; lower the fraction (0.3 is the default) or give more "
                        "rows")
