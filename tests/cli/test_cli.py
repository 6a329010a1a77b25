"""The small commands, and the lazy imports that keep `safeclf --help` fast."""

from __future__ import annotations

import subprocess
import sys

from safeclf import __version__


def test_help_imports_no_heavy_library():
    code = ("import sys, safeclf.cli.app; heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'scipy',"
            " 'matplotlib', 'cvxpy', 'pydantic', 'joblib') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version_and_help(cli):
    assert cli("--version").output.strip() == f"safeclf {__version__}"
    result = cli("--help")
    assert result.exit_code == 0
    for command in ("run", "compare", "validate", "predict", "methods", "datasets", "schema"):
        assert command in result.output
    assert "--install-completion" in result.output  # shell completion is on


def test_methods_lists_parameters_with_defaults(cli):
    result = cli("methods")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "svm" in text and "logreg" in text and "C=1.0" in text


def test_datasets_lists_loaders(cli):
    result = cli("datasets")
    assert result.exit_code == 0
    for name in ("iris", "wine", "breast_cancer", "digits", "gaussians", "checkerboard", "xor",
                 "csv", "adult"):
        assert name in result.output


def test_validate_counts_jobs(cli, tiny_spec):
    result = cli("validate", tiny_spec)
    assert result.exit_code == 0
    assert "valid; 12 jobs (2 datasets, 2 methods, 2 seeds)" in " ".join(result.output.split())


def test_run_reports_numba_compile_time(cli, write_spec, tmp_path):
    # a method with compiled code (MC-SVM's dual): each job records the seconds numba spent
    # compiling, and the run prints their total beside numba's cache folder
    import json
    import os

    spec = write_spec("""
        name: jit
        seeds: 1
        datasets:
          - dataset: gaussians
            params: {mean_pos: [4, 6], cov_pos: [[1.3, 0.9], [0.9, 1.3]], mean_neg: [3, 8],
                     cov_neg: [[0.6, 0], [0, 1.4]], p_pos: 0.5, n_samples: 300}
            split: {test: 0.25, calibration: 0.3}
            preprocess: none
        methods:
          - method: mcsvm
            params: {kernel: rbf, n_tau: 3, calibration: conformal}
        metrics: [error]
        """)
    result = cli("run", spec, "--jobs", "1", "--out", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "numba: " in out and f"(cache: {os.environ['NUMBA_CACHE_DIR']})" in out
    [record] = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/results/*.json")]
    assert record["compile_seconds"] >= 0.0
