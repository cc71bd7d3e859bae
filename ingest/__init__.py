"""bloomspan.ingest: rewrite documents on their way into the index.

Load the mined phrases (:class:`PhraseSet`), build a :class:`Cleaner` with a
:class:`CleanerConfig`, and ``clean_batch`` / ``clean`` documents: boilerplate phrases are
stripped, marked or down-weighted, optionally the cleaned text is cut into RAG chunks.
Bad documents come back untouched with a :class:`DocumentError`; nothing is raised for them.

The names below load lazily (PEP 562), so ``import bloomspan.ingest.errors`` or another
submodule does not import numba.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Chunk": "chunking",
    "chunk_text": "chunking",
    "Cleaner": "cleaner",
    "CleanerConfig": "cleaner",
    "CleanResult": "cleaner",
    "FieldReport": "cleaner",
    "junction": "cleaner",
    "strip_spans": "cleaner",
    "CleaningFailedError": "errors",
    "DocumentError": "errors",
    "DocumentTooLargeError": "errors",
    "EmptyFieldError": "errors",
    "FieldTypeError": "errors",
    "IngestConfigError": "errors",
    "IngestError": "errors",
    "InvalidDocumentError": "errors",
    "InvalidTextError": "errors",
    "MissingFieldError": "errors",
    "PhraseSetError": "errors",
    "MatchResult": "matcher",
    "PhraseMatcher": "matcher",
    "PhraseRecord": "phrase_set",
    "PhraseSet": "phrase_set",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .chunking import Chunk, chunk_text
    from .cleaner import Cleaner, CleanerConfig, CleanResult, FieldReport, junction, strip_spans
    from .errors import (
        CleaningFailedError,
        DocumentError,
        DocumentTooLargeError,
        EmptyFieldError,
        FieldTypeError,
        IngestConfigError,
        IngestError,
        InvalidDocumentError,
        InvalidTextError,
        MissingFieldError,
        PhraseSetError,
    )
    from .matcher import MatchResult, PhraseMatcher
    from .phrase_set import PhraseRecord, PhraseSet


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bloomspan.ingest' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
