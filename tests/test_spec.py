"""Spec parsing details: profiles, grids, expansion, labels, the README example, the schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from safeclf.errors import SpecError
from safeclf.spec import apply_profile, expand, grid_points, load_spec, parse

ROOT = Path(__file__).resolve().parents[1]


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
    from safeclf import registry
    from safeclf.errors import SpecError as Err
    from safeclf.runner import preflight

    plugin = registry.get_method("mcsvm")
    assert plugin.needs_for({"calibration": "none"}) == ()
    assert plugin.needs_for({}) == ("calibration",)
    base = """
        name: x
        datasets: [{dataset: breast_cancer}]
        methods: [{method: mcsvm, params: {calibration: CAL}}]
        """
    preflight(load_spec(write_spec(base.replace("CAL", "none"), "a.yaml")))
    with pytest.raises(Err, match=r"methods\[0\] \(mcsvm\) needs a calibration set"):
        preflight(load_spec(write_spec(base.replace("CAL", "conformal"), "b.yaml")))
