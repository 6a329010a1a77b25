"""The plugins of the ramp method's peers (their estimators live in ``zafar``, ``thresholded``,
``group_thresholds`` and ``fairlearn_eg``): what each needs, reports and promises."""

from __future__ import annotations

import numpy as np

from safeclf.errors import DataError
from safeclf.guarantees.groups import privileged_of
from safeclf.guarantees.rate_items import expand_constraints
from safeclf.guarantees.rates import FitData, RatioConstraint
from safeclf.methods.ramp.fairlearn_eg import FairlearnEG
from safeclf.methods.ramp.group_thresholds import GroupThresholds
from safeclf.methods.ramp.rows import RowsPlugin
from safeclf.methods.ramp.thresholded import ThresholdedSVM
from safeclf.methods.ramp.zafar import ZafarSVM
from safeclf.plugins.contract import PRIVILEGED, MethodPlugin, Report


class ZafarPlugin(MethodPlugin):
    """Passes the dataset's privileged group with the groups (:mod:`safeclf.guarantees.groups`)."""

    def metric_names(self, params):
        return ("covariance", "train_objective")

    def promise_names(self, params):
        return ()  # the covariance bound is a proxy of fairness, not a rate safeclf checks

    def report(self, estimator, task) -> Report:
        return Report({"covariance": estimator.covariance_,
                       "train_objective": estimator.objective_},
                      {"covariance": estimator.covariance_})


zafar = ZafarPlugin(
    name="zafar",
    estimator=ZafarSVM,
    summary="SVM with Zafar et al.'s covariance fairness constraint |<w, x_M - x_F>| <= c (QP)",
    needs=("groups", PRIVILEGED),
)


class ThresholdedPlugin(RowsPlugin):
    """Reports the ``report`` constraints and ``monitor`` rates of the thresholded model on
    every part, under the ramp method's metric names."""

    def metric_names(self, params):
        """Each ``report`` constraint and ``monitor`` rate on every part."""
        _, cons, monitors = self.build(params)._parsed()
        # a comparison of several pairs of groups reports one value per pair
        return ([f"{{part}}_constraint_{c.name}{s}" for c in cons
                 for s in (("", "_*") if isinstance(c, RatioConstraint) else ("",))]
                + [f"{{part}}_monitor_{name}" for name, _ in monitors])

    def promise_names(self, params):
        return ()

    def report(self, estimator, task) -> Report:
        from safeclf.methods.ramp.estimator import monitor_values

        _, cons, monitors = estimator._parsed()
        # ratio constraints take their direction once, from the training part (safeclf.guarantees.groups)
        train = FitData(np.asarray(task.train.y) == estimator.classes_[1],
                        {k: v for k, v in task.train.rows.items() if not isinstance(v, dict)})
        try:
            cons = expand_constraints(cons, train, privileged_of(task.info))
        except ValueError as exc:
            raise DataError(f"thresholded_svm: {exc}") from None
        metrics = {}
        for part_name, part in task.parts().items():
            p = (estimator.decision_function(part.X) > 0).astype(float)
            data = FitData(np.asarray(part.y) == estimator.classes_[1],
                           {k: v for k, v in part.rows.items() if not isinstance(v, dict)})
            for c in cons:
                try:
                    metrics[f"{part_name}_constraint_{c.name}"] = c.value(data, p)
                except ValueError:
                    metrics[f"{part_name}_constraint_{c.name}"] = float("nan")
            metrics.update({f"{part_name}_{k}": v
                            for k, v in monitor_values(monitors, data, p).items()})
        return Report(metrics, {"recall_target": getattr(estimator, "recall_target_", None)})


thresholded_svm = ThresholdedPlugin(
    name="thresholded_svm",
    estimator=ThresholdedSVM,
    summary="unconstrained linear SVM with its bias shifted to reach a recall (churn baseline)",
)


class GroupThresholdsPlugin(MethodPlugin):
    def counts_favourable(self, params):
        """Its thresholds meet s_p(g) ≥ κ s_p(privileged): a ratio of favourable decisions."""
        return ["params.kappa (fairness_ratio)"]

    def metric_names(self, params):
        return ("threshold_*",)  # one per group of the data

    def promise_names(self, params):
        return ()

    def report(self, estimator, task) -> Report:
        return Report({f"threshold_{g}": t for g, t in estimator.thresholds_.items()})


group_thresholds = GroupThresholdsPlugin(
    name="group_thresholds",
    estimator=GroupThresholds,
    summary="logistic regression with a threshold per group meeting a fairness ratio κ",
    needs=("groups", PRIVILEGED),
)


class FairlearnPlugin(MethodPlugin):
    def requires(self, params):
        """fairlearn's ExponentiatedGradient (the bench extra)."""
        return {"fairlearn": "bench"}

    def counts_favourable(self, params):
        """A ``ratio_bound`` on demographic parity is a ratio of favourable decisions."""
        est = self.build(params)
        return (["params.ratio_bound (fairness_ratio)"]
                if est.ratio_bound and est.constraint == "demographic_parity" else [])

    def promise_names(self, params):
        est = self.build(params)
        return (("constraint_fairness_ratio",)
                if est.ratio_bound and est.constraint == "demographic_parity" else ())

    def promises(self, estimator, task):
        """With ``ratio_bound`` r and demographic parity: s_p(protected)/s_p(privileged) ≥ r²
        on the training data (fairlearn's constraint, for its randomised rule), under the same
        name as ramp's ratio constraint so failure rates line up; otherwise none."""
        from safeclf.guarantees import groups as G
        from safeclf.guarantees.promises import Promise, Quantity, no_promise

        r = estimator.ratio_bound
        if not r or estimator.constraint != "demographic_parity":
            return [no_promise(self.name, "a difference bound on group rates, not a rate "
                               "promise safeclf checks")]
        d = G.resolve(info=task.info, groups=task.train.rows["groups"],
                      positive=np.asarray(task.train.y) == estimator.classes_[-1])
        return [Promise(
            "constraint_fairness_ratio",
            f"s_p(not {d.privileged}) ≥ r² = {r * r:.4g}·s_p({d.privileged}) (training data)",
            Quantity("ratio", privileged=d.privileged), ">=", r * r, "training",
            "Agarwal et al. 2018 (fairlearn DemographicParity ratio_bound)",
            note="promised for fairlearn's randomised rule on the training rows, up to its eps",
            rule="randomized")]


fairlearn_eg = FairlearnPlugin(
    name="fairlearn_eg",
    estimator=FairlearnEG,
    summary="fairlearn ExponentiatedGradient + logistic regression (reference; bench extra)",
    needs=("groups",),
)
