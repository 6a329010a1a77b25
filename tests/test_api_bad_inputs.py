"""The Python API as strict as the command line (issue 36, item 5): every public function
refuses a bad argument with the one-line :class:`safeclf.SafeclfError` the CLI gives (exit code
2 there), never a traceback of another type, and writes nothing; a valid value of another
Python type (a numpy integer, a tuple, a Path) is accepted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import safeclf

SPEC = {"name": "api", "seeds": 1, "datasets": [{"dataset": "breast_cancer"}],
        "methods": [{"method": "logreg"}]}


def _deep(n: int) -> dict:
    out = cur = {}
    for _ in range(n):
        cur["a"] = {}
        cur = cur["a"]
    return out


def _with(**changes) -> dict:
    return {**SPEC, **changes}


#: (id, call(out) -> anything, fragment of the one-line message)
REFUSED = [
    ("jobs-str", lambda o: safeclf.run(SPEC, jobs="2", out=o), "jobs must be an integer"),
    ("jobs-float", lambda o: safeclf.run(SPEC, jobs=2.0, out=o), "jobs must be an integer"),
    ("jobs-bool", lambda o: safeclf.run(SPEC, jobs=True, out=o), "jobs must be an integer"),
    ("jobs-none", lambda o: safeclf.run(SPEC, jobs=None, out=o), "jobs must be an integer"),
    ("jobs-zero", lambda o: safeclf.run(SPEC, jobs=0, out=o), "--jobs must be a positive"),
    ("jobs-np-negative", lambda o: safeclf.run(SPEC, jobs=np.int64(-5), out=o),
     "--jobs must be a positive"),
    ("out-int", lambda o: safeclf.run(SPEC, out=3), "out must be a path"),
    ("out-bytes", lambda o: safeclf.run(SPEC, out=b"runs"), "out must be a path"),
    ("out-nul", lambda o: safeclf.run(SPEC, out=str(o) + "\0x"), "must not hold a NUL"),
    ("name-int", lambda o: safeclf.run(SPEC, name=5, out=o), "name must be a string"),
    ("name-slash", lambda o: safeclf.run(SPEC, name="a/b", out=o), "--name must be letters"),
    ("profile-list", lambda o: safeclf.run(SPEC, profile=["ci"], out=o),
     "profile must be a string"),
    ("overrides-str", lambda o: safeclf.run(SPEC, overrides="seeds=2", out=o),
     "overrides must be a list of strings"),
    ("overrides-ints", lambda o: safeclf.run(SPEC, overrides=[1], out=o),
     "overrides must be a list of strings"),
    ("overrides-set", lambda o: safeclf.run(SPEC, overrides={"seeds=2"}, out=o),
     "overrides must be a list of strings"),
    ("check-str", lambda o: safeclf.run(SPEC, check="yes", out=o), "check must be True or False"),
    ("check-int", lambda o: safeclf.run(SPEC, check=1, out=o), "check must be True or False"),
    ("backend-ray", lambda o: safeclf.run(SPEC, backend="ray", out=o),
     "backend must be 'loky' or 'dask'"),
    ("backend-none", lambda o: safeclf.run(SPEC, backend=None, out=o),
     "backend must be 'loky' or 'dask'"),
    ("scheduler-int", lambda o: safeclf.run(SPEC, scheduler=8786, out=o),
     "scheduler must be a string"),
    ("scheduler-without-dask", lambda o: safeclf.run(SPEC, scheduler="tcp://h:1", out=o),
     "--scheduler names a Dask scheduler"),
    ("resume-int", lambda o: safeclf.run(None, resume=1, out=o), "resume must be a path"),
    ("allow-changed-data-str", lambda o: safeclf.run(SPEC, allow_changed_data="no", out=o),
     "allow_changed_data must be True or False"),
    ("mlflow-int", lambda o: safeclf.run(SPEC, mlflow=1, out=o), "mlflow must be a string"),
    ("mlflow-experiment-int", lambda o: safeclf.run(SPEC, mlflow_experiment=2, out=o),
     "mlflow_experiment must be a string"),
    ("progress-str", lambda o: safeclf.run(SPEC, progress="on", out=o),
     "progress must be True or False"),
    ("spec-none-without-resume", lambda o: safeclf.run(None, out=o), "give a spec"),
    ("spec-int", lambda o: safeclf.run(3, out=o), "a spec is a path, a mapping or a Spec"),
    ("spec-list", lambda o: safeclf.run([SPEC], out=o), "a spec is a path, a mapping or a Spec"),
    ("spec-bytes", lambda o: safeclf.run(b"name: x", out=o),
     "a spec is a path, a mapping or a Spec"),
    ("spec-deeply-nested", lambda o: safeclf.run(_with(extra=_deep(5000)), out=o),
     "nests more than 50 levels deep"),
    ("spec-name-a-set", lambda o: safeclf.run(_with(name={"a"}), out=o),
     "spec.name is a set"),
    ("spec-name-bytes", lambda o: safeclf.run(_with(name=b"api"), out=o),
     "spec.name is a bytes"),
    ("spec-method-bytes", lambda o: safeclf.run(_with(methods=[{"method": b"logreg"}]), out=o),
     "spec.methods[0].method is a bytes"),
    ("spec-dataset-a-set", lambda o: safeclf.run(_with(datasets=[{"dataset": {"adult"}}]),
                                                 out=o), "spec.datasets[0].dataset is a set"),
    ("spec-param-an-object", lambda o: safeclf.run(
        _with(methods=[{"method": "logreg", "params": {"C": object()}}]), out=o),
     "spec.methods[0].params.C is a object"),
    ("spec-key-not-a-string", lambda o: safeclf.run({**SPEC, 1: "x"}, out=o),
     "key int 1 is not a string"),
    ("spec-seeds-float", lambda o: safeclf.run(_with(seeds=np.float64(1.5)), out=o), "seeds"),
    ("read-spec-profile-int", lambda o: safeclf.read_spec(SPEC, profile=1),
     "profile must be a string"),
    ("read-spec-overrides-str", lambda o: safeclf.read_spec(SPEC, overrides="seeds=2"),
     "overrides must be a list of strings"),
    ("read-spec-deep", lambda o: safeclf.read_spec(_with(x=_deep(100))), "levels deep"),
    ("read-spec-float", lambda o: safeclf.read_spec(1.5), "a spec is a path, a mapping"),
    ("load-run-int", lambda o: safeclf.load_run(5), "path must be a path"),
    ("load-run-none", lambda o: safeclf.load_run(None), "path must be a path"),
    ("load-run-missing", lambda o: safeclf.load_run(o / "nope"), "is not a run folder"),
]

#: (id, call(out)): valid values of another Python type, accepted
ACCEPTED = [
    ("seeds-np-int64", lambda o: safeclf.read_spec(_with(seeds=np.int64(2)))),
    ("seeds-np-list", lambda o: safeclf.read_spec(_with(seeds=[np.int32(0), np.int64(4)]))),
    ("tuple-for-a-list", lambda o: safeclf.read_spec(_with(methods=({"method": "logreg"},)))),
    ("param-np-float", lambda o: safeclf.read_spec(
        _with(methods=[{"method": "logreg", "params": {"C": np.float32(0.5)}}]))),
    ("overrides-tuple", lambda o: safeclf.read_spec(SPEC, overrides=("seeds=2",))),
    ("path-object", lambda o: safeclf.read_spec(Path("configs/quickstart.yaml"))),
]


@pytest.mark.parametrize("cid,call,fragment", REFUSED, ids=[c[0] for c in REFUSED])
def test_the_api_refuses_a_bad_argument_in_one_line(tmp_path, cid, call, fragment):
    out = tmp_path / "runs"
    with pytest.raises(safeclf.SafeclfError) as caught:
        call(out)
    message = str(caught.value)
    assert "\n" not in message and fragment in message, message
    assert type(caught.value).__name__ in ("SpecError", "DataError"), type(caught.value)
    assert not out.exists()  # nothing written


@pytest.mark.parametrize("cid,call", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_the_api_accepts_valid_values_of_other_types(tmp_path, monkeypatch, cid, call):
    monkeypatch.chdir(Path(__file__).parent.parent)  # configs/ for the path case
    spec = call(tmp_path)
    assert isinstance(spec, safeclf.Spec)
    if cid == "seeds-np-int64":
        assert spec.seeds == [0, 1]
    if cid == "param-np-float":
        assert spec.methods[0].params["C"] == 0.5
