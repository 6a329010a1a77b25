"""Post-hoc certification counts its rules from sorted scores (issue 37,
safeclf/guarantees/certify/counting.py): the same integers as counting each rule's
predictions row by row, and the same certificate — rule, p-values, every record entry — as
the row-by-row search it replaced, on small data."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.guarantees import declared, trivial
from safeclf.guarantees.certify import threshold as certified
from safeclf.guarantees.certify.path import _rho_range
from safeclf.guarantees.certify.threshold import Part, Rule, _group_rules, search
from safeclf.guarantees.promises import Evidence, rate_evidence
from safeclf.guarantees.promises import sizes as promise_sizes


# -- the row-by-row search, as it was before issue 37 (the reference) ---------------------------
def counts_by_rows(promises, part, rules):
    out = []
    for p in promises:
        evs = [rate_evidence(p.quantity, part.y_pos, r.positive(part), part.rows) for r in rules]
        out.append(tuple(np.array([getattr(e, f) if getattr(e, f) is not None else 0
                                   for e in evs], dtype=float) for f in ("k", "n", "k2", "n2")))
    return out


def errors_by_rows(part, rules):
    return np.array([np.sum(r.positive(part) != part.y_pos) for r in rules], dtype=float)


def sizes_by_rows(promises, part):
    return [promise_sizes(p.quantity, part.y_pos, part.rows) for p in promises]


def threshold_for_rate_by_sorting(score, rate):
    if score.size == 0:
        return np.inf
    k = int(np.ceil(rate * score.size - 1e-9))
    if k <= 0:
        return float(np.max(score))
    s = np.sort(score)[::-1]
    return float(s[k - 1] - 1e-12 * max(1.0, abs(s[k - 1]))) if k <= s.size else -np.inf


def group_rules_by_rows(promises, cand, grid, entry, n_ref=certified.N_REF):
    ups = [p for p in promises if certified._levels_up(p) and p.quantity.groups == entry]
    q = ups[0].quantity
    among = np.ones_like(cand.y_pos) if q.label is None else (
        cand.y_pos if q.label == "positive" else ~cand.y_pos)
    g = np.asarray(cand.rows[entry]).astype(str)
    names = [a for a in np.unique(g) if np.any((g == a) & among)]
    scores = {a: cand.score[(g == a) & among] for a in names}
    kappa = max(min((p.bound if p.quantity.kind == "ratio" else 1.0 - p.bound) for p in ups),
                1e-3)
    hi, lo = _rho_range(promises, entry, kappa)
    rhos = np.geomspace(hi, lo, max(certified.N_RHO_MIN, int(np.ceil(
        np.log(hi / lo) / np.log(certified.RHO_STEP) - 1e-9)) + 1))
    finite = np.flatnonzero(np.isfinite(grid))
    refs = np.unique(finite[np.linspace(0, finite.size - 1, min(n_ref, finite.size)).astype(int)])
    out = []
    for t in grid[refs]:
        t = float(t)
        rates = {a: float(np.mean(scores[a] > t)) for a in names}
        top = max(rates.values(), default=0.0)
        if top <= 0:
            continue
        for rho in rhos:
            per = tuple((str(a), t if rates[a] >= top else
                         min(t, threshold_for_rate_by_sorting(scores[a], rho * top)))
                        for a in names)
            out.append(Rule(t, per, entry))
    return list(dict.fromkeys(out))


def by_rows(monkeypatch):
    monkeypatch.setattr(certified, "_counts", counts_by_rows)
    monkeypatch.setattr(certified, "_errors", errors_by_rows)
    monkeypatch.setattr(certified, "_n_positive", lambda part, rules: np.array(
        [int(np.sum(r.positive(part))) for r in rules]))
    monkeypatch.setattr(certified, "_sizes", sizes_by_rows)
    monkeypatch.setattr(certified, "_group_rules", group_rules_by_rows)


# -- data ----------------------------------------------------------------------------------------
def population(n, seed, groups=("a", "b", "c"), ties=False):
    """Scores, labels and groups (unequal rates); ``ties``: scores on a coarse grid, so that
    many rows share a score and thresholds fall on ties."""
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(groups), size=n, p=np.linspace(2, 1, len(groups)) / np.linspace(
        2, 1, len(groups)).sum())
    y = rng.random(n) < np.where(g == groups[0], 0.4, 0.25)
    score = rng.normal(size=n) + 1.4 * y - 0.4 * (g != groups[0])
    if ties:
        score = np.round(score * 4) / 4
    role = np.where(rng.random(n) < 0.5, "d1", "d2")
    return Part(score, y, {"groups": g, "role": role})


ITEMS = {
    "three groups, worst pair": [{"rate": "fairness_ratio", "min": 0.8, "compare": "worst_pair"}],
    "band": [{"rate": "fairness_ratio", "min": 0.8, "max": 1.25, "privileged": "a"}],
    "equal opportunity": [{"rate": "equal_opportunity", "kappa": 0.8, "privileged": "a"}],
    "difference band": [{"rate": "fairness_difference", "min": -0.1, "max": 0.1,
                         "privileged": "a"}],
    "fpr": [{"rate": "fpr", "max": 0.1}],
    "precision and recall on a subset": [{"rate": "precision", "min": 0.5},
                                         {"rate": "recall", "min": 0.6, "subset": {"role": "d2"}}],
}


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name", sorted(ITEMS))
def test_counts_and_sizes_are_those_of_the_rows(name, ties):
    part = population(1500, 1, ties=ties)
    promises = declared.promises(ITEMS[name], part.y_pos, part.rows)
    grid = certified._grid(np.sort(part.score), 40)
    rules = [Rule(float(t)) for t in grid]
    rules += [Rule(float(t), (("a", float(t)), ("b", float(t) - 0.3), ("c", float(t) - 0.7)))
              for t in grid[1:-1:3]]
    fast, slow = certified._counts(promises, part, rules), counts_by_rows(promises, part, rules)
    for f, s in zip(fast, slow, strict=True):
        for a, b in zip(f, s, strict=True):
            assert a.shape == b.shape == (len(rules),)
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(certified._errors(part, rules), errors_by_rows(part, rules))
    np.testing.assert_array_equal(certified._n_positive(part, rules),
                                  [np.sum(r.positive(part)) for r in rules])
    assert certified._sizes(promises, part) == sizes_by_rows(promises, part)
    assert all(isinstance(e, Evidence) for e in certified._sizes(promises, part))


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name", ["three groups, worst pair", "band", "equal opportunity",
                                  "difference band"])
def test_group_rules_are_those_of_the_rows(name, ties):
    cand = population(2000, 2, ties=ties)
    promises = declared.promises(ITEMS[name], cand.y_pos, cand.rows)
    grid = certified._grid(cand.score, 100)
    fast = _group_rules(promises, cand, grid, "groups")
    assert len(fast) > 50 and fast == group_rules_by_rows(promises, cand, grid, "groups")


@pytest.mark.parametrize("test", ["fixed_sequence", "holm"])
@pytest.mark.parametrize("name", sorted(ITEMS))
def test_the_certificate_is_that_of_the_row_by_row_search(name, test, monkeypatch):
    outcomes = []
    for seed in (3, 4):
        cand, safe = population(3000, seed), population(3000, seed + 100)
        promises = declared.promises(ITEMS[name], cand.y_pos, cand.rows)
        fast = search(promises, cand, safe, 0.05, test=test)
        with monkeypatch.context() as m:
            by_rows(m)
            slow = search(promises, Part(cand.score, cand.y_pos, dict(cand.rows)),
                          Part(safe.score, safe.y_pos, dict(safe.rows)), 0.05, test=test)
        assert fast[0] == slow[0] and fast[1] == slow[1]
        outcomes.append(fast[0] is not None)
    assert any(outcomes)  # the comparison covered a certified rule


def test_a_search_with_no_solution_gives_the_same_reason(monkeypatch):
    cand, safe = population(600, 7), population(80, 8)
    promises = declared.promises([{"rate": "fairness_ratio", "min": 0.95, "max": 1 / 0.95,
                                   "privileged": "a"}], cand.y_pos, cand.rows)
    fast = search(promises, cand, safe, 0.05)
    with monkeypatch.context() as m:
        by_rows(m)
        slow = search(promises, Part(cand.score, cand.y_pos, dict(cand.rows)),
                      Part(safe.score, safe.y_pos, dict(safe.rows)), 0.05)
    assert fast[0] is None and fast == slow and "reason" in fast[1]


def test_degenerate_counts_agree_with_the_predictions():
    rng = np.random.default_rng(0)
    for n in (0, 1, 50, 1000):
        pred = rng.random(n) < rng.choice([0.0, 0.001, 0.5, 0.999, 1.0])
        assert trivial.one_class_counted(int(pred.sum()), n) == trivial.one_class(pred)


def test_the_top_class_of_booleans_is_counted_as_np_unique_gives_it():
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 1000):
        for share in (0.0, 0.5, 0.7, 1.0):
            pred = rng.random(n) < share
            if n == 2 and share == 0.5:
                pred = np.array([True, False])  # a tie
            values, counts = np.unique(pred, return_counts=True)
            i = int(np.argmax(counts))
            got = trivial.top_class(pred)
            assert got == (values[i], float(counts[i] / counts.sum()))
            assert type(got[0]) is type(values[i])


# -- random cases against the straightforward computation (issue 37, the million-row path) ------
def codes_by_sorting(groups):
    return np.unique(np.asarray(groups).astype(str), return_inverse=True)


def find_by_strings(X, groups, at=None):
    """group_encoding.find as it was: np.unique over the group labels of each column value
    (on X cut to the rows ``at`` first)."""
    from safeclf.guarantees.group_encoding import GroupEncoding, _key

    X = X if at is None else X[at]
    groups = np.asarray(groups).astype(str)
    names = np.unique(groups)
    indicators = {}
    for j in range(X.shape[1]):
        col = np.asarray(X[:, j], dtype=float)
        if np.unique(col[:1000]).size > max(names.size, 2):
            continue
        values = np.unique(col)
        if values.size == names.size:
            members = [np.unique(groups[col == v]) for v in values]
            if all(m.size == 1 for m in members):
                return GroupEncoding((j,), {_key([v]): str(m[0]) for v, m in zip(values, members)})
        if values.size == 2:
            for on, off in (values, values[::-1]):
                owner = np.unique(groups[col == on])
                if owner.size == 1 and owner[0] not in indicators \
                        and np.all(col[groups == owner[0]] == on):
                    indicators[owner[0]] = (j, float(on), float(off))
                    break
    if indicators and len(indicators) >= names.size - 1:
        used = [g for g in names if g in indicators]
        lookup = {_key([indicators[h][1] if h == g else indicators[h][2] for h in used]): str(g)
                  for g in names}
        return GroupEncoding(tuple(indicators[g][0] for g in used), lookup)
    return None


def encoding_columns_by_strings(X, groups, at=None):
    X = X if at is None else X[at]
    groups = np.asarray(groups).astype(str)
    names = np.unique(groups)
    out = []
    for j in range(X.shape[1]):
        col = np.asarray(X[:, j], dtype=float)
        values = np.unique(col)
        if values.size < 2:
            continue
        owners = [np.unique(groups[col == v]) for v in values]
        if values.size == names.size and all(o.size == 1 for o in owners):
            out.append(j)
            continue
        if any(o.size == 1 and np.all(col[groups == o[0]] == v) for v, o in zip(values, owners)):
            out.append(j)
    return tuple(out)


def random_table(rng, n, nan=True):
    """Groups (2-5, one of them possibly tiny), labels, a score with or without ties, and
    features: the score's inputs, the groups one-hot or label-encoded (or not at all), a
    0/1 column unrelated to the groups, sometimes a NaN."""
    k = int(rng.integers(2, 6))
    names = np.array(["a", "b", "c", "Other", "10"])[:k]
    share = rng.dirichlet(np.ones(k) * 2)
    g = rng.choice(names, size=n, p=share)
    if rng.random() < 0.25:  # a tiny group: 1-3 rows
        g[g == names[-1]] = names[0]
        g[rng.choice(n, size=int(rng.integers(1, 4)), replace=False)] = names[-1]
    base = rng.uniform(0.2, 0.5, size=k)
    y = rng.random(n) < base[np.searchsorted(names, g, sorter=np.argsort(names))]
    x = rng.normal(size=(n, 2)) + np.outer(y, [1.0, 0.5])
    how = rng.integers(0, 4)  # one-hot, label-encoded, one-hot, not among the features
    enc = ((g[:, None] == names).astype(float) if how == 0 else
           np.searchsorted(np.sort(names), g)[:, None].astype(float) if how == 1 else
           (g[:, None] == names[1:]).astype(float) if how == 2 else np.zeros((n, 0)))
    X = np.c_[x, enc, rng.random(n) < 0.5]
    if nan and rng.random() < 0.2:
        X[rng.integers(0, n), -1] = np.nan
    if rng.random() < 0.5:  # ties: a coarse first feature
        X[:, 0] = np.round(X[:, 0] * 2) / 2
    return X, y.astype(int), g


PROMISE_KINDS = [
    [{"rate": "fairness_ratio", "min": 0.8, "compare": "worst_pair"}],
    [{"rate": "fairness_ratio", "min": 0.7}],
    [{"rate": "fairness_ratio", "min": 0.8, "max": 1.25}],
    [{"rate": "fairness_difference", "max": 0.15}],
    [{"rate": "equal_opportunity", "kappa": 0.7}],
    [{"rate": "fpr", "max": 0.2}],
    [{"rate": "precision", "min": 0.4}, {"rate": "recall", "min": 0.5}],
]


def test_group_codes_and_encodings_are_those_of_the_reference():
    from safeclf.guarantees import group_encoding as GE
    from safeclf.guarantees.groups import codes

    rng = np.random.default_rng(11)
    for trial in range(150):
        X, _, g = random_table(rng, int(rng.integers(5, 400)))
        for labels in (g, np.searchsorted(np.unique(g), g), g.astype(object)):
            names, at = codes(labels)
            ref = codes_by_sorting(labels)
            np.testing.assert_array_equal(names, ref[0])
            np.testing.assert_array_equal(at, ref[1])
        got, ref = GE.find(X, g), find_by_strings(X, g)
        assert (got is None) == (ref is None), trial
        if got is not None:
            assert (got.columns, got.lookup) == (ref.columns, ref.lookup), trial
        assert GE.encoding_columns(X, g) == encoding_columns_by_strings(X, g), trial


def test_random_certificates_are_those_of_the_reference(monkeypatch):
    """The whole post-hoc certification (CertifiedClassifier around a logistic regression)
    against the straightforward computation: every rule counted row by row, groups by
    np.unique, the encoding by comparing labels: the same rule, thresholds, p-values, record
    (equality, not approximate), on random tables of 2-5 groups (tiny ones, ties in the
    scores) under one- and two-sided promises of several rates, both tests."""
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees import group_encoding as GE
    from safeclf.guarantees import groups as G

    certified_any, per_group = 0, 0
    for case in range(2 * len(PROMISE_KINDS)):
        rng = np.random.default_rng(100 + case)
        X, y, g = random_table(rng, int(rng.integers(800, 3000)), nan=False)
        params = dict(promises=PROMISE_KINDS[case % len(PROMISE_KINDS)], delta=0.1,
                      fraction=float(rng.choice([0.3, 0.5])),
                      test=["fixed_sequence", "holm"][case % 2], random_state=case)

        def fit(p=params, X=X, y=y, g=g):
            return certified.CertifiedClassifier(LogisticRegression(), **p).fit(X, y, groups=g)

        fast = fit()
        with monkeypatch.context() as m:
            by_rows(m)
            m.setattr(G, "codes", codes_by_sorting)
            m.setattr(GE, "find", find_by_strings)
            m.setattr(GE, "encoding_columns", encoding_columns_by_strings)
            slow = fit()
        assert fast.rule_ == slow.rule_, case
        assert fast.certificate_ == slow.certificate_, case
        assert fast.reads_group_ == slow.reads_group_, case
        enc = [None if e is None else (e.columns, e.lookup)
               for e in (fast.group_encoding_, slow.group_encoding_)]
        assert enc[0] == enc[1], case
        if fast.rule_ is not None:
            np.testing.assert_array_equal(fast.predict(X), slow.predict(X))
            certified_any += 1
            per_group += bool(fast.rule_.per_group)
    assert certified_any >= 4 and per_group >= 1  # the comparison covered certified rules
