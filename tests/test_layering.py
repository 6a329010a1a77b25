"""Data flows one way: dataset loaders may use the plugin contract and shared modules, never
a method's package (the uncertainty model lives in safeclf/data/uncertainty.py for that reason)."""

from __future__ import annotations

import ast
from pathlib import Path

import safeclf


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _names_from(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == module for a in node.names}


def test_datasets_do_not_import_methods():
    folder = Path(safeclf.__file__).parent / "datasets"
    offenders = {p.name: sorted(m for m in _imports(p) if m.startswith("safeclf.methods"))
                 for p in folder.glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) >= 5  # the check read the loaders


def test_estimators_leave_reports_to_their_plugin():
    """Metrics and details reach a job through the plugin only: no registered estimator has a
    reporting hook, and no module that defines a method's estimator builds a plugin Report."""
    from safeclf.plugins import registry

    seen = []
    for name in registry.method_names():
        plugin = registry.get_method(name)
        est = plugin.estimator
        assert not [a for a in dir(est) if a.startswith("safeclf_report")], name
        module = Path(__import__(est.__module__, fromlist=["_"]).__file__)
        if type(plugin).__module__ != est.__module__:  # else the report is the plugin class's
            assert "Report" not in _names_from(module, "safeclf.plugins.contract"), name
        seen.append(name)
    assert len(seen) >= 10


def test_estimator_modules_do_not_import_the_plugin_contract():
    """Packages with a plugin module keep safeclf.plugins.contract out of their estimator modules."""
    root = Path(safeclf.__file__).parent / "methods"
    checked = []
    for plugin_module in root.glob("*/plugin.py"):
        for path in plugin_module.parent.glob("*.py"):
            if path.name in ("plugin.py", "peer_plugins.py", "rows.py", "__init__.py"):
                continue
            assert "safeclf.plugins.contract" not in _imports(path), path
            checked.append(path.name)
    assert {"estimator.py", "model.py", "experiments.py"} <= set(checked)


# -- the layer contract (issue 33) ---------------------------------------------------------------
import house  # noqa: E402  (tests/house.py: the package's imports, read from its source)

#: The layers from the top down: a module may import its own layer and the layers below it,
#: never one above. Within a layer, no cycle (test_no_import_cycles).
LAYERS = (
    ("cli", ("safeclf.cli",)),
    ("api", ("safeclf", "safeclf.api", "safeclf.serve", "safeclf.pipeline", "safeclf.estimators")),
    ("execution", ("safeclf.execution",)),
    ("report", ("safeclf.report",)),
    ("store", ("safeclf.store",)),
    ("spec", ("safeclf.spec",)),
    ("plugins", ("safeclf.plugins", "safeclf.plugin")),
    ("guarantees", ("safeclf.guarantees",)),
    ("data", ("safeclf.data",)),
    ("_utils", ("safeclf._utils", "safeclf.methods._solvers")),
    ("errors", ("safeclf.errors",)),
)
#: Plug-ins: found through the registry; they import only plugins and the layers below it.
PLUGIN_PACKAGES = ("safeclf.methods", "safeclf.datasets")
#: Imports that break the contract today, each with the step that removes it; the test fails
#: when one of them no longer exists, so the list only shrinks.
KNOWN: dict[tuple[str, str], str] = {}


def _layer(module: str) -> int | str:
    best, length = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > length:
                best, length = i, len(p)
    if module.startswith(PLUGIN_PACKAGES) and length <= len("safeclf"):
        return "plug-in"
    return best


def violations() -> set[tuple[str, str]]:
    h = house.read()
    plugins_layer = [name for name, _ in LAYERS].index("plugins")
    out = set()
    for imp in h.imports:
        for target in h.targets(imp):
            a, b = _layer(imp.source), _layer(target)
            if a == "plug-in":
                if b != "plug-in" and b < plugins_layer:
                    out.add((imp.source, target))
            elif b == "plug-in":
                if imp.source != "safeclf.estimators":  # the public face names them as text
                    out.add((imp.source, target))
            elif b < a:
                out.add((imp.source, target))
    return out


def test_imports_flow_only_downward():
    found = violations()
    assert found - set(KNOWN) == set(), sorted(found - set(KNOWN))
    assert set(KNOWN) - found == set(), f"fixed: strike from KNOWN {sorted(set(KNOWN) - found)}"


def test_no_import_cycles_counting_deferred_imports():
    assert house.read().cycles() == []


def test_every_internal_import_resolves():
    """Every import of the package, deferred ones inside functions included, names a module
    that exists and names it has, so a moved name fails here, not at run time."""
    import importlib

    h = house.read()
    missing = []
    for imp in h.imports:
        try:
            module = importlib.import_module(imp.target)
        except ImportError as exc:
            missing.append(f"{imp.source}:{imp.line} imports {imp.target} ({exc})")
            continue
        for name in imp.names:
            if name == "*" or hasattr(module, name):
                continue
            try:
                importlib.import_module(f"{imp.target}.{name}")
            except ImportError:
                missing.append(f"{imp.source}:{imp.line}: {imp.target} has no {name}")
    assert missing == []
    assert len(h.imports) > 300  # the walk read the package


def test_the_house_stays_small():
    h = house.read()
    assert len(h.top_level()) <= 8, h.top_level()
    big = {m: n for m, n in h.sizes().items() if n > 700}
    assert big == {}, big
    assert (house.PACKAGE / "py.typed").is_file()


def test_the_old_plugin_module_still_works_with_a_warning():
    import importlib
    import sys

    import pytest

    sys.modules.pop("safeclf.plugin", None)
    with pytest.warns(DeprecationWarning, match="safeclf.plugin is deprecated"):
        old = importlib.import_module("safeclf.plugin")
    from safeclf.plugins import MethodPlugin

    assert old.MethodPlugin is MethodPlugin
