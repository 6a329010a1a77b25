"""The catalogue of forged certificates (issue 36, item 1): a run folder edited by hand so that a
job's record claims a certificate it never earned, a swapped model file, an edited stored spec
or manifest. ``safeclf verify`` and ``safeclf deploy`` refuse each with exit code 2, one
``error:`` line, no traceback, nothing written; an untouched run, and the model deployed from
it, verify."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from audited_model import CERTIFIED_RAMP, deploy, run_spec
from test_bad_inputs_runtime import _one_error_line, _snapshot

SPEC = "\nname: verify\nseeds: 2\n" + CERTIFIED_RAMP + """  - method: logreg
    name: lr_cert
    certify: {delta: 0.05, fraction: 0.3, how: threshold}
    promises: [{rate: fpr, max: 0.2}]
    save_model: true
  - method: logreg
    name: plain
    save_model: true
metrics: [error]
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A finished run with a certified ramp (training route), a certified logreg (threshold
    route) and a plain logreg, every model saved, and the certified logreg deployed."""
    from group_data import two_groups

    base = tmp_path_factory.mktemp("verify-catalogue")
    X, y, g = two_groups(1500, 3)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "sex": g, "y": y}).to_csv(
        base / "data.csv", index=False)
    run = run_spec(base, SPEC)
    table = pd.read_csv(run / "metrics.csv")
    ok = table[table.status == "ok"]
    jobs = {m: list(ok[ok.method == m].sort_values("seed").job) for m in ("ramp", "lr_cert")}
    assert jobs["ramp"] and len(jobs["lr_cert"]) == 2, table[["method", "status", "error"]]
    return {"run": run, "deployed": deploy(run, base / "deployed", "--method", "lr_cert"),
            "jobs": jobs, "data": base / "data.csv", "table": table}


def test_an_untouched_run_and_its_deployed_model_verify(made, cli):
    result = cli("verify", made["run"])
    assert result.exit_code == 0, result.output
    n = len(made["jobs"]["ramp"]) + len(made["jobs"]["lr_cert"])
    assert f"{n} certificate(s) re-checked" in result.stdout
    for job in made["jobs"]["ramp"] + made["jobs"]["lr_cert"]:
        assert f"job {job} " in result.stdout
    one = cli("verify", made["run"], "--job", made["jobs"]["lr_cert"][1])
    assert one.exit_code == 0 and "1 certificate(s)" in one.stdout, one.output
    dep = cli("verify", made["deployed"])
    assert dep.exit_code == 0 and "1 certificate(s)" in dep.stdout, dep.output


def test_the_evidence_is_what_the_test_rests_on(made):
    """The recorded held-back rows hash to their SHA-256 and are the rows the certify route
    draws from the seed; the counts are those of the stored model on them."""
    from safeclf.guarantees.certify.evidence import indices_sha256
    from safeclf.guarantees.certify.threshold import split_rows

    job = made["jobs"]["lr_cert"][0]
    record = json.loads((made["run"] / "results" / f"{job}.json").read_text())
    ev = record["certification"]["evidence"]
    held = ev["held_back"]
    assert indices_sha256(held["indices"]) == held["sha256"]
    _, safe = split_rows(held["n_train"], ev["fraction"], ev["seed"])
    assert sorted(safe.tolist()) == held["indices"]
    model = made["run"] / "models" / f"{job}.skops"
    assert hashlib.sha256(model.read_bytes()).hexdigest() == ev["model_sha256"]
    assert ev["data"][0]["sha256"] == hashlib.sha256(made["data"].read_bytes()).hexdigest()
    stat = ev["statistic"]["declared_fpr"]
    assert 0 < stat["n"] <= held["n"] and 0 <= stat["k"] <= stat["n"]
    assert stat["p_value"] <= ev["delta"]
    manifest = json.loads((made["run"] / "manifest.json").read_text())
    raw = (made["run"] / "results" / f"{job}.json").read_bytes()
    assert manifest["records"][job] == hashlib.sha256(raw).hexdigest()


# -- forging ----------------------------------------------------------------------------------
def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Forger:
    """A copy of the run folder and of the deployed folder, edited as a forger would: with
    ``relist`` the manifest is updated to list the edited files' new SHA-256 too."""

    def __init__(self, tmp: Path, made: dict):
        self.run = Path(shutil.copytree(made["run"], tmp / "run"))
        self.deployed = Path(shutil.copytree(made["deployed"], tmp / "deployed"))
        self.jobs = made["jobs"]
        self.ramp, self.lr = made["jobs"]["ramp"][0], made["jobs"]["lr_cert"][0]
        self.data = made["data"]
        self.table = made["table"]
        self.method, self.target = "lr_cert", self.lr  # what the command is run on
        self.undo: list = []

    def aim(self, method: str, job: str) -> None:
        self.method, self.target = method, job

    def manifest(self) -> dict:
        return json.loads((self.run / "manifest.json").read_text())

    def write_manifest(self, m: dict) -> None:
        (self.run / "manifest.json").write_text(json.dumps(m, indent=2))

    def edit_record(self, job: str, change, relist: bool = True, model_json: bool = True):
        path = self.run / "results" / f"{job}.json"
        rec = json.loads(path.read_text())
        change(rec)
        path.write_text(json.dumps(rec, indent=2))
        if model_json and rec.get("certification") is not None \
                and (self.run / "models" / f"{job}.json").exists():
            meta = json.loads((self.run / "models" / f"{job}.json").read_text())
            meta["certificate"] = rec["certification"]
            (self.run / "models" / f"{job}.json").write_text(json.dumps(meta, indent=2))
        if relist:
            m = self.manifest()
            m["records"][job] = _sha(path.read_bytes())
            self.write_manifest(m)

    def edit_spec(self, old: str, new: str, relist: bool = False):
        path = self.run / "spec.yaml"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        if relist:
            m = self.manifest()
            m["spec_sha256"] = _sha(path.read_bytes())
            self.write_manifest(m)

    def edit_spec_data(self, change, relist: bool = True):
        import yaml

        path = self.run / "spec.yaml"
        data = yaml.safe_load(path.read_text())
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        if relist:
            m = self.manifest()
            m["spec_sha256"] = _sha(path.read_bytes())
            self.write_manifest(m)

    def edit_table(self, job: str, **values):
        """metrics.csv and metrics.parquet edited as a forger would, to agree with a record."""
        for name in ("metrics.csv", "metrics.parquet"):
            path = self.run / name
            t = pd.read_csv(path) if name.endswith("csv") else pd.read_parquet(path)
            for k, v in values.items():
                t.loc[t.job == job, k] = v
            t.to_csv(path, index=False) if name.endswith("csv") else t.to_parquet(path)

    def swap_model(self, job: str, other: str, rehash: bool = False):
        src = self.run / "models" / f"{other}.skops"
        shutil.copy(src, self.run / "models" / f"{job}.skops")
        if rehash:
            digest = _sha(src.read_bytes())
            self.edit_record(job, lambda r: r["certification"]["evidence"].__setitem__(
                "model_sha256", digest))


def _ev(job_field, value):
    """A change of the record's certificate evidence: ``job_field`` a path of keys."""
    def change(rec):
        where = rec["certification"]["evidence"]
        for key in job_field[:-1]:
            where = where[key]
        where[job_field[-1]] = value(where[job_field[-1]]) if callable(value) else value
    return change


def _claim_pass(rec):
    """A no-solution (or any) record edited to claim that its test passed."""
    cert = rec["certification"]
    for name, row in cert["evidence"]["statistic"].items():
        row["passed"] = True
        row["limit"] = max(row["bound"], row.get("limit", 0)) + 0.05
        cert.setdefault("safety_tests", {})[name] = {"bound": row["limit"], "passed": True}
    cert["evidence"]["passed"] = True


def _threshold_claims(rec):
    cert = rec["certification"]
    for name, row in cert["evidence"]["statistic"].items():
        row["k"] = max(0, row["k"] - 5)
        row["p_value"] = row["p_value"] / 10
        cert["p_values"][name] = row["p_value"]


def _shift_rule(rec):
    cert = rec["certification"]
    cert["rule"]["threshold"] -= 0.5
    cert["evidence"]["rule"]["threshold"] -= 0.5


def _other_rows(rec):
    held = rec["certification"]["evidence"]["held_back"]
    held["indices"] = [i + 1 for i in held["indices"][:-1]] + [held["n_train"] - 1]
    from safeclf.guarantees.certify.evidence import indices_sha256

    held["sha256"] = indices_sha256(held["indices"])


def _data_entry(f: Forger, how: str):
    m = f.manifest()
    if how == "removed":
        m["data"] = []
    elif how == "changed":
        m["data"][0]["sha256"] = "0" * 64
    elif how == "added":
        m["data"].append(dict(m["data"][0], path=str(f.data) + ".other", sha256="1" * 64))
    f.write_manifest(m)


def _csv_changed(f: Forger):
    """The data file itself edited, and the manifest and records relisting its new SHA-256, as
    a forger with the folder and the data would make them (the test puts the module's data
    back: ``f.undo``)."""
    original = f.data.read_bytes()
    f.undo.append(lambda: f.data.write_bytes(original))
    frame = pd.read_csv(f.data)
    frame.loc[::5, "y"] = 1 - frame.loc[::5, "y"]  # a fifth of the labels flipped
    frame.to_csv(f.data, index=False)
    digest = _sha(f.data.read_bytes())
    m = f.manifest()
    m["data"][0]["sha256"] = digest
    f.write_manifest(m)
    for job in f.jobs["ramp"] + f.jobs["lr_cert"]:
        f.edit_record(job, lambda rec: rec["certification"]["evidence"]["data"][0].update(
            sha256=digest))


FORGERIES = [
    # (id, forge(f) -> fragment of the refusal; the command runs on the lr_cert job unless the
    # forgery names the ramp job): a record edited without relisting it
    ("record-edited-not-relisted", lambda f: (
        f.edit_record(f.lr, _threshold_claims, relist=False), "differs from the SHA-256")[1]),
    ("record-claims-a-pass-relisted", lambda f: (
        f.edit_record(f.ramp, _claim_pass), "does not re-check")[1]),
    ("record-counts-and-p-values-forged", lambda f: (
        f.edit_record(f.lr, _threshold_claims), "does not re-check: statistic.declared_fpr.k")[1]),
    ("record-evidence-only-p-value-forged", lambda f: (
        f.edit_record(f.lr, _ev(("statistic", "declared_fpr", "p_value"), lambda v: v / 2)),
        "claims differ from its evidence")[1]),
    ("record-delta-tightened", lambda f: (
        f.edit_record(f.lr, lambda r: (r["certification"].__setitem__("delta", 0.01),
                                       r["certification"]["evidence"].__setitem__("delta", 0.01))),
        "does not re-check: delta")[1]),
    ("record-rule-moved", lambda f: (
        f.edit_record(f.lr, _shift_rule), "does not re-check: rule")[1]),
    ("record-held-back-rows-changed", lambda f: (
        f.edit_record(f.lr, _other_rows), "held_back.sha256")[1]),
    ("record-held-back-hash-wrong", lambda f: (
        f.edit_record(f.lr, _ev(("held_back", "sha256"), "0" * 64)),
        "do not match their recorded SHA-256")[1]),
    ("record-evidence-removed", lambda f: (
        f.edit_record(f.lr, lambda r: r["certification"].pop("evidence")),
        "records no evidence")[1]),
    ("record-seed-changed", lambda f: (
        f.edit_record(f.lr, lambda r: r.__setitem__("seed", 7)),
        ("seed 7 is not the spec's", "metrics table's row of job"))[1]),
    ("model-json-certificate-differs", lambda f: _model_json_delta(f, 0.2)),
    ("model-swapped", lambda f: (f.swap_model(f.lr, f.jobs["lr_cert"][1]),
                                 "is not the one its certificate was made for")[1]),
    ("model-swapped-and-rehashed", lambda f: (f.swap_model(f.lr, f.jobs["lr_cert"][1], True),
                                              "does not re-check")[1]),
    ("model-uncertified-swapped-in", lambda f: (
        f.swap_model(f.lr, f.table[f.table.method == "plain"].job.iloc[0], True),
        "not the certified rule")[1]),
    ("model-removed", lambda f: ((f.run / "models" / f"{f.lr}.skops").unlink(),
                                 "no saved model")[1]),
    ("spec-edited", lambda f: (f.edit_spec("kappa: 0.8", "kappa: 0.9"),
                               "spec.yaml' is not the spec its manifest lists")[1]),
    ("spec-edited-and-relisted-promise", lambda f: (
        f.edit_spec("max: 0.2", "max: 0.05", relist=True), "is not a job of the run's spec")[1]),
    ("spec-edited-and-relisted-delta", lambda f: (
        f.edit_spec_data(lambda d: d["methods"][1]["certify"].update(delta=0.01)),
        "is not a job of the run's spec")[1]),
    ("spec-certify-added-to-plain-method", lambda f: (
        f.edit_spec_data(lambda d: d["methods"][2].update(
            certify=d["methods"][1]["certify"], promises=d["methods"][1]["promises"])),
        f.aim("plain", f.table[f.table.method == "plain"].job.iloc[0]),
        "is not a job of the run's spec")[2]),
    ("manifest-spec-hash-removed", lambda f: (
        f.write_manifest({k: v for k, v in f.manifest().items() if k != "spec_sha256"}),
        "lists no SHA-256 of spec.yaml")[1]),
    ("manifest-records-removed", lambda f: (
        f.write_manifest({k: v for k, v in f.manifest().items() if k != "records"}),
        "lists no records")[1]),
    ("manifest-record-unlisted", lambda f: (
        f.write_manifest({**f.manifest(), "records": {k: v for k, v in f.manifest()["records"]
                                                      .items() if k != f.lr}}),
        "is not listed in the run's manifest")[1]),
    ("record-added", lambda f: (
        shutil.copy(f.run / "results" / f"{f.lr}.json", f.run / "results" / "forged.json"),
        "'results/forged.json' is not listed")[1]),
    ("record-removed", lambda f: ((f.run / "results" / f"{f.lr}.json").unlink(),
                                  "is missing")[1]),
    ("manifest-data-entry-removed", lambda f: (_data_entry(f, "removed"),
                                               "is not listed with its SHA-256")[1]),
    ("manifest-data-entry-changed", lambda f: (_data_entry(f, "changed"), (
        "is not listed with its SHA-256", "changed since the run"))[1]),
    ("manifest-data-entry-added", lambda f: (_data_entry(f, "added"), (
        "lists data files the certificate does not name", "is gone"))[1]),
    ("data-file-changed-everything-relisted", lambda f: (_csv_changed(f),
                                                         "does not re-check")[1]),
]


def _model_json_delta(f: Forger, delta: float):
    path = f.run / "models" / f"{f.lr}.json"
    meta = json.loads(path.read_text())
    meta["certificate"]["delta"] = delta
    path.write_text(json.dumps(meta))
    return "is not the one its record holds"




@pytest.mark.parametrize("fid,forge", FORGERIES, ids=[c[0] for c in FORGERIES])
@pytest.mark.parametrize("command", ["verify", "deploy"])
def test_a_forged_certificate_is_refused(tmp_path, made, cli, command, fid, forge):
    f = Forger(tmp_path, made)
    if "claims-a-pass" in fid:  # needs a job whose test failed, else any certified ramp job
        f.aim("ramp", f.ramp)
        table = made["table"]
        failed = table[(table.method == "ramp") & (table.status == "no_solution")].job
        if len(failed):
            f.ramp = failed.iloc[0]
            f.aim("ramp", f.ramp)
            f.edit_record(f.ramp, lambda r: r.__setitem__("status", "ok"))
            for name in ("skops", "json"):  # the model the forger presents: seed 0's
                src = f.run / "models" / f"{made['jobs']['ramp'][0]}.{name}"
                shutil.copy(src, f.run / "models" / f"{f.ramp}.{name}")
            f.edit_record(f.ramp, _ev(("model_sha256",), _sha(
                (f.run / "models" / f"{f.ramp}.skops").read_bytes())))
            f.edit_table(f.ramp, status="ok")
    fragment = forge(f)
    if isinstance(fragment, tuple):
        fragment = fragment[command == "deploy"]
    before = _snapshot(tmp_path)
    if command == "verify":
        args = ["verify", f.run] + ([] if fid.startswith(("record-added", "manifest-record",
                                                          "record-removed"))
                                    else ["--job", f.target])
    else:
        args = ["deploy", f.run, "--method", f.method, "--job", f.target, "--out",
                tmp_path / "out"]
        if fid == "model-removed":
            fragment = "saved no model"
    try:
        result = cli(*args)
    finally:
        for undo in f.undo:
            undo()
    _one_error_line(result, 2, fragment)
    assert _snapshot(tmp_path) == before  # nothing written, the out folder not made


DEPLOYED_FORGERIES = [
    ("deployed-model-swapped", lambda f: (
        shutil.copy(f.run / "models" / f"{f.jobs['lr_cert'][1]}.skops",
                    f.deployed / "model.skops"), "is not the one its certificate was made for")[1]),
    ("deployed-certificate-p-value-forged", lambda f: _edit_meta(
        f, lambda m: m["certificate"]["evidence"]["statistic"]["declared_fpr"].update(k=0),
        "does not re-check")),
    ("deployed-evidence-removed", lambda f: _edit_meta(
        f, lambda m: m["certificate"].pop("evidence"), "records no evidence")),
    ("deployed-dataset-entry-changed", lambda f: _edit_meta(
        f, lambda m: m["dataset"]["params"].update(target="a"), "dataset entry is not the one")),
    ("deployed-data-identity-changed", lambda f: _edit_meta(
        f, lambda m: m["deployment"]["data"][0].update(sha256="0" * 64),
        "is not listed with its SHA-256")),
    ("deployed-method-entry-changed", lambda f: _edit_meta(
        f, lambda m: m["certificate"]["evidence"]["method"]["promises"][0].update(max=0.05),
        "does not re-check")),
    ("deployed-uncertified", lambda f: _edit_meta(
        f, lambda m: m.pop("certificate"), "is not certified")),
]


def _edit_meta(f: Forger, change, fragment: str) -> str:
    meta = json.loads((f.deployed / "model.json").read_text())
    change(meta)
    (f.deployed / "model.json").write_text(json.dumps(meta))
    return fragment


@pytest.mark.parametrize("fid,forge", DEPLOYED_FORGERIES, ids=[c[0] for c in DEPLOYED_FORGERIES])
def test_a_forged_deployed_model_is_refused(tmp_path, made, cli, fid, forge):
    f = Forger(tmp_path, made)
    fragment = forge(f)
    before = _snapshot(tmp_path)
    _one_error_line(cli("verify", f.deployed), 2, fragment)
    assert _snapshot(tmp_path) == before


VERIFY_BAD = [
    ("not-a-folder", lambda f: ["verify", f.run / "nope"], "does not exist"),
    ("a-file", lambda f: ["verify", f.run / "spec.yaml"], "is not a run folder"),
    ("job-not-certified", lambda f: ["verify", f.run, "--job",
                                     f.table[f.table.method == "plain"].job.iloc[0]],
     "is not a certified job of the run"),
    ("job-climbs", lambda f: ["verify", f.run, "--job", "../x"], "is not a plain name"),
    ("job-on-deployed", lambda f: ["verify", f.deployed, "--job", f.lr], "--job is for a run"),
    ("run-without-certified-method", lambda f: ["verify", _uncertified(f)],
     "the run has no certified method"),
    ("results-symlinked-out", lambda f: ["verify", _link_out(f, "results")], "is a symlink to"),
    ("model-to-shadow", lambda f: ["verify", _shadow_model(f)], "is a symlink to '/etc/shadow'"),
]


def _uncertified(f: Forger) -> Path:
    """The run cut down to its plain method: spec, records and manifest consistent."""
    f.edit_spec_data(lambda d: d.update(methods=[m for m in d["methods"] if "certify" not in m]))
    m = f.manifest()
    for job in f.jobs["lr_cert"] + list(f.table[f.table.method == "ramp"].job):
        (f.run / "results" / f"{job}.json").unlink()
        m["records"].pop(job)
    f.write_manifest(m)
    return f.run


def _link_out(f: Forger, name: str) -> Path:
    target = f.run.parent / "elsewhere"
    shutil.move(f.run / name, target)
    (f.run / name).symlink_to(target)
    return f.run


def _shadow_model(f: Forger) -> Path:
    (f.run / "models" / f"{f.lr}.skops").unlink()
    (f.run / "models" / f"{f.lr}.skops").symlink_to("/etc/shadow")
    return f.run


@pytest.mark.parametrize("cid,args,fragment", VERIFY_BAD, ids=[c[0] for c in VERIFY_BAD])
def test_verify_bad_inputs(tmp_path, made, cli, cid, args, fragment):
    f = Forger(tmp_path, made)
    argv = args(f)
    before = _snapshot(tmp_path)
    _one_error_line(cli(*argv), 2, fragment)
    assert _snapshot(tmp_path) == before
