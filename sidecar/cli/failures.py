"""How failures reach the user of the ``bloomspan`` CLI: one line on stderr and a non-zero exit
status, never a traceback.

* :class:`BloomspanGroup` is the click group of the CLI: a library error
  (:class:`~bloomspan.sidecar.errors.BloomspanSidecarError`, an ingest error) or a cluster that
  stops answering in the middle of any command becomes one ``Error: ...`` line. Anything else
  is a bug and keeps its traceback.
* :func:`configure_logging` sets up the log format and sends the retry chatter of urllib3 and
  opensearch-py (a warning with a traceback per retried request: ~176 lines for a node that
  is down) to DEBUG, where ``--log-level DEBUG`` still shows it.
"""
from __future__ import annotations

import logging
import sys

import click

# Loggers whose warnings describe transport retries, not the command's outcome.
TRANSPORT_LOGGERS = ("urllib3", "opensearch", "opensearchpy")


class TransportNoiseToDebug(logging.Filter):
    """On a handler: records of :data:`TRANSPORT_LOGGERS` below ERROR are re-labelled DEBUG and
    emitted only when the root logger is at DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(TRANSPORT_LOGGERS) or record.levelno >= logging.ERROR:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


def configure_logging(level: str) -> None:
    """Root logger to stderr at ``level``: one line per event, transport retries at DEBUG."""
    root = logging.getLogger()
    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    root.setLevel(level.upper())
    # opensearch-py logs every failed attempt as a WARNING (with exc_info) and urllib3 every
    # retry; the command reports the outcome in one line instead.
    for name in TRANSPORT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.ERROR)
    for handler in root.handlers:
        if not any(isinstance(f, TransportNoiseToDebug) for f in handler.filters):
            handler.addFilter(TransportNoiseToDebug())


def user_error_message(exc: BaseException, cluster_url: str | None = None) -> str | None:
    """The one line for an error the user can act on, or ``None`` for a bug."""
    from bloomspan.sidecar.errors import BloomspanSidecarError

    if isinstance(exc, BloomspanSidecarError):
        return str(exc)
    if "bloomspan.ingest.base.errors" in sys.modules:
        from bloomspan.ingest.base.errors import IngestError

        if isinstance(exc, IngestError):
            return str(exc)
    if "opensearchpy" in sys.modules:
        from opensearchpy.exceptions import ConnectionError as TransportConnectionError, TransportError

        from bloomspan.sidecar.cluster.connection import describe_unreachable

        if isinstance(exc, TransportConnectionError):
            return describe_unreachable(cluster_url or "the cluster", exc)
        if isinstance(exc, TransportError) and isinstance(exc.status_code, int):
            return cluster_answer_message(exc, cluster_url)
    return None


def cluster_answer_message(exc, cluster_url: str | None) -> str:
    """``the cluster at URL answered 400 (index_not_found_exception): no such index [x]``."""
    error_type, reason = None, None
    info = exc.info if isinstance(exc.info, dict) else {}
    err = info.get("error")
    if isinstance(err, dict):
        cause = (err.get("root_cause") or [err])[0]
        error_type, reason = cause.get("type"), cause.get("reason")
    elif isinstance(exc.error, str):
        error_type = exc.error
    where = f"the cluster at {cluster_url}" if cluster_url else "the cluster"
    text = f"{where} answered {exc.status_code}" + (f" ({error_type})" if error_type else "")
    if reason:
        text += f": {reason}"
    return text if len(text) <= 400 else text[:397] + "..."


class BloomspanGroup(click.Group):
    """A click group whose commands fail with one line, never a traceback, for user errors."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            message = user_error_message(exc, ctx.meta.get("bloomspan.cluster_url"))
            if message is None:
                raise
            logging.getLogger("bloomspan.cli").debug("command failed", exc_info=True)
            raise click.ClickException(message) from None
