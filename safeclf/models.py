"""Fitted models kept in a run folder and applied to new data.

With ``save_models: true`` (or a method's ``save_model: true``) each job's fitted estimator is
written to ``models/<job>.skops`` as a scikit-learn :class:`~sklearn.pipeline.Pipeline` of the
preprocessing fitted on that job's training part and the estimator, in skops' format (no pickle:
loading builds only the types it is told to trust). ``models/<job>.json`` beside it records what
is needed to turn a new file into the same features: the dataset entry, the feature names
after encoding, and the classes.

:func:`predict_file` reads a CSV, encodes it as the job's ``csv`` dataset was encoded (one-hot
columns re-aligned to the training ones), and writes the predictions (and scores or
probabilities where the model has them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from safeclf.errors import DataError, SpecError

#: Module prefixes whose types a model file may hold besides those skops trusts by default.
TRUSTED_PREFIXES = ("safeclf.", "sklearn.", "numpy.", "scipy.")


def model_paths(run_dir: Path, job: str) -> tuple[Path, Path]:
    return run_dir / "models" / f"{job}.skops", run_dir / "models" / f"{job}.json"


def save(path: Path, estimator, preprocessor, meta: dict[str, Any]) -> None:
    """Write the pipeline (preprocessor, estimator) to ``path`` and ``meta`` beside it, each
    through a temporary file and a rename."""
    import os
    import tempfile

    import skops.io as sio
    from sklearn.pipeline import Pipeline

    from safeclf.run_folder import atomic_write

    steps = ([("preprocess", preprocessor)] if preprocessor is not None else []) + [("model", estimator)]
    pipeline = Pipeline(steps)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        sio.dump(pipeline, tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    atomic_write(path.with_suffix(".json"), json.dumps(meta, indent=2, default=str) + "\n")


def load(path: Path):
    """The pipeline in ``path``; a file holding a type outside :data:`TRUSTED_PREFIXES` (and
    skops' defaults) is refused, since building it could run its code."""
    import skops.io as sio

    if not path.is_file():
        raise SpecError(f"no saved model '{path}' (run with save_models: true to keep models)")
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # a damaged or foreign file
        raise SpecError(f"'{path}' is not a readable skops model file: {type(exc).__name__}") from None
    refused = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
    if refused:
        raise SpecError(f"'{path}' holds types safeclf does not trust ({', '.join(refused[:5])}); "
                        "refusing to load it")
    return sio.load(path, trusted=untrusted)


def _features(frame, meta: dict[str, Any], where: str):
    """The new rows encoded like the job's training data."""
    import pandas as pd

    entry = meta["dataset"]
    if entry.get("dataset") != "csv":
        raise SpecError(f"--data: the job's dataset is '{entry.get('dataset')}'; predict reads new "
                        "rows for csv datasets only")
    params = entry.get("params") or {}
    drop = [c for c in (params.get("target"), params.get("group")) if c and c in frame.columns]
    cols = meta.get("columns") or params.get("features") or [c for c in frame.columns
                                                            if c not in drop]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise DataError(f"{where}: column '{missing[0]}' used in training is missing "
                        f"(columns: {list(frame.columns)})")
    X = frame[cols]
    if params.get("one_hot", True):
        X = pd.get_dummies(X, dtype=float)
    names = meta["feature_names"]
    unknown = [c for c in X.columns if c not in names]
    if unknown:
        raise DataError(f"{where}: '{unknown[0]}' was not seen in training (a new column or "
                        "category)")
    X = X.reindex(columns=names, fill_value=0.0)
    try:
        values = X.to_numpy(dtype=float)
    except ValueError:
        raise DataError(f"{where}: non-numeric values in numeric feature columns") from None
    if not np.isfinite(values).all():
        raise DataError(f"{where}: empty or non-finite feature values")
    return values


def predict_file(run_dir: Path, job: str, data: Path, out: Path) -> int:
    """Apply job ``job`` of ``run_dir`` to the rows of ``data``; write ``out`` (CSV: the input
    columns plus ``prediction`` and, where available, ``score`` or ``proba_<class>``).
    Returns the number of rows."""
    import pandas as pd

    from safeclf.run_folder import atomic_write

    run_dir = Path(run_dir)
    path, meta_path = model_paths(run_dir, job)
    if not path.is_file():
        saved = sorted(p.stem for p in (run_dir / "models").glob("*.skops")) \
            if (run_dir / "models").is_dir() else []
        raise SpecError(f"--job: no saved model for job '{job}' in '{run_dir}'"
                        + (f" (saved: {', '.join(saved[:8])})" if saved else
                           " (the run saved no models; set save_models: true)"))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    pipeline = load(path)
    if not Path(data).is_file():
        raise DataError(f"--data: '{data}' does not exist")
    try:
        frame = pd.read_csv(data)
    except Exception as exc:
        raise DataError(f"--data: cannot read '{data}': {str(exc).splitlines()[0]}") from None
    if frame.empty:
        raise DataError(f"--data: '{data}' has no rows")
    X = _features(frame, meta, f"--data '{data}'")
    result = frame.copy()
    result["prediction"] = pipeline.predict(X)
    if hasattr(pipeline, "predict_proba") and hasattr(pipeline[-1], "predict_proba"):
        try:
            proba = pipeline.predict_proba(X)
            for k, c in enumerate(pipeline[-1].classes_):
                result[f"proba_{c}"] = proba[:, k]
        except (AttributeError, NotImplementedError):
            pass
    elif hasattr(pipeline[-1], "decision_function"):
        score = np.asarray(pipeline.decision_function(X))
        if score.ndim == 1:
            result["score"] = score
    atomic_write(Path(out), result.to_csv(index=False))
    return len(result)
