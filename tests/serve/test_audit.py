"""``safeclf audit`` and ``safeclf.audit`` (issue 35, item 5): each promise a deployed model
carries, checked on new labelled rows with the certificate's own exact tests; exit 0 when every
promise holds or is inconclusive, 1 when one is violated; and a monitoring sequence that
spends α over all its periods, not α per period (checked by simulation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from audited_model import deployed, rows

ALPHA = 0.05


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    base = tmp_path_factory.mktemp("audited")
    return deployed(base)[1]


def test_fresh_rows_of_the_same_population_hold_or_are_inconclusive(model, tmp_path, cli):
    import safeclf

    for seed in (21, 22, 23):
        path = tmp_path / f"fresh{seed}.csv"
        rows(2000, seed).to_csv(path, index=False)
        out = tmp_path / f"report{seed}"
        result = cli("audit", model, "--data", path, "--report-dir", out)
        assert result.exit_code == 0, result.output
        found = safeclf.audit(str(model), path)
        assert set(found.promises["verdict"]) <= {"holds", "inconclusive"}
        assert found.exit_code == 0 and found.rows == 2000
        assert found.promises["verdict"].iloc[0] in result.stdout
        text = (out / "audit.md").read_text()
        # the certificate's statement beside the audit's, the per-group table
        assert "certified in training at δ = 0.05" in text and "on 2000 audited rows" in text
        assert "| groups | F | positive_rate |" in text
        assert "<table>" in (out / "audit.html").read_text()


def test_a_shifted_population_breaks_the_promise_and_exits_1(model, tmp_path, cli):
    import safeclf

    rows(2000, 31, shift=1.5).to_csv(tmp_path / "shifted.csv", index=False)
    result = cli("audit", model, "--data", tmp_path / "shifted.csv")
    assert result.exit_code == 1, result.output
    assert "violated" in result.stdout
    found = safeclf.audit(model, pd.read_csv(tmp_path / "shifted.csv"))
    row = found.promises.iloc[0]
    assert row["verdict"] == "violated" and found.exit_code == 1
    # the whole interval is below κ = 0.8, and the estimate is the ratio of the group rates
    assert row["upper"] < 0.8
    g = found.by_group.set_index(["group", "metric"])["estimate"]
    assert row["estimate"] == pytest.approx(g["F", "positive_rate"] / g["M", "positive_rate"])


def test_the_audit_counts_what_the_model_decides(model, tmp_path):
    """The estimate is recomputed here from predict on the raw rows and the labels."""
    import safeclf

    frame = rows(1500, 41)
    found = safeclf.audit(model, frame)
    pred = safeclf.load_model(model).predict(frame).astype(int) == 1
    f, m = frame["sex"] == "F", frame["sex"] == "M"
    assert found.promises.iloc[0]["estimate"] == pytest.approx(pred[f].mean() / pred[m].mean())
    assert found.promises.iloc[0]["n_groups"] == f"F {f.sum()}, M {m.sum()}"


def test_few_rows_are_inconclusive_with_the_rows_needed(model):
    import safeclf

    found = safeclf.audit(model, rows(120, 51))
    row = found.promises.iloc[0]
    assert row["verdict"] == "inconclusive" and row["lower"] < 0.8 < row["upper"]
    assert 120 < row["n_needed"] < math.inf  # the estimate is above κ: more rows would do
    bigger = safeclf.audit(model, rows(6000, 52))
    assert bigger.promises.iloc[0]["verdict"] == "holds"  # the model keeps it with margin


def _promise(kind: str):
    from safeclf.guarantees.promises import Promise
    from safeclf.guarantees.rates import Quantity

    if kind == "ratio":
        return Promise("ratio", "s", Quantity(kind="ratio", privileged="M"), ">=", 0.8,
                       "high_confidence", "-")
    return Promise("fpr", "s", Quantity(kind="rate", label="negative"), "<=", 0.1,
                   "high_confidence", "-")


def _draw(kind: str, rng, sequences: int):
    """Counts of one period where the promise holds with no margin: a ratio of exactly 0.8
    (protected 0.24, privileged 0.30), a rate of exactly 0.1; group sizes vary by period."""
    if kind == "ratio":
        n, n2 = int(rng.integers(150, 400)), int(rng.integers(150, 400))
        return (rng.binomial(n, 0.24, sequences), n, rng.binomial(n2, 0.30, sequences), n2)
    n = int(rng.integers(150, 400))
    return rng.binomial(n, 0.1, sequences), n, None, None


@pytest.mark.parametrize("kind", ["ratio", "rate"])
def test_repeated_audits_spend_alpha_once_over_the_whole_sequence(kind):
    """200 monitoring sequences of 12 periods on a population where the promise holds exactly
    at its bound (the hardest case): with --period k each audit spends α·6/(π²k²), and the
    share of sequences with any false 'violated' stays within α plus binomial slack; auditing
    every period at α (no spending) does not, which shows the simulation can tell."""
    from safeclf.serve.audit import period_level, verdicts

    p, sequences, periods = _promise(kind), 200, 12
    rng = np.random.default_rng(35)
    spent = np.zeros(sequences, bool)
    unspent = np.zeros(sequences, bool)
    for k in range(1, periods + 1):
        counts = _draw(kind, rng, sequences)
        spent |= verdicts(p, *counts, level=period_level(ALPHA, k)) == "violated"
        unspent |= verdicts(p, *counts, level=ALPHA) == "violated"
    slack = 3 * math.sqrt(ALPHA * (1 - ALPHA) / sequences)
    assert spent.mean() <= ALPHA + slack, spent.mean()
    assert unspent.mean() > ALPHA + slack, unspent.mean()


def test_the_period_schedule_sums_to_alpha():
    from safeclf.serve.audit import period_level

    assert period_level(ALPHA, None) == ALPHA
    total = sum(period_level(ALPHA, k) for k in range(1, 200_001))
    assert ALPHA * 0.9999 < total < ALPHA


@pytest.mark.parametrize("kind", ["ratio", "rate"])
def test_the_limits_agree_with_the_verdict(kind):
    """A verdict is 'holds' exactly when the far limit is on the promised side of the bound,
    'violated' exactly when the near limit is beyond it."""
    from safeclf.guarantees.promises import Evidence
    from safeclf.serve.audit import judge

    p = _promise(kind)
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(12):
        k, n, k2, n2 = _draw(kind, rng, 1)
        if kind == "ratio":
            k = k + int(rng.integers(-40, 40))  # both sides of the bound
        else:
            k = np.clip(k + rng.integers(-20, 20), 0, n)
        ev = Evidence(int(k[0]), n, None if k2 is None else int(k2[0]), n2)
        out = judge(p, ev, 0.01, 1000)
        far, near = (out["lower"], out["upper"]) if p.sense == ">=" else \
            (out["upper"], out["lower"])
        on_side = (lambda v: v >= p.bound) if p.sense == ">=" else (lambda v: v <= p.bound)
        assert (out["verdict"] == "holds") == on_side(far), out
        assert (out["verdict"] == "violated") == (not on_side(near) and near != p.bound), out
        assert (out["verdict"] == "inconclusive") == (out["n_needed"] == out["n_needed"])
        seen.add(out["verdict"])
    assert len(seen) >= 2
