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
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from safeclf.errors import SpecError

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


#: Whether :func:`load` takes a model saved by another scikit-learn or safeclf version when
#: it is not told (a CLI command's ``--allow-version-mismatch`` sets it for its duration).
_ALLOW_MISMATCH: ContextVar[bool] = ContextVar("allow_version_mismatch", default=False)


@contextmanager
def version_mismatch_allowed(allow: bool = True):
    """Within the block, :func:`load` takes models saved by other versions when ``allow``."""
    token = _ALLOW_MISMATCH.set(bool(allow))
    try:
        yield
    finally:
        _ALLOW_MISMATCH.reset(token)


def mismatch_allowed() -> bool:
    """Whether :func:`version_mismatch_allowed` is in force."""
    return _ALLOW_MISMATCH.get()


def _running_versions() -> dict[str, str]:
    import sklearn

    from safeclf._utils.version import __version__

    return {"sklearn_version": sklearn.__version__, "safeclf_version": __version__}


_SHOWN = {"sklearn_version": "scikit-learn", "safeclf_version": "safeclf"}


def check_versions(path: Path, allow: bool | None = None) -> None:
    """Refuse, with one line naming both versions, the model ``path`` whose metadata beside it
    (``<path>.json``) says it was saved by another scikit-learn or safeclf than the running one,
    unless ``allow`` (None: as :func:`version_mismatch_allowed` says). A version the metadata
    does not record (files older than this check record no scikit-learn version) is not
    compared; unreadable metadata is left to :func:`read_meta`."""
    allow = _ALLOW_MISMATCH.get() if allow is None else allow
    meta_path = Path(path).with_suffix(".json")
    if allow or not meta_path.is_file():
        return
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return
    if not isinstance(meta, dict):
        return
    for key, running in _running_versions().items():
        saved = meta.get(key)
        if saved is not None and str(saved) != running:
            raise SpecError(f"model file '{path}' was saved with {_SHOWN[key]} {saved}, running "
                            f"{_SHOWN[key]} {running}; it may not load or predict the same "
                            "(pass --allow-version-mismatch, or allow_version_mismatch=True in "
                            "Python, to load it anyway)")


def _type_path(obj) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def save(path: Path, estimator, preprocessor, meta: dict[str, Any]) -> str:
    """Write the pipeline (preprocessor, estimator) to ``path`` and ``meta`` (completed with
    the format, the safeclf version and the estimator's class) beside it, each through a
    temporary file and a rename. The file is checked as :func:`load` will check it before it
    is kept; a model holding an object safeclf does not load is an error here, not a file no
    one can open later. Returns the SHA-256 of the model file; a certificate in ``meta``
    whose evidence is recorded (``meta["certificate"]["evidence"]``) gets it as
    ``model_sha256``."""
    import skops.io as sio
    from sklearn.pipeline import Pipeline

    from safeclf.store.folder import atomic_write, replacing
    from safeclf.store.trust import check_file

    steps = ([("preprocess", preprocessor)] if preprocessor is not None else []) + [("model", estimator)]
    pipeline = Pipeline(steps)
    with replacing(path) as tmp:
        sio.dump(pipeline, tmp)
        try:
            check_file(tmp)
        except SpecError as exc:
            raise SpecError(f"the fitted model cannot be saved so that it loads safely: {exc}") \
                from None
        digest = sha256_of(tmp)
    meta = {"format": MODEL_FORMAT, **_running_versions(),
            "estimator": _type_path(estimator), **meta}
    cert = meta.get("certificate")
    if isinstance(cert, dict) and isinstance(cert.get("evidence"), dict):
        meta["certificate"] = {**cert, "evidence": {**cert["evidence"], "model_sha256": digest}}
    atomic_write(path.with_suffix(".json"), json.dumps(meta, indent=2, default=str) + "\n")
    return digest


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file at ``path``."""
    from safeclf.store.folder import file_identity

    return file_identity(Path(path))["sha256"]


def load(path: str | Path, allow_version_mismatch: bool | None = None):
    """The pipeline in ``path`` (a str or a Path).

    A model saved by another scikit-learn or safeclf version is refused
    (:func:`check_versions`) unless ``allow_version_mismatch`` (None: refused unless a CLI
    command was given ``--allow-version-mismatch``). Every object the file describes is
    checked against :data:`safeclf.store.trust.TRUSTED_TYPES` before anything is built; any
    other file, or one that is not a pipeline ending in an estimator, is refused with one
    line. To score raw rows with the encoding and checks of ``safeclf predict``, use
    :func:`safeclf.load_model`."""
    import skops.io as sio
    from sklearn.pipeline import Pipeline

    from safeclf.store.trust import check_file, translated

    path = Path(path)
    if not path.is_file():
        raise SpecError(f"no saved model '{path}' (run with save_models: true to keep models)")
    check_versions(path, allow_version_mismatch)
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


def read_meta(meta_path: str | Path) -> dict[str, Any]:
    """The metadata beside a model, checked: present, JSON, this format, the keys
    :func:`predict_file` needs with their types (whatever the dataset; predict itself reads
    rows for ``csv`` datasets only)."""
    meta_path = Path(meta_path)
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
