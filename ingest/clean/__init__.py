"""Cleaning: strip, mark or down-weight matched boilerplate in documents.

:class:`Cleaner` (with a :class:`CleanerConfig`) applies any matcher of
:mod:`bloomspan.ingest.match` through its one interface; :func:`curated_cleaner` adds the
operator's allow and deny entries; :func:`chunk_text` cuts cleaned text into RAG chunks.
"""
from __future__ import annotations

from ..base.lazy_exports import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
