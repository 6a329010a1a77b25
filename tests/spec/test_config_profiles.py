"""Every config's ci profile checks what the full config checks, or says why not (issue 21):
``make test`` runs each config with ``--profile ci --check``, ``make reproduce`` in full, and
an expectation that passes in CI only by the luck of a smaller run is a table not reproduced."""

from __future__ import annotations

from pathlib import Path

import pytest

from safeclf.errors import SpecError
from safeclf.spec.check import check_sources, parse
from safeclf.spec.yaml import OMITTED, apply_profile, read_yaml

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_each_full_expectation_is_in_the_ci_profile_or_named_there_with_its_reason(path):
    raw = read_yaml(path)
    assert "ci" in (raw.get("profiles") or {}), f"{path.name} has no ci profile"
    full = apply_profile(raw, None).get("expect") or []
    ci = apply_profile(raw, "ci").get("expect") or []
    reasons = raw["profiles"]["ci"].get(OMITTED) or {}
    parse(raw)  # the reasons' structure is the spec schema's
    missing = [f"expect[{i}]" for i, e in enumerate(full) if e not in ci]
    unexplained = [k for k in missing if k not in reasons]
    assert not unexplained, f"{path.name}: the ci profile leaves out {unexplained} without a reason"
    stale = sorted(set(reasons) - set(missing))
    assert not stale, f"{path.name}: profiles.ci.{OMITTED} names {stale}, which ci checks"


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
@pytest.mark.parametrize("profile", [None, "ci"])
def test_every_expectation_says_where_its_reference_comes_from(path, profile):
    # issue 34: paper, figure (two-sided), report, project or invariant; the schema checks
    # the kinds and where, check_sources that none is left out
    spec = parse(apply_profile(read_yaml(path), profile))
    check_sources(spec)
    assert all(e.source is not None for e in spec.expect)


def test_omitted_reasons_are_validated_by_the_spec_schema():
    base = {"name": "x", "datasets": [{"dataset": "iris"}], "methods": [{"method": "svm"}],
            "expect": [{"metric": "test_error", "<=": 0.5}]}
    ok = {**base, "profiles": {"ci": {"expect": [], OMITTED: {"expect[0]": "too slow"}}}}
    assert apply_profile(ok, "ci")["expect"] == []
    assert OMITTED not in apply_profile(ok, "ci")  # not merged into the spec
    parse(apply_profile(ok, "ci"))
    for bad in ({"expect0": "why"}, {"expect[0]": ""}, ["expect[0]"]):
        with pytest.raises(SpecError, match=OMITTED):
            parse({**base, "profiles": {"ci": {OMITTED: bad}}})
