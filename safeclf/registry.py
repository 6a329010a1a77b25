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


def _get(group: str, kind: str, name: str, where: str):
    known = sorted(_entry_points(group))
    if name not in known:
        raise SpecError(f"{where}: unknown {kind} '{name}'{closest(name, known)}; "
                        f"known: {', '.join(known)}")
    return _load(group, name)


def get_method(name: str, where: str = "method"):
    """The :class:`MethodPlugin` called ``name``; a :class:`SpecError` names ``where`` if none."""
    return _get(METHODS_GROUP, "method", name, where)


def get_dataset(name: str, where: str = "dataset"):
    """The :class:`DatasetPlugin` called ``name``; a :class:`SpecError` names ``where`` if none."""
    return _get(DATASETS_GROUP, "dataset", name, where)
