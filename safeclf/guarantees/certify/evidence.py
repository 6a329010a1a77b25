"""What a certificate rests on, recorded so that anyone can re-check it (``safeclf verify``).

Every certified fit records, under its certificate's ``evidence`` key:

``route``, ``seed``, ``fraction``, ``delta``, ``bound``, ``test``
    How the test was made: the route (``training``: a Seldonian safety test with a union
    bound; ``threshold``: Learn-then-Test along a path of decision rules), the seed that
    draws the held-back rows, their share, δ, the bound and the test.
``held_back``
    The held-back rows: ``n_train`` (rows of the job's training part), ``n``, ``indices``
    (their positions in the training part, sorted) and ``sha256`` (of the indices written as
    decimal numbers joined by commas, :func:`indices_sha256`).
``statistic``
    Per promise, the counts the test rests on (``k``, ``n``; ``k2``, ``n2`` for a comparison
    of groups) under the model's predictions on the held-back rows, and the test's value:
    ``limit`` (the one-sided confidence limit) and ``passed`` for the training route,
    ``p_value`` for the threshold route (whose ``rule`` and joint ``p_value`` are recorded too).
``passed``
    Whether the test passed.

The job that made the certificate adds ``data`` (the SHA-256 of each data file it loaded),
``job`` (seed, fold, parameters), ``dataset`` and ``method`` (the spec entries it ran) and,
once the model file is written, ``model_sha256``.

:func:`differences` compares a stored evidence record with one recomputed from the data and
the stored model by the certification code itself
(:func:`safeclf.guarantees.certify.recheck`).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

#: The key of a certificate holding its evidence.
KEY = "evidence"

#: The evidence fields the test decides, compared by :func:`differences`.
COMPARED = ("route", "seed", "fraction", "delta", "bound", "test", "passed", "p_value", "rule")
#: Fields that are computed numerically from the counts (the exact pair test's p-values, the
#: limits that invert it): :func:`differences` compares them within this relative tolerance,
#: which is far above what rounding and a change of the computation move them by (1.6e-7 at
#: most, when the pair test became compiled code) and far below any change of the counts. The
#: verdicts, counts and rule that decide the certificate are compared as they are.
NUMERIC = ("p_value", "limit")
NUMERIC_RTOL = 1e-6
#: The relative tolerance of every other number :func:`same` compares.
RTOL = 1e-9


def indices_sha256(indices) -> str:
    """SHA-256 of sorted row positions written as ``3,17,42`` (ASCII)."""
    text = ",".join(str(int(i)) for i in np.sort(np.asarray(indices, dtype=np.int64)))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def held_back(indices, n_train: int) -> dict[str, Any]:
    """The record of the held-back rows at positions ``indices`` of a training part of
    ``n_train`` rows."""
    idx = np.sort(np.asarray(indices, dtype=np.int64))
    return {"n_train": int(n_train), "n": int(idx.size), "indices": idx.tolist(),
            "sha256": indices_sha256(idx)}


def statistic(promises, evs, tests) -> dict[str, dict]:
    """Per promise of a safety test: its counts (``evs``, :class:`~safeclf.guarantees.promises.Evidence`)
    and the test's limit and verdict (``tests``, by name)."""
    out = {}
    for p, ev in zip(promises, evs, strict=True):
        out[p.name] = {"sense": p.sense, "bound": float(p.bound), "k": int(ev.k),
                       "n": int(ev.n), "k2": None if ev.k2 is None else int(ev.k2),
                       "n2": None if ev.n2 is None else int(ev.n2),
                       "limit": float(tests[p.name]["bound"]),
                       "passed": bool(tests[p.name]["passed"])}
    return out


def same(a, b, rtol: float = RTOL) -> bool:
    """Whether two JSON values are equal, numbers within ``rtol`` relative (1e-12 absolute)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool | np.bool_) and isinstance(b, bool | np.bool_)
                          and bool(a) == bool(b))
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], rtol) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y, rtol) for x, y in zip(a, b))
    return a == b


def check_shape(stored: Any) -> str | None:
    """Why ``stored`` is not an evidence record (None when it is one): a dict with the
    fields the test decides, held-back rows whose indices hash to their ``sha256``."""
    if not isinstance(stored, dict):
        return "the certificate records no evidence (made by an earlier safeclf, or removed)"
    missing = [k for k in ("route", "seed", "fraction", "delta", "held_back", "statistic",
                           "passed") if k not in stored]
    if missing:
        return f"its evidence has no '{missing[0]}'"
    held = stored["held_back"]
    if not isinstance(held, dict) or not isinstance(held.get("indices"), list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in held["indices"]):
        return "its evidence's held-back rows are not a list of row positions"
    if indices_sha256(held["indices"]) != held.get("sha256"):
        return "its held-back row positions do not match their recorded SHA-256"
    return None


def differences(stored: dict, recomputed: dict) -> list[str]:
    """What differs between the ``stored`` evidence and the ``recomputed`` one, each said as
    ``statistic.constraint_fairness_ratio.k: recorded 31, re-computed 29``; empty when the
    certificate re-checks."""
    out = []
    held_s, held_r = stored.get("held_back") or {}, recomputed.get("held_back") or {}
    for key in ("n_train", "n", "sha256"):
        if held_s.get(key) != held_r.get(key):
            out.append(f"held_back.{key}: recorded {held_s.get(key)!r}, re-drawn "
                       f"{held_r.get(key)!r}")
    for key in COMPARED:
        if key in stored or key in recomputed:
            if not _same_field(key, stored.get(key), recomputed.get(key)):
                out.append(f"{key}: recorded {_short(stored.get(key))}, re-computed "
                           f"{_short(recomputed.get(key))}")
    st_s, st_r = stored.get("statistic") or {}, recomputed.get("statistic") or {}
    if not isinstance(st_s, dict) or set(st_s) != set(st_r):
        out.append(f"statistic: recorded promises {sorted(st_s) if isinstance(st_s, dict) else st_s!r}, "
                   f"re-computed {sorted(st_r)}")
    else:
        for name in st_r:
            row_s, row_r = st_s[name], st_r[name]
            if not isinstance(row_s, dict):
                out.append(f"statistic.{name}: not a record")
                continue
            for key in row_r:
                if not _same_field(key, row_s.get(key), row_r[key]):
                    out.append(f"statistic.{name}.{key}: recorded {_short(row_s.get(key))}, "
                               f"re-computed {_short(row_r[key])}")
    return out


def _same_field(key: str, stored, recomputed) -> bool:
    """:func:`same`, a :data:`NUMERIC` field's numbers within :data:`NUMERIC_RTOL`."""
    return same(stored, recomputed, NUMERIC_RTOL if key in NUMERIC else RTOL)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def claims(cert: dict) -> list[str]:
    """Where the certificate's own claims (δ, the held-back share and size, the safety tests'
    limits and verdicts, the rule and its p-values) differ from its evidence; empty when
    they agree."""
    ev = cert.get(KEY) or {}
    out = []
    for key in ("delta", "fraction"):
        if not same(cert.get(key), ev.get(key)):
            out.append(f"{key}: certificate {cert.get(key)!r}, evidence {ev.get(key)!r}")
    if "n_safety" in cert and cert["n_safety"] != (ev.get("held_back") or {}).get("n"):
        out.append(f"n_safety: certificate {cert['n_safety']!r}, evidence "
                   f"{(ev.get('held_back') or {}).get('n')!r}")
    stat = ev.get("statistic") or {}
    if ev.get("route") == "training":
        said = {name: {"bound": row.get("limit"), "passed": row.get("passed")}
                for name, row in stat.items() if isinstance(row, dict)}
        if not same(cert.get("safety_tests"), said):
            out.append("safety_tests: the certificate's limits or verdicts are not its evidence's")
    elif ev.get("route") == "threshold" and ev.get("passed"):
        said = {name: row.get("p_value") for name, row in stat.items() if isinstance(row, dict)}
        if not same(cert.get("p_values"), said) or not same(cert.get("rule"), ev.get("rule")):
            out.append("rule/p_values: the certificate's rule or p-values are not its evidence's")
    return out
