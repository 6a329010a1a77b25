"""One translation of pydantic's validation errors into the one-line messages users see.

Every structured input is a pydantic model: the spec (:mod:`safeclf.spec.schema`), a dataset
loader's parameters (:class:`~safeclf.plugins.contract.DatasetPlugin`) and a method's structured
parameters (the ramp method's rates, the selection classes). :func:`explain` turns the most
telling error of a :class:`pydantic.ValidationError` into ``<path> <what is wrong>, got <value>``.

It reads only pydantic's documented error fields (``type``, ``loc``, ``ctx``, ``input``), not
its message texts or the names it gives union branches: the path is found by walking ``loc``
through the data that was validated, so a union member's tag (``float``, a discriminator
value, ``function-before[...]``) never appears in it.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

# Errors pydantic reports for union members that did not match; never the best explanation
# when a more specific one exists.
_UNION_NOISE = {"is_instance_of", "model_type", "dict_type", "model_attributes_type"}

_COMPARE = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", "≥"),
            "less_than": ("lt", "<"), "less_than_equal": ("le", "≤")}

_PLAIN = {
    "int_type": "must be an integer", "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number", "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false", "bool_parsing": "must be true or false",
    "string_type": "must be a string", "list_type": "must be a list",
    "dict_type": "must be a mapping", "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping", "none_required": "must be null",
}


def data_path(loc, data, kind: str = "") -> list:
    """The parts of ``loc`` that index into ``data`` (keys and list positions), in order, and
    for a ``missing`` error the key the data lacks; the others name union branches."""
    out, here = [], data
    for k, part in enumerate(loc):
        if isinstance(here, dict) and part in here:
            here = here[part]
        elif isinstance(here, list | tuple) and isinstance(part, int) and 0 <= part < len(here):
            here = here[part]
        elif not (kind == "missing" and k == len(loc) - 1 and isinstance(here, dict)):
            continue
        out.append(part)
    return out


def path_text(parts, prefix: str = "") -> str:
    """``prefix.a[0].b``; comparison keys of expectations are quoted (``expect[0]."<="``)."""
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).isidentifier():
            out += f'."{part}"' if out else f'"{part}"'
        else:
            out += ("." if out else "") + str(part)
    return out


def best_error(exc: ValidationError, data: Any) -> dict:
    """The most telling of the errors: specific before union noise, a wrong value before an
    unknown key, the one reaching deepest into the data (the union member that matched
    furthest), then the shortest location."""
    errors = exc.errors()
    specific = [e for e in errors if e["type"] not in _UNION_NOISE] or errors
    return min(specific, key=lambda e: (e["type"] == "extra_forbidden",
                                        -len(data_path(e["loc"], data, e["type"])),
                                        len(e["loc"])))


def _what(err: dict) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _COMPARE:
        key, sign = _COMPARE[kind]
        limit = ctx.get(key)
        return f"must be {sign} {format(limit, 'g') if isinstance(limit, float) else limit}"
    if kind == "missing":
        return "is required"
    if kind == "literal_error":
        return f"must be {ctx.get('expected')}"
    if kind == "union_tag_invalid":
        return f"must be one of {ctx.get('expected_tags')}"
    if kind == "too_short":
        return "must not be empty" if ctx.get("min_length") == 1 else (
            f"must have at least {ctx.get('min_length')} items")
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters long"
    if kind == "string_pattern_mismatch":
        return f"must match the pattern {ctx.get('pattern')!r}"
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error") or err["msg"])
    if kind in _PLAIN:
        return _PLAIN[kind]
    msg = err["msg"]  # a kind this table does not know: pydantic's own words
    return msg[0].lower() + msg[1:] if msg else kind


def explain(exc: ValidationError, data: Any, prefix: str = "", known_keys=None) -> str:
    """One line for ``exc`` raised while validating ``data``: the place (after ``prefix``),
    what is wrong, and the value found. ``known_keys(parts)``, when given, lists the keys
    allowed at a place, for "did you mean" on an unknown key."""
    from safeclf.errors import closest

    err = best_error(exc, data)
    parts = data_path(err["loc"], data, err["type"])
    got = err.get("input")
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
        # the tag is a key of the mapping at loc: name the key, show its value
        tag = str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
        parts, got = [*parts, tag], (err.get("ctx") or {}).get("tag")
        if err["type"] == "union_tag_not_found":
            return f"{path_text(parts, prefix)} is required"
    where = path_text(parts, prefix)
    if err["type"] == "extra_forbidden":
        known = list(known_keys(parts[:-1])) if known_keys else []
        return f"{where} is not a known field{closest(str(parts[-1]), known) if parts else ''}"
    what = _what(err)
    hint = ""
    if err["type"] in ("union_tag_invalid", "literal_error"):
        ctx = err.get("ctx") or {}
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected_tags") or ctx.get("expected")))
        hint = closest(str(got), choices)
    if err["type"] == "missing" or isinstance(got, dict | list) \
            or (got is None and err["type"] != "none_required"):
        tail = ""
    else:
        shown = repr(got)
        if len(shown) > 80:  # a value the user can see at the place named, not a screenful
            shown = f"{shown[:60]}… ({len(got) if isinstance(got, str) else len(shown)} characters)"
        tail = f", got {shown}"
    return (f"{where} {what}{tail}" if where else f"{what}{tail}") + hint


def model_keys(root: type[BaseModel]):
    """``known_keys`` for :func:`explain`: the fields of the model found at a data path."""

    def keys(parts):
        model = _model_at(root, parts)
        return list(model.model_fields) if model else []

    return keys


def _model_at(root: type[BaseModel], parts) -> type[BaseModel] | None:
    model: Any = root
    for part in parts:
        if isinstance(part, int):
            continue
        field_info = getattr(model, "model_fields", {}).get(part)
        if field_info is None:
            return None
        candidates = [a for a in _types(field_info.annotation)
                      if isinstance(a, type) and issubclass(a, BaseModel)]
        if not candidates:
            return None
        model = candidates[0]
    return model if isinstance(model, type) else None


def _types(annotation) -> list:
    """``annotation`` and every type nested in its arguments (unions, lists, dicts)."""
    out, todo = [], [annotation]
    while todo:
        a = todo.pop(0)
        out.append(a)
        todo.extend(getattr(a, "__args__", ()))
    return out
