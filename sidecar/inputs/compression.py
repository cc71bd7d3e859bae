"""JSON Lines files plain, gzip (``.jsonl.gz``) or Zstandard (``.jsonl.zst``), read and written
as streams of lines.

Reading, the file's first bytes decide (gzip ``1f 8b``, Zstandard ``28 b5 2f fd``), so a
compressed file with a plain name — or the reverse — is read as what it holds. Writing, the
name decides: ``OUT.jsonl.gz`` is written gzip, ``OUT.jsonl.zst`` Zstandard, anything else
plain. A plain file is the file object itself, as before: the plain fast path costs one
4-byte read more.

A truncated compressed file (an interrupted download) stops the stream at the first line that
cannot be decompressed whole; every line before it has been yielded, and
:class:`DamagedInputError` names the file, that line and the decompressed byte offset, in one
line. Damaged bytes inside the data are the same one-line error where the decompressor notices
them (gzip at the latest at the member's CRC, so lines decoded just before may be wrong). The standard library's gzip raises at a truncated end; Zstandard's stream reader returns
short data without a word, so :class:`_ZstdFrames` checks each frame's end itself.
"""
from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from bloomspan.sidecar.errors import BloomspanSidecarError

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
READ_CHUNK = 1 << 20  # compressed bytes per read, and the line buffer's size
GZIP_LEVEL = 6  # zlib's own default: level 9 costs about twice the CPU for a few per cent
ZSTD_LEVEL = 3  # zstd's default level


class Compression(StrEnum):
    PLAIN = "plain"
    GZIP = "gzip"
    ZSTD = "zstd"


class DamagedInputError(BloomspanSidecarError, ValueError):
    """A compressed input cannot be decompressed past ``line`` (1-based: the first line not
    read whole); ``position`` is the count of decompressed bytes read before it."""

    def __init__(self, path: str, line: int, position: int, reason: str):
        self.path, self.line, self.position, self.reason = path, line, position, reason
        self.where = f"at byte {position:,} of the decompressed data"
        self.detail = f"{reason} {self.where}; the {line - 1:,} lines before it were read (re-download or re-compress " \
                      "the file)"  # the message without the file and line
        super().__init__(f"{path}:{line}: {self.detail}", item=path)


def detect_compression(path: str) -> Compression:
    """The compression ``path`` holds, by its magic bytes (an empty file is plain)."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(GZIP_MAGIC):
        return Compression.GZIP
    if head.startswith(ZSTD_MAGIC):
        return Compression.ZSTD
    return Compression.PLAIN


def compression_of_name(path: str) -> Compression:
    """The compression an output's name asks for: ``.gz``, ``.zst`` / ``.zstd``, else plain."""
    lower = str(path).lower()
    if lower.endswith(".gz"):
        return Compression.GZIP
    if lower.endswith((".zst", ".zstd")):
        return Compression.ZSTD
    return Compression.PLAIN


UTF8_BOM = b"\xef\xbb\xbf"


def not_utf8(exc: UnicodeDecodeError) -> str:
    """The one wording of a line that is not UTF-8, at its 0-based byte in the line."""
    return f"not valid UTF-8 ({exc.reason} at byte {exc.start})"


@contextmanager
def open_decompressed(path: str, kind: Compression | None = None) -> Iterator:
    """The lines of ``path`` (bytes, each with its newline but perhaps the last), decompressed
    as ``kind`` (default: what its first bytes say).

    A plain file gives the file object itself (iterating it is the fast path); a compressed
    one a generator that raises :class:`DamagedInputError` where the data stops making sense.
    Commands open files with :func:`.lines.open_lines`, which reads WARC and WET files first.
    A UTF-8 byte order mark that starts the data is not part of its first line (every command
    reads it the same way).
    """
    kind = detect_compression(path) if kind is None else kind
    with open(path, "rb") as raw:
        if kind is Compression.PLAIN:
            if raw.read(len(UTF8_BOM)) != UTF8_BOM:
                raw.seek(0)
            yield raw
            return
        stream = (gzip.GzipFile(fileobj=raw, mode="rb") if kind is Compression.GZIP
                  else io.BufferedReader(_ZstdFrames(raw), READ_CHUNK))
        with stream:
            yield iter_lines(stream, path)


def iter_lines(stream, path: str) -> Iterator[bytes]:
    """The lines of a decompressing ``stream``, its decompression errors turned into
    :class:`DamagedInputError` (the lines before the damage are all yielded first)."""
    import zstandard

    line = position = 0
    try:
        for raw in stream:
            line += 1
            position += len(raw)
            if line == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]
            yield raw
    except EOFError:
        raise DamagedInputError(path, line + 1, position, "compressed data ends early (a truncated file)") from None
    except (zlib.error, gzip.BadGzipFile, zstandard.ZstdError, OSError) as exc:
        raise DamagedInputError(path, line + 1, position, f"compressed data is damaged ({exc})") from None


class _ZstdFrames(io.RawIOBase):
    """Decompressed bytes of a Zstandard file of one or more frames; :class:`EOFError` when
    the file ends inside a frame (``zstandard``'s own stream reader would return short data)."""

    def __init__(self, raw):
        import zstandard

        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._frame = self._dctx.decompressobj()
        self._in_frame = False  # bytes of an unfinished frame have been read
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._out:
            chunk = self._raw.read(READ_CHUNK)
            if not chunk:
                if self._in_frame:
                    raise EOFError("Zstandard data ends inside a frame")
                return 0
            self._out = memoryview(self._decompress(chunk))
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _decompress(self, data: bytes) -> bytes:
        parts = []
        while data:
            if self._frame.eof:  # a frame ended: the next one needs its own decompressor
                self._frame = self._dctx.decompressobj()
            parts.append(self._frame.decompress(data))
            self._in_frame = not self._frame.eof
            data = self._frame.unused_data if self._frame.eof else b""
        return b"".join(parts)


@contextmanager
def open_output(path: str, compression: Compression | None = None) -> Iterator:
    """A binary stream writing ``path``, compressed as ``compression`` (default: as the name
    asks, :func:`compression_of_name`); a ``.partial`` file passes its final name's choice."""
    kind = compression_of_name(path) if compression is None else compression
    if kind is Compression.PLAIN:
        with open(path, "wb") as f:
            yield f
        return
    with open(path, "wb") as raw:
        if kind is Compression.GZIP:
            # mtime=0: the same documents give the same bytes, run after run
            stream = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=0)
        else:
            import zstandard

            stream = zstandard.ZstdCompressor(level=ZSTD_LEVEL).stream_writer(raw, closefd=False)
        with io.BufferedWriter(stream, READ_CHUNK) as buffered:
            yield buffered
