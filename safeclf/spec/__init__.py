"""The spec: what to run, as data. :mod:`~safeclf.spec.schema` (its pydantic models),
:mod:`~safeclf.spec.yaml` (the file read with bounds, profiles and overrides),
:mod:`~safeclf.spec.check` (what must hold before anything runs; :func:`load_spec` reads,
checks and resolves one) and :mod:`~safeclf.spec.expand` (the jobs)."""

from safeclf.spec.check import check, load_spec, parse
from safeclf.spec.expand import Job, expand
from safeclf.spec.schema import Spec

__all__ = ["Job", "Spec", "check", "expand", "load_spec", "parse"]
