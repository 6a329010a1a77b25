"""Callables and classes a hostile model file names. Each leaves a mark when it runs, so a
test can tell that nothing ran: the mark is the file named by ``SAFECLF_TEST_MARKER``."""

from __future__ import annotations

import os
from pathlib import Path


def _mark(what: str) -> None:
    marker = os.environ.get("SAFECLF_TEST_MARKER")
    if marker:
        with Path(marker).open("a") as fh:
            fh.write(what + "\n")


def touch(X):
    """A transformer function: runs at predict."""
    _mark("touch")
    return X


class Gadget:
    """A class whose state-setting runs code when an instance is built from a file."""

    def __init__(self):
        self.armed = True

    def __setstate__(self, state):
        _mark("Gadget.__setstate__")
        self.__dict__.update(state)

    def predict(self, X):
        _mark("Gadget.predict")
        return X[:, 0]


class Plain:
    """A user class without any hook: still not a type safeclf writes."""

    def __init__(self):
        self.x = 1
