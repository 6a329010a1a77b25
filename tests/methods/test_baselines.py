"""The baseline plugins honour the scikit-learn estimator contract."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.methods.baselines import SVMClassifier

# scikit-learn marks the same check as an expected failure for LinearSVC and SVC themselves.
SAMPLE_WEIGHT = ("liblinear and libsvm: a weight of 2 is not the same optimum as a repeated "
                 "sample (scaled C per sample, different stopping)")


def _expected(estimator):
    return {"check_sample_weight_equivalence_on_dense_data": SAMPLE_WEIGHT,
            "check_sample_weight_equivalence_on_sparse_data": SAMPLE_WEIGHT}


@parametrize_with_checks([SVMClassifier(), SVMClassifier(kernel="rbf")],
                         expected_failed_checks=_expected)
def test_svm_estimator_checks(estimator, check):
    check(estimator)
