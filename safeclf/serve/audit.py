"""A model in service, checked on new labelled rows: ``safeclf audit MODEL --data LABELLED.csv``.

:func:`audit` scores the rows through the one path of ``safeclf predict``
(:func:`safeclf.serve.predict.score_frame`: the same encoding, checks and messages), reads
their labels and groups as the ``csv`` loader did, and checks each promise the model carries
(its ``model.json``) on them:

* **the test**: the one a certificate uses (:mod:`safeclf.guarantees.shortfall`: the exact
  binomial bound for a rate, the exact unconditional test of :mod:`safeclf.guarantees.pairtest`
  for a ratio or a difference of two groups' rates), inverted into a lower and an upper
  confidence limit, each one-sided at level ``a``;
* **the verdict** (:func:`verdicts`): ``holds`` when the test of "the promise is violated"
  rejects (the far limit is on the promised side of the bound), ``violated`` when the test of
  "the promise holds", its bound included, rejects (the near limit is beyond the bound),
  ``inconclusive`` otherwise, with ``n_needed``: the audited rows that would make it
  conclusive at the observed shares (:func:`safeclf.guarantees.shortfall.scale_needed`);
* **the level**: ``a = α / m`` for ``m`` promises audited (a union bound): if every promise
  holds on the population the rows come from, the audit calls one ``violated`` with
  probability at most α (and if one is broken, calls it ``holds`` with probability at most α).

One audit spends α. Audits repeated on the same model (every month) each spend α again unless
the level is shared out over the looks: with ``period=k`` (k = 1, 2, ...), the audit of period
k uses α_k = α · 6 / (π² k²), and Σ_k α_k = α, so over any number of periods the chance that
*any* audit wrongly says ``violated`` of a promise that holds throughout is at most α (a union
bound over the periods, valid whatever the number of periods, with no need to fix it ahead).

Per group, the rates of the audited rows are tabulated as the run's ``by_group.csv`` is
(:func:`safeclf.report.by_group.records`). With ``report_dir``, ``audit.md`` and
``audit.html`` are written there, both or neither; an input is never overwritten.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from safeclf.errors import DataError, SpecError

#: The files written in ``report_dir``.
REPORT_FILES = ("audit.md", "audit.html")
#: Quantities an audit measures from labels and decisions alone.
COUNTED = ("rate", "ratio", "difference")
#: The columns of the promise table.
COLUMNS = ["promise", "statement", "kind", "certificate", "run_test_check", "bound",
           "estimate", "lower", "upper", "n", "n_groups", "level", "verdict", "n_needed",
           "audit", "note"]


def period_level(alpha: float, period: int | None) -> float:
    """The level one audit spends: α alone, or α · 6 / (π² k²) for period k of a monitoring
    sequence (summing to α over k = 1, 2, ...)."""
    return alpha if period is None else alpha * 6.0 / (math.pi ** 2 * period ** 2)


@dataclass
class Audit:
    """What :func:`audit` found.

    Attributes
    ----------
    promises : pandas.DataFrame
        One row per promise (:data:`COLUMNS`): the certificate's statement and the run's test
        check beside the audit's estimate, limits, verdict and ``n_needed``.
    by_group : pandas.DataFrame
        Rates per group of the audited rows, with two-sided intervals at 1 − 2·level.
    rows, skipped : int
        Rows audited, and rows skipped as bad (``skip_bad_rows``).
    alpha, level : float
        The audit's α (of this period, with ``period``) and each promise's one-sided level.
    period : int or None
        The period of a monitoring sequence.
    bad : pandas.DataFrame
        The problems of the rows skipped (line, column, value, reason).
    written : list of Path
        The report files written.
    """

    promises: Any
    by_group: Any
    rows: int
    skipped: int
    alpha: float
    level: float
    period: int | None
    model: str
    data: str
    bad: Any = None
    written: list = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when some promise is ``violated``, else 0 (``safeclf audit``'s exit code)."""
        return int((self.promises["verdict"] == "violated").any())

    def meaning(self) -> str:
        """What the verdicts mean, in one paragraph."""
        spent = (f"α = {self.alpha:.4g} of this audit" if self.period is None else
                 f"α_{self.period} = {self.alpha:.4g}, period {self.period}'s share (α · 6/(π²k²)) "
                 "of the monitoring sequence's α")
        m = int((self.promises["verdict"] != "not checked").sum())
        return (f"Each promise is tested at level {self.level:.3g} per side ({spent}, shared "
                f"by {m} promise(s)): if every promise holds on the population these rows come "
                "from, this audit calls one violated with probability at most that α; "
                "'inconclusive' means the rows cannot tell (n_needed: the audited rows that "
                "would, at the observed shares). The limits are those of the certificate's "
                "exact tests, each one-sided.")


# -- the rows ---------------------------------------------------------------------------------
def _labels(frame, meta: dict, where: str) -> np.ndarray:
    """Whether each row's label is the positive class (``classes_[-1]``, the favourable
    outcome where one is declared), read as the target's own values."""
    from safeclf.guarantees.outcome import class_names, text
    from safeclf.serve.new_rows import line

    target = (meta["dataset"].get("params") or {}).get("target")
    if target not in frame.columns:
        raise DataError(f"{where}: the labels column '{target}' (the model's target) is "
                        f"missing; an audit needs labelled rows (columns: {list(frame.columns)})")
    names = class_names(meta.get("classes") or [], meta.get("outcome"))
    if len(names) != 2:
        raise SpecError(f"the model has classes {names}; an audit checks promises of binary "
                        "classifiers")
    col = frame[target]
    if col.isna().any():
        i = int(np.flatnonzero(col.isna().to_numpy())[0])
        raise DataError(f"{where}: the labels column '{target}' is empty at line "
                        f"{line(frame.index[i])}; every audited row needs its label")
    values = np.array([text(v) for v in col.tolist()], dtype=object)
    unknown = ~np.isin(values, names)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise DataError(f"{where}: the labels column '{target}' holds {values[i]!r} at line "
                        f"{line(frame.index[i])}, not a label of the model ({', '.join(names)})")
    return values == names[-1]


def _groups(frame, meta: dict, where: str) -> tuple[dict, dict]:
    """The rows entries (``groups`` and, for intersections, each column) and the ``info``
    the per-group table reads, built from the group columns as the ``csv`` loader builds
    them."""
    from safeclf.guarantees import groups as G
    from safeclf.serve.new_rows import line

    params = meta["dataset"].get("params") or {}
    group = params.get("group")
    columns = [group] if isinstance(group, str) else list(group or [])
    info: dict[str, Any] = {"outcome": meta.get("outcome")}
    if not columns:
        return {}, info
    for c in columns:
        if c not in frame.columns:
            raise DataError(f"{where}: the group column '{c}' is missing; the model's promises "
                            f"compare its groups (columns: {list(frame.columns)})")
        if frame[c].isna().any():
            i = int(np.flatnonzero(frame[c].isna().to_numpy())[0])
            raise DataError(f"{where}: the group column '{c}' is empty at line "
                            f"{line(frame.index[i])}; give every audited row its group")
    rows = {"groups": (frame[columns[0]].to_numpy() if len(columns) == 1
                       else G.intersect([frame[c].to_numpy() for c in columns]))}
    if len(columns) > 1:
        rows.update({c: frame[c].to_numpy().astype(str).astype(object) for c in columns})
        info["group_columns"] = columns
    if params.get("privileged") is not None:
        info["privileged_group"] = G.label(params["privileged"])
    return rows, info


# -- the promises -----------------------------------------------------------------------------
def _promise(record: dict):
    """The :class:`~safeclf.guarantees.promises.Promise` a ``promises`` record of the model's
    metadata states."""
    from safeclf.guarantees.promises import Promise
    from safeclf.guarantees.rates import Quantity

    fields = {f.name for f in dataclasses.fields(Quantity)}
    q = Quantity(**{k: v for k, v in (record.get("quantity") or {}).items() if k in fields})
    return Promise(name=str(record["promise"]), statement=str(record.get("statement", "")),
                   quantity=q, sense=record["sense"], bound=float(record["bound"]),
                   kind=record["kind"], source=str(record.get("source", "")),
                   delta=record.get("delta"), rule=record.get("rule") or "predict",
                   positive=record.get("positive"))


def _flip(p):
    return dataclasses.replace(p, sense="<=" if p.sense == ">=" else ">=")


def verdicts(p, k, n: int, k2=None, n2: int | None = None, level: float = 0.05) -> np.ndarray:
    """The verdicts of promise ``p`` on counts ``k`` of ``n`` (and ``k2`` of ``n2``, the
    privileged group of a comparison; ``k`` and ``k2`` may be arrays, one audit each), by the
    certificate's own tests (:func:`safeclf.guarantees.ltt.rejects` with the exact bound):
    ``holds`` when the test of "``p`` is violated" rejects at ``level``, ``violated`` when
    the test of "``p`` holds" (its bound included) rejects at ``level``, else
    ``inconclusive``. A promise that holds is called violated with probability ≤ ``level``."""
    from safeclf.guarantees import bounds, ltt

    exact = bounds.get(bounds.DEFAULT)
    held = np.asarray(ltt.rejects(p, k, n, k2, n2, level, exact), bool)
    broken = np.asarray(ltt.rejects(_flip(p), k, n, k2, n2, level, exact), bool)
    return np.where(held, "holds", np.where(broken, "violated", "inconclusive"))


def judge(p, ev, level: float, rows: int) -> dict[str, Any]:
    """Estimate, the lower and upper confidence limits at ``level`` each (the tests of
    :func:`verdicts` inverted, :func:`safeclf.guarantees.shortfall.certified_limit`), the
    verdict (:func:`verdicts`) and, when inconclusive, ``n_needed``: the audited rows at which
    the observed shares would be conclusive (:func:`safeclf.guarantees.shortfall.scale_needed`
    on the side of the bound the estimate is on; ``inf`` when no number of rows would do)."""
    from safeclf.guarantees import bounds, shortfall

    exact = bounds.get(bounds.DEFAULT)
    est = shortfall.estimate(p, ev)
    up = p if p.sense == "<=" else _flip(p)
    out = {"estimate": est, "lower": shortfall.certified_limit(_flip(up), ev, level, exact),
           "upper": shortfall.certified_limit(up, ev, level, exact),
           "verdict": str(verdicts(p, ev.k, ev.n, ev.k2, ev.n2, level)), "n_needed": math.nan}
    if out["verdict"] == "inconclusive" and np.isfinite(est):
        kept = est <= p.bound if p.sense == "<=" else est >= p.bound
        c = shortfall.scale_needed(p if kept else _flip(p), ev, level, exact)
        out["n_needed"] = math.ceil(c * rows) if np.isfinite(c) else math.inf
    return out


def _certified(record: dict, cert: dict | None) -> str:
    """What the model's own papers say of the promise: its certificate, or its kind."""
    if cert and record.get("kind") == "high_confidence":
        rows = cert.get("n_safety") or cert.get("n_calibration") or cert.get("n")
        on = f" on {rows} held-back rows" if rows else ""
        how = {"training": "in training", "threshold": "post hoc"}.get(cert.get("how"),
                                                                      cert.get("how", "?"))
        return (f"certified {how} at δ = {cert.get('delta')}{on} ({cert.get('bound', '?')} "
                "bound)")
    return f"{record.get('kind')}: not certified"


def _run_check(record: dict) -> str:
    """The run's own check of the promise on its test split, as a cell."""
    if record.get("verdict") is None:
        return ""
    est, lo, hi = (record.get(k) for k in ("estimate", "lower", "upper"))
    if not all(isinstance(v, (int, float)) for v in (est, lo, hi)):
        return str(record["verdict"])
    return f"{est:.3g} [{lo:.3g}, {hi:.3g}] n={record.get('n')}: {record['verdict']}"


def _checks(model, y_pos, pred_pos, rows, level_of, n_rows: int) -> list[dict]:
    """One row of the promise table per promise the model carries."""
    from safeclf.guarantees.promises import rate_evidence

    records = [r for r in model.promises if r.get("kind") != "none"]
    countable = [r for r in records if (r.get("quantity") or {}).get("kind") in COUNTED]
    level = level_of(len(countable))
    out = []
    for r in records:
        p = _promise(r)
        op = "≤" if p.sense == "<=" else "≥"
        row = {"promise": p.name, "statement": p.statement, "kind": p.kind,
               "certificate": _certified(r, model.certificate), "run_test_check": _run_check(r),
               "bound": f"{op} {p.bound:g}", "n": n_rows, "n_groups": "", "level": level,
               "note": ""}
        if r not in countable:
            out.append(row | {"verdict": "not checked", "note": "a quantity of the method's own "
                              "(not counted from labels and decisions)"})
            continue
        try:
            ev = rate_evidence(p.quantity, y_pos, pred_pos, rows)
        except (KeyError, ValueError) as exc:
            out.append(row | {"verdict": "not checked", "note": f"cannot be measured: {exc}"})
            continue
        row |= judge(p, ev, level, n_rows)
        row["n"] = int(ev.n + (ev.n2 or 0))
        if ev.n2 is not None:  # a comparison rests on its smaller group: both are named
            from safeclf.guarantees.shortfall import pair_names

            prot, priv = pair_names(p.quantity, rows[p.quantity.groups])
            row["n_groups"] = f"{prot} {ev.n}, {priv} {ev.n2}"
        if ev.n2 is not None and (not ev.n or not ev.n2):
            row["note"] = "one group of the comparison has no audited row"
        lo, hi = row["lower"], row["upper"]
        row["audit"] = (f"on {n_rows} audited rows: {row['estimate']:.3g}, limits [{lo:.3g}, "
                        f"{hi:.3g}] (each one-sided at {level:.3g}): {row['verdict']}")
        out.append(row)
    return out


# -- the command --------------------------------------------------------------------------------
def _check_report_dir(report_dir: Path, inputs: dict, folders: dict) -> None:
    """``report_dir``: a folder that can be made or written, not an input, not inside the
    model's folder, without a report of an earlier audit (nothing is overwritten)."""
    from safeclf._utils.paths import not_overwriting, what_is, writable_folder

    kind = what_is(report_dir)
    if kind not in ("missing", "a folder"):
        raise SpecError(f"--report-dir '{report_dir}' is {kind}; give a folder")
    not_overwriting(report_dir, "--report-dir", inputs, folders)
    for name in REPORT_FILES:
        if what_is(Path(report_dir) / name) != "missing":
            raise SpecError(f"--report-dir '{report_dir}' already holds {name}; give a new "
                            "folder (an earlier audit's report is never overwritten)")
    writable_folder(report_dir, "--report-dir:", make_parents=False)


def audit(model, data, job: str | None = None, report_dir: str | Path | None = None,
          alpha: float = 0.05, period: int | None = None,
          skip_bad_rows: bool = False) -> Audit:
    """Check each promise of a saved model on new labelled rows.

    Parameters
    ----------
    model : str, Path or Model
        A folder written by ``safeclf deploy``, a run folder (with ``job``), a model file, or
        a model from :func:`safeclf.load_model`.
    data : str, Path or pandas.DataFrame
        Labelled rows: the training CSV's columns, its target and its group column(s).
    job : str, optional
        The job of a run folder's model.
    report_dir : str or Path, optional
        A folder (new, or without an earlier report) that receives ``audit.md`` and
        ``audit.html``.
    alpha : float, default 0.05
        The probability that the audit calls a promise violated although it holds on the
        population of the rows (the whole sequence's, with ``period``).
    period : int, optional
        The period k ≥ 1 of a monitoring sequence: this audit spends α · 6 / (π² k²).
    skip_bad_rows : bool, default False
        Audit the rows the model can score and report the others, instead of refusing.

    Returns
    -------
    Audit
        The promise table, the per-group table, and ``exit_code`` (1 when a promise is
        violated).
    """
    import pandas as pd

    from safeclf.serve.model import HINT, Model, load_model
    from safeclf.serve.predict import read_rows, score_frame

    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise SpecError(f"--alpha must be between 0 and 1, got {alpha!r}")
    if period is not None and (not isinstance(period, (int, np.integer)) or period < 1):
        raise SpecError(f"--period must be a whole number ≥ 1 (the first period is 1), got "
                        f"{period!r}")
    loaded = model if isinstance(model, Model) else None
    if loaded is None:
        from safeclf.serve.predict import model_source

        source, meta_path = model_source(Path(model), job)
        if report_dir is not None:
            home = Path(model) if Path(model).is_dir() else source.parent
            _check_report_dir(Path(report_dir), {
                "the --data file": None if isinstance(data, pd.DataFrame) else Path(data),
                "the model file": source, "the model's metadata": meta_path},
                {"the model's folder": home})
        loaded = load_model(model, job)
    elif report_dir is not None:
        _check_report_dir(Path(report_dir), {"the --data file": None if isinstance(
            data, pd.DataFrame) else Path(data)}, {"the model's folder": loaded.path.parent})
    if not [r for r in loaded.promises if r.get("kind") != "none"]:
        raise SpecError(f"the model '{loaded.path}' carries no promise to audit (its method "
                        "promises nothing); declare promises on the method entry, or certify "
                        "it, and run again")
    if not [r for r in loaded.promises if (r.get("quantity") or {}).get("kind") in COUNTED]:
        kinds = sorted({(r.get("quantity") or {}).get("kind", "?") for r in loaded.promises
                        if r.get("kind") != "none"})
        raise SpecError(f"the model '{loaded.path}' promises only quantities of its method's "
                        f"own ({', '.join(kinds)}), which an audit cannot count from labels "
                        "and decisions; nothing to audit")
    if isinstance(data, pd.DataFrame):
        frame, where, hint = data.reset_index(drop=True), "data", HINT
    else:
        frame, where, hint = read_rows(Path(data)), f"--data '{data}'", "--skip-bad-rows"
    y_all = _labels(frame, loaded.meta, where)
    groups, info = _groups(frame, loaded.meta, where)
    scored = score_frame(loaded.pipeline, loaded.meta, frame, where, skip=skip_bad_rows,
                         hint=hint)
    keep = scored.rows.keep
    classes = np.asarray(loaded.pipeline[-1].classes_)
    pred_pos = scored.raw == classes[-1]
    y_pos = y_all[keep]
    rows = {k: np.asarray(v)[keep] for k, v in groups.items()}
    n = int(keep.sum())
    a = period_level(float(alpha), period)
    levels = {}

    def level_of(m: int) -> float:
        levels["level"] = a / max(m, 1)
        return levels["level"]

    table = pd.DataFrame(_checks(loaded, y_pos, pred_pos, rows, level_of, n),
                         columns=COLUMNS)
    by_group = pd.DataFrame()
    if rows:
        from safeclf.report.by_group import records

        by_group = pd.DataFrame(records(y_pos, pred_pos, rows, info,
                                        1 - 2 * levels["level"], part="audit"))
    result = Audit(table, by_group, n, int((~keep).sum()), a, levels["level"], period,
                   str(loaded.path), "a DataFrame" if isinstance(data, pd.DataFrame) else
                   str(data), scored.rows.bad)
    if report_dir is not None:
        result.written = write_report(result, Path(report_dir))
    return result


def write_report(result: Audit, report_dir: Path) -> list[Path]:
    """``audit.md`` and ``audit.html`` of ``result`` in ``report_dir`` (made if missing),
    both or neither."""
    from safeclf.serve.audit_report import html, markdown
    from safeclf.store.folder import WriteError, atomic_write_all

    try:
        report_dir.mkdir(exist_ok=True)
        paths = [report_dir / name for name in REPORT_FILES]
        atomic_write_all(list(zip(paths, (markdown(result), html(result)))))
    except OSError as exc:
        raise SpecError(f"--report-dir: cannot write in '{report_dir}': {exc.strerror or exc}; "
                        "nothing was written") from None
    except WriteError as exc:
        raise SpecError(f"--report-dir: {exc}; nothing was written") from None
    return paths
