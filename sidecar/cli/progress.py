"""Progress of a CLI command on stderr: a bar redrawn in place on a terminal, one line per
event when stderr is a pipe or a file (logs, CI, `kubectl logs`).

:class:`Progress` is the ``progress(stage, done, total=None)`` callback every long-running
library function takes. It needs nothing beyond click (no tqdm): the bar is one line per
stage, ``\\r``-redrawn at most ten times a second, finished with a newline when the next
stage starts or the command ends. :meth:`Progress.note` prints a message of its own line
between redraws (the numba compilation notice uses it), so a note never lands in the middle
of a bar.
"""
from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections.abc import Iterator

import click

MODES = ("auto", "bar", "lines", "none")
BAR_WIDTH = 24
REDRAW_SECONDS = 0.1


class Progress:
    """``progress(stage, done, total)`` on ``stream`` (stderr by default).

    mode: ``bar`` (redrawn in place), ``lines`` (one grep-able line per event:
    ``bloomspan: scan 1000/3000``), ``none``, or ``auto`` (bar on a terminal, else lines).
    Safe to call from several threads.
    """

    def __init__(self, mode: str = "auto", stream=None):
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r}: choose one of {', '.join(MODES)}")
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "bar" if _isatty(self.stream) else "lines"
        self.mode = mode
        self._lock = threading.Lock()
        self._stage: str | None = None  # stage whose bar line is open (bar mode)
        self._last_draw = 0.0
        self._drawn_width = 0

    def __call__(self, stage: str, done: int, total: int | None = None) -> None:
        if self.mode == "none":
            return
        with self._lock:
            if self.mode == "lines":
                self._write(f"bloomspan: {stage} {done}" + (f"/{total}" if total is not None else "") + "\n")
                return
            now = time.monotonic()
            finished = total is not None and done >= total
            if stage == self._stage and not finished and now - self._last_draw < REDRAW_SECONDS:
                return
            if self._stage is not None and stage != self._stage:
                self._write("\n")
                self._drawn_width = 0
            self._stage = stage
            self._last_draw = now
            self._draw(render_bar(stage, done, total, _terminal_width()))

    def note(self, text: str) -> None:
        """``text`` on a line of its own; an open bar line is finished first."""
        with self._lock:
            self._end_line()
            self._write(text + "\n")

    def close(self) -> None:
        """Finish the open bar line (idempotent)."""
        with self._lock:
            self._end_line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ internals
    def _draw(self, line: str) -> None:
        pad = max(self._drawn_width - len(line), 0)
        self._write("\r" + line + " " * pad)
        self._drawn_width = len(line)

    def _end_line(self) -> None:
        if self._stage is not None:
            self._write("\n")
            self._stage = None
            self._drawn_width = 0

    def _write(self, text: str) -> None:
        click.echo(text, file=self.stream, nl=False)
        self.stream.flush()


def render_bar(stage: str, done: int, total: int | None, width: int = 80) -> str:
    """One bar line: ``scan       [#########...............]   1,200/3,000  40%``; without a
    total just the count. Never wider than ``width`` (a wrapped line breaks the redraw)."""
    if total:
        share = min(max(done / total, 0.0), 1.0)
        filled = int(round(share * BAR_WIDTH))
        line = (f"{stage:<10} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
                f"{done:>{len(f'{total:,}')},}/{total:,} {share:4.0%}")
    else:
        line = f"{stage:<10} {done:,}"
    return line[:max(width - 1, 1)]


@contextlib.contextmanager
def command_progress(mode: str = "auto", *, kernels: bool = True) -> Iterator[Progress]:
    """The progress callback of one command; with ``kernels`` also the numba compilation
    notice (see :mod:`.kernel_notice`). Bars are finished and the compile time said at the
    end, also when the command fails."""
    progress = Progress(mode)
    finish = None
    if kernels:
        from .kernel_notice import watch_compilation

        finish = watch_compilation(progress.note)
    try:
        yield progress
    finally:
        progress.close()
        if finish is not None:
            finish()


def echo_note(text: str, progress: Progress | None = None) -> None:
    """A message for the user on stderr, through ``progress`` when a bar may be open."""
    if progress is not None:
        progress.note(text)
    else:
        click.echo(text, err=True)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False


def _terminal_width() -> int:
    return shutil.get_terminal_size(fallback=(80, 24)).columns
