"""scikit-learn's bundled data sets: iris, wine, breast cancer, digits."""

from __future__ import annotations

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.guarantees.outcome import record
from safeclf.plugins.contract import DatasetPlugin


def _bunch(loader, name: str, features: list[int] | None):
    b = loader()
    d = b.data.shape[1]
    if features is not None and not features:
        raise DataError(f"{name}: features is empty; list at least one column index "
                        f"(0 to {d - 1}) or leave it out for all {d}")
    for i, f in enumerate(features or []):
        if not -d <= f < d:
            raise DataError(f"{name}: features[{i}] is {f}, but {name} has {d} features "
                            f"(indices 0 to {d - 1})")
    X = b.data if features is None else b.data[:, features]
    names = list(b.feature_names) if features is None else [b.feature_names[i] for i in features]
    info = {"feature_names": names}
    if name in OUTCOMES:
        info["outcome"] = OUTCOMES[name]
    return checked(name, X.astype(float), b.target, info=info)


#: The two-class sets' outcomes (the multi-class ones have none: no rate of "positive"
#: predictions is defined for them).
OUTCOMES = {"breast_cancer": record("diagnosis", "benign", "malignant",
                                    meaning="label 1 in scikit-learn's coding: benign")}


def load_iris(features: list[int] | None = None):
    """Iris (150 × 4, 3 classes); ``features`` picks columns (``[0, 1]`` is "Iris 2f")."""
    from sklearn.datasets import load_iris as f

    return _bunch(f, "iris", features)


def load_wine(features: list[int] | None = None):
    """Wine (178 × 13, 3 classes)."""
    from sklearn.datasets import load_wine as f

    return _bunch(f, "wine", features)


def load_breast_cancer(features: list[int] | None = None):
    """Breast cancer Wisconsin diagnostic (569 × 30, 2 classes)."""
    from sklearn.datasets import load_breast_cancer as f

    return _bunch(f, "breast_cancer", features)


def load_digits(features: list[int] | None = None):
    """Digits (1797 × 64, 10 classes)."""
    from sklearn.datasets import load_digits as f

    return _bunch(f, "digits", features)


iris = DatasetPlugin("iris", load_iris, "scikit-learn iris, 150 × 4, 3 classes")
wine = DatasetPlugin("wine", load_wine, "scikit-learn wine, 178 × 13, 3 classes")
breast_cancer = DatasetPlugin(
    "breast_cancer", load_breast_cancer, "scikit-learn breast cancer, 569 × 30, 2 classes"
)
digits = DatasetPlugin("digits", load_digits, "scikit-learn digits, 1797 × 64, 10 classes")
