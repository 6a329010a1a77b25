"""Catalogue: model files that would exhaust memory, or were saved by another version, are
refused with one line and exit 2 before anything of them is unpacked, and nothing is written."""

from __future__ import annotations

import json
import resource
import struct
import zipfile

import pytest
from listed_folder import listed, saved_model

sio = pytest.importorskip("skops.io")


@pytest.fixture
def good(tmp_path):
    """A run folder holding one model saved by safeclf, and rows to score."""
    return saved_model(tmp_path)


def _predict(cli, tmp_path, run, *flags):
    return cli("predict", listed(run), "--job", "j", "--data", tmp_path / "new.csv",
               "--out", tmp_path / "out.csv", *flags)


def _refused(result, tmp_path, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    flat = " ".join(result.stderr.split())
    for fragment in fragments:
        assert fragment in flat, result.stderr
    assert not (tmp_path / "out.csv").exists()


def _claim_size(path, member: str, size: int) -> None:
    """Rewrite the central directory of zip ``path`` so that ``member`` claims to unpack to
    ``size`` bytes (the member's data is left as it is: a lying header, as a bomb's)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46:at + 46 + length]) == name:
            struct.pack_into("<I", data, at + 24, size)
            break
        at += 4
    path.write_bytes(bytes(data))


def _npy_member(path) -> str:
    with zipfile.ZipFile(path) as archive:
        return next(i.filename for i in archive.infolist() if i.filename.endswith(".npy"))


def _add_member(path, name: str, payload: bytes, method=zipfile.ZIP_DEFLATED) -> None:
    with zipfile.ZipFile(path, "a", compression=method) as archive:
        archive.writestr(name, payload)


def _forbid_unpacking(monkeypatch):
    """skops' loaders fail the test if they are reached: the refusal must come first."""
    def boom(*a, **k):
        raise AssertionError("the model was unpacked before its sizes were checked")
    monkeypatch.setattr(sio, "load", boom)
    monkeypatch.setattr(sio, "loads", boom)


def test_a_member_claiming_a_huge_size_is_refused_before_anything_is_unpacked(
        good, tmp_path, cli, monkeypatch):
    member = _npy_member(good["path"])
    _claim_size(good["path"], member, 0xFFFFFFF0)  # ~4 GiB
    _forbid_unpacking(monkeypatch)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = _predict(cli, tmp_path, good["run"])
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    _refused(result, tmp_path, str(good["path"]), member, str(0xFFFFFFF0),
             str(512 * 2**20), "SAFECLF_MAX_MODEL_BYTES")
    assert grown_kib < 100 * 1024


def test_a_zip_bomb_member_is_refused(good, tmp_path, cli, monkeypatch):
    _add_member(good["path"], "bomb.npy", bytes(8 * 2**20))  # 8 MiB of zeros, ~8 KiB stored
    _forbid_unpacking(monkeypatch)
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, "bomb.npy", "zip bomb")


def test_a_model_over_a_lowered_limit_is_refused_and_loads_when_raised(
        good, tmp_path, cli, monkeypatch):
    size = good["path"].stat().st_size
    monkeypatch.setenv("SAFECLF_MAX_MODEL_BYTES", "1000")
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, "over the limit of 1000",
             "SAFECLF_MAX_MODEL_BYTES")
    monkeypatch.setenv("SAFECLF_MAX_MODEL_BYTES", str(100 * size))
    result = _predict(cli, tmp_path, good["run"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").is_file()


@pytest.mark.parametrize("value", ["lots", "-5", "0", "1e9"])
def test_a_bad_limit_setting_is_refused(good, tmp_path, cli, monkeypatch, value):
    monkeypatch.setenv("SAFECLF_MAX_MODEL_BYTES", value)
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path, "SAFECLF_MAX_MODEL_BYTES")


@pytest.mark.parametrize("key,shown", [("sklearn_version", "scikit-learn"),
                                       ("safeclf_version", "safeclf")])
def test_a_model_of_another_version_is_refused_unless_allowed(good, tmp_path, cli, key, shown):
    import sklearn

    from safeclf._utils.version import __version__
    from safeclf.serve.model import load_model
    from safeclf.store import models

    meta = json.loads(good["meta_path"].read_text())
    running = {"sklearn_version": sklearn.__version__, "safeclf_version": __version__}[key]
    assert meta[key] == running  # save records the running version
    meta[key] = "0.0.1"
    good["meta_path"].write_text(json.dumps(meta))
    _refused(_predict(cli, tmp_path, good["run"]), tmp_path,
             f"saved with {shown} 0.0.1, running {shown} {running}", "--allow-version-mismatch")
    from safeclf.errors import SafeclfError

    with pytest.raises(SafeclfError, match="saved with"):
        models.load(good["path"])
    with pytest.raises(SafeclfError, match="saved with"):
        load_model(good["run"], "j")
    assert models.load(good["path"], allow_version_mismatch=True) is not None
    assert load_model(good["run"], "j", allow_version_mismatch=True).predict(
        __import__("pandas").DataFrame({"a": [1.0], "b": [2.0]})).shape == (1,)
    result = _predict(cli, tmp_path, good["run"], "--allow-version-mismatch")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").is_file()
