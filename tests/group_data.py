"""The two-group data the fairness tests share: a privileged group (half the rows) with more
positives, one feature driven by the label and one by the group."""

from __future__ import annotations

import numpy as np


def two_groups(n, seed, *, names=("M", "F"), rates=(0.5, 0.25), label_shift=1.2,
               group_shift=0.8):
    """(X (n, 3), y, groups): rows of ``names[0]`` (the privileged group) are positive with
    probability ``rates[0]``, the others with ``rates[1]``; X is standard normal plus
    ``label_shift`` · (2y − 1) in column 0 and ``group_shift`` on the privileged rows in column 1."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(n) < 0.5, names[0], names[1])
    y = (rng.random(n) < np.where(g == names[0], rates[0], rates[1])).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[label_shift * (2 * y - 1),
                                        group_shift * (g == names[0]), np.zeros(n)]
    return X, y, g


def three_groups(n, seed, *, names=("a", "b", "c"), shares=(0.4, 0.45, 0.15),
                 rates=(0.5, 0.3, 0.75), label_shift=1.2):
    """(X (n, 3), y, groups) of three groups: ``names[0]`` privileged; the large group
    ``names[1]`` has few positives and the small ``names[2]`` many, so that pooling the two
    non-privileged groups hides the large group's disparity behind the small one's rate.
    X is standard normal plus ``label_shift`` · (2y − 1) in column 0 and a group code in
    column 1 (the group's positive rate, so a classifier can see it)."""
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(names), size=n, p=np.asarray(shares) / np.sum(shares))
    rate = np.select([g == v for v in names], rates)
    y = (rng.random(n) < rate).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[label_shift * (2 * y - 1), 2.0 * rate, np.zeros(n)]
    return X, y, g
