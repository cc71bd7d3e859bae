"""Opening an input file as lines, whatever it holds: a WARC or WET file as one JSON line per
record (:mod:`.warc`), anything else as its JSON Lines, plain or decompressed
(:mod:`.compression`). Above both, so that the WARC reader can use the compression's magic
numbers and errors without the compression module importing it back."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .compression import Compression, detect_compression, open_decompressed
from .warc import is_warc, warc_lines


@contextmanager
def open_lines(path: str) -> Iterator:
    """The lines of ``path`` (bytes, each with its newline but perhaps the last), decompressed.

    A plain file gives the file object itself (iterating it is the fast path); a compressed
    one a generator that raises :class:`.compression.DamagedInputError` where the data stops
    making sense; a WARC or WET file one JSON line per record (:mod:`.warc`).
    """
    kind = detect_compression(path)
    if kind is not Compression.ZSTD and is_warc(path):  # a WARC or WET file: its records as JSON Lines lines
        yield warc_lines(path)
        return
    with open_decompressed(path, kind) as lines:
        yield lines
