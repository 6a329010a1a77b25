"""Data flows one way: dataset loaders may use the plugin contract and shared modules, never
a method's package (the uncertainty model lives in safeclf/uncertainty.py for that reason)."""

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
    from safeclf import registry

    seen = []
    for name in registry.method_names():
        plugin = registry.get_method(name)
        est = plugin.estimator
        assert not [a for a in dir(est) if a.startswith("safeclf_report")], name
        module = Path(__import__(est.__module__, fromlist=["_"]).__file__)
        if type(plugin).__module__ != est.__module__:  # else the report is the plugin class's
            assert "Report" not in _names_from(module, "safeclf.plugin"), name
        seen.append(name)
    assert len(seen) >= 10


def test_estimator_modules_do_not_import_the_plugin_contract():
    """Packages with a plugin module keep safeclf.plugin out of their estimator modules."""
    root = Path(safeclf.__file__).parent / "methods"
    checked = []
    for plugin_module in root.glob("*/plugin.py"):
        for path in plugin_module.parent.glob("*.py"):
            if path.name in ("plugin.py", "peer_plugins.py", "rows.py", "__init__.py"):
                continue
            assert "safeclf.plugin" not in _imports(path), path
            checked.append(path.name)
    assert {"estimator.py", "model.py", "experiments.py"} <= set(checked)
