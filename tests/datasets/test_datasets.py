"""Dataset loaders and splitting."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.errors import DataError
from safeclf.execution.job import split_task
from safeclf.plugins.registry import get_dataset


def test_adult_has_the_papers_split_and_groups():
    ds = get_dataset("adult").load()
    split = ds.rows["split"]
    assert (split == "train").sum() == 32561 and (split == "test").sum() == 16281
    assert set(np.unique(ds.rows["groups"])) == {"Female", "Male"}
    assert 0.23 < ds.y.mean() < 0.25  # about 24 % earn >50K
    assert np.isfinite(ds.X).all()
    task = split_task(ds, {"dataset": "adult", "split": {"predefined": True}}, 0, None)
    assert len(task.train) == 32561 and len(task.test) == 16281
    assert task.train.rows["groups"].shape == (32561,)


def test_synthetic_generators():
    ds = get_dataset("gaussians").load(mean_pos=[1, 1], mean_neg=[-1, -1], p_pos=0.2,
                                       n_samples=5000, random_state=3)
    assert set(np.unique(ds.y)) == {-1, 1} and abs((ds.y == 1).mean() - 0.2) < 0.02
    assert np.allclose(ds.X[ds.y == 1].mean(0), [1, 1], atol=0.1)
    board = get_dataset("checkerboard").load(n=8, n_samples=6400)
    cell = np.floor(board.X * 8).astype(int)
    assert np.array_equal(board.y, cell.sum(1) % 2)
    xor = get_dataset("xor").load(n_features=6, n_samples=1000)
    assert np.array_equal(xor.y, (np.prod(xor.X, 1) > 0).astype(int))
    with pytest.raises(DataError, match="cov_pos must be symmetric positive definite"):
        get_dataset("gaussians").load(mean_pos=[0, 0], mean_neg=[1, 1], cov_pos=[[1, 2], [2, 1]])


def test_split_is_stratified_reproducible_and_has_calibration():
    ds = get_dataset("breast_cancer").load()
    entry = {"dataset": "breast_cancer", "split": {"test": 0.3, "calibration": 0.25, "stratify": True}}
    a, b = split_task(ds, entry, 5, None), split_task(ds, entry, 5, None)
    assert np.array_equal(a.test.y, b.test.y) and np.array_equal(a.cal.X, b.cal.X)
    assert len(a.train) + len(a.cal) + len(a.test) == ds.n_samples
    for part in (a.train, a.cal, a.test):
        assert abs(part.y.mean() - ds.y.mean()) < 0.02
    other = split_task(ds, entry, 6, None)
    assert not np.array_equal(a.test.X, other.test.X)


def test_folds_partition_the_data():
    ds = get_dataset("iris").load()
    entry = {"dataset": "iris", "split": {"folds": 5, "stratify": True}}
    tests = [split_task(ds, entry, 0, k).test for k in range(5)]
    assert sum(len(t) for t in tests) == 150


def test_own_data_example_validates_from_another_folder(tmp_path, monkeypatch):
    """The README's csv example: its relative data path is found from any working directory."""
    from pathlib import Path

    from typer.testing import CliRunner

    from safeclf.cli.app import app

    config = Path(__file__).resolve().parents[2] / "configs" / "own_data.yaml"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["validate", str(config), "--profile", "ci"])
    assert result.exit_code == 0, result.output
    assert "valid; 4 jobs" in result.stdout


def test_adult_small_is_what_its_script_derives(tmp_path, monkeypatch):
    """datasets/adult_small/adult_small.csv is reproduced byte for byte by make.py."""
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "datasets" / "adult_small"
    spec = importlib.util.spec_from_file_location("make_adult_small", folder / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    (tmp_path.parent / "adult").mkdir(exist_ok=True)
    (tmp_path.parent / "adult" / "adult.data.gz").write_bytes(
        (folder.parent / "adult" / "adult.data.gz").read_bytes())
    module.main()
    assert (tmp_path / "adult_small.csv").read_bytes() == (folder / "adult_small.csv").read_bytes()


def test_the_rotated_checkerboard_turns_the_points_and_keeps_their_labels():
    """The proset report's "Checker rot": the same points and labels, turned by 45° about the
    origin (the author's rotation matrix), so the cell edges are diagonal."""
    import numpy as np

    from safeclf.datasets.synthetic import load_checkerboard

    plain, turned = load_checkerboard(n=8, n_samples=500), load_checkerboard(
        n=8, n_samples=500, rotation=45.0)
    a = np.sqrt(2.0) / 2.0
    assert np.array_equal(plain.y, turned.y)
    assert np.allclose(turned.X, plain.X @ np.array([[a, -a], [a, a]]).T)
    # labels are not a parity of the turned coordinates' cells any more
    cells = np.floor(turned.X * 8).astype(int)
    assert np.mean((cells.sum(axis=1) % 2) == turned.y) < 0.7


def test_xor_noise_features_leave_the_label_to_the_first_ones():
    import numpy as np

    from safeclf.datasets.synthetic import load_xor

    plain, noisy = load_xor(n_features=4, n_samples=300), load_xor(n_features=4, n_samples=300,
                                                                   n_noise=3)
    assert noisy.X.shape == (300, 7)
    assert np.array_equal(noisy.X[:, :4], plain.X) and np.array_equal(noisy.y, plain.y)
    assert np.array_equal(noisy.y, (np.prod(noisy.X[:, :4], axis=1) > 0).astype(int))
    assert not np.array_equal(noisy.y, (np.prod(noisy.X, axis=1) > 0).astype(int))
