"""Pipelines whose calibration data go through the same fitted transforms as X.

A scikit-learn :class:`~sklearn.pipeline.Pipeline` transforms X before its last step but passes
fit parameters through unchanged (metadata routing routes them, it does not transform them). A
calibrated estimator such as :class:`~safeclf.methods.mcsvm.MultiCostSVM` then receives its
calibration rows ``X_cal`` in the raw feature space while its scores live in the transformed
one, and its guarantee silently breaks. :class:`CalibratedPipeline` fits the transforms on X
as a Pipeline does, then passes every fit parameter the last step declares to be rows in X's
feature space (its class attribute ``_safeclf_x_like_params``, e.g. ``("X_cal",)``) through
the same fitted transforms::

    pipe = make_calibrated_pipeline(StandardScaler(), MultiCostSVM(calibration="conformal"))
    pipe.fit(X, y, X_cal=X_cal, y_cal=y_cal)      # X_cal is scaled with the scaler fitted on X
"""

from __future__ import annotations

from sklearn.pipeline import Pipeline, make_pipeline


def x_like_params(estimator) -> tuple[str, ...]:
    """The fit keywords of ``estimator`` that are rows in its input feature space."""
    return tuple(getattr(estimator, "_safeclf_x_like_params", ()))


class CalibratedPipeline(Pipeline):
    """A :class:`~sklearn.pipeline.Pipeline` that also transforms the last step's
    feature-space fit parameters (``X_cal`` for MultiCostSVM) with the fitted transforms.

    ``fit(X, y, **params)``: the transforms are fitted on X (``fit_transform``, as a Pipeline
    does); each parameter named in the last step's ``_safeclf_x_like_params`` is transformed
    with them; all parameters go to the last step's ``fit``. Parameters of the transform steps
    are not supported (a ``step__param`` name is refused, one line). Prediction, scoring and
    cloning are the Pipeline's.
    """

    def fit(self, X, y=None, **params):
        bad = [k for k in params if "__" in k]
        if bad:
            raise TypeError(f"CalibratedPipeline.fit passes parameters to its last step only; "
                            f"got {bad[0]!r}")
        final, Xt = self._final_estimator, X
        if len(self.steps) > 1:
            head = self[:-1]  # the same transformer objects, fitted in place
            Xt = head.fit_transform(X, y)
            for key in x_like_params(final):
                if params.get(key) is not None:
                    params[key] = head.transform(params[key])
        if final != "passthrough":
            final.fit(Xt, y, **params)
        return self


def make_calibrated_pipeline(*steps, memory=None, verbose=False) -> CalibratedPipeline:
    """:func:`sklearn.pipeline.make_pipeline` for :class:`CalibratedPipeline` (step names
    are the lower-cased class names)."""
    return CalibratedPipeline(make_pipeline(*steps).steps, memory=memory, verbose=verbose)
