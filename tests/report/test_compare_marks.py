"""compare for a reader (issue 23, item 6): runs labelled by their short names, certified
methods marked, long parameter lists abbreviated; the same in compare --promises."""

from __future__ import annotations

import json
from io import StringIO

import pandas as pd
import yaml

from safeclf.guarantees import promises as P


def _run(folder, name, start, certify_delta=None, constraints_kappa=(0.5, 0.8)):
    """A finished run folder written by hand: ramp (a grid over long constraint lists and
    lam) and a certified ramp, two seeds, with its promises."""
    from safeclf.report import verdicts as promise_report

    folder.mkdir(parents=True)
    methods = [{"method": "ramp", "name": "ramp"},
               {"method": "ramp", "name": "ramp_certified",
                **({"certify": {"delta": certify_delta, "fraction": 0.3}}
                   if certify_delta is not None else {})}]
    (folder / "spec.yaml").write_text(yaml.safe_dump({"name": name, "methods": methods}))
    (folder / "manifest.json").write_text(json.dumps({"start": start}))
    rows, results = [], []
    for method in ("ramp", "ramp_certified"):
        for kappa in constraints_kappa if method == "ramp" else (0.8,):
            params = {"constraints": [{"rate": "fairness_ratio", "kappa": kappa,
                                       "privileged": "Male", "groups": "groups"}],
                      "lam": kappa / 10, "kappa": kappa, "max_mm_iter": int(kappa * 100),
                      "mm_tol": kappa / 1000}
            for seed in (0, 1):
                job = f"{method}{kappa}{seed}"
                rows.append({"job": job, "dataset": "adult", "method": method,
                             "params": json.dumps(params, sort_keys=True), "seed": seed,
                             "fold": None, "status": "ok", "error": None,
                             "test_error": 0.2 + seed / 100})
                promise = P.Promise("fairness", "ratio ≥ 0.8", P.Quantity(), ">=", 0.8,
                                    "high_confidence" if method == "ramp_certified"
                                    else "training", "x")
                results.append({"id": job, "dataset": "adult", "method": method,
                                "params": params, "seed": seed, "fold": None, "status": "ok",
                                "promises": [P.judge(promise, P.Evidence(90, 100), 0.95)
                                             .record()]})
    pd.DataFrame(rows).to_csv(folder / "metrics.csv", index=False)
    frame = promise_report.promises_frame(results)
    promise_report.write_tables(folder, frame)
    promise_report.write_plot(folder, frame)
    return folder


def test_compare_labels_runs_marks_certified_methods_and_shortens_parameters(tmp_path, cli):
    a = _run(tmp_path / "20261126-101500-fair", "fair", "2026-11-26T10:15:00+0000", 0.05)
    b = _run(tmp_path / "20261126-113000-fair-again", "fair", "2026-11-26T11:30:00+0000")
    result = cli("compare", a, b, "--format", "csv")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(StringIO(result.stdout))
    # short names head the columns: the spec's name and the start time, not the folders
    assert {"fair 10:15", "fair 11:30", "Δ fair 11:30"} <= set(table.columns)
    # a method certified in the first run only is marked, and says in which run
    assert set(table["method"]) == {"ramp", "ramp_certified ✓ certified (δ=0.05) in [1]"}
    # five varying parameters: three shown, each value cut, the rest counted
    shown = table.loc[table["method"] == "ramp", "params"].tolist()
    assert len(shown) == 2 and all(s.endswith(", … (+2 more)") for s in shown), shown
    assert all(len(s) < 120 for s in shown) and any("…" in s.split(", … ")[0] for s in shown)
    both = cli("compare", a, a, "--format", "markdown")
    assert "ramp_certified ✓ certified (δ=0.05) |" in both.stdout  # in every run: no "in"
    assert "[2] fair 10:15 #2:" in both.stdout


def test_compare_promises_uses_the_same_short_names_and_marks(tmp_path, cli):
    a = _run(tmp_path / "20261126-101500-fair", "fair", "2026-11-26T10:15:00+0000", 0.05)
    b = _run(tmp_path / "20261126-113000-other", "other", "2026-11-26T11:30:00+0000", 0.05,
             constraints_kappa=(0.8,))
    result = cli("compare", a, b, "--promises", "--format", "csv")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(StringIO(result.stdout), keep_default_na=False)
    assert {"fair 10:15 verdicts", "other 11:30 failure"} <= set(table.columns)
    certified = table[table["method"].str.startswith("ramp_certified")]
    assert set(certified["method"]) == {"ramp_certified ✓ certified (δ=0.05)"}
    # a row one run does not have is empty there, not NaN
    # rows align on the whole model: ramp at κ = 0.8 is in both runs, κ = 0.5 in the first
    # only, and that row is empty in the second run, not NaN
    ramp = table[table["method"] == "ramp"].set_index("params")
    assert len(ramp) == 2 and all(p.startswith("constraints=") for p in ramp.index)
    both = ramp[ramp["other 11:30 verdicts"] != ""]
    only_a = ramp[ramp["other 11:30 verdicts"] == ""]
    assert len(both) == 1 and "kappa=0.8" in both.index[0] and "kappa=0.5" in only_a.index[0]
    assert set(ramp["fair 10:15 verdicts"]) == {"holds 2"}
    assert "nan" not in result.stdout.lower()
