"""Cleaning: strip, mark or down-weight matched boilerplate in documents.

:class:`Cleaner` (with a :class:`CleanerConfig`) applies any matcher of
:mod:`bloomspan.ingest.match` through its one interface; :func:`curated_cleaner` adds the
operator's allow and deny entries; :func:`chunk_text` cuts cleaned text into RAG chunks.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Cleaner": "cleaner",
    "CleanerConfig": "cleaner",
    "CleanResult": "cleaner",
    "FieldReport": "cleaner",
    "junction": "cleaner",
    "strip_spans": "cleaner",
    "RATIO_FLOOR": "cleaner",
    "Chunk": "chunking",
    "chunk_text": "chunking",
    "DeniedText": "denied_text",
    "CuratedCleaner": "curated_cleaner",
    "curated_cleaner": "curated_cleaner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # PEP 562: a submodule loads (and imports numba) when first used
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
