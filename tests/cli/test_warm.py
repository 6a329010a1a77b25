"""``python -m safeclf.cli.warm`` (run by ``make install``) must reach every compiled function a
built-in config's fits call, including ramp's working-set polish, which only problems of
``POLISH_MIN_NNZ`` nonzeros or more reach (no few-hundred-row warm-up fit does)."""

from __future__ import annotations

from safeclf.cli import warm
from safeclf.methods.ramp import svm


def test_warm_runs_the_ramp_polish_on_dense_and_csr_rows(monkeypatch):
    seen = []
    polish = svm._working_set_polish

    def spy(X, *args, **kwargs):
        updated = polish(X, *args, **kwargs)
        seen.append((X.nnz, X.indptr.dtype, updated))
        return updated

    monkeypatch.setattr(svm, "_working_set_polish", spy)
    warm.warm()
    # each of the two large solves (dense, then CSR input) reached the polish and it ran its
    # interior point to an update of the duals (not an early refusal before the compiled code)
    assert len(seen) == 2  # at most one polish each in its 30 epochs: both solves reached it
    assert all(nnz >= svm.POLISH_MIN_NNZ and updated for nnz, _, updated in seen)
