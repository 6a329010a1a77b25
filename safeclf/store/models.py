"""Fitted models kept in a run folder and applied to new data.

With ``save_models: true`` (or a method's ``save_model: true``) each job's fitted estimator is
written to ``models/<job>.skops`` as a scikit-learn :class:`~sklearn.pipeline.Pipeline` of the
preprocessing fitted on that job's training part and the estimator, in skops' format (no
pickle). A model file is data: :mod:`safeclf.store.trust` checks every object it describes
against the types safeclf itself writes before skops builds anything, and a model safeclf
writes is checked the same way before it is kept, so what is saved can be loaded.

``models/<job>.json`` beside it records what is needed to use the model and what it promises:
the format and safeclf version, the estimator's class, the dataset entry, the feature columns
and the feature names after encoding (one-hot categories), the ``preprocess`` step (impute,
scale), the classes, the favourable outcome (``outcome``, :mod:`safeclf.guarantees.outcome`), the job's
promises as checked on its test data, and its certificate when
the job was certified. ``safeclf deploy`` (:mod:`safeclf.serve.deploy`) writes the same pair as
``model.skops`` and ``model.json`` in a folder of its own.

:func:`predict_file` reads a CSV, encodes it as the job's ``csv`` dataset was encoded (one-hot
columns re-aligned to the training ones; empty numeric cells left to the model's imputer when
it has one), and writes the predictions (and scores or probabilities where the model has them);
a row it cannot encode is named by its line and column, and stops the batch unless bad rows
are to be skipped and reported (:mod:`safeclf.serve.new_rows`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from safeclf.errors import DataError, SpecError

#: The version of the ``models/<job>.json`` layout this safeclf writes and reads.
MODEL_FORMAT = 1

#: The model file of a folder written by ``safeclf deploy`` (its metadata: ``model.json``).
DEPLOYED = "model.skops"

#: Keys of the metadata and the types they must have.
_META_TYPES = {"format": int, "safeclf_version": str, "estimator": str, "dataset": dict}


def model_paths(run_dir: Path, job: str, what: str = "--job:") -> tuple[Path, Path]:
    """``models/<job>.skops`` and ``models/<job>.json`` of ``run_dir``, each a file of the run
    folder (:func:`safeclf._utils.paths.inside`): a job name with a path in it (``../x``, ``/x``), or a
    ``models`` folder or model file that is a symlink out of the run, is refused with one line
    headed by ``what`` (where the name came from)."""
    from safeclf._utils.paths import inside, plain_name

    plain_name(job, run_dir, what)
    return (inside(run_dir, "models", f"{job}.skops", what=what),
            inside(run_dir, "models", f"{job}.json", what=what))


def _type_path(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def save(path: Path, estimator, preprocessor, meta: dict[str, Any]) -> None:
    """Write the pipeline (preprocessor, estimator) to ``path`` and ``meta`` (completed with
    the format, the safeclf version and the estimator's class) beside it, each through a
    temporary file and a rename. The file is checked as :func:`load` will check it before it
    is kept; a model holding an object safeclf does not load is an error here, not a file no
    one can open later."""
    import skops.io as sio
    from sklearn.pipeline import Pipeline

    import safeclf
    from safeclf.store.trust import check_file
    from safeclf.store.folder import atomic_write, replacing

    steps = ([("preprocess", preprocessor)] if preprocessor is not None else []) + [("model", estimator)]
    pipeline = Pipeline(steps)
    with replacing(path) as tmp:
        sio.dump(pipeline, tmp)
        try:
            check_file(tmp)
        except SpecError as exc:
            raise SpecError(f"the fitted model cannot be saved so that it loads safely: {exc}") \
                from None
    meta = {"format": MODEL_FORMAT, "safeclf_version": safeclf.__version__,
            "estimator": _type_path(estimator), **meta}
    atomic_write(path.with_suffix(".json"), json.dumps(meta, indent=2, default=str) + "\n")


def load(path: Path):
    """The pipeline in ``path``. Every object the file describes is checked against
    :data:`safeclf.store.trust.TRUSTED_TYPES` before anything is built; any other file, or one
    that is not a pipeline ending in an estimator, is refused with one line."""
    import skops.io as sio
    from sklearn.pipeline import Pipeline

    from safeclf.store.trust import check_file, translated

    if not path.is_file():
        raise SpecError(f"no saved model '{path}' (run with save_models: true to keep models)")
    trusted = check_file(path)
    try:
        older = translated(path)  # a file written before the package was regrouped
        pipeline = sio.load(path, trusted=trusted) if older is None else \
            sio.loads(older, trusted=trusted)
    except Exception as exc:  # damaged arrays or a schema skops cannot follow
        raise SpecError(f"'{path}' is not a readable safeclf model file "
                        f"({type(exc).__name__})") from None
    if not isinstance(pipeline, Pipeline) or not pipeline.steps \
            or not hasattr(pipeline[-1], "predict"):
        raise SpecError(f"'{path}' holds a {_type_path(pipeline)}, not a safeclf model (a "
                        "pipeline ending in a fitted estimator)")
    return pipeline


def read_meta(meta_path: Path) -> dict[str, Any]:
    """The metadata beside a model, checked: present, JSON, this format, the keys
    :func:`predict_file` needs with their types (whatever the dataset; predict itself reads
    rows for ``csv`` datasets only)."""
    where = f"model metadata '{meta_path}'"
    if not meta_path.is_file():
        raise SpecError(f"{where} is missing; the model cannot be used without it (re-run the "
                        "job with save_models: true)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SpecError(f"{where} is not readable JSON ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise SpecError(f"{where} is not a JSON object")
    version = meta.get("format")
    if version != MODEL_FORMAT:
        raise SpecError(f"{where} has format {version!r}; this safeclf reads format "
                        f"{MODEL_FORMAT} (saved by safeclf {meta.get('safeclf_version', '?')})")
    for key, kind in _META_TYPES.items():
        if not isinstance(meta.get(key), kind):
            raise SpecError(f"{where}: '{key}' is missing or not a {kind.__name__}")
    for key in ("feature_names", "columns"):
        value = meta.get(key)
        if not (isinstance(value, list) and all(isinstance(c, str) for c in value)) \
                and not (key == "columns" and value is None):
            raise SpecError(f"{where}: '{key}' is missing or not a list of names")
    return meta


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
    the deployed model in ``folder`` (written by ``safeclf deploy``)."""
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
    path, meta_path = model_paths(folder, job)
    if not path.is_file():
        saved = sorted(p.stem for p in inside(folder, "models").glob("*.skops")) \
            if inside(folder, "models").is_dir() else []
        raise SpecError(f"--job: no saved model for job '{job}' in '{folder}'"
                        + (f" (saved: {', '.join(saved[:8])})" if saved else
                           " (the run saved no models; set save_models: true)"))
    return path, meta_path


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
    import pandas as pd

    from safeclf.serve.new_rows import encode
    from safeclf._utils.paths import not_overwriting, require_file, writable_file
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
    meta = read_meta(meta_path)
    if meta["dataset"].get("dataset") != "csv":
        raise SpecError(f"{'--job: the job' if job else 'the model'}'s dataset is "
                        f"'{meta['dataset'].get('dataset')}'; predict reads new rows for csv "
                        "datasets only")
    pipeline = load(path)
    _check_model_matches(pipeline, meta, path)
    require_file(data, "--data")
    try:
        frame = pd.read_csv(data)
    except Exception as exc:
        raise DataError(f"--data: cannot read '{data}': {str(exc).splitlines()[0]}") from None
    if frame.empty:
        raise DataError(f"--data: '{data}' has no rows")
    where = f"--data '{data}'"
    rows = encode(frame, meta, where, skip=skip_bad_rows)
    if not rows.keep.any():
        first = rows.bad.iloc[0]
        raise DataError(f"{where}: no row can be scored ({len(frame)} rows; the first problem: "
                        f"column '{first['column']}' at line {first['line']} {first['reason']})")
    from safeclf.guarantees.outcome import class_names, decode

    result = frame[rows.keep].copy()
    X = rows.X
    outcome = meta.get("outcome")  # absent in a model saved before outcomes were recorded
    result["prediction"] = decode(pipeline.predict(X), outcome)
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
    writes = [(Path(target), text, flag) for target, text, flag in (
        (out, result.to_csv(index=False), "--out"),
        (bad_rows, rows.bad.to_csv(index=False), "--bad-rows")) if target is not None]
    try:  # both files or neither: the bad rows are not written when the predictions cannot be
        atomic_write_all([(target, text) for target, text, _ in writes])
    except WriteError as exc:
        flag = next((f for t, _, f in writes if t == exc.path), "--out")
        raise SpecError(f"{flag}: {exc}; nothing was written") from None
    return Predicted(scored=len(result), bad=rows.bad)
