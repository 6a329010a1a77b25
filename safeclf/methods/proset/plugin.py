"""The ``proset`` plugin: what a prototype set job reports beyond the shared metrics."""

from __future__ import annotations

from safeclf.methods.proset.model import ProsetClassifier
from safeclf.methods.proset.peers import ReportKNN, ReportXGBoost
from safeclf.plugins.contract import MethodPlugin, Report


class ProsetPlugin(MethodPlugin):
    def requires(self, params):
        """``engine: package`` fits the author's package (the bench extra)."""
        return {"proset": "bench"} if params.get("engine") == "package" else {}

    def metric_names(self, params):
        return ("n_batches", "n_active_features", "n_prototypes", "batch_fit_seconds",
                "kernel_buffer_mb", "chosen_lambda_v", "chosen_lambda_w",
                "optimal_n_batches", "stage2_threshold")

    def promise_names(self, params):
        return ()

    def report(self, estimator, task) -> Report:
        """Metrics: number of active features, prototypes and batches (and the search's
        choice: λ's, the stage-2 optimum B and threshold, as the report's tables give them);
        details: the per-batch fit log and the search table."""
        if estimator.reference_ is not None:
            manager = estimator.reference_.set_manager_
            return Report(metrics={"n_batches": float(estimator.best_params_["n_batches"]),
                                   "n_prototypes": float(manager.get_num_prototypes()),
                                   "n_active_features": float(manager.get_active_features().size)},
                          details={"engine": "package", "search": (estimator.search_ or {}).get("table")})
        metrics = {"n_active_features": float(estimator.active_features_.size),
                   "n_prototypes": float(estimator.n_prototypes_),
                   "n_batches": float(len(estimator.batches_)),
                   "batch_fit_seconds": float(sum(r["seconds"] for r in estimator.fit_log_)),
                   "kernel_buffer_mb": float(max([r["kernel_buffer_bytes"] for r in estimator.fit_log_],
                                                 default=0) / 2**20)}
        details = {"batches": estimator.fit_log_,
                   "chosen": {k: float(v) for k, v in estimator.best_params_.items()}}
        if estimator.search_ is not None:
            stage2 = [r for r in estimator.search_["table"] if r["stage"] == 2]
            metrics["optimal_n_batches"] = float(next(r["n_batches"] for r in stage2
                                                      if r["optimal"]))
            metrics["stage2_threshold"] = float(stage2[0]["threshold"])
            metrics["chosen_lambda_v"] = float(estimator.best_params_["lambda_v"])
            metrics["chosen_lambda_w"] = float(estimator.best_params_["lambda_w"])
            details["search"] = estimator.search_["table"]
        return Report(metrics=metrics, details=details)


plugin = ProsetPlugin(
    name="proset",
    estimator=ProsetClassifier,
    summary="prototype set classifier (Ruf): kernel prototypes with sparse feature weights",
)


class PeerPlugin(MethodPlugin):
    """The report's comparison classifiers (:mod:`safeclf.methods.proset.peers`): the search's
    choice and the active-feature count the report's E8/E9 tables give."""

    def requires(self, params):
        return {"xgboost": "bench"} if self.estimator is ReportXGBoost else {}

    def metric_names(self, params):
        return ("n_active_features", "cv_threshold", "chosen_k", "optimal_k", "chosen_depth",
                "chosen_trees", "optimal_trees")

    def promise_names(self, params):
        return ()

    def report(self, estimator, task) -> Report:
        metrics = {"n_active_features": float(estimator.n_active_features_)}
        if isinstance(estimator, ReportKNN):
            metrics.update(chosen_k=float(estimator.k_), optimal_k=float(estimator.k_optimal_),
                           cv_threshold=float(estimator.cv_threshold_))
        else:
            stage2 = estimator.search_["stage2"]
            metrics.update(chosen_depth=float(estimator.params_["max_depth"] - 1),
                           chosen_trees=float(stage2["chosen_trees"]),
                           optimal_trees=float(stage2["optimal_trees"]),
                           cv_threshold=float(stage2["threshold"]))
        return Report(metrics=metrics, details={"search": estimator.search_,
                                                "params": getattr(estimator, "params_", None)})


report_knn = PeerPlugin(
    name="report_knn",
    estimator=ReportKNN,
    summary="k-nearest neighbours with k by the proset report's CV rule (its E8 comparison)",
)

report_xgboost = PeerPlugin(
    name="report_xgboost",
    estimator=ReportXGBoost,
    summary="XGBoost by the proset report's two-stage search (its E9 comparison; bench extra)",
)
