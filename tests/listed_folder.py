"""A folder holding a model saved by hand (``models/j.skops`` and ``models/j.json``), made into
a run folder as far as ``predict --job`` looks (for the model-file catalogues)."""

from __future__ import annotations

import json


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
