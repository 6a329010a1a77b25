"""A spec file read as data: YAML with bounds (size, nesting, aliases), profiles and
command-line overrides applied, before the schema sees it."""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from safeclf.errors import SpecError, closest

#: A profile's key saying, per full-profile expectation the profile leaves out or replaces,
#: why (``omitted: {"expect[4]": "needs fairlearn, which CI does not install"}``); it is not
#: merged into the spec (tests/spec/test_config_profiles.py reads it)
OMITTED = "omitted"


MAX_YAML_NODES = 200_000  # nodes after alias expansion (a real spec has a few hundred)
#: lists and mappings inside each other (a real spec nests fewer than ten). Refused while the
#: text is read: PyYAML's scanner costs the square of the depth (3,000 levels took over a
#: second to refuse) and its composer recurses once per level
MAX_YAML_DEPTH = 100


class _TooDeep(Exception):
    pass


@lru_cache(maxsize=1)
def _bounded_loader():
    """PyYAML's safe loader that stops composing past :data:`MAX_YAML_DEPTH` levels (the
    scanner reads ahead only as far as the composer asks)."""
    import yaml

    class Loader(yaml.SafeLoader):
        _depth = 0

        # the scanner reads ahead of the composer (a flow collection's keys are undecided
        # until it closes): bounded here too, for flow and block style
        def fetch_flow_collection_start(self, token_class):
            if self.flow_level >= MAX_YAML_DEPTH:
                raise _TooDeep
            return super().fetch_flow_collection_start(token_class)

        def add_indent(self, column):
            if len(self.indents) >= MAX_YAML_DEPTH:
                raise _TooDeep
            return super().add_indent(column)

        def compose_node(self, parent, index):
            step = int(self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent))
            self._depth += step
            try:
                if self._depth > MAX_YAML_DEPTH:
                    raise _TooDeep
                return super().compose_node(parent, index)
            finally:
                self._depth -= step

    return Loader


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Parse ``path`` as safe YAML; malformed YAML names the line. Duplicate keys in a mapping
    are refused (YAML would keep the last silently), and so is a document whose aliases expand
    to more than :data:`MAX_YAML_NODES` nodes (an "alias bomb")."""
    p = Path(path)
    if p.is_dir():
        raise SpecError(f"spec file '{path}' is a folder; give the YAML file inside it")
    if not p.is_file():
        raise SpecError(f"spec file '{path}' does not exist")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a UTF-8 text file") from None
    data = parse_yaml(text, str(path))
    if not isinstance(data, dict):
        raise SpecError(f"{path}: the spec must be a mapping with name, datasets and methods")
    return data


def parse_yaml(text: str, where: str) -> Any:
    """Safe-load one YAML document from ``text`` with the checks of :func:`read_yaml`;
    ``where`` names the source in messages."""
    import yaml

    loader = None
    try:
        loader = _bounded_loader()(text)  # the reader refuses control characters here
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, where)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise SpecError(f"{where}: character U+{code:04X} at line {line}, column {column} is not "
                        "allowed in YAML (a control character)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{where}: malformed YAML{at}: {problem}") from None
    except (_TooDeep, RecursionError):  # the composer and constructor recurse once per level
        raise SpecError(f"{where}: the YAML nests lists or mappings too deeply (more than "
                        f"{MAX_YAML_DEPTH} levels; a spec needs a few)") from None
    finally:
        if loader is not None:
            loader.dispose()


def _check_nodes(root, where: str) -> None:
    """Refuse duplicate mapping keys and alias expansion beyond :data:`MAX_YAML_NODES`. The
    expanded size is computed once per distinct node (aliases share nodes), so the check itself
    stays linear in the file."""
    import yaml

    sizes: dict[int, int] = {}
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        kids = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) \
            else list(node.value)
        if not children_done:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key, _ in node.value:
                    if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                        continue
                    if key.value in seen:
                        raise SpecError(
                            f"{where}: duplicate key '{key.value}' at line {key.start_mark.line + 1} "
                            f"(first at line {seen[key.value]}); YAML would keep only the last")
                    seen[key.value] = key.start_mark.line + 1
            stack.append((node, True))
            stack.extend((c, False) for c in kids if id(c) not in sizes)
            continue
        sizes[id(node)] = 1 + sum(sizes.get(id(c), 1) for c in kids)
        if sizes[id(node)] > MAX_YAML_NODES:
            raise SpecError(
                f"{where}: the YAML expands to more than {MAX_YAML_NODES:,} values through its "
                f"aliases (line {node.start_mark.line + 1}); write the repeated parts out")


def apply_profile(data: dict[str, Any], profile: str | None) -> dict[str, Any]:
    """Merge ``profiles[profile]`` into the spec: mappings merge key by key, lists are replaced,
    and for ``datasets``/``methods`` a mapping keyed by label patches those items only (a label
    mapped to ``null`` removes the item)."""
    data = copy.deepcopy(data)
    if profile is None:
        return data
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise SpecError(f"profiles must be a mapping of profile names to changes, got {profiles!r}")
    if profile not in profiles:
        raise SpecError(f"profiles: no profile '{profile}'{closest(profile, profiles)}"
                        f"{'' if profiles else ' (the spec defines none)'}")
    patch = profiles[profile] or {}
    if not isinstance(patch, dict):
        raise SpecError(f"profiles.{profile} must be a mapping, got {patch!r}")
    for key, value in patch.items():
        if key == OMITTED:  # reasons, not a patch (validated with the spec's profiles)
            continue
        if key in ("datasets", "methods") and isinstance(value, dict):
            items = data.get(key) or []
            labels = [it.get("name") or it.get(key[:-1]) for it in items if isinstance(it, dict)]
            removed = set()
            for label, item_patch in value.items():
                if label not in labels:
                    raise SpecError(
                        f"profiles.{profile}.{key}.{label}: no {key[:-1]} labelled '{label}'"
                        f"{closest(label, labels)}"
                    )
                i = labels.index(label)
                if item_patch is not None and not isinstance(item_patch, dict):
                    raise SpecError(
                        f"profiles.{profile}.{key}.{label} must be a mapping of changes to that "
                        f"{key[:-1]} (or null to drop it), got {item_patch!r}")
                if item_patch is None:
                    removed.add(i)
                else:
                    items[i] = _merge(items[i], item_patch)
            data[key] = [it for i, it in enumerate(items) if i not in removed]
        else:
            data[key] = _merge(data.get(key), value)
    return data


_OVERRIDE_STEP = re.compile(r"([A-Za-z_][\w-]*)((?:\[-?\d+\])*)$")


_OVERRIDE_TEXT = re.compile(r"~?[A-Za-z_][\w\-\[\].]*(=|$)")


def looks_like_override(text: str) -> bool:
    """Whether a command-line word is a ``key=value`` (or ``~key``) override rather than a
    file: the parser puts the first word after ``run`` into SPEC, so ``run --resume RUN
    seeds=2`` would read ``seeds=2`` as the spec file."""
    m = _OVERRIDE_TEXT.match(text)
    return bool(m) and (m.group(1) == "=" or text.startswith("~")) and not Path(text).exists()


def apply_overrides(data: dict[str, Any], overrides) -> dict[str, Any]:
    """Apply command-line overrides in the Hydra style, after the profile: ``key=value`` sets
    the value at a dotted path with list indices (``methods[0].params.C=10``), the value read
    as a YAML scalar or flow collection (``10`` an int, ``0.1`` a float, ``[1, 2]`` a list,
    ``{grid: [0.1, 1]}`` a grid); ``~key`` deletes a key. Each problem names the override."""
    data = copy.deepcopy(data)
    for text in overrides or ():
        delete = text.startswith("~")
        path, eq, raw = text[1:].partition("=") if delete else text.partition("=")
        if not delete and not eq:
            raise SpecError(f"override '{text}': write key=value (e.g. seeds=1 or "
                            "methods[0].params.C=10), or ~key to delete a key")
        steps = _override_steps(path.strip(), text)
        value = None if delete else parse_yaml(raw, f"override '{text}'")
        parent, where = data, ""
        for n, step in enumerate(steps):
            last = n == len(steps) - 1
            if isinstance(step, int):
                if not isinstance(parent, list):
                    raise SpecError(f"override '{text}': {where or 'the spec'} is not a list")
                if not -len(parent) <= step < len(parent):
                    raise SpecError(f"override '{text}': {where} has {len(parent)} items, "
                                    f"no index {step}")
            else:
                if not isinstance(parent, dict):
                    raise SpecError(f"override '{text}': {where or 'the spec'} is not a mapping")
                if step not in parent and delete:
                    raise SpecError(f"override '{text}': {where + '.' if where else ''}{step} is "
                                    f"not in the spec{closest(step, list(parent))}")
                if step not in parent and not last:  # methods[0].params.C=1 without params
                    if isinstance(steps[n + 1], int):
                        raise SpecError(f"override '{text}': {where + '.' if where else ''}{step} "
                                        "is not in the spec, so it has no index")
                    parent[step] = {}
            where += f"[{step}]" if isinstance(step, int) else (f".{step}" if where else step)
            if last:
                if delete:
                    del parent[step]
                else:
                    parent[step] = value
            else:
                parent = parent[step]
    return data


def _override_steps(path: str, text: str) -> list:
    steps: list = []
    for part in path.split(".") if path else [""]:
        m = _OVERRIDE_STEP.match(part)
        if not m:
            raise SpecError(f"override '{text}': '{part}' is not a key (letters, digits, _ or -, "
                            "then optional [index])")
        steps.append(m.group(1))
        steps += [int(i) for i in re.findall(r"-?\d+", m.group(2))]
    return steps


def _merge(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base.get(k), v)
        return out
    return copy.deepcopy(patch)
