"""Dotted field paths in JSON documents (``"text"``, ``"page.body"``), as OpenSearch names them."""
from __future__ import annotations

from typing import Any

MISSING = object()
"""Returned by :func:`lookup_field` when the path is absent (distinct from a JSON null)."""


def lookup_field(doc: Any, path: str) -> Any:
    """Value at ``path``: a flat key first (``"a.b"`` as one key), else dots through nested
    objects; :data:`MISSING` when absent or when ``doc`` is not an object."""
    if not isinstance(doc, dict):
        return MISSING
    if path in doc:
        return doc[path]
    cur: Any = doc
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return MISSING
        cur = cur[part]
    return cur
