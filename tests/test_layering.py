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


def test_datasets_do_not_import_methods():
    folder = Path(safeclf.__file__).parent / "datasets"
    offenders = {p.name: sorted(m for m in _imports(p) if m.startswith("safeclf.methods"))
                 for p in folder.glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) >= 5  # the check read the loaders
