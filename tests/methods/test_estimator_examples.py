"""Every public estimator (``safeclf.estimators.__all__``) shows a numpydoc ``Examples`` section in
its class docstring, and that example runs: outputs compared, in a namespace of its own (so it
imports what it uses, as a reader copying it would), ``NORMALIZE_WHITESPACE | ELLIPSIS``.

An example cannot silently disappear (each class must have one with a compared output), and
``+SKIP`` is allowed only on the classes whose optional package is not a dependency; where that
package is installed (the ``bench`` extra), their skipped lines run too."""

from __future__ import annotations

import doctest
import importlib.util
import io

import pytest

import safeclf.estimators as estimators

#: class -> the optional package its example needs (not a dependency of safeclf)
OPTIONAL = {"FairlearnEG": "fairlearn"}
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def test_the_public_estimators_include_the_certified_wrapper():
    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    assert estimators.CertifiedClassifier is CertifiedClassifier
    assert "CertifiedClassifier" in estimators.__all__ and len(estimators.__all__) >= 11


def _class_doctest(name: str) -> doctest.DocTest:
    cls = getattr(estimators, name)
    tests = doctest.DocTestFinder(recurse=False).find(cls, name, globs={})
    assert len(tests) == 1, f"{name}: no class docstring"
    return tests[0]


@pytest.mark.parametrize("name", estimators.__all__)
def test_class_docstring_example_runs(name):
    test = _class_doctest(name)
    assert "\n    Examples\n    --------\n" in test.docstring, f"{name}: no numpydoc Examples section"
    shown = [ex for ex in test.examples if ex.want.strip()]
    assert test.examples and shown, f"{name}: no example with an output"
    skipped = [ex.source for ex in test.examples if ex.options.get(doctest.SKIP)]
    if name in OPTIONAL:
        if importlib.util.find_spec(OPTIONAL[name]) is not None:
            for ex in test.examples:
                ex.options.pop(doctest.SKIP, None)
            skipped = []
    else:
        assert skipped == [], f"{name}: skipped example lines {skipped}"
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    result = runner.run(test, out=out.write)
    assert result.failed == 0, out.getvalue()
    assert result.attempted == len(test.examples) - len(skipped)  # every other line ran
