"""safeclf._utils.pages: numpy's huge-page advice off within a block, restored after the last."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from memory_maps import kept_off_huge_pages

from safeclf._utils import pages
from safeclf._utils.pages import huge_pages_advised, small_page_array, small_pages

#: A fresh interpreter allocates a 40 MB array inside the block and one after it (in a
#: process with a history, freed memory that an earlier advice still covers may be reused)
FRESH = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from memory_maps import middle_flags
from safeclf._utils.pages import huge_pages_advised, small_pages
before = huge_pages_advised()
with small_pages():
    inside = np.empty(5_000_000)
after = np.empty(5_000_000)
flags = [middle_flags(a) for a in (inside, after)]
print(before, huge_pages_advised(), *("-" if f is None else "hg" in f for f in flags))
"""


def test_large_arrays_in_the_block_are_not_advised_and_the_setting_comes_back():
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", FRESH, str(Path(__file__).parents[1])],
                         capture_output=True, text=True, check=True).stdout.split()
    before, restored, inside, after = out
    assert restored == before
    if before != "None" and inside != "-":
        assert inside == "False" and after == before


def test_an_error_in_the_block_restores_the_setting():
    before = huge_pages_advised()
    with pytest.raises(RuntimeError), small_pages():
        raise RuntimeError("boom")
    assert huge_pages_advised() == before


def test_overlapping_blocks_of_two_threads_restore_only_after_the_last():
    before = huge_pages_advised()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with small_pages():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with small_pages():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = huge_pages_advised()
        seen["after both"] = huge_pages_advised()

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    if before is not None:
        assert seen == {"after the first left": False, "after both": before}


def test_certification_runs_with_small_pages(monkeypatch):
    # the certification's own arrays are allocated inside the block
    from safeclf.guarantees.certify import threshold

    states = []
    real = threshold.search

    def spy(*args, **kwargs):
        states.append(huge_pages_advised())
        return real(*args, **kwargs)

    monkeypatch.setattr(threshold, "search", spy)
    from group_data import three_groups
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees import declared
    from safeclf.guarantees.certify.threshold import CertifiedClassifier, split_rows

    X, y, g = three_groups(3000, 0)
    cand, safe = split_rows(3000, 0.3, 0)
    model = LogisticRegression().fit(X[cand], y[cand])
    item = {"rate": "fairness_ratio", "min": 0.8, "compare": "worst_pair"}
    promises = declared.promises([item], y[cand] == 1, {"groups": g[cand]})
    before = huge_pages_advised()
    CertifiedClassifier.from_fitted(model, promises, X, y == 1, {"groups": g}, cand, safe,
                                    delta=0.05, fraction=0.3, random_state=0)
    assert states and (before is None or states == [False])
    assert huge_pages_advised() == before


@pytest.mark.parametrize("shape, dtype", [((5, 60), np.float32), ((2, 1), np.float32),
                                          ((300, 5000), np.float32), ((7,), np.float64),
                                          ((0, 3), np.float32)])
def test_a_small_page_array_is_a_writable_block_kept_off_huge_pages(shape, dtype):
    a = small_page_array(shape, dtype)
    assert a.shape == shape and a.dtype == dtype and a.flags.writeable and a.flags.c_contiguous
    if a.size:
        a.flat[-1] = 1.5
        a.flat[0] = 2.0
        assert a.flat[-1] == 1.5 and a.flat[0] == 2.0
        assert kept_off_huge_pages(a) is not False  # numpy would advise an aligned middle


def test_a_dropped_mapping_is_reused_never_a_live_one(monkeypatch):
    import gc

    def mapping(a):  # the mmap under the array (its base's buffer)
        return a.base.base.obj

    gc.collect()  # no earlier test's garbage gives a mapping back during this one
    monkeypatch.setattr(pages, "_spare", [])  # nor does an earlier test's spare serve it
    f32 = np.float32
    first = small_page_array((40, 100), f32)
    used = mapping(first)
    row = first[3]  # a view keeps the mapping in use
    del first
    second = small_page_array((40, 100), f32)
    assert mapping(second) is not used  # the view's memory was not handed out again
    second[:] = 7.0
    row[:] = 1.0
    assert np.all(second == 7.0)
    del row
    third = small_page_array((10, 100), f32)  # fits in the dropped mapping: reused
    assert mapping(third) is used
    fourth = small_page_array((10, 100), f32)  # the spare is taken: a new mapping
    assert mapping(fourth) is not used and mapping(fourth) is not mapping(second)
    del third
    bigger = small_page_array((80, 100), f32)  # does not fit in the spare: a new mapping
    assert mapping(bigger) is not used and bigger.shape == (80, 100)
    del bigger
    assert mapping(small_page_array((80, 100), f32)) is not used  # the latest dropped one
