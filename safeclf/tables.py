"""Plain-text renderings of small tables (Markdown), without extra dependencies."""

from __future__ import annotations


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def to_markdown(frame) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (no index)."""
    cols = [str(c) for c in frame.columns]
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
