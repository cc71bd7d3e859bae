"""bloomspan.ingest: rewrite documents on their way into the index.

Load the mined phrases (:class:`PhraseSet`), build a :class:`Cleaner` with a
:class:`CleanerConfig`, and ``clean_batch`` / ``clean`` documents: boilerplate phrases are
stripped, marked or down-weighted, optionally the cleaned text is cut into RAG chunks.
Bad documents come back untouched with a :class:`DocumentError`; nothing is raised for them.

Rooms: ``records/`` (what a run writes, parsed: phrase sets, template records, curation),
``match/`` (one matcher core under the phrase and template matchers, and loading a run's
files), ``clean/`` (the cleaner, its strip rule, chunks, curated cleaners),
``pipeline_export/`` (a native ingest pipeline of a run), ``companions/`` (emerging
boilerplate, near-duplicates, paragraph dedup); ``errors`` and ``batch_tokens`` serve them all.

The names below load lazily (PEP 562), so ``import bloomspan.ingest.base.errors`` or another
submodule does not import numba.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base.lazy_exports import lazy_exports

_EXPORTS = {
    "Chunk": "clean",
    "chunk_text": "clean",
    "Cleaner": "clean",
    "CleanerConfig": "clean",
    "CleanResult": "clean",
    "FieldReport": "clean",
    "junction": "clean",
    "strip_spans": "clean",
    "CleaningFailedError": "base.errors",
    "DocumentError": "base.errors",
    "DocumentTooLargeError": "base.errors",
    "EmptyFieldError": "base.errors",
    "FieldTypeError": "base.errors",
    "IngestConfigError": "base.errors",
    "IngestError": "base.errors",
    "InvalidDocumentError": "base.errors",
    "InvalidTextError": "base.errors",
    "MissingFieldError": "base.errors",
    "PhraseSetError": "base.errors",
    "MatchResult": "match",
    "PhraseMatcher": "match",
    "TemplateMatcher": "match",
    "PhraseRecord": "records",
    "PhraseSet": "records",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .base.errors import (
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
    from .clean import Chunk, Cleaner, CleanerConfig, CleanResult, FieldReport, chunk_text, junction, strip_spans
    from .match import MatchResult, PhraseMatcher, TemplateMatcher
    from .records import PhraseRecord, PhraseSet


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
