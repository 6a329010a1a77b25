"""The package's structure, measured from its source: every internal import (deferred ones
inside functions included), the modules that import each other in a loop, the import levels,
the top-level modules and the largest files. The layer contract (tests/test_layering.py)
asserts on it; ``python tests/house.py`` prints it.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "safeclf"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class Import:
    """One import statement of ``source``: the module it names (resolved), the names it takes,
    its line, and whether it sits inside a function (deferred)."""

    source: str
    target: str
    names: tuple[str, ...]
    line: int
    deferred: bool


@dataclass
class House:
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)

    def internal(self, name: str) -> str | None:
        """The module of the package that an imported name belongs to (the longest prefix that
        is a module of the package), or None for an outside import."""
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            candidate = ".".join(parts[:k])
            if candidate in self.modules:
                return candidate
        return None

    def edges(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            for target in self.targets(imp):
                if target != imp.source:
                    out[imp.source].add(target)
        return out

    def targets(self, imp: Import) -> list[str]:
        """The package modules an import reaches: its module, or each submodule it takes
        from a package (``from safeclf.guarantees import bounds``)."""
        out = []
        for n in imp.names:
            sub = self.internal(f"{imp.target}.{n}")
            if sub is not None and sub != self.internal(imp.target):
                out.append(sub)
        base = self.internal(imp.target)
        if base is not None and (not out or base != imp.target):
            out.append(base)
        return out

    def cycles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan)."""
        graph, index, low, stack, on, out = self.edges(), {}, {}, [], set(), []
        counter = [0]

        def visit(v):
            work = [(v, iter(sorted(graph[v])))]
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            while work:
                node, children = work[-1]
                for w in children:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(sorted(graph[w]))))
                        break
                    if w in on:
                        low[node] = min(low[node], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[node])
                    if low[node] == index[node]:
                        comp = []
                        while True:
                            w = stack.pop()
                            on.discard(w)
                            comp.append(w)
                            if w == node:
                                break
                        if len(comp) > 1:
                            out.append(sorted(comp))

        for v in sorted(graph):
            if v not in index:
                visit(v)
        return out

    def levels(self) -> dict[str, int]:
        """Each module's level: 1 + the highest level it imports (1: imports nothing of the
        package); modules of a cycle share one level."""
        graph = self.edges()
        level: dict[str, int] = {}

        def of(m, seen=()):
            if m in level:
                return level[m]
            if m in seen:
                return 0
            level[m] = 1 + max((of(t, (*seen, m)) for t in graph[m]), default=0)
            return level[m]

        for m in graph:
            of(m)
        return level

    def top_level(self) -> list[str]:
        return sorted(p.name for p in PACKAGE.glob("*.py"))

    def sizes(self) -> dict[str, int]:
        return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in self.modules.items()}


def read(root: Path = PACKAGE) -> House:
    house = House()
    for path in sorted(root.rglob("*.py")):
        house.modules[module_name(path, root)] = path
    for name, path in house.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, deferred in _imports(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == root.name:
                        house.imports.append(Import(name, a.name, (), node.lineno, deferred))
            elif isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join([*base, *([target] if target else [])])
                if target.split(".")[0] == root.name:
                    house.imports.append(Import(name, target, tuple(a.name for a in node.names),
                                                node.lineno, deferred))
    return house


def _imports(tree):
    """Each import statement of ``tree`` and whether it lies inside a function (deferred),
    in one walk."""
    stack = [(tree, False)]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, inside
            continue
        inside = inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        stack.extend((child, inside) for child in ast.iter_child_nodes(node))


def main() -> int:
    house = read()
    sizes = house.sizes()
    levels = house.levels()
    deferred = sum(i.deferred for i in house.imports)
    print(f"modules: {len(house.modules)}; top-level modules of safeclf/: "
          f"{len(house.top_level())} ({', '.join(house.top_level())})")
    print(f"internal imports: {len(house.imports)} ({deferred} deferred inside functions); "
          f"import levels: {max(levels.values())}")
    cycles = house.cycles()
    print(f"import cycles (deferred imports counted): {len(cycles)}")
    for c in cycles:
        print("  " + " -> ".join(c))
    print("largest files: " + ", ".join(f"{m} {n}" for m, n in
                                       sorted(sizes.items(), key=lambda kv: -kv[1])[:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
