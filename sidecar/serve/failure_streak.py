"""Log a repeated background action by its state, not by its attempts.

The template watcher reloads every few seconds; while the cluster is down each attempt fails
the same way. :class:`FailureStreak` logs one line when the action starts failing (or fails
differently), a summary line every ``summary_every`` seconds while it keeps failing, and one
line when it works again — never a traceback: the cause is the cluster, not a bug here.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

DEFAULT_SUMMARY_EVERY = 60.0


def one_line(exc: BaseException, limit: int = 200) -> str:
    """``Type: message`` on one line, at most ``limit`` characters of message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:limit]}" if text else type(exc).__name__


class FailureStreak:
    """The failing/working state of one repeated action, logged on change (see the module doc)."""

    def __init__(self, what: str, logger: logging.Logger, summary_every: float = DEFAULT_SUMMARY_EVERY,
                 clock: Callable[[], float] = time.monotonic):
        self.what, self.log, self.summary_every, self.clock = what, logger, summary_every, clock
        self.since: float | None = None
        self.attempts = 0
        self.kind: str | None = None
        self.last_line = 0.0

    @property
    def failing(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException) -> None:
        now = self.clock()
        kind = type(exc).__name__
        if self.since is None or kind != self.kind:
            if self.since is None:
                self.since, self.attempts = now, 0
            self.attempts += 1
            self.kind, self.last_line = kind, now
            self.log.error("%s failing: %s (retrying; one line per %.0f s while it lasts)", self.what, one_line(exc),
                           self.summary_every)
            return
        self.attempts += 1
        if now - self.last_line >= self.summary_every:
            self.last_line = now
            self.log.warning("%s still failing after %.0f s (%d attempts): %s", self.what, now - self.since,
                             self.attempts, one_line(exc))

    def succeeded(self) -> None:
        if self.since is None:
            return
        self.log.warning("%s recovered after %.0f s (%d failed attempts)", self.what, self.clock() - self.since,
                         self.attempts)
        self.since, self.attempts, self.kind = None, 0, None
