"""Errors of the cluster side of the sidecar: one base class, subclasses that carry their data.

Every error names what it is about — ``index`` (a source, template or lease index),
``field`` (a config field or a document field) and ``item`` (a bulk item, a document id, a
run id) — so callers (the CLI, ``bloomspan serve``) can report them without parsing the
message. No error ever carries a credential: connection errors name the URL without its
user-info part.
"""
from __future__ import annotations

from typing import Any


class BloomspanSidecarError(Exception):
    """Base class of every error raised by the cluster modules of ``bloomspan.sidecar``."""

    def __init__(self, message: str, *, index: str | None = None, field: str | None = None,
                 item: Any = None):
        super().__init__(message)
        self.index = index
        self.field = field
        self.item = item


class ClusterConfigError(BloomspanSidecarError, ValueError):
    """A connection or run setting is invalid: ``field`` names it, the message says the fix.

    The value is shown only for non-secret fields.
    """

    def __init__(self, field: str, value: Any, fix: str, *, secret: bool = False):
        shown = "***" if secret else repr(value)
        super().__init__(f"{field}={shown}: {fix}", field=field)
        self.value = None if secret else value
        self.fix, self.secret = fix, secret

    def within(self, section: str) -> ClusterConfigError:
        """The same error naming ``section.field`` (a knob of a composite config's section)."""
        return ClusterConfigError(f"{section}.{self.field}", self.value, self.fix, secret=self.secret)


class ClusterUnavailableError(BloomspanSidecarError):
    """The cluster did not answer (connection refused, TLS failure, authentication)."""


class SourceIndexError(BloomspanSidecarError):
    """The source index is missing, closed, or cannot be read; ``index`` names it."""


class ScanError(BloomspanSidecarError):
    """Reading the source failed mid-way; ``item`` is the scan unit (``"index/shard"``)."""


class CheckpointError(BloomspanSidecarError):
    """A checkpoint or doc log in the work directory cannot be used; ``item`` is its path."""


class WorkDirFullError(BloomspanSidecarError):
    """The run's work directory ran out of space (or quota); ``item`` is the directory."""


class PublishError(BloomspanSidecarError):
    """Writing the template index failed; ``index`` is the physical index, ``item`` the
    first failed bulk item (or a list of them)."""


class RunNotFoundError(BloomspanSidecarError):
    """``rollback`` or ``report`` asked for a run that is absent or incomplete."""


class LeaseHeldError(BloomspanSidecarError):
    """Another holder owns the mining lease: ``item`` is ``{"holder", "expires_at"}``."""


class LeaseLostError(BloomspanSidecarError):
    """The lease expired or was taken over while this run held it; nothing was published."""


class AnnotateError(BloomspanSidecarError):
    """Annotating source documents failed as a whole (mapping conflict, cluster error)."""


class DocumentNotFoundError(BloomspanSidecarError):
    """``explain`` was asked about a document id the source index does not hold."""


class ListenError(BloomspanSidecarError):
    """``serve`` could not listen on its address (the port is taken, the address is not this
    host's, or binding it needs privileges); the message names the address and the fix."""
