"""The data a job works on: a loaded :class:`Dataset` and its split into a :class:`Task`.

A dataset loader returns a :class:`Dataset`: a feature matrix ``X`` (n × d, dense ndarray or
scipy sparse), labels ``y`` (n,), ``rows`` (named arrays with one entry per sample that travel
with the samples through every split: group labels, per-entry uncertainty bounds, a deployed
model's predictions, a role such as ``"unlabeled"``) and ``info`` (anything about the whole set:
feature names, the true generating distribution, which group is privileged).

The runner splits a dataset into a :class:`Task` with ``train``, ``test`` and optionally ``cal``
(calibration) :class:`Part` objects. Methods read what they declared they need from the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Part:
    """One subset of the samples: features, labels and the row-aligned extras."""

    X: Any
    y: np.ndarray
    rows: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.y.shape[0])

    def take(self, index) -> Part:
        """The subset at integer positions ``index`` (rows arrays are indexed along axis 0)."""
        index = np.asarray(index)
        return Part(
            X=self.X[index],
            y=self.y[index],
            rows={k: _take(v, index) for k, v in self.rows.items()},
        )


def _take(value, index):
    if isinstance(value, dict):
        return {k: _take(v, index) for k, v in value.items()}
    return np.asarray(value)[index] if not hasattr(value, "tocsr") else value[index]


@dataclass
class Dataset:
    """A loaded dataset. ``rows["split"]``, when present, holds a predefined train/test split
    as the strings ``"train"`` and ``"test"``."""

    name: str
    X: Any
    y: np.ndarray
    rows: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def all(self) -> Part:
        return Part(self.X, self.y, self.rows)

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])


@dataclass
class Task:
    """What one job fits and evaluates on."""

    dataset: str
    train: Part
    test: Part
    cal: Part | None = None
    info: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    preprocessor: Any = None  # the scaler fitted on ``train`` and applied to every part

    def parts(self) -> dict[str, Part]:
        """The named parts present, in the order train, cal, test."""
        out = {"train": self.train}
        if self.cal is not None:
            out["cal"] = self.cal
        out["test"] = self.test
        return out
