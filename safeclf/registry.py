"""Method and dataset plugins, found through package entry points.

Built-in plugins are registered in safeclf's own ``pyproject.toml`` exactly as a third-party
package would register its own: under the ``safeclf.methods`` and ``safeclf.datasets`` groups,
each entry point naming a :class:`~safeclf.plugin.MethodPlugin` or
:class:`~safeclf.plugin.DatasetPlugin` object.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from safeclf.errors import SpecError, closest

METHODS_GROUP = "safeclf.methods"
DATASETS_GROUP = "safeclf.datasets"


@cache
def _entry_points(group: str) -> dict:
    found = {}
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep)
    return found


def method_names() -> list[str]:
    return sorted(_entry_points(METHODS_GROUP))


def dataset_names() -> list[str]:
    return sorted(_entry_points(DATASETS_GROUP))


@cache
def _load(group: str, name: str):
    ep = _entry_points(group)[name]
    plugin = ep.load()
    if getattr(plugin, "name", None) != name:
        raise RuntimeError(f"entry point {group}:{name} names a plugin called {plugin.name!r}")
    return plugin


def get_method(name: str, where: str = "method"):
    """The :class:`MethodPlugin` called ``name``; a :class:`SpecError` names ``where`` if none."""
    if name not in _entry_points(METHODS_GROUP):
        raise SpecError(
            f"{where}: unknown method '{name}'{closest(name, method_names())}; "
            f"known: {', '.join(method_names())}"
        )
    return _load(METHODS_GROUP, name)


def get_dataset(name: str, where: str = "dataset"):
    """The :class:`DatasetPlugin` called ``name``."""
    if name not in _entry_points(DATASETS_GROUP):
        raise SpecError(
            f"{where}: unknown dataset '{name}'{closest(name, dataset_names())}; "
            f"known: {', '.join(dataset_names())}"
        )
    return _load(DATASETS_GROUP, name)
