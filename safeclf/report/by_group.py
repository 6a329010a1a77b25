"""Figures per group, as fairlearn's ``MetricFrame.by_group``: in every job whose data has
groups, each rate per group (and per intersection) with its interval, and each ratio and
difference of group rates named by its pair; ``by_group.csv`` in the run folder, a section of
the printed summary and of ``report.html``.

Per job (:func:`records`, on the test split): for each group column — ``rows["groups"]``
and, for intersectional groups (``info["group_columns"]``, the csv loader's ``group: [sex,
race]``), each column on its own — and each group of it:

* ``positive_rate`` (s_p), ``error``, ``tpr`` (s_p on the positives) and ``fpr`` (s_p on
  the negatives), counted by the rate vocabulary (:mod:`safeclf.guarantees.rates`: its
  ``coverage``, ``error``, ``recall`` and ``fpr``): k of n with the two-sided
  Clopper–Pearson interval at the spec's confidence
  (:func:`safeclf.guarantees.promises.interval`);
* for each pair the data's groups are compared in (:func:`safeclf.guarantees.groups.comparisons`: each
  group against the column's reference group, :func:`safeclf.guarantees.groups.reference_of` — the
  privileged group, or the group chosen once on all the dataset's rows, so the direction is
  the same in every job and seed; data without one, which did not go through the runner's
  loading, against the group with the largest rate of that metric): the ratio (Katz) and
  the difference (Newcombe, reference minus group) of ``positive_rate``, ``tpr`` and
  ``fpr``, the group named ``b vs a``.

The rates that count positive predictions name the favourable outcome they count
(``positive``: ``decision = approve``, :mod:`safeclf.guarantees.outcome`).

A group with fewer rows than :data:`safeclf.guarantees.groups.MIN_GROUP_SIZE` is flagged ``small``:
reported on its own (never pooled into another group), its interval wide.
"""

from __future__ import annotations

import numpy as np

#: Rates per group, as the table names them, and the rate of the vocabulary each is
#: (:data:`safeclf.guarantees.rates.RATES`), which counts it.
RATES = {"positive_rate": "coverage", "error": "error", "tpr": "recall", "fpr": "fpr"}
#: Rates whose ratios and differences are reported per pair.
COMPARED = ("positive_rate", "tpr", "fpr")

COLUMNS = ["job", "dataset", "method", "params", "seed", "fold", "part", "column", "group",
           "metric", "positive", "k", "n", "k_reference", "n_reference", "estimate", "lower",
           "upper", "small"]


def _counts(y_pos, pred_pos, rows, mask, rate):
    from safeclf.guarantees.promises import rate_evidence
    from safeclf.guarantees.rates import RATES as VOCABULARY

    ev = rate_evidence(VOCABULARY[RATES[rate]]().quantity(), y_pos, pred_pos, rows, mask)
    return ev.k, ev.n


def columns_of(rows, info) -> list[tuple[str, np.ndarray]]:
    """The group columns of a part: ``groups`` and, for intersections, each column."""
    if "groups" not in rows:
        return []
    out = [("groups", np.asarray(rows["groups"]).astype(str))]
    for c in (info or {}).get("group_columns") or []:
        if c in rows:
            out.append((c, np.asarray(rows[c]).astype(str)))
    return out


def records(y_pos, pred_pos, rows, info, confidence: float, part: str = "test",
            minimum: int | None = None) -> list[dict]:
    """The by-group rows of one part (see the module docstring); [] without groups."""
    from safeclf.guarantees import groups as G
    from safeclf.guarantees.outcome import describe, of
    from safeclf.guarantees.promises import Evidence, interval

    positive = describe(of(info))
    y_pos, pred_pos = np.asarray(y_pos, bool), np.asarray(pred_pos, bool)
    minimum = G.MIN_GROUP_SIZE if minimum is None else minimum
    out = []
    for column, g in columns_of(rows, info):
        names = G.values(g)
        counts = {}
        for v in names:
            mask = g == v
            for rate in RATES:
                k, n = _counts(y_pos, pred_pos, rows, mask, rate)
                counts[v, rate] = (k, n)
                est, lo, hi, _ = interval("rate", Evidence(k, n), confidence)
                out.append({"part": part, "column": column, "group": v, "metric": rate,
                            "positive": positive if rate in COMPARED else None, "k": k,
                            "n": n, "estimate": est, "lower": lo, "upper": hi,
                            "small": int(mask.sum()) < minimum})
        if len(names) < 2:
            continue
        privileged = G.reference_of(info, column)
        if privileged is not None and str(privileged) not in names:
            privileged = None
        for rate in COMPARED:
            if privileged is not None:
                pairs = [(p.protected, p.privileged) for p in G.comparisons(
                    g, str(privileged), "each", where="by_group")]
            else:
                share = {v: counts[v, rate][0] / counts[v, rate][1] if counts[v, rate][1] else -1
                         for v in names}
                ref = max(names, key=lambda v: share[v])
                pairs = [(v, ref) for v in names if v != ref]
            for prot, ref in pairs:
                k1, n1 = counts[prot, rate]
                k2, n2 = counts[ref, rate]
                for measure in ("ratio", "difference"):
                    est, lo, hi, _ = interval(measure, Evidence(k1, n1, k2, n2), confidence)
                    out.append({"part": part, "column": column, "group": f"{prot} vs {ref}",
                                "metric": f"{rate} {measure}", "positive": positive,
                                "k": k1, "n": n1,
                                "k_reference": k2, "n_reference": n2, "estimate": est,
                                "lower": lo, "upper": hi,
                                "small": min(int((g == prot).sum()),
                                             int((g == ref).sum())) < minimum})
    return out


def of_job(est, task, confidence: float) -> list[dict]:
    """:func:`records` of a fitted estimator on ``task``'s test part (binary labels only)."""
    part = task.parts().get("test")
    classes = np.asarray(getattr(est, "classes_", []))
    if part is None or classes.size != 2 or "groups" not in part.rows:
        return []
    y_pos = np.asarray(part.y) == classes[-1]
    pred_pos = np.asarray(est.predict(part.X)) == classes[-1]
    return records(y_pos, pred_pos, part.rows, task.info, confidence, "test",
                   task.info.get("min_group_size"))


def frame(results: list[dict]):
    """One row per (job, part, column, group, metric) of the jobs' records."""
    import json

    import pandas as pd

    rows = []
    for r in results:
        for b in r.get("by_group") or []:
            rows.append({"job": r["id"], "dataset": r["dataset"], "method": r["method"],
                         "params": json.dumps(r["params"], sort_keys=True, default=str),
                         "seed": r["seed"], "fold": r["fold"], **b})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(table):
    """Per (dataset, method, params, column, group, metric): the mean estimate over jobs,
    the interval of a single job or the range of the estimates over several, the rows, and
    whether the group is small."""
    import pandas as pd

    from safeclf.report.verdicts import _fmt, _short
    from safeclf.store.folder import varying_by_method

    if table.empty:
        return pd.DataFrame()
    varying = varying_by_method(table)
    keys = ["dataset", "method", "params", "column", "group", "metric"]
    out = []
    for key, g in table.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key))
        row["params"] = _short(row["params"], varying[row["method"]]) or "-"
        named = g["positive"].dropna() if "positive" in g else []
        row["positive"] = str(named.iloc[0]) if len(named) else ""
        est = pd.to_numeric(g["estimate"], errors="coerce")
        row["estimate"] = _fmt(est.mean())
        if len(g) == 1:
            first = g.iloc[0]
            row["interval"] = f"[{_fmt(first['lower'])}, {_fmt(first['upper'])}]"
        else:
            row["interval"] = f"{len(g)} jobs: {_fmt(est.min())} – {_fmt(est.max())}"
        row["n"] = int(pd.to_numeric(g["n"]).mean())
        row["small"] = "small" if bool(g["small"].astype(bool).any()) else ""
        out.append(row)
    return pd.DataFrame(out)


def write(run_dir, results: list[dict]) -> None:
    """``by_group.csv`` (one row per job and figure) and ``by_group.md`` (its summary), when
    some job has groups."""
    from safeclf.store.folder import atomic_write, to_markdown

    table = frame(results)
    if table.empty:
        return
    atomic_write(run_dir / "by_group.csv", table.to_csv(index=False))
    text = ("# By group\n\nEach rate per group on the test split (k of n, two-sided "
            "Clopper–Pearson interval), and each ratio (Katz) and difference (Newcombe, "
            "reference minus group) per compared pair `group vs reference`. 'small': fewer "
            "rows than the minimum group size; reported on its own, never pooled. Per job: "
            "by_group.csv.\n\n" + to_markdown(summary(table)) + "\n")
    atomic_write(run_dir / "by_group.md", text)


def print_table(console, results: list[dict], limit: int = 40) -> None:
    """The by-group section of the printed summary: the positive rate per group and the
    ratios per pair (the other rates and the differences are in by_group.csv / .md)."""
    from rich.table import Table
    from rich.text import Text

    table = frame(results)
    if table.empty:
        return
    s = summary(table)
    s = s[s["metric"].isin(["positive_rate", "positive_rate ratio", "tpr ratio",
                            "fpr ratio"])]
    shown = s.head(limit)
    out = Table(title="By group (test split; all figures in by_group.csv)",
                title_justify="left")
    cols = ["dataset", "method", "params", "column", "group", "metric", "positive",
            "estimate", "interval", "n", "small"]
    if not s["positive"].astype(str).str.len().any():
        cols.remove("positive")  # labels without a favourable outcome
    for c in cols:
        out.add_column(c, overflow="fold")
    for row in shown.itertuples(index=False):
        out.add_row(*[Text(str(getattr(row, c))) for c in cols])
    console.print(out)
    if len(s) > limit:
        console.print(f"  ... and {len(s) - limit} more rows (by_group.md)")
