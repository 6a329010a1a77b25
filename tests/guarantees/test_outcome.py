"""The favourable outcome, named (issue 32, item 1) and one direction per comparison (item 6).

A CSV whose target is ``approve`` / ``deny``: without ``positive`` a promise that counts
favourable decisions is refused before anything runs; with ``positive: approve`` every
statement names it, and declaring ``positive: deny`` on the same file makes the same figures
count the other value. ``predict`` writes the original label values. Without a declared
privileged group, the reference group is chosen once per dataset, so every seed compares in
the same direction.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from listed_folder import listed

from safeclf.datasets.tabular import load_csv
from safeclf.errors import DataError
from safeclf.guarantees import outcome


def _loans(path: Path, n: int = 600, seed: int = 0) -> Path:
    """Loan decisions: approve more often for men, a feature that predicts it."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    p = 1 / (1 + np.exp(-(1.5 * x1 + 0.8 * (sex == "Male") - 0.3)))
    decision = np.where(rng.random(n) < p, "approve", "deny")
    pd.DataFrame({"x1": x1.round(3), "x2": x2.round(3), "sex": sex,
                  "decision": decision}).to_csv(path, index=False)
    return path


SPEC = """
name: loans
seeds: 2
save_models: true
datasets:
  - dataset: csv
    params: {{path: {path}, target: decision, group: sex, privileged: Male{extra}}}
    split: {{test: 0.3, stratify: false}}   # the same rows whichever value is 1
    preprocess: standardize
methods:
  - method: logreg
    promises: [{{rate: fairness_ratio, min: 0.8}}, {{rate: recall, min: 0.5}}]
metrics: [error, fairness_ratio, positive_rate]
"""


def _spec(tmp_path, extra="", name="spec.yaml") -> Path:
    data = tmp_path / "loans.csv"
    if not data.exists():
        _loans(data)
    path = tmp_path / name
    path.write_text(SPEC.format(path=data, extra=extra))
    return path


def _run(cli, spec, out):
    result = cli("run", spec, "--out", out)
    assert result.exit_code == 0, result.output
    (run,) = [p for p in Path(out).iterdir() if p.is_dir()]
    return run


# -- encoding at the dataset boundary ---------------------------------------------------------
def test_positive_encodes_the_target_and_records_the_outcome(tmp_path):
    path = _loans(tmp_path / "loans.csv", n=50)
    raw = pd.read_csv(path)["decision"].to_numpy()
    for favourable, other in (("approve", "deny"), ("deny", "approve")):
        ds = load_csv(path, "decision", positive=favourable)
        assert ds.y.dtype.kind == "i" and set(ds.y.tolist()) == {0, 1}
        assert (ds.y == 1).tolist() == (raw == favourable).tolist()
        assert ds.info["outcome"] == {"target": "decision", "positive": favourable,
                                      "negative": other, "declared": True, "encoded": True}
    # without positive: words have no outcome; 0/1 and booleans take 1 / True
    assert "outcome" not in load_csv(path, "decision").info
    numbers = tmp_path / "n.csv"
    numbers.write_text("a,y\n1,0\n2,1\n3,0\n4,1\n")
    assert load_csv(numbers, "y").info["outcome"]["positive"] == "1"
    assert load_csv(numbers, "y").info["outcome"]["declared"] is False
    flags = tmp_path / "b.csv"
    flags.write_text("a,y\n1,True\n2,False\n3,True\n4,False\n")
    assert load_csv(flags, "y").info["outcome"]["positive"] == "True"


def test_positive_is_compared_as_text(tmp_path):
    """``positive: 1`` matches an int column, ``positive: 0`` makes 0 favourable, a boolean
    matches a boolean column, and a quoted "yes" a yes/no column."""
    numbers = tmp_path / "n.csv"
    numbers.write_text("a,y\n1,0\n2,1\n3,0\n4,1\n5,0\n")
    assert load_csv(numbers, "y", positive=1).y.tolist() == [0, 1, 0, 1, 0]
    assert load_csv(numbers, "y", positive=0).y.tolist() == [1, 0, 1, 0, 1]
    flags = tmp_path / "b.csv"
    flags.write_text("a,y\n1,True\n2,False\n3,True\n")
    assert load_csv(flags, "y", positive=False).y.tolist() == [0, 1, 0]
    words = tmp_path / "w.csv"
    words.write_text("a,y\n1,yes\n2,no\n3,yes\n")
    assert load_csv(words, "y", positive="yes").y.tolist() == [1, 0, 1]
    with pytest.raises(DataError, match='quote the value: positive: "no" or "yes"'):
        load_csv(words, "y", positive=True)  # what YAML makes of an unquoted yes


def test_which_quantities_depend_on_the_favourable_label():
    """One predicate: label-symmetric rates (error, accuracy, churn, egregious) do not."""
    from safeclf.guarantees.rate_items import parse_constraints
    from safeclf.guarantees.rates import quantity

    items = [{"rate": r, "max": 0.5} for r in
             ("error", "accuracy", "churn", "egregious", "coverage", "recall", "fpr", "fnr")]
    items += [{"rate": r, "kappa": 0.8} for r in
              ("fairness_ratio", "equal_opportunity", "equalized_odds")]
    items += [{"rate": "fairness_difference", "max": 0.1}]
    depends = {c.kind if hasattr(c, "measure") else c.rate.kind: outcome.depends(quantity(c))
               for c in parse_constraints(items)}
    assert depends == {"error": False, "accuracy": False, "churn": False, "egregious": False,
                       "coverage": True, "recall": True, "fpr": True, "fnr": True,
                       "fairness_ratio": True, "equal_opportunity": True,
                       "equalized_odds": True, "fairness_difference": True}


def test_built_in_datasets_state_their_outcome():
    from safeclf.plugins import registry

    for name, params, positive in (("gaussians", {"mean_pos": [1, 0], "mean_neg": [-1, 0]},
                                    "1"), ("checkerboard", {"n_samples": 100}, "1"),
                                   ("xor", {"n_samples": 100}, "1"),
                                   ("breast_cancer", {}, "benign"),
                                   ("uncertain_synthetic", {"n_samples": 50}, "1"),
                                   ("breast_cancer_intervals", {}, "malignant")):
        ds = registry.get_dataset(name).load(**params)
        assert ds.info["outcome"]["positive"] == positive, name
        assert ds.info["outcome"]["meaning"], name
    assert "outcome" not in registry.get_dataset("iris").load().info  # three classes: none


# -- before anything runs ---------------------------------------------------------------------
def test_words_without_positive_are_refused_and_nothing_is_written(cli, tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "runs"
    result = cli("run", spec, "--out", out)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: datasets[0].params.positive is needed: methods[0].promises[0] "
                     "(fairness_ratio) counts favourable decisions (and 1 more), and the target "
                     "'decision' holds 'approve', 'deny'; say which is favourable "
                     "(positive: approve)"]
    assert not out.exists()  # the run folder is not created
    assert cli("validate", spec).exit_code == 2


# -- named, and the figures follow the declared value -----------------------------------------
@pytest.fixture(scope="module")
def both_ways(tmp_path_factory):
    """The same file run with positive: approve and with positive: deny."""
    from typer.testing import CliRunner

    from safeclf.cli.app import app

    tmp = tmp_path_factory.mktemp("outcome")
    runner = CliRunner()

    def cli(*args):
        return runner.invoke(app, [str(a) for a in args])

    runs = {v: _run(cli, _spec(tmp, f", positive: {v}", f"{v}.yaml"), tmp / v)
            for v in ("approve", "deny")}
    return cli, tmp, runs


def test_statements_name_the_favourable_value(both_ways):
    _, _, runs = both_ways
    for value, run in runs.items():
        promises = pd.read_csv(run / "promises.csv")
        ratio = promises[promises["promise"] == "declared_fairness_ratio"]
        assert (ratio["positive"] == f"decision = {value}").all()
        assert ratio["statement"].str.contains(
            f"s_p(not Male) ≥ 0.8·s_p(Male), s_p = share predicted decision = {value}",
            regex=False).all()
        recall = promises[promises["promise"] == "declared_recall"]
        assert recall["statement"].str.contains(
            f"positives = rows labelled decision = {value}", regex=False).all()
        by_group = pd.read_csv(run / "by_group.csv")
        rates = by_group[by_group["metric"].isin(["positive_rate", "positive_rate ratio"])]
        assert (rates["positive"] == f"decision = {value}").all()
        assert f"decision = {value}" in (run / "report.html").read_text(encoding="utf-8")


def test_swapping_the_labels_swaps_the_figures(both_ways):
    """Under positive: deny each group's test positive rate counts denials: the k of each
    group is n − k of the approve run (logistic regression is symmetric in its labels, so the
    same rows are predicted each way), and the promise's ratio is the one of the denial rates,
    computed here by hand from those counts."""
    _, _, runs = both_ways
    tables = {v: pd.read_csv(r / "by_group.csv", dtype={"group": str}) for v, r in runs.items()}
    rate = {v: t[t["metric"] == "positive_rate"].sort_values(["seed", "group"])
            for v, t in tables.items()}
    a, d = rate["approve"], rate["deny"]
    assert a["group"].tolist() == d["group"].tolist() and len(a) == 4  # 2 seeds × 2 groups
    assert (d["n"].to_numpy() == a["n"].to_numpy()).all()
    assert (d["k"].to_numpy() == a["n"].to_numpy() - a["k"].to_numpy()).all()
    for value, run in runs.items():
        promises = pd.read_csv(run / "promises.csv")
        ratio = promises[promises["promise"] == "declared_fairness_ratio"].sort_values("seed")
        r = rate[value]
        by_hand = [(g.loc[g["group"] == "Female", "k"].item() / g.loc[g["group"] == "Female",
                                                                      "n"].item())
                   / (g.loc[g["group"] == "Male", "k"].item() / g.loc[g["group"] == "Male",
                                                                      "n"].item())
                   for _, g in r.groupby("seed")]
        assert ratio["estimate"].to_numpy() == pytest.approx(by_hand, rel=1e-12)
    # the approve run's ratio is below 1 (men approved more often), the deny run's above
    assert (pd.read_csv(runs["approve"] / "promises.csv").query(
        "promise == 'declared_fairness_ratio'")["estimate"] < 1).all()
    assert (pd.read_csv(runs["deny"] / "promises.csv").query(
        "promise == 'declared_fairness_ratio'")["estimate"] > 1).all()


def test_predict_writes_the_original_label_values(both_ways):
    cli, tmp, runs = both_ways
    run = runs["approve"]
    job = sorted(p.stem for p in (run / "models").glob("*.skops"))[0]
    meta = json.loads((run / "models" / f"{job}.json").read_text())
    assert meta["outcome"]["positive"] == "approve" and meta["outcome"]["encoded"]
    out = tmp / "pred.csv"
    result = cli("predict", run, "--job", job, "--data", tmp / "loans.csv", "--out", out)
    assert result.exit_code == 0, result.output
    pred = pd.read_csv(out)
    assert set(pred["prediction"]) == {"approve", "deny"}
    assert {"proba_approve", "proba_deny"} <= set(pred.columns)
    # the probability column of a value is the probability of predicting it
    assert ((pred["proba_approve"] > 0.5) == (pred["prediction"] == "approve")).all()
    # a model whose metadata predates outcomes writes its classes as they are
    old = tmp / "old"
    (old / "models").mkdir(parents=True)
    (old / "models" / f"{job}.skops").write_bytes((run / "models" / f"{job}.skops").read_bytes())
    (old / "models" / f"{job}.json").write_text(json.dumps(
        {k: v for k, v in meta.items() if k != "outcome"}))
    out_old = tmp / "pred_old.csv"
    assert cli("predict", listed(old, job), "--job", job, "--data", tmp / "loans.csv",
               "--out", out_old).exit_code == 0
    pred_old = pd.read_csv(out_old)
    assert set(pred_old["prediction"]) == {0, 1}
    assert ((pred_old["prediction"] == 1) == (pred["prediction"] == "approve")).all()
    assert {"proba_0", "proba_1"} <= set(pred_old.columns)


# -- item 6: one direction per comparison -----------------------------------------------------
def _even(path: Path, n: int = 400) -> Path:
    """Two groups with the favourable label on exactly half the rows of each."""
    rng = np.random.default_rng(3)
    group = np.repeat(["a", "b"], n // 2)
    x = rng.normal(size=n)
    score = x + rng.normal(size=n)
    y = np.concatenate([(s > np.median(s)).astype(int) for s in np.split(score, 2)])
    pd.DataFrame({"x": x.round(3), "z": rng.normal(size=n).round(3), "g": group,
                  "y": y}).to_csv(path, index=False)
    return path


def test_the_reference_group_is_the_same_on_every_seed(cli, tmp_path):
    """No privileged group declared, two groups whose training splits disagree on which is
    most often positive: the reference is chosen once on all the rows, so every job's
    promise and by-group pair compares in the same direction."""
    from safeclf.execution.job import split_task
    from safeclf.guarantees import groups as G

    data = _even(tmp_path / "even.csv")
    ds = load_csv(data, "y", group="g")
    seeds = range(6)
    entry = {"split": {"test": 0.3}, "name": "even"}
    per_split = {G.fallback(t.train.rows["groups"], t.train.y == 1)
                 for t in (split_task(ds, entry, s, None) for s in seeds)}
    assert per_split == {"a", "b"}  # chosen per split, the direction would flip
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: even
seeds: {len(seeds)}
datasets:
  - dataset: csv
    name: even
    params: {{path: {data}, target: y, group: g}}
    split: {{test: 0.3}}
    preprocess: standardize
methods:
  - method: logreg
    promises: [{{rate: fairness_ratio, min: 0.8}}]
  - method: ramp
    params: {{constraints: [{{rate: fairness_ratio, kappa: 0.8}}], lam: 0.01}}
""")
    run = _run(cli, spec, tmp_path / "runs")
    promises = pd.read_csv(run / "promises.csv")
    assert len(promises) == 2 * len(seeds)
    statements = {s.split(",")[0] for s in promises["statement"]}
    reference = G.references(ds.rows, ds.info, ds.y == 1)["groups"]["group"]
    other = "b" if reference == "a" else "a"
    assert {s.split(": ", 1)[1].removesuffix(" (training data)") for s in statements} == {
        f"s_p(not {reference}) ≥ 0.8·s_p({reference})"}
    by_group = pd.read_csv(run / "by_group.csv", dtype={"group": str})
    pairs = by_group[by_group["metric"].str.endswith(("ratio", "difference"))]
    assert len(pairs) == 2 * len(seeds) * 6  # 3 rates × ratio and difference per job
    assert set(pairs["group"]) == {f"{other} vs {reference}"}
