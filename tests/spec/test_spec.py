"""Spec parsing details: profiles, grids, expansion, labels, the README example, the schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from safeclf.errors import SpecError
from safeclf.spec.check import load_spec, parse
from safeclf.spec.expand import expand, grid_points
from safeclf.spec.yaml import apply_profile

ROOT = Path(__file__).resolve().parents[2]


def test_grid_expansion_is_a_product_in_stable_order():
    points = grid_points({"C": {"grid": [1, 2]}, "kernel": "rbf", "gamma": {"grid": [0.1, 0.2, 0.3]}}, "p")
    assert len(points) == 6
    assert points[0] == {"kernel": "rbf", "C": 1, "gamma": 0.1}
    assert points[-1] == {"kernel": "rbf", "C": 2, "gamma": 0.3}


def test_grid_with_extra_keys_is_rejected():
    with pytest.raises(SpecError, match=r"p.C: a grid takes only the key 'grid'"):
        grid_points({"C": {"grid": [1], "step": 2}}, "p")


def test_profile_patches_items_by_label_and_replaces_lists():
    data = {
        "name": "x", "seeds": 5,
        "datasets": [{"dataset": "iris"}, {"dataset": "wine", "params": {"features": [0, 1]}}],
        "methods": [{"method": "svm", "name": "lin", "params": {"C": {"grid": [1, 2, 3]}}}],
        "profiles": {"ci": {"seeds": 1, "methods": {"lin": {"params": {"C": {"grid": [1]}}}},
                            "datasets": {"wine": {"params": {"features": [0]}}}}},
    }
    out = apply_profile(data, "ci")
    assert out["seeds"] == 1
    assert out["methods"][0]["params"]["C"] == {"grid": [1]}
    assert out["datasets"][1]["params"]["features"] == [0]
    assert data["seeds"] == 5, "the original is left alone"
    dropped = apply_profile(dict(data, profiles={"ci": {"datasets": {"wine": None}}}), "ci")
    assert [d["dataset"] for d in dropped["datasets"]] == ["iris"]
    with pytest.raises(SpecError, match="no method labelled 'linn'"):
        apply_profile(dict(data, profiles={"ci": {"methods": {"linn": {}}}}), "ci")


def test_expansion_counts_and_ids(write_spec):
    path = write_spec("""
        name: x
        seeds: [3, 4]
        datasets:
          - {dataset: iris, split: {folds: 3}}
          - {dataset: wine}
        methods:
          - {method: svm, params: {C: {grid: [0.5, 1.0]}}}
          - {method: logreg}
        """)
    spec = load_spec(path)
    jobs = expand(spec)
    assert len(jobs) == 2 * 3 * 3 + 2 * 1 * 3
    assert len({j.id for j in jobs}) == len(jobs)
    assert [j.id for j in jobs] == [j.id for j in expand(load_spec(path))]
    assert {j.fold for j in jobs if j.dataset == "iris"} == {0, 1, 2}


def test_split_defaults_and_exclusive_kinds():
    spec = parse({"name": "x", "datasets": [{"dataset": "iris"}], "methods": [{"method": "svm"}]})
    assert spec.datasets[0].split.test == 0.3
    with pytest.raises(SpecError, match="give only one of test, folds, predefined"):
        parse({"name": "x", "datasets": [{"dataset": "iris", "split": {"test": 0.2, "folds": 3}}],
               "methods": [{"method": "svm"}]})


def test_resolved_spec_round_trips():
    spec = parse({"name": "x", "seeds": 2, "datasets": [{"dataset": "iris"}],
                  "methods": [{"method": "svm", "params": {"C": {"grid": [1, 2]}}}],
                  "expect": [{"metric": "test_error", "<=": 0.2}]})
    again = parse(spec.resolved())
    assert again.resolved() == spec.resolved()
    assert spec.resolved()["seeds"] == [0, 1] and spec.resolved()["methods"][0]["name"] == "svm"
    assert again.expect[0].condition == ("<=", 0.2)


def test_readme_example_is_a_valid_spec(tmp_path):
    text = (ROOT / "README.md").read_text()
    example = re.search(r"```yaml\n(name: quickstart.*?)```", text, re.S).group(1)
    path = tmp_path / "readme.yaml"
    path.write_text(example)
    spec = load_spec(path)
    assert len(expand(spec)) == 3 * 2 * 3


def test_every_config_validates_with_and_without_ci_profile():
    """The CI profile needs nothing beyond the dev install; a full config may name a reference
    package of the bench extra (make reproduce installs it), and then that is its only error."""
    configs = sorted((ROOT / "configs").glob("*.yaml"))
    assert configs, "configs/ must hold the quickstart and the papers' specs"
    for path in configs:
        load_spec(path, "ci")
        try:
            load_spec(path)
        except SpecError as exc:
            assert "install the bench extra" in str(exc), f"{path.name}: {exc}"


def test_schema_lists_the_top_level_fields(cli):
    import json

    result = cli("schema")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert {"name", "datasets", "methods", "seeds", "expect", "profiles"} <= set(schema["properties"])


def test_method_restricted_to_some_datasets(write_spec):
    path = write_spec("""
        name: x
        seeds: 2
        datasets: [{dataset: iris}, {dataset: wine}]
        methods:
          - {method: svm, datasets: [wine]}
          - {method: logreg}
        """)
    jobs = expand(load_spec(path))
    assert sorted((j.dataset, j.method) for j in jobs if j.seed == 0) == [
        ("iris", "logreg"), ("wine", "logreg"), ("wine", "svm")]
    bad = write_spec(path.read_text().replace("datasets: [wine]}", "datasets: [wien]}"), "bad.yaml")
    with pytest.raises(SpecError, match=r"methods\[0\].datasets\[0\]: no dataset labelled 'wien' "
                                        r"\(did you mean 'wine'\?\)"):
        load_spec(bad)


def test_needs_may_depend_on_parameters(write_spec, tmp_path):
    """A plugin's needs_for(params) decides what the preflight demands."""
    from safeclf.errors import SpecError as Err
    from safeclf.execution.runner import preflight
    from safeclf.plugins import registry

    plugin = registry.get_method("mcsvm")
    assert plugin.needs_for({"calibration": "none"}) == ()
    assert plugin.needs_for({}) == ("calibration",)
    base = """
        name: x
        datasets: [{dataset: breast_cancer}]
        methods: [{method: mcsvm, params: {calibration: CAL}}]
        """
    preflight(load_spec(write_spec(base.replace("CAL", "none"), "a.yaml")))
    with pytest.raises(Err, match=r"methods\[0\] \(mcsvm\) on datasets\[0\] \(breast_cancer\) "
                                  r"needs a calibration set"):
        preflight(load_spec(write_spec(base.replace("CAL", "conformal"), "b.yaml")))


# --------------------------------------------------------------------------------------------
# command-line overrides (Hydra style)

OVERRIDE_BASE = {"name": "x", "seeds": 2, "datasets": [{"dataset": "iris"}],
                 "methods": [{"method": "svm", "params": {"C": 1.0}}, {"method": "logreg"}]}


def test_overrides_set_typed_values_at_dotted_paths():
    from safeclf.spec.yaml import apply_overrides

    out = apply_overrides(OVERRIDE_BASE, ["seeds=1", "methods[0].params.C=10",
                                          "methods[1].params.C={grid: [0.1, 1]}",
                                          "datasets[0].split.test=0.25", "methods[-1].name=lr",
                                          "description=a b: c'", "~methods[0].params.C"])
    assert out["seeds"] == 1 and isinstance(out["seeds"], int)
    assert out["methods"][0]["params"] == {}
    assert out["methods"][1] == {"method": "logreg", "name": "lr", "params": {"C": {"grid": [0.1, 1]}}}
    assert out["datasets"][0]["split"] == {"test": 0.25}
    assert OVERRIDE_BASE["seeds"] == 2, "the input is not modified"


@pytest.mark.parametrize("override, message", [
    ("seeds", "write key=value"),
    ("methods[5].params.C=1", "methods has 2 items, no index 5"),
    ("seeds[0]=1", "seeds is not a list"),
    ("~metrcs", "metrcs is not in the spec"),
    ("methods..C=1", "'' is not a key"),
    ("seeds=[1", "malformed YAML"),
    ("seeds=a: b: c", "malformed YAML"),
])
def test_override_problems_name_the_override(override, message):
    from safeclf.errors import SpecError
    from safeclf.spec.yaml import apply_overrides

    with pytest.raises(SpecError, match=re.escape(message)) as info:
        apply_overrides(OVERRIDE_BASE, [override])
    assert "\n" not in str(info.value)


def test_overrides_on_the_command_line_are_validated_and_recorded(cli, tiny_spec, tmp_path):
    import json

    bad = cli("run", tiny_spec, "methods[0].params.C=-1", "--out", tmp_path / "bad")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == ("error: methods[0].params.C must be a float in the range "
                                  "(0.0, inf), got -1")
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "seeds=1", "methods[0].params.C=10", "--profile", "ci",
                 "--out", out, "-j", "1")
    assert result.exit_code == 0, result.output
    run_dir = next(out.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["overrides"] == ["seeds=1", "methods[0].params.C=10"]
    import yaml

    stored = yaml.safe_load((run_dir / "spec.yaml").read_text())
    assert stored["seeds"] == [0] and stored["methods"][0]["params"] == {"C": 10}
    listed = cli("validate", tiny_spec, "seeds=3", "--profile", "ci")
    assert "valid; 12 jobs" in listed.stdout


@pytest.mark.parametrize("text, message", [
    ("name: x\x01\n", r"character U\+0001 at line 1, column 8 is not allowed in YAML"),
    ("a:\n  - \x7f\n", r"character U\+007F at line 2, column 5"),
    ("a: " + "[" * 3000 + "]" * 3000 + "\n", "nests lists or mappings too deeply"),
    ("a: " + "{b: " * 3000 + "1" + "}" * 3000 + "\n", "nests lists or mappings too deeply"),
])
def test_yaml_the_reader_refuses_is_one_spec_error(text, message):
    from safeclf.errors import SpecError
    from safeclf.spec.yaml import parse_yaml

    with pytest.raises(SpecError, match=message):
        parse_yaml(text, "s.yaml")


@pytest.mark.parametrize("profiles, message", [
    (3, "profiles must be a mapping of profile names to changes, got 3"),
    (["ci"], r"profiles must be a mapping of profile names to changes, got \['ci'\]"),
    ({"ci": 3}, "profiles.ci must be a mapping, got 3"),
    ({"ci": {"methods": {"svm": 3}}},
     r"profiles.ci.methods.svm must be a mapping of changes to that method \(or null"),
    ({}, r"no profile 'ci' \(the spec defines none\)$"),
    ({"cj": {}}, r"no profile 'ci' \(did you mean 'cj'\?\)$"),
])
def test_profiles_of_the_wrong_shape(profiles, message):
    from safeclf.errors import SpecError
    from safeclf.spec.yaml import apply_profile

    data = {"name": "x", "methods": [{"method": "svm"}], "profiles": profiles}
    with pytest.raises(SpecError, match=message):
        apply_profile(data, "ci")


def test_closest_never_suggests_the_name_given():
    from safeclf.errors import closest

    assert closest("ci", ["ci"]) == ""
    assert closest("ci", ["ci", "cj"]) == " (did you mean 'cj'?)"


@pytest.mark.parametrize("word, expected", [
    ("seeds=2", True), ("methods[0].params.C=10", True), ("~seeds", True),
    ("datasets[0].params.path=data/x.csv", True), ("spec.yaml", False),
    ("configs/quickstart.yaml", False), ("a b=1", False),
])
def test_override_words_are_told_from_spec_files(word, expected):
    from safeclf.spec.yaml import looks_like_override

    assert looks_like_override(word) is expected


NAMES_SPEC = """
name: names
seeds: 1
datasets:
  - {dataset: csv, params: {path: DATA, target: y, group: g, privileged: M},
     split: {test: 0.3, calibration: 0.3}}
  - {dataset: csv, name: grouped, params: {path: DATA, target: y, group: g, privileged: M,
                                             group_as_feature: true}}
  - {dataset: uncertain_synthetic}
  - {dataset: breast_cancer, preprocess: standardize}
methods:
  - {method: ramp, datasets: [csv], params: {constraints: [{rate: fairness_ratio, kappa: 0.8}],
     monitor: [{rate: error, name: err}], lam: 0.1}}
  - {method: zafar, datasets: [csv], params: {c: 0.1}}
  - {method: group_thresholds, datasets: [grouped]}
  - {method: thresholded_svm, datasets: [csv], params: {recall_min: 0.5,
     report: [{rate: fairness_ratio, kappa: 0.8}], monitor: [{rate: error, name: e2}]}}
  - {method: mcsvm, datasets: [csv]}
  - {method: mcsvm, name: conformal, datasets: [csv], params: {calibration: conformal}}
  - {method: proset, datasets: [breast_cancer], params: {n_candidates: 50}}
  - {method: robust_socp, datasets: [uncertain_synthetic]}
  - {method: budgeted_selection, datasets: [breast_cancer],
     params: {budget: 10, classes: [{method: logreg, features: [5, 30], incremental: refit}]}}
  - {method: svm, datasets: [breast_cancer]}
  - {method: sgd, datasets: [breast_cancer]}
  - {method: logreg, datasets: [breast_cancer]}
  - {method: report_knn, datasets: [breast_cancer], params: {k_max: 10, cv: 3}}
XGB
metrics: [error, fairness_ratio]
"""
#: report_xgboost needs xgboost, the bench extra's (without it: refused at validate, tested in
#: tests/methods/test_proset_peers.py)
XGB_ENTRY = ("  - {method: report_xgboost, datasets: [breast_cancer], "
             "params: {n_trials: 2, n_trees: 10, cv: 3}}")


def test_declared_metric_and_promise_names_cover_what_jobs_report(write_spec, tmp_path):
    """Every built-in plugin declares its metric and promise names before fitting
    (safeclf.spec.check.reported_metrics is never None), and every column a job of it reports
    matches a declared name: an expectation on a reported column is never refused."""
    import fnmatch
    import importlib.util

    import numpy as np
    from group_data import two_groups

    from safeclf.execution.job import run_job
    from safeclf.execution.runner import payloads
    from safeclf.plugins import registry
    from safeclf.spec.check import load_spec, reported_metrics
    from safeclf.spec.expand import expand

    X, y, g = two_groups(400, 0)
    data = tmp_path / "groups.csv"
    data.write_text("a,b,c,g,y\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{gi},{yi}\n"
                                           for r, gi, yi in zip(X, g, y, strict=True)))
    has_xgb = importlib.util.find_spec("xgboost") is not None
    spec = load_spec(write_spec(NAMES_SPEC.replace("DATA", str(data)).replace(
        "XGB\n", XGB_ENTRY + "\n" if has_xgb else "")))
    for name in registry.method_names():
        plugin = registry.get_method(name)
        assert plugin.metric_names({}) is not None and plugin.promise_names({}) is not None, name
    declared = {i: reported_metrics(spec, i) for i in range(len(spec.methods))}
    covered = set()
    for payload, job in zip(payloads(spec, expand(spec)), expand(spec), strict=True):
        result = run_job(payload)
        assert result.status.value == "ok", (job.method, result.error)
        names = [*result.metrics, *(f"promise_{p['promise']}_estimate" for p in result.promises
                                    if p["kind"] != "none")]
        for metric in names:
            assert any(fnmatch.fnmatchcase(metric, k) for k in declared[job.method_index]), \
                (job.method, metric)
        covered.add(spec.methods[job.method_index].method)
    assert covered == set(registry.method_names()) - {"fairlearn_eg"} - (
        set() if has_xgb else {"report_xgboost"})
    assert np.unique(g).size == 2


@pytest.mark.parametrize("style", ["flow lists", "flow mappings", "block mappings",
                                   "block lists"])
def test_yaml_nesting_is_read_to_its_limit_and_refused_past_it(style):
    from safeclf.spec.yaml import MAX_YAML_DEPTH, parse_yaml

    def nested(levels: int) -> str:  # `levels` collections inside each other, under key a
        if style == "flow lists":
            return "a: " + "[" * levels + "]" * levels
        if style == "flow mappings":
            return "a: " + "{b: " * (levels - 1) + "{}" + "}" * (levels - 1)
        if style == "block mappings":
            return "a:\n" + "".join(" " * i + "b:\n" for i in range(1, levels)) + " " * levels + "c: 1\n"
        return "a:\n" + "".join(" " * i + "-\n" for i in range(1, levels)) + " " * levels + "- 1\n"

    def depth(value) -> int:
        return 1 + max((depth(v) for v in (value.values() if isinstance(value, dict) else value)),
                       default=0) if isinstance(value, (dict, list)) else 0

    top = MAX_YAML_DEPTH - 1  # the document's own mapping is one level
    assert depth(parse_yaml(nested(top), "spec")) == MAX_YAML_DEPTH
    with pytest.raises(SpecError, match="nests lists or mappings too deeply"):
        parse_yaml(nested(top + 1), "spec")
