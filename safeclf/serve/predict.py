"""New rows scored by a saved model: ``safeclf predict`` (:func:`predict_file`).

:func:`predict_file` reads a CSV, encodes it as the job's ``csv`` dataset was encoded (one-hot
columns re-aligned to the training ones; empty numeric cells left to the model's imputer when
it has one; :mod:`safeclf.serve.new_rows`), and writes the predictions (and scores or
probabilities where the model has them), in the target's own values; a row it cannot encode
is named by its line and column, and stops the batch unless bad rows are to be skipped and
reported. The model and its metadata are read by :mod:`safeclf.store.models`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from safeclf.errors import DataError, SpecError
from safeclf.store.models import DEPLOYED, _type_path, load, model_paths, read_meta


def _check_model_matches(pipeline, meta: dict[str, Any], path: Path) -> None:
    """The model file and its metadata belong together."""
    est = pipeline[-1]
    if _type_path(est) != meta["estimator"]:
        raise SpecError(f"model '{path}' holds a {_type_path(est)}, but its metadata names a "
                        f"{meta['estimator']}; the two files do not belong together")
    n_in = getattr(pipeline[0], "n_features_in_", None)
    if n_in is not None and n_in != len(meta["feature_names"]):
        raise SpecError(f"model '{path}' takes {n_in} features, but its metadata names "
                        f"{len(meta['feature_names'])}; the two files do not belong together")


def model_files(folder: Path, job: str | None) -> tuple[Path, Path]:
    """The model and metadata files of ``job`` in run folder ``folder``, or, without a job, of
    the deployed model in ``folder`` (written by ``safeclf deploy``).

    A run folder's files are taken only through the job's record as the manifest lists it
    (:func:`safeclf.store.records.listed_model`): a job the manifest does not list (a model
    dropped into ``models/`` by someone else) is refused, as is a model or metadata file whose
    SHA-256 is not the one the record names; other records are not read (ignored)."""
    from safeclf._utils.paths import inside

    folder = Path(folder)
    if job is None:
        path = inside(folder, DEPLOYED)
        if path.is_file():
            return path, inside(folder, path.with_suffix(".json").name)
        saved = sorted(p.stem for p in inside(folder, "models").glob("*.skops")) \
            if inside(folder, "models").is_dir() else []
        raise SpecError(f"'{folder}' holds no deployed model ({DEPLOYED}); give --job, the job "
                        "of a model saved in a run folder, or a folder written by safeclf "
                        "deploy" + (f" (saved: {', '.join(saved[:8])})" if saved else ""))
    from safeclf.store.read import read_manifest
    from safeclf.store.records import listed_model

    path, meta_path = model_paths(folder, job)
    if not path.is_file():
        listed = read_manifest(folder, required=False).get("records") \
            if folder.is_dir() else None
        listed = listed if isinstance(listed, dict) else {}
        saved = sorted(p.stem for p in inside(folder, "models").glob("*.skops")
                       if p.stem in listed) if inside(folder, "models").is_dir() else []
        raise SpecError(f"--job: no saved model for job '{job}' in '{folder}'"
                        + (f" (saved: {', '.join(saved[:8])})" if saved else
                           " (the run saved no models; set save_models: true)"))
    manifest = read_manifest(folder, where=f"'{folder}'")
    return listed_model(folder, manifest, job)  # the files the job's listed record names


def model_source(path: Path, job: str | None) -> tuple[Path, Path]:
    """The model and metadata files ``path`` names: a folder written by ``safeclf deploy``
    (``job`` None), a run folder with ``job``, or a model file itself (``models/<job>.skops``
    of a run, ``model.skops`` of a deployed folder; its ``.json`` beside it)."""
    path = Path(path)
    if job is None and path.suffix == ".skops" and not path.is_dir():
        from safeclf._utils.paths import require_file

        require_file(path, "model file")
        return path, path.with_suffix(".json")
    return model_files(path, job)


def read_model(path: Path, meta_path: Path, job: str | None = None):
    """``(pipeline, meta)`` of a model whose new rows can be read (a ``csv`` dataset's model),
    each file checked, and checked to belong with the other."""
    meta = read_meta(meta_path)
    if meta["dataset"].get("dataset") != "csv":
        raise SpecError(f"{'--job: the job' if job else 'the model'}'s dataset is "
                        f"'{meta['dataset'].get('dataset')}'; new rows are read for csv "
                        "datasets only")
    pipeline = load(path)
    _check_model_matches(pipeline, meta, path)
    return pipeline, meta


@dataclass
class Scored:
    """Rows scored by :func:`score_frame`: ``table`` (the good rows of the frame with
    ``prediction`` and, where the model has them, ``proba_<class>`` or ``score``, exactly what
    ``safeclf predict`` writes), the encoded rows (:class:`~safeclf.serve.new_rows.Encoded`:
    ``X``, the ``keep`` mask, the ``bad`` table) and the raw predictions (the model's
    classes, before the favourable outcome's values are written back)."""

    table: Any
    rows: Any
    raw: np.ndarray


def score_frame(pipeline, meta: dict[str, Any], frame, where: str, skip: bool = False,
                hint: str = "--skip-bad-rows") -> Scored:
    """Encode the raw rows ``frame`` as the model's training rows were
    (:func:`safeclf.serve.new_rows.encode`: the same checks and messages, headed by
    ``where``; ``hint`` names the way to skip bad rows) and score them: the one path of
    ``safeclf predict`` and :func:`safeclf.load_model`."""
    from safeclf.guarantees.outcome import class_names, decode
    from safeclf.serve.new_rows import encode

    if frame.empty:
        raise DataError(f"{where} has no rows")
    rows = encode(frame, meta, where, skip=skip, hint=hint)
    if not rows.keep.any():
        first = rows.bad.iloc[0]
        raise DataError(f"{where}: no row can be scored ({len(frame)} rows; the first problem: "
                        f"column '{first['column']}' at line {first['line']} {first['reason']})")
    result = frame[rows.keep].copy()
    X = rows.X
    outcome = meta.get("outcome")  # absent in a model saved before outcomes were recorded
    raw = np.asarray(pipeline.predict(X))
    result["prediction"] = decode(raw, outcome)
    if hasattr(pipeline, "predict_proba") and hasattr(pipeline[-1], "predict_proba"):
        try:
            proba = pipeline.predict_proba(X)
            for k, c in enumerate(class_names(pipeline[-1].classes_, outcome)):
                result[f"proba_{c}"] = proba[:, k]
        except (AttributeError, NotImplementedError):
            pass
    elif hasattr(pipeline[-1], "decision_function"):
        score = np.asarray(pipeline.decision_function(X))
        if score.ndim == 1:
            result["score"] = score
    return Scored(result, rows, raw)


def read_rows(data: Path, flag: str = "--data"):
    """The rows of CSV ``data`` as pandas reads them (one line when it cannot)."""
    import pandas as pd

    from safeclf._utils.paths import require_file

    require_file(data, flag)
    try:
        frame = pd.read_csv(data)
    except Exception as exc:
        raise DataError(f"{flag}: cannot read '{data}': {str(exc).splitlines()[0]}") from None
    if frame.empty:
        raise DataError(f"{flag}: '{data}' has no rows")
    return frame


@dataclass
class Predicted:
    """What :func:`predict_file` did: rows scored, and the problems of the rows skipped
    (a DataFrame with columns line, column, value, reason; empty when none was)."""

    scored: int
    bad: Any


def predict_file(folder: Path, job: str | None, data: Path, out: Path,
                 skip_bad_rows: bool = False, bad_rows: Path | None = None) -> Predicted:
    """Apply a saved model to the rows of ``data`` and write ``out``.

    Parameters
    ----------
    folder : Path
        A run folder (with ``job``) or a folder written by ``safeclf deploy`` (``job`` None).
    job : str or None
        The job whose model to use.
    data : Path
        A CSV with the training data's feature columns.
    out : Path
        The CSV to write: the input columns plus ``prediction`` and, where available,
        ``score`` or ``proba_<class>``. A model trained on a target encoded from its
        favourable value (``positive``) writes the original label values
        (``approve``/``deny``, ``proba_approve``).
    skip_bad_rows : bool
        Score the rows the model can take and report the others, instead of refusing the
        batch at the first bad cell.
    bad_rows : Path, optional
        With ``skip_bad_rows``: write the problems there (CSV: line, column, value, reason).

    Returns
    -------
    Predicted
        The number of rows scored and the table of problems.
    """
    from safeclf._utils.paths import not_overwriting, writable_file
    from safeclf.serve.new_rows import as_written
    from safeclf.store.folder import WriteError, atomic_write_all

    writable_file(out, "--out")
    if bad_rows is not None:
        if not skip_bad_rows:
            raise SpecError("--bad-rows: the bad rows are listed only with --skip-bad-rows")
        writable_file(bad_rows, "--bad-rows")
        if Path(bad_rows).resolve() == Path(out).resolve():
            raise SpecError("--bad-rows: give another file than --out")
    path, meta_path = model_files(folder, job)
    inputs = {"the --data file": Path(data), "the model file": path,
              "the model's metadata": meta_path}
    home = {"the run folder" if job is not None else "the deployed model's folder": folder}
    for target, flag in ((out, "--out"), (bad_rows, "--bad-rows")):
        if target is not None:
            not_overwriting(target, flag, inputs, home)
    pipeline, meta = read_model(path, meta_path, job)
    frame = read_rows(data)
    scored = score_frame(pipeline, meta, frame, f"--data '{data}'", skip=skip_bad_rows)
    result, rows = scored.table, scored.rows
    writes = [(Path(target), text, flag) for target, text, flag in (
        (out, as_written(result).to_csv(index=False), "--out"),
        (bad_rows, rows.bad.to_csv(index=False), "--bad-rows")) if target is not None]
    try:  # both files or neither: the bad rows are not written when the predictions cannot be
        atomic_write_all([(target, text) for target, text, _ in writes])
    except WriteError as exc:
        flag = next((f for t, _, f in writes if t == exc.path), "--out")
        raise SpecError(f"{flag}: {exc}; nothing was written") from None
    return Predicted(scored=len(result), bad=rows.bad)
