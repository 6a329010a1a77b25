"""A saved model in Python: :func:`load_model` scores raw rows as ``safeclf predict`` does.

The object :func:`load_model` returns takes a pandas DataFrame with the columns of the CSV the
model was trained on, as the CSV has them (text categories, empty cells), and encodes it
through the one path of ``safeclf predict`` (:func:`safeclf.serve.predict.score_frame`, and
so :func:`safeclf.serve.new_rows.encode`): the same one-hot alignment, imputation, and the same
refusals with the same messages (an unseen category, an empty cell the model does not impute,
a value that is not a number), or, with ``skip_bad_rows=True``, the good rows scored and the
others reported. A line in a message is the row's line in a CSV (row position + 2, the header
being line 1). It carries what the model promises (``promises``), its ``certificate`` and, for
a folder written by ``safeclf deploy``, its ``deployment`` record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: How a Python caller skips bad rows (named in a refusal, where the command line says
#: ``--skip-bad-rows``).
HINT = "skip_bad_rows=True"


class Model:
    """A saved safeclf model that scores raw rows (made by :func:`load_model`).

    Attributes
    ----------
    pipeline : sklearn.pipeline.Pipeline
        The fitted preprocessing and estimator, taking encoded rows.
    meta : dict
        The model's metadata (``model.json`` / ``models/<job>.json``).
    path : Path
        The model file.
    promises : list of dict
        What the model promises, each as checked on its job's test split (the rows of the
        run's ``promises.csv``: statement, kind, δ, bound, estimate, interval, verdict).
    certificate : dict or None
        The certificate of a certified model (bound, δ, held-back rows, safety tests).
    deployment : dict or None
        The record ``safeclf deploy`` wrote (run folder, job, seed, data hashes), None for a
        run's job model.
    classes_ : ndarray
        The class labels as ``predict`` returns them (the target's own values).
    """

    def __init__(self, pipeline, meta: dict[str, Any], path: Path):
        from safeclf.guarantees.outcome import decode

        self.pipeline = pipeline
        self.meta = meta
        self.path = Path(path)
        self.promises = list(meta.get("promises") or [])
        self.certificate = meta.get("certificate")
        self.deployment = meta.get("deployment")
        self.classes_ = decode(np.asarray(pipeline[-1].classes_), meta.get("outcome"))

    def __repr__(self) -> str:
        est = self.meta["estimator"].rsplit(".", 1)[-1]
        what = "certified " if self.certificate else ""
        return f"<safeclf model: {what}{est} from '{self.path}', {len(self.promises)} promise(s)>"

    def _frame(self, X):
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            from safeclf.errors import DataError

            raise DataError(f"X is a {type(X).__name__}; give a pandas DataFrame with the "
                            f"columns of the training CSV ({', '.join(self.meta['columns'][:8])})")
        return X.reset_index(drop=True)  # a message's line is the row's line in a CSV

    def score(self, X, skip_bad_rows: bool = False):
        """The rows of ``X`` scored exactly as ``safeclf predict`` writes them.

        Parameters
        ----------
        X : pandas.DataFrame
            Raw rows with the training CSV's columns (target and group columns are ignored).
        skip_bad_rows : bool, default False
            Score the rows the model can take and report the others, instead of refusing.

        Returns
        -------
        Scored
            ``table``: the good rows with ``prediction`` and ``proba_<class>`` or ``score``
            (its index the rows' positions in ``X``); ``rows.bad``: the problems of the rows
            skipped (line, column, value, reason).
        """
        from safeclf.serve.predict import score_frame

        return score_frame(self.pipeline, self.meta, self._frame(X), "X", skip=skip_bad_rows,
                           hint=HINT)

    def _encoded(self, X, skip_bad_rows: bool) -> np.ndarray:
        """The good rows of ``X`` encoded, through :meth:`score` (its checks and refusals)."""
        return self.score(X, skip_bad_rows).rows.X

    def predict(self, X, skip_bad_rows: bool = False) -> np.ndarray:
        """The decisions for the raw rows ``X`` (the target's own values, as ``safeclf
        predict`` writes them); with ``skip_bad_rows``, for the good rows only
        (:meth:`score` says which)."""
        return self.score(X, skip_bad_rows).table["prediction"].to_numpy()

    def predict_proba(self, X, skip_bad_rows: bool = False) -> np.ndarray:
        """Class probabilities (columns in the order of ``classes_``) for the raw rows ``X``,
        where the estimator has them."""
        if not hasattr(self.pipeline[-1], "predict_proba"):
            raise AttributeError(f"{type(self.pipeline[-1]).__name__} has no predict_proba")
        return np.asarray(self.pipeline.predict_proba(self._encoded(X, skip_bad_rows)))

    def decision_function(self, X, skip_bad_rows: bool = False) -> np.ndarray:
        """Scores (larger: the favourable class) for the raw rows ``X``, where the estimator
        has them."""
        if not hasattr(self.pipeline[-1], "decision_function"):
            raise AttributeError(f"{type(self.pipeline[-1]).__name__} has no decision_function")
        return np.asarray(self.pipeline.decision_function(self._encoded(X, skip_bad_rows)))


def load_model(path: str | Path, job: str | None = None,
               allow_version_mismatch: bool | None = None) -> Model:
    """A saved model that scores raw rows as ``safeclf predict`` does.

    Parameters
    ----------
    path : str or Path
        A folder written by ``safeclf deploy``, a run folder (with ``job``), or a model file
        (``models/<job>.skops`` of a run, its ``.json`` beside it).
    job : str, optional
        The job whose model to load from a run folder (metrics.csv's ``job`` column).
    allow_version_mismatch : bool, optional
        True: load a model saved by another scikit-learn or safeclf version, which is
        refused otherwise (None: as the calling CLI command's ``--allow-version-mismatch``).

    Returns
    -------
    Model
        ``predict``, ``predict_proba``, ``decision_function`` and ``score`` take a raw
        DataFrame; ``promises``, ``certificate`` and ``deployment`` say what it promises and
        where it comes from.

    Raises
    ------
    SafeclfError
        One line naming the problem: no model there, a model file that is not safeclf's, a
        model of a dataset other than ``csv`` (whose rows are not a CSV's).
    """
    from safeclf.serve.predict import model_source, read_model
    from safeclf.store.models import mismatch_allowed as _allowed
    from safeclf.store.models import version_mismatch_allowed

    if allow_version_mismatch is not None and not isinstance(allow_version_mismatch, bool):
        from safeclf.errors import SpecError

        raise SpecError("load_model: allow_version_mismatch must be True or False")
    model_path, meta_path = model_source(Path(path), job)
    allow = _allowed() if allow_version_mismatch is None else allow_version_mismatch
    with version_mismatch_allowed(allow):
        pipeline, meta = read_model(model_path, meta_path, job)
    return Model(pipeline, meta, model_path)
