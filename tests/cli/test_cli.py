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
