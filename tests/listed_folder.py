"""A folder holding a model saved by hand (``models/j.skops`` and ``models/j.json``), made into
a run folder as far as ``predict --job`` looks (for the model-file catalogues)."""

from __future__ import annotations

import json

#: The rows :func:`saved_model` leaves in ``new.csv`` to score.
NEW = "a,b\n1,2\n5,3\n"


def saved_model(tmp_path) -> dict:
    """A folder ``tmp_path/run`` holding one model saved by safeclf (job ``j``: a standard
    scaler and a logistic regression on columns a, b) and ``tmp_path/new.csv`` to score; the
    folder, the model and metadata paths, the metadata, and the two fitted parts."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from safeclf.store import models

    X = np.array([[i % 7, (i * 3) % 11] for i in range(40)], float)
    y = (X[:, 0] > 3).astype(int)
    scaler = StandardScaler().fit(X)
    est = LogisticRegression().fit(scaler.transform(X), y)
    run = tmp_path / "run"
    path, meta_path = models.model_paths(run, "j")
    models.save(path, est, scaler, {"dataset": {"dataset": "csv", "params": {"target": "y"}},
                                    "feature_names": ["a", "b"], "columns": ["a", "b"],
                                    "classes": [0, 1]})
    (tmp_path / "new.csv").write_text(NEW)
    return {"run": run, "path": path, "meta_path": meta_path,
            "meta": json.loads(meta_path.read_text()), "scaler": scaler, "est": est}


def listed(run, job: str = "j"):
    """List the folder's model files as a run does, as a forger with the folder would: the
    record ``results/<job>.json`` names their SHA-256 and the manifest the record's, so the files
    as they are now reach the model loader (what these tests check) rather than being refused
    for differing from the digests."""
    from safeclf.store.folder import text_sha256
    from safeclf.store.models import sha256_of

    record = {"id": job, "model": {k: sha256_of(run / "models" / f"{job}.{k}")
                                   for k in ("skops", "json")
                                   if (run / "models" / f"{job}.{k}").is_file()}}
    text = json.dumps(record)
    (run / "results").mkdir(exist_ok=True)
    (run / "results" / f"{job}.json").write_text(text)
    (run / "manifest.json").write_text(json.dumps({"spec_sha256": "0" * 64,
                                                   "records": {job: text_sha256(text)}}))
    return run
