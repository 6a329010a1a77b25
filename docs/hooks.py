"""MkDocs hook: the docstrings' Sphinx roles (``:class:`Quantity```, ``:meth:`~a.b.c```) read
as plain code names on the site (mkdocstrings renders Markdown, not reStructuredText roles)."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|mod|attr|exc|obj|const):<code>(~?)([^<]*)</code>")


def _name(match: re.Match) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target.lstrip('.')}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(_name, html)
