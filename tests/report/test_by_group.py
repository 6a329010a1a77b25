"""The per-group report (by_group.csv, printed, report.html), intersectional groups from the
csv loader, and validate's list of comparisons, end to end on a three-group CSV of our own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from group_data import three_groups

from safeclf.datasets.tabular import load_csv
from safeclf.guarantees.promises import clopper_pearson, katz_ratio
from safeclf.report import by_group


@pytest.fixture
def three_csv(tmp_path):
    X, y, g = three_groups(900, 3)
    sex = np.where(np.random.default_rng(1).random(900) < 0.5, "F", "M")
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "sex": sex, "origin": g, "y": y})
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_records_per_group_and_pair_with_intervals():
    g = np.array(["a"] * 40 + ["b"] * 40 + ["c"] * 10)
    y = np.tile([True, False], 45)
    pred = np.r_[np.ones(20), np.zeros(20), np.ones(10), np.zeros(30), np.ones(5), np.zeros(5)]
    recs = by_group.records(y, pred.astype(bool), {"groups": g}, {"privileged_group": "a"},
                            0.95)
    get = {(r["group"], r["metric"]): r for r in recs}
    b = get["b", "positive_rate"]
    assert (b["k"], b["n"], b["estimate"]) == (10, 40, 0.25)
    assert (b["lower"], b["upper"]) == pytest.approx(clopper_pearson(10, 40, 0.95))
    assert get["c", "positive_rate"]["small"] and not b["small"]  # 10 rows < 30
    ratio = get["b vs a", "positive_rate ratio"]
    assert ratio["estimate"] == pytest.approx(0.5)
    assert (ratio["lower"], ratio["upper"]) == pytest.approx(katz_ratio(10, 40, 20, 40)[1:])
    assert get["b vs a", "positive_rate difference"]["estimate"] == pytest.approx(0.25)
    assert ("c vs a", "tpr ratio") in get and ("a vs b", "positive_rate ratio") not in get
    # no privileged group: every group against the one with the largest rate
    recs = by_group.records(y, pred.astype(bool), {"groups": g}, {}, 0.95)
    pairs = {r["group"] for r in recs if r["metric"] == "positive_rate ratio"}
    assert pairs == {"b vs a", "c vs a"}  # a and c both at 0.5: the first largest, a


def test_csv_intersections_give_groups_columns_and_a_named_privileged(three_csv):
    path, frame = three_csv
    ds = load_csv(path, "y", group=["sex", "origin"], privileged=["M", "a"])
    assert ds.info["privileged_group"] == "M & a"
    assert set(ds.rows["groups"]) == {f"{s} & {o}" for s in "FM" for o in "abc"}
    assert ds.rows["origin"].tolist() == frame["origin"].astype(str).tolist()
    assert ds.info["group_columns"] == ["sex", "origin"]
    assert ds.X.shape[1] == 2  # the group columns are not features


def test_run_writes_by_group_and_validate_lists_comparisons(three_csv, tmp_path, cli):
    path, _ = three_csv
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: three
seeds: 1
datasets:
  - dataset: csv
    params: {{path: {path}, target: y, group: [sex, origin], privileged: [M, a]}}
    split: {{test: 0.3}}
methods:
  - method: ramp
    params:
      constraints: [{{rate: fairness_ratio, kappa: 0.8, groups: origin, privileged: a}}]
      lam: 0.01
metrics: [error, fairness_ratio]
""")
    validated = cli("validate", spec)
    assert validated.exit_code == 0, validated.output
    assert "constraints[0] (fairness_ratio_b): fairness_ratio: s_p(b) ≥ 0.8·s_p(a)" \
        in validated.output
    assert "constraints[0] (fairness_ratio_c)" in validated.output
    out = tmp_path / "runs"
    result = cli("run", spec, "--out", out)
    assert result.exit_code == 0, result.output
    run = next(out.iterdir())
    table = pd.read_csv(run / "by_group.csv")
    # the intersections and each column on its own
    assert set(table["column"]) == {"groups", "sex", "origin"}
    assert "F & b vs M & a" in set(table["group"])
    assert {"b", "c", "a"} <= set(table.loc[table["column"] == "origin", "group"])
    promises = pd.read_csv(run / "promises.csv")
    assert list(promises["promise"]) == ["constraint_fairness_ratio_b",
                                         "constraint_fairness_ratio_c"]
    assert "n_needed" in promises.columns
    assert "By group" in result.output
    assert "By group" in (run / "report.html").read_text()


def test_adult_gives_intersections_of_sex_and_race_with_small_groups_reported():
    from safeclf.datasets.adult import load_adult

    ds = load_adult(n_rows=600, group=["sex", "race"])
    assert ds.info["privileged_group"] == "Male & White"
    g = ds.rows["groups"]
    assert (g == "Female & Black").any() and set(ds.rows["race"]) >= {"White", "Black"}
    assert load_adult(n_rows=600, group="race").info["privileged_group"] == "White"
    y = ds.y == 1
    recs = by_group.records(y, y, ds.rows, ds.info, 0.95)  # a perfect "classifier"
    small = {r["group"] for r in recs if r["column"] == "groups" and r["small"]
             and r["metric"] == "positive_rate"}
    sizes = {v: int((g == v).sum()) for v in set(g)}
    assert small == {v for v, n in sizes.items() if n < 30} and small  # reported, not pooled
    assert {r["group"] for r in recs if r["column"] == "race"} >= {"White", "Black"}


def test_a_ratio_without_privileged_group_is_shown_under_its_undirected_name(three_csv,
                                                                               tmp_path, cli):
    """Without a privileged group the ratio is reported as fairness_ratio_minmax; the printed
    summary shows it (it used to drop out) and validate says what it compares."""
    path, frame = three_csv
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: minmax
seeds: 1
datasets:
  - dataset: csv
    params: {{path: {path}, target: y, group: origin}}
methods:
  - method: logreg
metrics: [error, fairness_ratio]
""")
    from rich.console import Console

    from safeclf.cli.console import print_outcome
    from safeclf.execution.options import Options
    from safeclf.execution.runner import run

    validated = cli("validate", spec)
    assert "min over groups / max over groups of s_p (3 groups" in validated.output
    outcome = run(spec, Options(out=tmp_path / "runs", jobs=1))
    assert outcome.exit_code == 0
    assert "test_fairness_ratio_minmax" in outcome.table.columns
    console = Console(width=400, record=True)
    print_outcome(console, outcome)
    summary = console.export_text().split("Summary", 1)[1].split("\n\n", 1)[0]
    assert "test_fairness_ratio_minmax" in summary
