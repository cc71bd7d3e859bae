"""Index templates as JSON, loaded by the code and installed by `bloomspan setup`.

- ``template-index.json``: the template index (phrases, runs, document-id maps).
- ``documents.json``: fields bloomspan adds to source documents (``bloomspan.*``,
  ``<field>_clean`` for the downweight mode, chunk-fingerprint filters).
- ``lease.json``: the single-writer lease index that keeps one mining run at a time.
"""
from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources

NAMES = ("template-index", "documents", "lease")


@cache
def _load(name: str) -> dict:
    if name not in NAMES:
        raise ValueError(f"mapping {name!r}: unknown; choose one of {', '.join(NAMES)}")
    return json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text("utf-8"))


def load(name: str) -> dict:
    """A fresh copy of mapping ``name`` (callers may edit it)."""
    return copy.deepcopy(_load(name))


def index_template(name: str, index_patterns: list[str], priority: int = 100) -> dict:
    """An ``_index_template`` body for ``index_patterns`` from mapping ``name``."""
    body = load(name)
    return {"index_patterns": index_patterns, "priority": priority, "template": body["template"],
            "_meta": {"managed_by": "bloomspan", "mapping": name, **body.get("_meta", {})}}
