"""A spec expanded into jobs: grids, seeds and folds, each job with a stable id."""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from safeclf.errors import SpecError
from safeclf.spec.schema import Spec


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
