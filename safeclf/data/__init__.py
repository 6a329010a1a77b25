"""The data a job works on: a loaded :class:`Dataset` and its split into a :class:`Task`
(:mod:`safeclf.data.task`), the preprocessing fitted on the training part
(:mod:`safeclf.data.preprocessing`) and per-entry uncertainty (:mod:`safeclf.data.uncertainty`)."""

from safeclf.data.task import Dataset, Part, Task

__all__ = ["Dataset", "Part", "Task"]
