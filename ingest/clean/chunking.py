"""Split cleaned text into overlapping chunks for retrieval (RAG).

Sizes are in **characters** (Python ``str`` code points), not tokens: the retrieval
model's tokenizer is not ours, characters are cheap to count, deterministic, and a
character budget bounds any downstream tokenizer's count (roughly 4 characters per
model token for English).

Rules (:func:`chunk_text`, ``size`` S, ``overlap`` O, ``0 <= O < S``):

* Every chunk is ``text[start:end]`` with ``1 <= end - start <= S``, no leading or trailing
  whitespace; chunks are ordered, their starts and ends strictly increase.
* Every non-whitespace character of ``text`` lies in at least one chunk.
* A chunk ends at the best break in its window ``[start + F, start + S]`` where
  ``F = max(S // 2, O + 1)`` (so no chunk is cut absurdly short and the next one always
  advances): the last paragraph break (a blank line) if any, else the last sentence end
  (``.``, ``!``, ``?`` or ``…``, optionally followed by closing quotes/brackets, then
  whitespace), else the last whitespace, else a hard cut at ``start + S``.
* The next chunk starts ``O`` characters before the previous end, moved forward to the
  start of the next word (never into the middle of a word unless a word is longer than
  the window) and past whitespace; so consecutive chunks share at most ``O`` characters.
  With ``O = 0`` chunks are disjoint and only whitespace lies between them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..base.errors import IngestConfigError

_PARAGRAPH_RE = re.compile(r"\n[^\S\n]*\n")
_SENTENCE_END_RE = re.compile(r"[.!?\u2026][\"'\u00bb\u201d\u2019)\]]*(?=\s)")
_WS_RE = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class Chunk:
    """``text == source[start:end]`` (character offsets into the chunked text)."""

    start: int
    end: int
    text: str


def validate_chunking(size: int | None, overlap: int) -> None:
    """Raise :class:`IngestConfigError` unless ``size`` is None or an int >= 1 and ``0 <= overlap < size``."""
    if size is None:
        if overlap:
            raise IngestConfigError("chunk_overlap", overlap, "needs chunk_size; set chunk_size or leave chunk_overlap at 0")
        return
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise IngestConfigError("chunk_size", size, "must be an integer >= 1 (characters), or None for no chunks")
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap < size:
        raise IngestConfigError("chunk_overlap", overlap, f"must be an integer with 0 <= chunk_overlap < chunk_size={size}")


def _last_break(text: str, pos: int, lo: int, hi: int) -> int:
    """Best end position in ``[lo, hi]`` for a chunk starting at ``pos`` (a break *at* p means
    the chunk is text[pos:p]); -1 if none."""
    best = -1
    for m in _PARAGRAPH_RE.finditer(text, lo, hi + 1):
        best = m.start()  # end the chunk before the blank line
    if best >= lo:
        return best
    for m in _SENTENCE_END_RE.finditer(text, pos, min(hi + 1, len(text))):
        if lo <= m.end() <= hi:
            best = m.end()
    if best >= lo:
        return best
    # last whitespace character at index p with lo <= p <= hi: the chunk is text[..:p]
    p = max(text.rfind(c, lo, hi + 1) for c in (" ", "\n", "\t"))
    if p >= lo:
        return p
    for m in _WS_RE.finditer(text, lo, min(hi + 1, len(text))):
        best = m.start()
    return best


def _skip_ws(text: str, p: int) -> int:
    n = len(text)
    while p < n and text[p].isspace():
        p += 1
    return p


def chunk_text(text: str, size: int, overlap: int = 0) -> list[Chunk]:
    """Chunks of ``text`` following the module rules (sizes in characters)."""
    validate_chunking(size, overlap)
    n = len(text)
    min_fill = min(size, max(size // 2, overlap + 1))
    chunks: list[Chunk] = []
    pos = _skip_ws(text, 0)
    while pos < n:
        limit = pos + size
        if limit >= n:
            end = n
        else:
            end = _last_break(text, pos, pos + min_fill, limit)
            if end < 0:
                end = limit
        chunk_end = end
        while chunk_end > pos and text[chunk_end - 1].isspace():
            chunk_end -= 1
        chunks.append(Chunk(pos, chunk_end, text[pos:chunk_end]))
        if _skip_ws(text, end) >= n:  # only whitespace left
            break
        nxt = end
        if overlap:
            nxt = max(end - overlap, pos + 1)
            if not text[nxt - 1].isspace() and not text[nxt].isspace():
                # inside a word: start at the next whitespace before end, else at end
                m = _WS_RE.search(text, nxt, end)
                nxt = m.start() if m is not None else end
        pos = _skip_ws(text, nxt)
    return chunks
