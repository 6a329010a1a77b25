"""A certified method keeps its models unless told not to (issue 35): its certified model is
the one ``deploy`` copies, so a run that did not save it would have to be made again."""

from __future__ import annotations

import pytest

from safeclf.api import read_spec


def _spec(**method):
    return {"name": "s", "datasets": [{"dataset": "iris"}],
            "methods": [{"method": "logreg"}, {"method": "logreg", "name": "certified",
                                               "promises": [{"rate": "fpr", "max": 0.2}],
                                               "certify": {"how": "threshold"}, **method}]}


@pytest.mark.parametrize("method, top, plain, certified", [
    ({}, False, False, True),                       # the default: certified only
    ({"save_model": False}, False, False, False),   # the entry says no
    ({}, True, True, True),                         # save_models: every method
    ({"save_model": False}, True, True, False),     # the entry wins over save_models
])
def test_certified_methods_save_their_models_by_default(method, top, plain, certified):
    data = _spec(**method)
    if top:
        data["save_models"] = True
    spec = read_spec(data)
    assert [spec.saves_model(0), spec.saves_model(1)] == [plain, certified]


def test_a_model_path_is_absolute_whatever_the_workers_folder(tmp_path, monkeypatch):
    """A worker kept from an earlier run (loky reuses them) may sit in another working folder:
    a model written to a relative path would land in that run's folder, not this one's."""
    from pathlib import Path

    from safeclf.execution.runner import payloads
    from safeclf.spec.expand import expand

    monkeypatch.chdir(tmp_path)
    spec = read_spec(_spec())
    jobs = expand(spec)
    paths = [p["model_path"] for p in payloads(spec, jobs, Path("runs") / "x")]
    saved = [p for p in paths if p is not None]
    assert saved and all(Path(p).is_absolute() for p in saved)
    assert all(Path(p).parent == tmp_path / "runs" / "x" / "models" for p in saved)
