"""Errors of the ingest hook: one base class, subclasses that carry their data.

Two families:

* Setup errors are raised: a bad :class:`~bloomspan.ingest.clean.cleaner.CleanerConfig`
  (:class:`IngestConfigError`) or a bad phrase file or record (:class:`PhraseSetError`).
* Document errors (:class:`DocumentError` and subclasses) are *never raised* out of
  ``Cleaner.clean``: they are returned in ``CleanResult.error`` next to the untouched
  document, so one bad document neither crashes a batch nor gets lost. Each carries the
  document id (``doc_id``, may be None) and the field (``field``, None for whole-document
  problems); :meth:`DocumentError.to_dict` gives a JSON-serialisable form for dead-letter
  queues and bulk-error reports.
"""
from __future__ import annotations

from typing import Any


class IngestError(Exception):
    """Base class of every error raised or returned by ``bloomspan.ingest``."""


class IngestConfigError(IngestError, ValueError):
    """A configuration field has an invalid value; ``field`` names it, ``value`` is what it got."""

    def __init__(self, field: str, value: Any, fix: str):
        self.field = field
        self.value = value
        self.fix = fix
        super().__init__(f"{field}={value!r}: {fix}")


class PhraseSetError(IngestError, ValueError):
    """A phrase record is invalid.

    ``source`` names the file (or the record list, default "records"); ``line`` is the
    1-based line of a JSONL file, ``index`` the 0-based position in a record list (None
    when not applicable); ``key`` the offending key of the record (None if not tied to one).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str = "records",
        line: int | None = None,
        index: int | None = None,
        key: str | None = None,
    ):
        self.source = source
        self.line = line
        self.index = index
        self.key = key
        self.message = message
        where = source
        if line is not None:
            where += f" line {line}"
        if index is not None:
            where += f" [{index}]"
        if key is not None:
            where += f" key {key!r}"
        super().__init__(f"{where}: {message}")


class DocumentError(IngestError):
    """A document could not be cleaned; returned in ``CleanResult.error``, never raised by ``clean``.

    ``doc_id``: the document's id if known; ``field``: the offending field or None.
    """

    kind = "document"

    def __init__(self, message: str, *, doc_id: Any = None, field: str | None = None):
        self.doc_id = doc_id
        self.field = field
        self.message = message
        where = []
        if doc_id is not None:
            where.append(f"doc {doc_id!r}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message)

    def to_dict(self) -> dict:
        """JSON-serialisable description: ``{"error", "doc_id", "field", "message"}``."""
        doc_id = self.doc_id
        if doc_id is not None and not isinstance(doc_id, (str, int, float, bool)):
            doc_id = repr(doc_id)
        return {"error": self.kind, "doc_id": doc_id, "field": self.field, "message": self.message}


class InvalidDocumentError(DocumentError):
    """The document itself is not a JSON object (dict)."""

    kind = "invalid_document"


class MissingFieldError(DocumentError):
    """A configured field is absent from the document (and ``skip_missing`` is False)."""

    kind = "missing_field"


class FieldTypeError(DocumentError):
    """A configured field is not a string (a number, a nested object, a list, bytes, ...)."""

    kind = "field_type"


class EmptyFieldError(DocumentError):
    """A configured field holds the empty string (and ``skip_missing`` is False)."""

    kind = "empty_field"


class InvalidTextError(DocumentError):
    """A configured field is not valid Unicode text (lone UTF-16 surrogates, which UTF-8 cannot encode)."""

    kind = "invalid_text"


class DocumentTooLargeError(DocumentError):
    """A configured field is longer than ``CleanerConfig.max_chars``."""

    kind = "too_large"


class CleaningFailedError(DocumentError):
    """An unexpected internal error while cleaning this document (a bug: please report it).

    ``cause`` holds the original exception; the document comes back untouched.
    """

    kind = "internal"

    def __init__(self, message: str, *, doc_id: Any = None, field: str | None = None, cause: BaseException | None = None):
        super().__init__(message, doc_id=doc_id, field=field)
        self.cause = cause
