"""Tokenizer: Unicode-normalised (NFKC, then case folding) runs of letters and digits.

A token is a maximal run of token characters of ``casefold(NFKC(text))``: letters and
digits (``str.isalnum``), and combining marks that follow one (:mod:`.normalization` has
the definition). "Настройки" in NFD and in NFC, "ＡＢＣ" and "abc", "ﬁle" and "file" give
the same tokens. Everything else — punctuation, "©", "_", whitespace — separates tokens.

Offsets are character offsets into the *original* text (``text[start:end]`` is what the
token came from), so the ingest hook can cut phrases out of the original.

Two implementations with the same output:

* :func:`tokenize` / :func:`token_spans` — the plain reference: ``re`` + ``str.lower`` for
  ASCII text, ``re`` + ``str.casefold`` for NFKC-normalised text whose every character
  behaves under normalisation as it looks (:func:`_shortcut_table`), else the definition
  itself (:func:`.normalization.normalized_token_spans`).
* :func:`encode_batch` — the fast path for a batch of documents: the batch becomes one
  array of code points (a byte each when all is ASCII, two below 65536, else four;
  :func:`joined_code_points`) and :meth:`Vocabulary.encode_documents` tokenizes it in two
  numba kernels: the scan (:func:`.token_keys.scan_documents`) finds the tokens through
  per-code-point tables, marks line starts and computes each token's key on the way (the
  packed code points of an ASCII or Cyrillic token, else a hash of its folded text), with
  no load from the vocabulary (a document of letters and separators of one code point
  each, nearly every page, without a branch per code point, eight code points to a word:
  :func:`.token_keys.simple_document`); then the keys are resolved to ids. Stretches the
  tables cannot decide alone (a combining mark that composes, "½") go to the reference.
  :func:`encode_batch_reference` is its twin.
"""
from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .normalization import (
    CLASS_MARK,
    CLASS_NON_STARTER,
    CLASS_SEPARATOR,
    CLASS_TOKEN,
    character_flags,
    is_mark,
    normalization_tables,
    normalized_token_spans,
)
from .str_views import code_point_view

if TYPE_CHECKING:  # pragma: no cover
    from .vocabulary import Vocabulary

# [^\W_] = word characters minus underscore = letters and digits (Python's \w also
# admits underscore, which must separate). CPython's sre tests \w as
# Py_UNICODE_ISALNUM(c) or c == "_", the same predicate as str.isalnum.
_TOKEN_RE = re.compile(r"[^\W_]+")

# Characters per kernel call: bounds the code-point copy and the span arrays.
CHUNK_CHARS = 1 << 22


@functools.cache
def _marked_token_re() -> re.Pattern:
    """A letter or digit, then letters, digits and combining marks."""
    marks = np.flatnonzero(character_flags()[1])
    breaks = np.flatnonzero(np.diff(marks) != 1)  # the last mark of each run but the final one
    firsts = np.concatenate([marks[:1], marks[breaks + 1]]).tolist()
    lasts = np.concatenate([marks[breaks], marks[-1:]]).tolist()
    cls = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                  for a, b in zip(firsts, lasts))
    return re.compile(rf"[^\W_](?:[^\W_]|[{cls}])*")


@functools.cache
def _shortcut_table() -> np.ndarray:
    """bool (0x110000,): True where a character of an NFKC-normalised text tokenizes as it
    looks: letters and digits fold to token characters, marks to marks, separators to
    separators, and no letter or digit continues the segment before it."""
    char_class, _, _ = normalization_tables()
    alnum, mark = character_flags()
    ok = (((char_class == CLASS_TOKEN) & alnum) | ((char_class == CLASS_SEPARATOR) & ~alnum & ~mark)
          | ((char_class == CLASS_MARK) & mark))
    for c in np.flatnonzero(char_class == CLASS_NON_STARTER).tolist():
        ok[c] = mark[c] and all(is_mark(x) for x in chr(c).casefold())
    ok.flags.writeable = False
    return ok


def _spans(text: str) -> tuple[list[str], list[int], list[int]]:
    if text.isascii():  # NFKC changes no ASCII character; casefold is lower there
        ms = list(_TOKEN_RE.finditer(text))
        return [m.group().lower() for m in ms], [m.start() for m in ms], [m.end() for m in ms]
    if unicodedata.is_normalized("NFKC", text) and _shortcut_table()[code_points(text)].all():
        ms = list(_marked_token_re().finditer(text))
        return [m.group().casefold() for m in ms], [m.start() for m in ms], [m.end() for m in ms]
    return normalized_token_spans(text)


def tokenize(text: str) -> list[str]:
    """Normalised tokens of ``text`` in order."""
    return _spans(text)[0]


def token_spans(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokens with character offsets into ``text``.

    Returns ``(tokens, starts, ends)``: ``tokens`` normalised, ``starts``/``ends`` int64
    arrays of shape (n_tokens,), ``ends`` exclusive.
    """
    tokens, starts, ends = _spans(text)
    return tokens, np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def code_points(text: str) -> np.ndarray:
    """Code points of ``text`` in the narrowest array that holds them (no copy of the
    encoded bytes): uint8 when all are below 256, uint16 below 65536, else uint32."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    try:
        return np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    except UnicodeEncodeError:
        pass
    data = text.encode("utf-16-le", "surrogatepass")
    if len(data) == 2 * len(text):  # no surrogate pair: every code unit is a code point
        return np.frombuffer(data, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def joined_code_points(texts: Sequence[str]) -> np.ndarray:
    """``code_points("\\n".join(texts))``: uint8 when every code point is below 256, uint16 below
    65536, else uint32, read-only, over the joined str's own buffer (:func:`.str_views.code_point_view`:
    no encoding, the array keeps the str). Joining copies each text into the widest text's width
    (a copy of memory, ~0.1 ns per character)."""
    return code_point_view("\n".join(texts))


class JoinedTexts:
    """``"\\n".join(texts)`` as :meth:`Vocabulary.encode_documents` reads it, without the
    joined string: its length, and slices that lie within one text."""

    def __init__(self, texts: Sequence[str], doc_begin: np.ndarray):
        self._texts = texts
        self._begin = doc_begin.tolist()
        self._length = int(doc_begin[-1]) + len(texts[-1]) if len(texts) else 0

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, k: slice) -> str:
        d = bisect.bisect_right(self._begin, k.start) - 1
        b = self._begin[d]
        if k.step is not None or k.stop - b > len(self._texts[d]):
            raise IndexError(f"slice {k} of the joined texts does not lie within text {d}")
        return self._texts[d][k.start - b:k.stop - b]


def _chunks(texts: Sequence[str], chunk_chars: int):
    """Consecutive slices of ``texts`` of about ``chunk_chars`` characters (at least one text)."""
    begin = 0
    total = 0
    for i, t in enumerate(texts):
        total += len(t) + 1
        if total >= chunk_chars:
            yield texts[begin:i + 1]
            begin = i + 1
            total = 0
    if begin < len(texts) or not texts:
        yield texts[begin:]


def _check_texts(texts) -> list[str]:
    texts = texts if isinstance(texts, list) else list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
    return texts


def encode_batch(texts: Sequence[str], vocabulary: Vocabulary, with_offsets: bool = False, *,
                 add_new: bool = True, count_df: bool = True, with_lines: bool = False,
                 chunk_chars: int = CHUNK_CHARS):
    """Tokenize a batch of documents and map the tokens to vocabulary ids (fast path).

    Returns ``(ids, doc_offsets)``, with ``with_offsets`` followed by ``(char_starts,
    char_ends)``, with ``with_lines`` then by ``line_starts``:
      ids:         uint32 (W,)   token ids of all documents, concatenated
      doc_offsets: int64 (D+1,)  document d is ids[doc_offsets[d]:doc_offsets[d+1]]
      char_starts: int64 (W,)    start of each token in its own document's text
      char_ends:   int64 (W,)    exclusive end, so ``texts[d][s:e]`` is the original token
      line_starts: uint8 (W,)    :func:`bloomspan.engine.templates.blocks.line_start_flags`
    Tokens equal :func:`tokenize` of each text. New tokens get the next free ids in
    order of first occurrence (so ids do not depend on how a corpus is cut into
    batches); with ``add_new=False`` unknown tokens map to ``vocabulary.UNKNOWN``
    instead. With ``count_df`` each document is counted in the document frequencies.
    """
    texts = _check_texts(texts)
    if chunk_chars < 1:
        raise ValueError(f"chunk_chars={chunk_chars}: must be >= 1")
    tables = normalization_tables()
    id_parts, count_parts, start_parts, end_parts, line_parts = [], [], [], [], []
    for chunk in _chunks(texts, chunk_chars):
        n_docs = len(chunk)
        lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=n_docs)
        doc_begin = np.zeros(n_docs, dtype=np.int64)
        if n_docs > 1:
            np.cumsum(lengths[:-1] + 1, out=doc_begin[1:])
        # "\n" separates and starts a segment, so no token crosses from one document into the next.
        ids, starts, ends, lines, doc_token_end = vocabulary.encode_documents(
            JoinedTexts(chunk, doc_begin), joined_code_points(chunk), doc_begin, doc_begin + lengths, tables,
            add_new=add_new, count_df=count_df, with_offsets=with_offsets, with_lines=with_lines)
        id_parts.append(ids)
        count_parts.append(np.diff(doc_token_end, prepend=0))
        if with_offsets:
            start_parts.append(starts)
            end_parts.append(ends)
        if with_lines:
            line_parts.append(lines)
    ids = _joined(id_parts, np.uint32)
    doc_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    if texts:
        np.cumsum(np.concatenate(count_parts), out=doc_offsets[1:])
    out = [ids, doc_offsets]
    if with_offsets:
        out += [_joined(start_parts, np.int64), _joined(end_parts, np.int64)]
    if with_lines:
        out.append(_joined(line_parts, np.uint8))
    return tuple(out)


def _joined(parts: list[np.ndarray], dtype) -> np.ndarray:
    """The chunks' arrays as one array (each is of its own size, :meth:`Vocabulary.encode_documents`):
    a batch of one chunk returns its arrays as they are."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def line_flags_of(text: str, starts: Sequence[int]) -> np.ndarray:
    """uint8 line-start flags of tokens starting at ``starts`` in ``text`` (the definition
    of :func:`bloomspan.engine.templates.blocks.line_start_flags`): the first token, and a
    token with a "\\n" between the previous token's start and its own."""
    flags = np.zeros(len(starts), dtype=np.uint8)
    for j, s in enumerate(starts):
        flags[j] = j == 0 or "\n" in text[starts[j - 1]:s]
    return flags


def encode_batch_reference(texts: Sequence[str], vocabulary: Vocabulary, with_offsets: bool = False,
                           *, add_new: bool = True, count_df: bool = True, with_lines: bool = False):
    """Plain twin of :func:`encode_batch` (same arguments and results), one token at a time."""
    texts = _check_texts(texts)
    ids: list[int] = []
    doc_offsets = [0]
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    df_seen: list[set[int]] = []
    for text in texts:
        tokens, s, e = token_spans(text)
        for tok in tokens:
            tid = vocabulary.add(tok) if add_new else vocabulary.get(tok, vocabulary.UNKNOWN)
            ids.append(tid)
        doc_offsets.append(len(ids))
        df_seen.append({i for i in ids[doc_offsets[-2]:] if i != vocabulary.UNKNOWN})
        starts.append(s)
        ends.append(e)
        lines.append(line_flags_of(text, s.tolist()))
    if count_df:
        vocabulary.add_document_counts(df_seen)
    out = [np.asarray(ids, dtype=np.uint32), np.asarray(doc_offsets, dtype=np.int64)]

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    if with_offsets:
        out += [cat(starts, np.int64), cat(ends, np.int64)]
    if with_lines:
        out.append(cat(lines, np.uint8))
    return tuple(out)
