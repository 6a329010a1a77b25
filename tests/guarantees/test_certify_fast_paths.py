"""The million-row certification's shared work (issue 37, item 4, round three) against the
straightforward computation on random small cases: one argsort per part regrouped by group
code (:class:`~safeclf.guarantees.certify.counting.SortedPart`), prefix sums kept per
coefficient array, the grid's quantiles read off sorted scores, and the simulated joint
p-values computed once and read at every level (:func:`~safeclf.guarantees.certify.path.
simulated_p_values`). Every comparison is equality, not a tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.guarantees import bounds as B
from safeclf.guarantees import declared, ltt
from safeclf.guarantees.certify import parts, path
from safeclf.guarantees.certify import threshold as certified
from safeclf.guarantees.certify.counting import SortedPart, by_score
from safeclf.guarantees.certify.threshold import Part, Rule


def small_part(rng, n: int, n_groups: int, ties: bool) -> Part:
    """Scores, labels and groups of ``n`` rows: group sizes as uneven as 0/1 rows
    (``n_groups`` names drawn with very unequal weights), ties when ``ties``."""
    names = np.array([f"g{i}" for i in range(n_groups)])
    w = rng.random(n_groups) ** 4 + 1e-3
    g = rng.choice(names, size=n, p=w / w.sum())
    y = rng.random(n) < 0.4
    score = rng.normal(size=n) + y
    if ties:
        score = np.round(score * 2) / 2
    return Part(score, y, {"groups": g})


def random_rules(rng, part: Part, entry: str | None, k: int = 12) -> list[Rule]:
    cuts = list(rng.choice(np.r_[part.score, -np.inf, np.inf, 0.0], size=k))
    rules = [Rule(float(t)) for t in cuts]
    if entry is not None and part.score.size:
        names = np.unique(part.rows[entry])
        rules += [Rule(float(t), tuple((str(a), float(rng.choice(np.r_[part.score, 0.5])))
                                       for a in names[rng.random(names.size) < 0.7]), entry)
                  for t in cuts]
    return rules


CASES = [(int(n), int(k), bool(t), s) for s, (n, k, t) in enumerate(
    [(0, 1, False), (1, 1, False), (2, 3, True), (7, 4, False), (30, 1, True), (40, 3, True),
     (60, 5, False), (25, 2, True)])]


@pytest.mark.parametrize("n, n_groups, ties, seed", CASES)
@pytest.mark.parametrize("entry", ["groups", None])
def test_sorted_part_is_the_groupwise_sort(n, n_groups, ties, seed, entry):
    """Each group's sorted scores, the row order, every rule's positives, sums and errors are
    those of sorting each group's rows on its own and counting row by row; a second call
    (prefix sums kept) gives the same."""
    rng = np.random.default_rng(seed)
    part = small_part(rng, n, n_groups, ties)
    sp = SortedPart(part, entry)
    g = part.rows["groups"] if entry else np.full(n, "")
    names = np.unique(g) if entry else np.array([""])  # no row: no group of an entry
    assert [str(a) for a in sp.names] == [str(a) for a in names]
    assert sorted(sp.order.tolist()) == list(range(n))
    for i, a in enumerate(names):
        rows = sp.order[sp.starts[i]:sp.starts[i + 1]]
        assert np.all(g[rows] == a)
        assert np.array_equal(sp.ascending[i], np.sort(part.score[g == a]))
        assert np.all(np.diff(part.score[rows]) <= 0)  # descending within the group
    rules = random_rules(rng, part, entry)
    pos = sp.positives(rules)
    preds = [r.positive(part) for r in rules]
    assert pos.sum(axis=1).tolist() == [int(p.sum()) for p in preds]
    coef = rng.integers(-2, 3, size=n).astype(float)
    want = [float(coef[p].sum()) for p in preds]
    assert sp.total(coef, pos).tolist() == want
    assert sp.total(coef, pos).tolist() == want  # the kept prefix sums
    errors = [float(np.sum(p != part.y_pos)) for p in preds]
    assert sp.errors(pos).tolist() == errors
    assert sp.errors(pos).tolist() == errors


def grid_by_quantile(score, n):
    """The grid as it was: midpoints of np.quantile's values (which partition a copy)."""
    q = np.unique(np.quantile(score, np.linspace(0, 1, n + 1)))
    mids = (q[:-1] + q[1:]) / 2 if q.size > 1 else q
    return np.concatenate([[-np.inf], mids, [np.inf]])


@pytest.mark.parametrize("seed", range(6))
def test_the_grid_of_sorted_scores_is_the_grid(seed):
    rng = np.random.default_rng(seed)
    part = small_part(rng, int(rng.integers(1, 500)), 3, ties=bool(seed % 2))
    for k in (5, 40, 100):
        assert np.array_equal(path._grid(part.score[by_score(part)], k),
                              grid_by_quantile(part.score, k))


@pytest.mark.parametrize("seed", range(8))
def test_sorted_quantiles_are_numpys_floats(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 2000))
    score = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6)
    if seed % 2:  # ties, and infinite scores at the ends
        score = np.r_[np.round(score, 1), [-np.inf, np.inf] * (seed % 4 == 1)]
    qs = np.sort(np.r_[rng.random(int(rng.integers(1, 300))), 0.0, 0.5, 1.0])
    with np.errstate(invalid="ignore"):
        want = np.quantile(score, qs)
    np.testing.assert_array_equal(path.sorted_quantiles(np.sort(score), qs), want)


def pass_probabilities_by_level(promises, counts, sizes, level, bnd, draws=path.PASS_DRAWS,
                                seed=0, joint=None):
    """The pass probabilities as computed before round three: each promise tested by
    ``ltt.rejects`` at ``level`` on the simulated held-back counts (``path._draws``, unchanged
    by that round), ``joint`` ignored."""
    passed = None
    for p, drawn, s in path._draws(promises, counts, sizes, draws, seed):
        ok = ltt.rejects(p, drawn[0], s.n, drawn[1], s.n2 or 0, level, bnd, predict=True)
        passed = ok if passed is None else passed & ok
    return passed.mean(axis=1)


ITEMS = [
    [{"rate": "fairness_ratio", "min": 0.8, "compare": "worst_pair"}],
    [{"rate": "fairness_ratio", "min": 0.8, "max": 1.25}],
    [{"rate": "fairness_difference", "max": 0.15}],
    [{"rate": "fpr", "max": 0.2}],
    [{"rate": "precision", "min": 0.4}, {"rate": "recall", "min": 0.5}],
]


@pytest.mark.parametrize("bound", ["clopper_pearson", "hoeffding"])
@pytest.mark.parametrize("case", range(len(ITEMS)))
def test_pass_probabilities_read_off_one_simulation(case, bound, monkeypatch):
    """At every level and on every subset of rules (what with_fallback asks for), the pass
    probabilities read off the simulated joint p-values equal a fresh simulation tested
    promise by promise; so does the path with_fallback returns."""
    rng = np.random.default_rng(case)
    part = small_part(rng, int(rng.integers(60, 400)), int(rng.integers(1, 4)), ties=True)
    promises = declared.promises(ITEMS[case], part.y_pos, part.rows)
    rules = [Rule(float(t)) for t in path._grid(part.score, 30)]
    counts = certified._counts(promises, part, rules)
    sizes = certified.predicted_sizes(promises, part, int(rng.integers(20, 2000)))
    bnd = B.get(bound)
    joint = path.simulated_p_values(promises, counts, sizes, bnd)
    assert (joint is None) == (bound == "hoeffding" and case < 3)  # the union test decides
    subset = np.flatnonzero(rng.random(len(rules)) < 0.5)
    sub = [tuple(np.asarray(a)[subset] for a in c) for c in counts]
    for level in (0.5, 0.05, 0.05 * 1e-3, 1e-9):
        want = pass_probabilities_by_level(promises, counts, sizes, level, bnd)
        assert np.array_equal(path.pass_probabilities(promises, counts, sizes, level, bnd,
                                                      joint=joint), want)
        assert np.array_equal(path.pass_probabilities(promises, counts, sizes, level, bnd),
                              want)
        assert np.array_equal(path.pass_probabilities(
            promises, sub, sizes, level, bnd, joint=None if joint is None else joint[subset]),
            want[subset])
    prob = path.pass_probabilities(promises, counts, sizes, 0.05, bnd, joint=joint)
    errors = list(rng.random(len(rules)))
    usable = list(range(len(rules)))
    order = path._front(prob, errors)
    fast = path.with_fallback(order, usable, prob, errors, promises, counts, sizes, 0.05, bnd,
                              joint)
    monkeypatch.setattr(path, "pass_probabilities", pass_probabilities_by_level)
    slow = path.with_fallback(order, usable, prob, errors, promises, counts, sizes, 0.05, bnd,
                              joint)
    assert fast == slow


@pytest.mark.parametrize("case", range(4))
def test_a_threaded_certification_is_the_one_in_a_row(monkeypatch, case):
    """The held-back part and the search for the group's columns computed in a helper thread
    (a large table) give the certificate, rule and encoding of the same steps in one thread:
    one-hot groups, a label-encoded group column, no column encoding the group, group-blind."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(case)
    n = 3000
    names = np.array(["a", "b", "c"])
    g = rng.choice(names, size=n, p=[0.5, 0.3, 0.2])
    y = (rng.random(n) < np.select([g == v for v in names], [0.5, 0.3, 0.4])).astype(int)
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None]
    X = [np.c_[X, g[:, None] == names], np.c_[X, np.searchsorted(names, g)], X,
         np.c_[X, g[:, None] == names]][case].astype(float)
    item = [{"rate": "fairness_ratio", "min": 0.8, "compare": "worst_pair"}]

    def fit(threaded_from):
        monkeypatch.setattr(parts, "THREADED_ROWS", threaded_from)
        return certified.CertifiedClassifier(LogisticRegression(), item, delta=0.1,
                                             group_blind=case == 3,
                                             random_state=case).fit(X, y, groups=g)

    one, two = fit(10 ** 12), fit(0)
    assert one.rule_ == two.rule_
    assert one.certificate_ == two.certificate_
    enc = [None if e is None else (e.columns, e.lookup)
           for e in (one.group_encoding_, two.group_encoding_)]
    assert enc[0] == enc[1]
    assert (one.group_encoding_ is not None) == (case in (0, 1))


@pytest.mark.parametrize("seed", range(4))
def test_rows_in_order_are_the_sorted_rows(seed):
    """The parts' rows put in stored order by a mask are ``np.sort`` of them: a split's
    distinct positions, and positions given with repeats (each repeat kept)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    distinct = rng.permutation(n)[: int(rng.integers(0, n + 1))]
    repeated = rng.integers(0, n, size=int(rng.integers(1, 2 * n + 1)))
    for idx in (distinct, repeated):
        np.testing.assert_array_equal(certified._in_order(idx, n), np.sort(idx))
