"""Expectations: conditions on the metrics table, checked after a run (``--check`` enforces).

An expectation selects rows (method label, dataset label, ``where`` column values), aggregates
one metric over them, and compares the value with a number, with another selection, or with a
paper's figure and a tolerance. ``per`` repeats the check for each value of the named columns.
Each verdict carries the expectation's ``source`` (paper, figure, report, project, invariant):
:func:`by_source` counts them apart, so checks true by construction do not pass for figures
reproduced.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from safeclf.spec.schema import (
    CITED_KINDS,
    NOT_FAILED,
    SOURCE_KINDS,
    Expectation,
    Selection,
    Spec,
)
from safeclf.store.folder import to_markdown
from safeclf.store.result import JobStatus

_OPS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}


def _column(frame, key: str) -> str:
    """``key`` as a column of ``frame``; a bare parameter name means ``param.<name>``."""
    if key in frame.columns:
        return key
    if f"param.{key}" in frame.columns:
        return f"param.{key}"
    return key


def _matches(series, value):
    if isinstance(value, list):  # any of the values
        hit = np.zeros(len(series), dtype=bool)
        for v in value:
            hit |= _matches(series, v)
        return hit
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        numeric = series.map(
            lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan)
        return np.isclose(numeric.to_numpy(dtype=float), float(value), rtol=1e-9, atol=1e-12)
    return (series.astype(str) == str(value)).to_numpy()


def select(frame, sel, base=None):
    """Rows of ``frame`` chosen by a :class:`Selection` or :class:`Expectation`; ``base``
    supplies method/dataset when ``sel`` leaves them out."""
    method = sel.method if sel.method is not None else getattr(base, "method", None)
    dataset = sel.dataset if sel.dataset is not None else getattr(base, "dataset", None)
    mask = np.ones(len(frame), dtype=bool)
    if method is not None:
        mask &= (frame["method"] == method).to_numpy()
    if dataset is not None:
        mask &= (frame["dataset"] == dataset).to_numpy()
    for key, value in sel.where.items():
        col = _column(frame, key)
        if col not in frame.columns:
            return frame.iloc[0:0], f"no column '{key}'"
        mask &= _matches(frame[col], value)
    return frame[mask], None


def aggregate(rows, metric: str, agg: str) -> tuple[float, str | None]:
    """The aggregated metric over ``rows`` and a reason when it cannot be trusted."""
    if rows.empty:
        return math.nan, "no rows match"
    failed = int((rows["status"] == JobStatus.FAILED.value).sum())
    if not (metric == "no_solution" or metric.startswith("promise_")):
        # no model: only counted, not measured
        rows = rows[rows["status"] != JobStatus.NO_SOLUTION.value]
        if rows.empty:
            return math.nan, "every job ended with no solution"
    if failed:
        return math.nan, f"{failed} of {len(rows)} jobs failed"
    if metric not in rows.columns:
        return math.nan, f"metric '{metric}' was not reported"
    values = rows[metric].astype(float).to_numpy()
    if metric.startswith("promise_") and metric.endswith("_beyond"):
        # a job without a model deployed nothing: not beyond (the Seldonian failure rate)
        values = np.where((rows["status"] == "no_solution").to_numpy() & np.isnan(values), 0.0,
                          values)
    if agg == "count":
        return float(np.sum(~np.isnan(values))), None
    if np.isnan(values).any():
        return math.nan, f"metric '{metric}' is missing in {int(np.isnan(values).sum())} rows"
    fn = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max,
          "std": lambda v: np.std(v, ddof=1) if v.size > 1 else 0.0}[agg]
    return float(fn(values)), None


def _describe(e: Expectation) -> str:
    sel = [f"{k}={v}" for k, v in (("method", e.method), ("dataset", e.dataset)) if v is not None]
    sel += [f"{k}={v}" for k, v in e.where.items()]
    return f"{e.agg}({e.metric})" + (f" [{', '.join(sel)}]" if sel else "")


def _condition_text(e: Expectation, rhs_value: float | None) -> str:
    op, target = e.condition
    if op == "paper":
        word = {"within": "±", "at_most": "+", "at_least": "−"}[e.compare]
        # the reference named for where it comes from: not "paper" for our own figure
        whose = "paper" if e.source is None else (
            e.source.kind if e.source.kind in CITED_KINDS else "reference")
        return f"{whose} {target:g} {word} {e.tolerance:g}"
    if isinstance(target, Selection):
        sel = [f"{k}={v}" for k, v in (("method", target.method), ("dataset", target.dataset)) if v]
        sel += [f"{k}={v}" for k, v in target.where.items()]
        tol = f" + {e.tolerance:g}" if e.tolerance and op in ("<=", "<") else \
            f" − {e.tolerance:g}" if e.tolerance else ""
        return (f"{op} {target.agg or e.agg}({target.metric or e.metric}) [{', '.join(sel)}]"
                f" = {rhs_value:.4g}{tol}")
    if e.tolerance:
        return f"{op} {target:g} {'+' if op in ('<=', '<') else '−'} {e.tolerance:g}"
    return f"{op} {target:g}"


def _verdict(e: Expectation, measured: float, target: float) -> bool:
    op, _ = e.condition
    if math.isnan(measured) or math.isnan(target):
        return False
    if op == "paper":
        if e.compare == "within":
            return abs(measured - target) <= e.tolerance + 1e-12
        if e.compare == "at_most":
            return measured <= target + e.tolerance + 1e-12
        return measured >= target - e.tolerance - 1e-12
    # With a tolerance the bound is relaxed by it: "<=" means measured <= target + tolerance.
    slack = (e.tolerance or 0.0) * (1 if op in ("<=", "<") else -1)
    return bool(_OPS[op](measured, target + slack))


def evaluate(spec: Spec, frame) -> list[dict[str, Any]]:
    """One verdict row per expectation and ``per`` group."""
    out = []
    for i, e in enumerate(spec.expect):
        rows, problem = select(frame, e) if not frame.empty else (frame, "no rows")
        per = [_column(frame, p) for p in e.per]
        missing = [p for p in per if p not in frame.columns]
        if missing:
            groups = [((), rows)]
            problem = problem or f"no column '{missing[0]}' to group by"
        elif per and not rows.empty:
            groups = list(rows.groupby(per, sort=True, dropna=False))
        else:
            groups = [((), rows)]
        for key, grp in groups:
            key = key if isinstance(key, tuple) else (key,)
            measured, why = aggregate(grp, e.metric, e.agg)
            op, target = e.condition
            rhs_value = None
            if isinstance(target, Selection):
                other, why2 = select(frame, target, base=e)
                for col, val in zip(per, key):
                    other = other[_matches(other[col], val)] if col in other.columns else other
                rhs_value, why3 = aggregate(other, target.metric or e.metric, target.agg or e.agg)
                why = why or why2 or (f"comparison: {why3}" if why3 else None)
                target_value = rhs_value
            else:
                target_value = float(target)
            ok = problem is None and why is None and _verdict(e, measured, target_value)
            verdict = "pass" if ok else ("deviation" if e.deviation and problem is None
                                         and why is None else "FAIL")
            out.append({
                "expectation": f"expect[{i}] {_describe(e)}",
                "group": ", ".join(f"{c}={v}" for c, v in zip(e.per, key)) or "-",
                "measured": measured,
                "condition": _condition_text(e, rhs_value),
                "verdict": verdict,
                "why": problem or why or (f"stated deviation: {e.deviation}"
                                          if verdict == "deviation" else ""),
                "source": e.source.kind if e.source else UNSTATED,
                "source_where": (e.source.where or "") if e.source else "",
                "note": e.note or "",
            })
    return out


#: The source of an expectation of a stored spec written before ``source`` existed.
UNSTATED = "unstated"


def by_source(verdicts) -> dict[str, tuple[int, int]]:
    """``{kind: (met, stated)}`` over verdict rows (dicts or a DataFrame's records), every
    kind of :data:`SOURCE_KINDS` present (``(0, 0)`` when none), ``unstated`` only when some
    row has no source."""
    out = {kind: [0, 0] for kind in SOURCE_KINDS}
    for v in verdicts:
        kind = v.get("source") or UNSTATED
        if not isinstance(kind, str) or kind != kind:  # NaN from an old expectations.csv
            kind = UNSTATED
        out.setdefault(kind, [0, 0])
        out[kind][1] += 1
        out[kind][0] += v["verdict"] == "pass"
    return {k: (m, n) for k, (m, n) in out.items()}


def met_line(verdicts) -> str:
    """``expectations met: 22/23 (1 stated deviation)``: a stated deviation's miss (verdict
    ``deviation``) is counted apart from a failure; only failures fail ``--check``."""
    met = sum(v["verdict"] == "pass" for v in verdicts)
    dev = sum(v["verdict"] == "deviation" for v in verdicts)
    return (f"expectations met: {met}/{len(verdicts)}"
            + (f" ({dev} stated deviation{'s' if dev > 1 else ''})" if dev else ""))


def unmet(verdicts) -> int:
    """The failures among verdict rows (a stated deviation's miss is not one)."""
    return sum(v["verdict"] not in NOT_FAILED for v in verdicts)


def source_line(verdicts) -> str:
    """``by source: paper 3/3 · figure 1/1 · report 0/0 · project 2/2 · invariant 192/192``:
    the figures and claims cited from the papers and report, apart from our own choices and
    checks true by construction (the console, the report and ``make reproduce`` print it)."""
    counts = by_source(verdicts)
    return "by source: " + " · ".join(f"{k} {m}/{n}" for k, (m, n) in counts.items())


def write(run_dir: Path, verdicts: list[dict]) -> None:
    import pandas as pd

    from safeclf.store.folder import atomic_write

    frame = pd.DataFrame(verdicts)
    atomic_write(run_dir / "expectations.csv", frame.to_csv(index=False))
    atomic_write(run_dir / "expectations.md",
                 f"# {met_line(verdicts).capitalize()}\n\n{source_line(verdicts)}\n\n"
                 f"{to_markdown(frame)}\n")
