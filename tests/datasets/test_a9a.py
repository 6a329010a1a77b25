"""The a9a encoding of UCI Adult (safeclf/datasets/a9a.py): 123 binary features, the documented
derivation, and a published a1a row."""

import numpy as np
import pytest

from safeclf.datasets import a9a
from safeclf.datasets.adult import _frames, load_adult, project_data_dir


@pytest.fixture(scope="module")
def adult():
    return load_adult(encoding="a9a")


def test_123_binary_features_with_a9a_class_balance(adult):
    X, y, split = adult.X, adult.y, adult.rows["split"]
    assert X.shape == (48842, 123) and len(adult.info["feature_names"]) == 123
    assert set(np.unique(X)) == {0.0, 1.0}
    train, test = split == "train", split == "test"
    assert (train.sum(), test.sum()) == (32561, 16281)
    # a9a: 24.1 % positive in training (7,841 rows), 23.6 % in test (3,846)
    assert (int(y[train].sum()), int(y[test].sum())) == (7841, 3846)
    # one feature per attribute at most (a missing '?' sets none): at most 14 ones, and a9a's
    # sparsity, 11.3 % of the training matrix
    ones = X.sum(axis=1)
    assert ones.max() == 14 and ones.min() >= 11
    assert abs(X[train].mean() - 0.113) < 0.0005
    # a9a.t lacks its last feature (Holand-Netherlands occurs in training only)
    present = X[test].sum(axis=0) > 0
    assert np.flatnonzero(~present).tolist() == [122]


def test_each_attribute_is_one_hot_where_known(adult):
    names = adult.info["feature_names"]
    start = 0
    for a in a9a.ATTRIBUTES:
        width = len(a9a._names(a))
        block = adult.X[:, start:start + width]
        assert block.sum(axis=1).max() == 1, a
        assert all(n.startswith(a) or a in n for n in names[start:start + width])
        start += width
    assert start == 123


def test_cuts_are_the_documented_derivation_on_the_training_rows():
    train, _ = _frames(str(project_data_dir() / "adult"))
    for a, cuts in a9a.CUTS.items():
        assert a9a.quintile_cuts(train[a]) == [float(c) for c in cuts], a
    widths = [len(a9a._names(a)) for a in a9a.CUTS]
    assert widths == [5, 5, 5, 2, 2, 5]  # 24 = 123 - 99 categories


def test_quintile_cuts_on_ties_and_a_mass_at_zero():
    # a plain quantile ties (cuts 2, 2, 3, 4 leave an empty bin); the closest-share rule does not
    v = np.r_[np.ones(10), np.full(40, 2), np.full(20, 3), np.full(20, 4), np.full(10, 5)]
    cuts = a9a.quintile_cuts(v)
    assert cuts == [1.0, 2.0, 3.0, 4.0]
    counts = np.bincount(np.searchsorted(cuts, v, side="left"), minlength=5)
    assert counts.min() > 0
    assert a9a.quintile_cuts(np.r_[np.zeros(90), np.arange(1, 11)]) == [0.0]


def test_the_first_adult_row_is_a1a_s_published_first_row():
    train, _ = _frames(str(project_data_dir() / "adult"))
    X, _ = a9a.encode(train.iloc[:1])
    assert (np.flatnonzero(X[0]) + 1).tolist() == [3, 11, 14, 19, 39, 42, 55, 64, 67, 73, 75,
                                                   76, 80, 83]
