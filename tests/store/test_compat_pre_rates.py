"""A ramp model file written before the rate vocabulary moved from the ramp plug-in into the
core (``safeclf.methods.ramp.rates`` → ``safeclf.guarantees.rates``, issue 33) still loads and
predicts as it did: ``tests/fixtures/pre_rates_ramp`` holds a RampClassifier (a fairness
ratio and an fpr constraint, a two-term objective) saved by ``safeclf run`` at commit 0d33763,
and the decision values that version computed on the first rows of its data."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).parents[1] / "fixtures" / "pre_rates_ramp"


def test_the_file_names_the_old_module():
    schema = zipfile.ZipFile(FIXTURE / "ramp.skops").read("schema.json").decode()
    assert '"safeclf.methods.ramp.rates"' in schema  # what the translation has to handle


def test_a_ramp_model_saved_before_the_move_loads_and_predicts_as_before():
    from safeclf.plugins import registry
    from safeclf.store import models

    expected = json.loads((FIXTURE / "expected.json").read_text())
    ds = registry.get_dataset("adult").load(**expected["dataset"]["params"])
    X = np.asarray(ds.X)[: expected["first_rows"]]
    pipeline = models.load(FIXTURE / "ramp.skops")
    est = pipeline[-1]
    assert type(est).__name__ == "RampClassifier"
    np.testing.assert_allclose(pipeline.decision_function(X), expected["decision_function"],
                               rtol=1e-10, atol=1e-12)
    assert pipeline.predict(X).tolist() == expected["predict"]
    # the objects it keeps are the vocabulary's, wherever it lives now, and still work
    assert [c.name for c in est._constraints] == ["fairness_ratio", "fpr"]
    assert [t.rate.kind for t in est._objective.terms] == ["error", "coverage"]
    assert {type(c).__module__ for c in est._constraints} == {"safeclf.guarantees.rates"}
    assert est._constraints[1].quantity().label == "negative"  # an fpr, read as one
