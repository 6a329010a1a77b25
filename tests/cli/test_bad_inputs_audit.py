"""The catalogue of ``safeclf audit``'s refusals (issue 35, item 5): rows without labels or
groups, a label the model does not know, a category not seen in training (predict's message),
a model that promises nothing, a report folder that is an input, lies in the model's folder or
holds an earlier report, a level or period out of range. Each case: exit code 2, exactly one
``error:`` line naming the problem, no traceback, and nothing under the test's folders changed
(nothing written)."""

from __future__ import annotations

import json
import shutil

import pytest
from audited_model import deployed, rows
from test_bad_inputs_runtime import _one_error_line, _snapshot

pytest.importorskip("skops")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return deployed(tmp_path_factory.mktemp("audit-bad"))[1]


def _write(tmp, frame, name="new.csv"):
    frame.to_csv(tmp / name, index=False)
    return tmp / name


def _unseen(tmp):
    frame = rows(40, 71)
    frame.loc[1, "colour"] = "green"
    return _write(tmp, frame)


def _label(value):
    def make(tmp):
        frame = rows(40, 72).astype({"y": object})
        frame.loc[1, "y"] = value
        return _write(tmp, frame)

    return make


def _no_promises(tmp, model):
    """A copy of the deployed model whose metadata says it promises nothing."""
    copy = tmp / "plain"
    shutil.copytree(model, copy)
    meta = json.loads((copy / "model.json").read_text())
    meta["promises"] = [{"promise": "none", "statement": "ramp makes no promise", "kind": "none"}]
    (copy / "model.json").write_text(json.dumps(meta))
    return copy


def _own_quantity(tmp, model):
    """A copy of the deployed model whose one promise is of a quantity only its method
    measures (a chance-constraint violation, as mcsvm's)."""
    copy = tmp / "own"
    shutil.copytree(model, copy)
    meta = json.loads((copy / "model.json").read_text())
    meta["promises"][0]["quantity"] = {"kind": "chance_violation"}
    (copy / "model.json").write_text(json.dumps(meta))
    return copy


def _earlier(tmp):
    (tmp / "reports").mkdir()
    (tmp / "reports" / "audit.md").write_text("last month's audit\n")
    return ["--report-dir", tmp / "reports"]


# (id, data(tmp), extra options(tmp, model), the model to audit(tmp, model), fragment)
CASES = [
    ("labels-column-missing", lambda t: _write(t, rows(40, 73).drop(columns=["y"])), None, None,
     "the labels column 'y' (the model's target) is missing; an audit needs labelled rows"),
    ("label-empty", _label(None), None, None,
     "the labels column 'y' is empty at line 3; every audited row needs its label"),
    ("label-unknown", _label("maybe"), None, None,
     "the labels column 'y' holds 'maybe' at line 3, not a label of the model (0, 1)"),
    ("group-column-missing", lambda t: _write(t, rows(40, 74).drop(columns=["sex"])), None,
     None, "the group column 'sex' is missing; the model's promises compare its groups"),
    ("group-empty", lambda t: _write(t, rows(40, 75).assign(
        sex=lambda f: f["sex"].where(f.index != 4))), None, None,
     "the group column 'sex' is empty at line 6; give every audited row its group"),
    ("unseen-category", _unseen, None, None,
     "column 'colour' at line 3 holds 'green', a category not seen in training (seen: blue, "
     "red); --skip-bad-rows scores the other rows"),
    ("model-without-promises", lambda t: _write(t, rows(40, 76)), None, _no_promises,
     "carries no promise to audit (its method promises nothing); declare promises on the "
     "method entry, or certify it"),
    ("model-with-uncountable-promises", lambda t: _write(t, rows(40, 86)), None, _own_quantity,
     "promises only quantities of its method's own (chance_violation), which an audit cannot "
     "count from labels and decisions"),
    ("report-dir-is-the-model-folder", lambda t: _write(t, rows(40, 77)),
     lambda t, m: ["--report-dir", m], None, "is the model's folder"),
    ("report-dir-inside-the-model-folder", lambda t: _write(t, rows(40, 78)),
     lambda t, m: ["--report-dir", m / "audit"], None, "is inside the model's folder"),
    ("report-dir-is-the-data-file", lambda t: _write(t, rows(40, 79)),
     lambda t, m: ["--report-dir", t / "new.csv"], None, "is a regular file; give a folder"),
    ("report-dir-holds-an-earlier-report", lambda t: _write(t, rows(40, 80)),
     lambda t, m: _earlier(t), None,
     "already holds audit.md; give a new folder (an earlier audit's report is never "
     "overwritten)"),
    ("report-dir-parent-missing", lambda t: _write(t, rows(40, 81)),
     lambda t, m: ["--report-dir", t / "no" / "reports"], None, "does not exist"),
    ("alpha-out-of-range", lambda t: _write(t, rows(40, 82)), lambda t, m: ["--alpha", "1.5"],
     None, "--alpha must be between 0 and 1, got 1.5"),
    ("period-zero", lambda t: _write(t, rows(40, 83)), lambda t, m: ["--period", "0"], None,
     "--period must be a whole number ≥ 1 (the first period is 1), got 0"),
    ("no-labelled-rows", lambda t: _write(t, rows(40, 84).head(0)), None, None,
     "has no rows"),
    ("data-missing", lambda t: t / "absent.csv", None, None, "does not exist"),
    ("job-of-a-deployed-folder", lambda t: _write(t, rows(40, 85)),
     lambda t, m: ["--job", "abc"], None, "--job: no saved model for job 'abc'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_audit_refusals_are_one_line_and_write_nothing(case, model, tmp_path, cli):
    name, data, extra, which, fragment = case
    data = data(tmp_path)
    audited = model if which is None else which(tmp_path, model)
    options = [] if extra is None else extra(tmp_path, model)
    before, before_model = _snapshot(tmp_path), _snapshot(model)
    result = cli("audit", audited, "--data", data, *options)
    _one_error_line(result, 2, fragment)
    assert _snapshot(tmp_path) == before and _snapshot(model) == before_model
