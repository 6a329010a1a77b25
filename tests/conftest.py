"""Shared fixtures: small specs written to a temporary folder, and a CLI runner."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

TINY = """
name: tiny
seeds: 2
datasets:
  - dataset: iris
    preprocess: standardize
  - dataset: breast_cancer
    preprocess: standardize
methods:
  - method: svm
    params: {C: {grid: [0.1, 1.0]}}
  - method: logreg
    params: {max_iter: 500}
metrics: [error, balanced_accuracy, log_loss]
plots:
  - {kind: bar, metric: test_error}
  - {kind: scatter, x: test_balanced_accuracy, y: test_error}
  - {kind: line, x: param.C, y: test_error}
expect:
  - {metric: test_error, method: logreg, dataset: breast_cancer, "<=": 0.1, source: project}
profiles:
  ci:
    seeds: 1
    methods:
      svm: {params: {C: 1.0}}
"""


@pytest.fixture
def write_spec(tmp_path):
    """``write_spec(text, name="spec.yaml") -> Path`` of a dedented YAML file in tmp_path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def tiny_spec(write_spec):
    return write_spec(TINY, "tiny.yaml")


@pytest.fixture
def cli():
    from safeclf.cli.app import app

    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, [str(a) for a in args])

    return invoke
