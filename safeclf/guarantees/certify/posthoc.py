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
    from safeclf.guarantees.certify.threshold import (
        CERTIFIABLE,
        CertifiedClassifier,
        blind_columns,
        drop_columns,
    )

    delta, fraction = certify["delta"], certify["fraction"]
    cand_task, cand, safe = split_task(task, fraction, seed)
    record = {"how": "threshold", "delta": delta, "fraction": fraction,
              "n_candidate": int(cand.size), "n_safety": int(safe.size)}
    group_blind = bool(certify.get("group_blind"))
    group_columns = task.info.get("group_columns")
    blind = ()
    if group_blind:  # found on the candidate rows, like everything the rule depends on
        y_c = np.asarray(cand_task.train.y)
        stated = declared_promises(items, cand_task, np.unique(y_c))
        blind = blind_columns(cand_task.train.X, cand_task.train.rows, stated, group_columns)
        cand_task = replace(cand_task, train=replace(
            cand_task.train, X=drop_columns(cand_task.train.X, blind)))
    try:
        est = plugin.build(params, random_state=seed)
        est = plugin.fit(est, cand_task) or est
    except (InfeasibleError, SolverError) as exc:
        record["reason"] = f"the model cannot be fitted on the candidate part: {exc}"
        return Outcome(None, [], record)
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
        group_blind=group_blind, group_columns=group_columns,
        allow_degenerate=bool(certify.get("allow_degenerate")))
    record.update(cc.certificate_)
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
    promises = declared_promises(m.promises, task, classes, f"{where}.promises")
    for k, p in enumerate(promises):
        for key, wanted in (p.quantity.subset or {}).items():
            if key not in task.train.rows:
                raise DataError(f"{where}.promises[{k}].subset names rows '{key}', which the "
                                f"data does not provide (it provides "
                                f"{sorted(task.train.rows) or 'nothing beyond X and y'})")
            for v in wanted if isinstance(wanted, list | tuple) else [wanted]:
                named_group(v, task.train.rows[key], f"{where}.promises[{k}].subset.{key}",
                            f"the data's '{key}'")
    if m.certify is None or m.certify.route(plugin) != "threshold":
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
