"""A certified model deployed from a run, and labelled rows to audit it with (issue 35):
shared by tests/serve/test_audit.py, tests/serve/test_load_model.py and the catalogue of
audit's refusals (tests/cli/test_bad_inputs_audit.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from group_data import two_groups

#: The data entry and the certified ramp (training route, models saved) that the catalogues
#: of run folders build on (verify, listed records): a spec is ``name``, ``seeds``, this, any
#: further methods, ``metrics``.
CERTIFIED_RAMP = """datasets:
  - dataset: csv
    params: {path: data.csv, target: y, group: sex, privileged: M}
    preprocess: standardize
methods:
  - method: ramp
    params: {constraints: [{rate: fairness_ratio, kappa: 0.8}], lam: 0.01}
    certify: {delta: 0.05, fraction: 0.3}
    save_model: true
"""

SPEC = f"""
name: audited
seeds: 3
{CERTIFIED_RAMP}metrics: [error, fairness_ratio]
"""


def rows(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Labelled rows of the population the model was trained on (two groups, ``sex``: M
    privileged; a text column ``colour``); ``shift`` moves the label-driven feature of the
    protected group F down, so fewer of its rows get the positive decision."""
    X, y, g = two_groups(n, seed)
    X[g == "F", 0] -= shift
    colour = np.where(np.random.default_rng(seed + 7).random(n) < 0.5, "red", "blue")
    return pd.DataFrame({"a": X[:, 0].round(4), "b": X[:, 1].round(4), "c": X[:, 2].round(4),
                         "colour": colour, "sex": g, "y": y})


def invoke(*args):
    """The command line, as the tests' ``cli`` fixture runs it (usable in a module fixture)."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args])


def run_spec(base, spec: str, cli=invoke):
    """Write ``spec`` to ``base/spec.yaml`` and run it (one worker) into ``base/runs``; the
    run folder. The data it names must be in ``base`` already."""
    (base / "spec.yaml").write_text(spec)
    ran = cli("run", base / "spec.yaml", "--out", base / "runs", "-j", "1")
    assert ran.exit_code == 0, ran.output
    (run,) = (base / "runs").iterdir()
    return run


def deploy(run, out, *args, cli=invoke):
    """``safeclf deploy RUN *args --out OUT``, which must succeed; ``out``."""
    done = cli("deploy", run, *args, "--out", out)
    assert done.exit_code == 0, done.output
    return out


def deployed(base, cli=invoke) -> tuple:
    """Run :data:`SPEC` on 1,500 rows in ``base`` and deploy its certified model to
    ``base/model``; (run folder, model folder)."""
    rows(1500, 3).to_csv(base / "data.csv", index=False)
    run = run_spec(base, SPEC, cli)
    return run, deploy(run, base / "model", cli=cli)
