"""Model files are data: a hostile one is refused with one line and exit 2, and nothing it
names runs. Hostile files are made with skops itself, as an attacker would."""

from __future__ import annotations

import collections
import functools
import io
import json
import operator
import zipfile

import hostile_payloads as hp
import numpy as np
import pytest
from listed_folder import listed, saved_model

sio = pytest.importorskip("skops.io")

CSV = "a,b,y\n" + "".join(f"{i % 7},{(i * 3) % 11},{int(i % 7 > 3)}\n" for i in range(40))


@pytest.fixture
def marker(tmp_path, monkeypatch):
    path = tmp_path / "ran.txt"
    monkeypatch.setenv("SAFECLF_TEST_MARKER", str(path))
    return path


@pytest.fixture
def good(tmp_path):
    """A run folder holding one model saved by safeclf, its parts and its metadata."""
    return saved_model(tmp_path)


def _predict(cli, tmp_path, run):
    return cli("predict", listed(run), "--job", "j", "--data", tmp_path / "new.csv",
               "--out", tmp_path / "out.csv")


def _refused(result, tmp_path, marker, fragment=""):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in " ".join(result.stderr.split()), result.stderr
    assert not marker.exists(), f"hostile code ran: {marker.read_text()}"
    assert not (tmp_path / "out.csv").exists()


def test_a_model_safeclf_saved_predicts(good, tmp_path, cli, marker):
    result = _predict(cli, tmp_path, good["run"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "a,b,prediction,proba_0,proba_1"
    meta = good["meta"]
    assert meta["format"] == 1 and meta["estimator"].endswith("LogisticRegression")
    assert meta["safeclf_version"]


def _pipeline(*steps):
    from sklearn.pipeline import Pipeline

    return Pipeline([(f"s{i}", s) for i, s in enumerate(steps)])


def _transformer(func, **kw):
    from sklearn.preprocessing import FunctionTransformer

    return FunctionTransformer(func, kw_args=kw or None)


def _hostile(good):
    """name -> (object to dump, fragment of the refusal)."""
    from sklearn.utils import _testing

    scaler, est = good["scaler"], good["est"]
    gadget_est = hp.Gadget()
    return {
        "numpy-function-transformers": (_pipeline(_transformer(np.abs), _transformer(np.log1p),
                                                  est), "FunctionNode"),
        "sklearn-helper-running-a-source-string": (
            _pipeline(_transformer(_testing.assert_run_python_script_without_output,
                                   source_code="open('x', 'w')"), est), "FunctionNode"),
        "user-function-transformer": (_pipeline(scaler, _transformer(hp.touch), est),
                                      "FunctionNode"),
        "builtins-exec": (_pipeline(_transformer(exec), est), "'builtins.exec'"),
        "functools-partial": (_pipeline(_transformer(functools.partial(print, "x")), est),
                              "PartialNode"),
        "operator-attrgetter": (_pipeline(_transformer(operator.attrgetter("T")), est),
                                "OperatorFuncNode"),
        "operator-methodcaller": (_pipeline(_transformer(operator.methodcaller("copy")), est),
                                  "OperatorFuncNode"),
        "user-class-with-setstate": (_pipeline(scaler, gadget_est), "hostile_payloads.Gadget"),
        "user-class-plain": (_pipeline(scaler, hp.Plain()), "hostile_payloads.Plain"),
        "ordered-dict-top-level": (collections.OrderedDict(a=1), "collections.OrderedDict"),
        "ordered-dict-inside": (_pipeline(scaler, est), "collections.OrderedDict"),
        "bare-dict": ({"model": est}, "not a safeclf model"),
        "bare-estimator": (est, "not a safeclf model"),
        "array": (np.arange(3.0), "not a safeclf model"),
    }


CASES = ["numpy-function-transformers", "sklearn-helper-running-a-source-string",
         "user-function-transformer", "builtins-exec", "functools-partial",
         "operator-attrgetter", "operator-methodcaller", "user-class-with-setstate",
         "user-class-plain", "ordered-dict-top-level", "ordered-dict-inside", "bare-dict",
         "bare-estimator", "array"]


@pytest.mark.parametrize("case", CASES)
def test_hostile_model_files_are_refused_and_nothing_runs(case, good, tmp_path, cli, marker):
    obj, fragment = _hostile(good)[case]
    if case == "ordered-dict-inside":
        obj.steps[0][1].extra_ = collections.OrderedDict(a=1)
    sio.dump(obj, good["path"])
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, fragment)


def test_the_payloads_are_live_when_trusted(good, tmp_path, marker):
    """Control: trusted as skops would be asked to, the user function runs at predict and
    the user class runs at load; so the refusals above are what keeps them from running."""
    sio.dump(_pipeline(good["scaler"], _transformer(hp.touch), good["est"]), good["path"])
    loaded = sio.load(good["path"], trusted=sio.get_untrusted_types(file=good["path"]))
    loaded.predict(np.zeros((1, 2)))
    sio.dump(_pipeline(good["scaler"], hp.Gadget()), good["path"])
    sio.load(good["path"], trusted=sio.get_untrusted_types(file=good["path"]))
    assert marker.read_text().split() == ["touch", "Gadget.__setstate__"]


def test_skops_alone_would_load_numpy_function_transformers(good):
    """Why safeclf keeps its own list: skops trusts these by default (no untrusted type)."""
    sio.dump(_pipeline(_transformer(np.abs), good["est"]), good["path"])
    assert sio.get_untrusted_types(file=good["path"]) == []


def _rewrite_schema(path, edit):
    """Rewrite ``schema.json`` inside the zip at ``path`` with ``edit(schema) -> schema``
    (keeping the arrays): a hand-forged file."""
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    schema = edit(json.loads(files["schema.json"]))
    files["schema.json"] = schema if isinstance(schema, bytes) else json.dumps(schema).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    path.write_bytes(buffer.getvalue())


def _retype(schema, old, module, name, loader=None):
    """Each node of type ``old`` renamed to ``module.name`` (and its loader to ``loader``)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if f"{node.get('__module__')}.{node.get('__class__')}" == old:
                node["__module__"], node["__class__"] = module, name
                if loader:
                    node["__loader__"] = loader
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return schema


SCALER = "sklearn.preprocessing._data.StandardScaler"

FORGED = {
    "object-renamed-to-os-system": (lambda s: _retype(s, SCALER, "os", "system"), "'os.system'"),
    "object-renamed-to-subprocess": (lambda s: _retype(s, SCALER, "subprocess", "Popen"),
                                     "'subprocess.Popen'"),
    "sklearn-prefix-not-a-prefix": (lambda s: _retype(s, SCALER, "sklearn.utils._testing",
                                                      "assert_run_python_script_without_output"),
                                     "assert_run_python_script_without_output"),
    "safeclf-prefix-not-a-prefix": (lambda s: _retype(s, SCALER, "safeclf.execution.runner", "run"),
                                    "'safeclf.execution.runner.run'"),
    "reduce-loader": (lambda s: _retype(s, SCALER, "builtins", "eval",
                                        "ConstructorFromReduceNode"), "ConstructorFromReduceNode"),
    "function-loader-on-trusted-name": (lambda s: _retype(s, SCALER, "sklearn.pipeline",
                                                          "Pipeline", "FunctionNode"),
                                        "FunctionNode"),
    "method-loader": (lambda s: _retype(s, SCALER, "builtins", "dict", "MethodNode"),
                      "MethodNode"),
    "bytes-loader": (lambda s: _retype(s, SCALER, "builtins", "bytes", "BytesNode"), "BytesNode"),
    "loss-loader-on-another-type": (lambda s: _retype(s, SCALER, "os", "system", "LossNode"),
                                    "'os.system'"),
    "nameless-node": (lambda s: _retype(s, SCALER, None, None), "not a readable"),
    "schema-not-json": (lambda s: b"{not json", "not JSON"),
    "schema-a-list": (lambda s: [s], "not an object"),
    "schema-nested-30000-deep": (lambda s: ("[" * 30000 + "]" * 30000).encode(), "not a readable"),
    "schema-nested-300-deep": (lambda s: {"x": functools.reduce(lambda a, _: {"a": a},
                                                                range(300), {})},
                               "nested deeper than"),
}


@pytest.mark.parametrize("case", list(FORGED))
def test_forged_schemas_are_refused(case, good, tmp_path, cli, marker):
    edit, fragment = FORGED[case]
    _rewrite_schema(good["path"], edit)
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, fragment)


@pytest.mark.parametrize("content", [b"", b"not a zip", b"PK\x03\x04broken"])
def test_files_that_are_not_model_archives(content, good, tmp_path, cli, marker):
    good["path"].write_bytes(content)
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, "not a readable")


def test_an_archive_without_a_schema(good, tmp_path, cli, marker):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("x.npy", b"0")
    good["path"].write_bytes(buffer.getvalue())
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, "no schema.json")


def test_a_schema_larger_than_the_bound_is_not_read(good, tmp_path, cli, marker, monkeypatch):
    from safeclf.store import trust as model_trust

    monkeypatch.setattr(model_trust, "MAX_SCHEMA_BYTES", 1000)
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, "larger than")


@pytest.mark.parametrize("case", ["missing", "garbage", "a-list", "old-format", "no-estimator",
                                  "other-estimator", "fewer-features", "names-not-strings",
                                  "not-csv"])
def test_model_metadata_is_checked(case, good, tmp_path, cli, marker):
    meta_path = good["path"].with_suffix(".json")
    meta = dict(good["meta"])
    fragment = {"missing": "is missing", "garbage": "not readable JSON",
                "a-list": "not a JSON object", "old-format": "has format 0",
                "no-estimator": "'estimator' is missing",
                "other-estimator": "do not belong together",
                "fewer-features": "takes 2 features, but its metadata names 1",
                "names-not-strings": "'feature_names' is missing or not a list of names",
                "not-csv": "csv datasets only"}[case]
    if case == "missing":
        meta_path.unlink()
    elif case == "garbage":
        meta_path.write_bytes(b"\xff\x00{")
    elif case == "a-list":
        meta_path.write_text("[]")
    else:
        if case == "old-format":
            meta["format"] = 0
        elif case == "no-estimator":
            del meta["estimator"]
        elif case == "other-estimator":
            meta["estimator"] = "safeclf.methods.baselines.SVMClassifier"
        elif case == "fewer-features":
            meta["feature_names"] = ["a"]
            meta["columns"] = ["a"]
        elif case == "names-not-strings":
            meta["feature_names"] = [1, 2]
        else:
            meta["dataset"] = {"dataset": "iris"}
        meta_path.write_text(json.dumps(meta))
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, fragment)


def _special(tmp_path, kind):
    """A path of ``kind``: a folder, a FIFO, a symlink loop, a character device."""
    import os

    path = tmp_path / f"special-{kind}"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        os.symlink(path, path)
    else:
        return "/dev/null"
    return path


DATA_CASES = {
    "empty-cell": ("a,b\n1,\n", "column 'b' at line 2 is empty"),
    "nan-word": ("a,b\n1,2\n3,nan\n", "column 'b' at line 3 is empty"),
    "empty-cells-counted": ("a,b\n1,2\n,3\n,4\n", "column 'a' at line 3 is empty (2 rows in all)"),
    "non-numeric": ("a,b\n1,2\n1,x\n", "column 'b' at line 3 holds 'x', not a number"),
    "inf": ("a,b\n1,inf\n", "column 'b' at line 2 holds inf"),
    "minus-inf": ("a,b\n-inf,1\n", "column 'a' at line 2 holds -inf"),
    "missing-column": ("b\n1\n", "column 'a' used in training is missing"),
    "header-only": ("a,b\n", "has no rows"),
    "empty-file": ("", "cannot read"),
    "binary": (b"\x00\xff\xfe\x00", "cannot read"),
}


@pytest.mark.parametrize("case", list(DATA_CASES))
def test_predict_names_the_bad_row_and_column(case, good, tmp_path, cli, marker):
    content, fragment = DATA_CASES[case]
    data = tmp_path / "new.csv"
    data.write_bytes(content if isinstance(content, bytes) else content.encode())
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, marker, fragment)


@pytest.mark.parametrize("kind", ["folder", "fifo", "loop", "device", "missing"])
def test_predict_data_that_is_not_a_file(kind, good, tmp_path, cli, marker):
    data = tmp_path / "absent.csv" if kind == "missing" else _special(tmp_path, kind)
    result = cli("predict", listed(good["run"]), "--job", "j", "--data", data, "--out",
                 tmp_path / "out.csv")
    what = {"folder": "is a folder", "fifo": "FIFO", "loop": "symlink loop",
            "device": "character device", "missing": "does not exist"}[kind]
    _refused(result, tmp_path, marker, what)


@pytest.mark.parametrize("kind", ["folder", "fifo", "loop", "device", "parent-missing",
                                  "parent-a-file"])
def test_predict_out_that_cannot_be_written(kind, good, tmp_path, cli, marker):
    if kind == "parent-missing":
        out = tmp_path / "nowhere" / "out.csv"
    elif kind == "parent-a-file":
        (tmp_path / "a-file").write_text("mine\n")
        out = tmp_path / "a-file" / "out.csv"
    else:
        out = _special(tmp_path, kind)
    result = cli("predict", listed(good["run"]), "--job", "j", "--data", tmp_path / "new.csv",
                 "--out", out)
    _refused(result, tmp_path, marker, "--out")
    if kind == "parent-a-file":
        assert (tmp_path / "a-file").read_text() == "mine\n"


@pytest.mark.parametrize("case", ["unknown-job", "run-missing", "run-a-file", "no-models"])
def test_predict_on_a_job_without_a_model(case, good, tmp_path, cli, marker):
    run, job = good["run"], "j"
    if case == "unknown-job":
        job = "nope"
    elif case == "run-missing":
        run = tmp_path / "absent"
    elif case == "run-a-file":
        run = tmp_path / "new.csv"
    else:
        run = tmp_path / "empty-run"
        run.mkdir()
    result = cli("predict", run, "--job", job, "--data", tmp_path / "new.csv",
                 "--out", tmp_path / "out.csv")
    _refused(result, tmp_path, marker, "no saved model for job")
