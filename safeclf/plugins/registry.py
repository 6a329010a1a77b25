"""Method and dataset plugins, found through package entry points.

Built-in plugins are registered in safeclf's own ``pyproject.toml`` exactly as a third-party
package would register its own: under the ``safeclf.methods`` and ``safeclf.datasets`` groups,
each entry point naming a :class:`~safeclf.plugins.contract.MethodPlugin` or
:class:`~safeclf.plugins.contract.DatasetPlugin` object. Two installed distributions giving one name
to different objects make that name an error when a spec uses it (which one was meant cannot
be known); :func:`distributions` names the distributions behind the plugins a run used, for
its manifest.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from safeclf.errors import SpecError, closest

METHODS_GROUP = "safeclf.methods"
DATASETS_GROUP = "safeclf.datasets"


@cache
def _entry_points(group: str) -> dict[str, list]:
    """Each name of ``group`` and its entry points, one per distinct object named (an
    installation seen twice on the path names the same object twice)."""
    found: dict[str, list] = {}
    for ep in entry_points(group=group):
        same = found.setdefault(ep.name, [])
        if all(other.value != ep.value for other in same):
            same.append(ep)
    return found


def _dist(ep) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def method_names() -> list[str]:
    return sorted(_entry_points(METHODS_GROUP))


def dataset_names() -> list[str]:
    return sorted(_entry_points(DATASETS_GROUP))


def _entry_point(group: str, kind: str, name: str, where: str):
    found = _entry_points(group)
    if name not in found:
        known = sorted(found)
        raise SpecError(f"{where}: unknown {kind} '{name}'{closest(name, known)}; "
                        f"known: {', '.join(known)}")
    eps = found[name]
    if len(eps) > 1:
        raise SpecError(f"{where}: {kind} '{name}' is given by more than one installed "
                        f"distribution ({'; '.join(f'{_dist(ep)}: {ep.value}' for ep in eps)}); "
                        "uninstall one of them")
    return eps[0]


@cache
def _load(group: str, kind: str, name: str):
    plugin = _entry_point(group, kind, name, kind).load()
    if getattr(plugin, "name", None) != name:
        raise RuntimeError(f"entry point {group}:{name} names a plugin called "
                           f"{getattr(plugin, 'name', None)!r}")
    return plugin


def _get(group: str, kind: str, name: str, where: str):
    _entry_point(group, kind, name, where)  # the errors, naming the place
    return _load(group, kind, name)


def get_method(name: str, where: str = "method"):
    """The :class:`MethodPlugin` called ``name``; a :class:`SpecError` names ``where`` if none."""
    return _get(METHODS_GROUP, "method", name, where)


def get_dataset(name: str, where: str = "dataset"):
    """The :class:`DatasetPlugin` called ``name``; a :class:`SpecError` names ``where`` if none."""
    return _get(DATASETS_GROUP, "dataset", name, where)


def distributions(methods=(), datasets=()) -> dict[str, str]:
    """``{distribution: version}`` of the distributions whose entry points give these
    method and dataset plugins (safeclf itself for the built-in ones)."""
    out = {}
    for group, kind, names in ((METHODS_GROUP, "method", methods),
                               (DATASETS_GROUP, "dataset", datasets)):
        for name in names:
            dist = getattr(_entry_point(group, kind, name, kind), "dist", None)
            if dist is not None:
                out[dist.name] = dist.version
    return out


def clear_cache() -> None:
    """Forget the entry points found so far (after installing a plugin in this process)."""
    _entry_points.cache_clear()
    _load.cache_clear()
