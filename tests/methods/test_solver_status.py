"""One solver-status vocabulary: every solver path maps into it, inaccurate warns, infeasible
and error raise, and every estimator reports ``solver_status_`` and ``n_iter_``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from safeclf.errors import InfeasibleError, SolverError
from safeclf.methods._solvers.status import SolverStatus, as_status, of_estimator, settle, worst


@pytest.mark.parametrize("raw, status", [
    ("Solved", "optimal"), ("AlmostSolved", "inaccurate"), ("PrimalInfeasible", "infeasible"),
    ("MaxIterations", "error"), ("NumericalError", "error"), ("optimal", "optimal"),
    ("optimal_inaccurate", "inaccurate"), ("infeasible_inaccurate", "infeasible"),
    ("unbounded", "error"), ("something new", "error")])
def test_statuses_map_into_four_groups(raw, status):
    assert as_status(raw) == SolverStatus(status)


def test_settle_warns_or_raises():
    assert settle("Solved", "p") is SolverStatus.OPTIMAL
    with pytest.warns(ConvergenceWarning, match="^p: stopped early; the result may be inaccurate"):
        assert settle("AlmostSolved", "p", detail="stopped early") is SolverStatus.INACCURATE
    with pytest.raises(InfeasibleError, match="^p: no point$"):
        settle("infeasible", "p", infeasible="no point")
    with pytest.raises(SolverError, match="^p: the solver ended with status 'NumericalError'"):
        settle("NumericalError", "p")
    assert worst(["optimal", "inaccurate", "optimal"]) is SolverStatus.INACCURATE
    assert worst([]) is SolverStatus.OPTIMAL


def test_clarabel_infeasible_and_limit():
    """x ≤ −1 and x ≥ 1 has no point; one iteration is not enough for a feasible problem."""
    import clarabel

    from safeclf.methods._solvers.conic import solve_conic

    P, q = sp.csc_matrix((1, 1)), np.zeros(1)
    A = sp.csc_matrix(np.array([[1.0], [-1.0]]))
    cones = [clarabel.NonnegativeConeT(2)]
    with pytest.raises(InfeasibleError, match="^toy: x cannot"):
        solve_conic(P, q, A, np.array([-1.0, -1.0]), cones, "toy", infeasible="x cannot")
    with pytest.raises(SolverError, match="^toy: .*MaxIterations"):
        solve_conic(sp.identity(1, format="csc"), np.ones(1), A, np.array([3.0, 1.0]), cones,
                    "toy", max_iter=1)


@pytest.fixture(scope="module")
def binary():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:200, :6])
    return X, y[:200]


def _estimators():
    from safeclf.methods.baselines import SVMClassifier
    from safeclf.methods.mcsvm import MultiCostSVM
    from safeclf.methods.proset import ProsetClassifier
    from safeclf.methods.ramp import RampClassifier
    from safeclf.methods.ramp.thresholded import ThresholdedSVM
    from safeclf.methods.ramp.zafar import ZafarSVM
    from safeclf.methods.robust_socp import RobustSOCPClassifier
    from safeclf.methods.selection import BudgetedSelection

    return {
        "robust_socp": RobustSOCPClassifier(),
        "mcsvm_dual": MultiCostSVM(calibration="none", solver="dual"),
        "mcsvm_primal": MultiCostSVM(calibration="none", solver="primal"),
        "ramp": RampClassifier(),
        "zafar": ZafarSVM(),
        "thresholded_svm": ThresholdedSVM(recall_min=None),
        "proset": ProsetClassifier(n_batches=1, n_candidates=50, random_state=0),
        "budgeted_selection": BudgetedSelection(
            classes=[{"method": "logreg", "params": {"max_iter": 300}, "complexity": 1,
                      "incremental": "refit"}], budget=2, quantum=50, random_state=0),
        "svm": SVMClassifier(),
    }


@pytest.mark.parametrize("name", sorted(_estimators()))
def test_every_estimator_reports_status_and_iterations(binary, name):
    X, y = binary
    est = _estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # these small fits converge
        est.fit(X, y)
    status, n_iter = of_estimator(est)
    assert status == "optimal" and est.solver_status_ == "optimal"
    assert n_iter >= 1


def test_iteration_limits_warn_and_say_inaccurate(binary):
    """mcsvm's dual used to raise at max_iter and proset to warn; both now warn and keep
    their last iterate, and say so in solver_status_."""
    from safeclf.methods.mcsvm import MultiCostSVM
    from safeclf.methods.proset import ProsetClassifier

    X, y = binary
    for est in (MultiCostSVM(calibration="none", solver="dual", max_iter=1, working_set=2),
                ProsetClassifier(n_batches=1, n_candidates=50, max_iter=1, random_state=0)):
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            est.fit(X, y)
        assert est.solver_status_ == "inaccurate" and of_estimator(est)[1] >= 1
        assert np.mean(est.predict(X) == y) > 0.5  # a usable iterate was kept


def test_status_and_iterations_are_columns(cli, write_spec, tmp_path):
    import pandas as pd

    spec = write_spec("""
        name: s
        seeds: 1
        datasets: [{dataset: breast_cancer, preprocess: standardize}]
        methods:
          - {method: mcsvm, params: {calibration: none}}
          - {method: logreg, params: {max_iter: 2}}
        """)
    result = cli("run", spec, "--out", tmp_path / "runs", "--jobs", "1")
    assert result.exit_code == 0, result.output
    run = next((tmp_path / "runs").iterdir())
    table = pd.read_parquet(run / "metrics.parquet").set_index("method")
    assert table.loc["mcsvm", "solver_status"] == "optimal" and table.loc["mcsvm", "n_iter"] >= 1
    assert table.loc["logreg", "solver_status"] == "inaccurate"
    assert table.loc["logreg", "n_iter"] == 2
    assert "solver_status" not in [c for c in table.columns if c.startswith("test_")]
