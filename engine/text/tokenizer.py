"""Tokenizer: lowercase, split on anything that is not a Unicode letter or digit.

A token is a maximal run of characters ``c`` with ``c.isalnum()`` (Unicode letters and
digits: categories L*, Nd, Nl, No). Everything else — punctuation, "©", "_", whitespace,
combining marks — separates tokens. Tokens are lowercased with ``str.lower``.

Offsets are character offsets into the *original* text (``text[start:end]`` is the token
before lowercasing), so the ingest hook can cut phrases out of the original.

Two implementations with the same output:

* :func:`tokenize` / :func:`token_spans` — the plain reference (``re`` + ``str.lower``).
* :func:`encode_batch` — the fast path for a batch of documents: the batch becomes an
  array of code points (bytes when ASCII, else UTF-32) and one numba kernel
  (:meth:`Vocabulary.encode_documents`) finds the alnum runs through a per-code-point
  class table, lowercases through a per-code-point table and hashes each token straight
  into the vocabulary, counting document frequencies on the way. Only two characters do not
  lowercase to one character in isolation: "İ" (U+0130 -> "i" + U+0307, handled in the
  kernel) and "Σ" (U+03A3, final or medial sigma depending on its neighbours inside the
  token, handed back to ``str.lower``). :func:`encode_batch_reference` is its twin.
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .vocabulary import Vocabulary

# [^\W_] = word characters minus underscore = letters and digits (Python's \w also
# admits underscore, which must separate). CPython's sre tests \w as
# Py_UNICODE_ISALNUM(c) or c == "_", the same predicate as str.isalnum.
_TOKEN_RE = re.compile(r"[^\W_]+")

N_CODE_POINTS = 0x110000
# Classes in the table returned by :func:`char_tables`.
CLASS_OTHER = 0           # separates tokens
CLASS_ALNUM = 1           # part of a token; lowercases to the one code point lower[c]
CLASS_DOTTED_CAPITAL_I = 2  # U+0130 "İ": lowercases to "i" + U+0307 COMBINING DOT ABOVE
CLASS_CAPITAL_SIGMA = 3   # U+03A3 "Σ": "ς" or "σ" depending on context; left to str.lower
DOTTED_CAPITAL_I = 0x130
CAPITAL_SIGMA = 0x3A3

# Characters per kernel call: bounds the UTF-32 copy (4 bytes/char) and the span arrays.
CHUNK_CHARS = 1 << 22


def tokenize(text: str) -> list[str]:
    """Lowercased tokens of ``text`` in order.

    Split first, lowercase second: ``"İ".lower()`` is "i" + a combining dot, which would
    otherwise split "İstanbul" in two and disagree with :func:`token_spans`.
    """
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def token_spans(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokens with character offsets into ``text``.

    Returns ``(tokens, starts, ends)``: ``tokens`` lowercased, ``starts``/``ends`` int64
    arrays of shape (n_tokens,), ``ends`` exclusive.
    """
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _TOKEN_RE.finditer(text):
        tokens.append(m.group().lower())
        starts.append(m.start())
        ends.append(m.end())
    return tokens, np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


@functools.cache
def char_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per-code-point tables used by the fast path (built once per process, ~0.3 s).

    Returns ``(char_class, lower)``:
      char_class: uint8 (0x110000,) — CLASS_OTHER, CLASS_ALNUM, CLASS_DOTTED_CAPITAL_I or
                  CLASS_CAPITAL_SIGMA; nonzero exactly where ``chr(c).isalnum()``.
      lower:      uint32 (0x110000,) — ``ord(chr(c).lower())`` for every c whose lowercase
                  is one code point (all but U+0130); meaningless for the two special ones.
    """
    everything = "".join(map(chr, range(N_CODE_POINTS)))
    alnum = np.fromiter(map(str.isalnum, everything), dtype=bool, count=N_CODE_POINTS)
    char_class = alnum.astype(np.uint8) * np.uint8(CLASS_ALNUM)
    char_class[DOTTED_CAPITAL_I] = CLASS_DOTTED_CAPITAL_I
    char_class[CAPITAL_SIGMA] = CLASS_CAPITAL_SIGMA
    # str.lower maps character by character except U+0130 (two characters) and U+03A3
    # (context); lowering the whole range at once with U+0130 cut out keeps alignment.
    lowered = (everything[:DOTTED_CAPITAL_I].lower() + "\x00"
               + everything[DOTTED_CAPITAL_I + 1:].lower())
    if len(lowered) != N_CODE_POINTS:  # a new Unicode version with another expanding char
        raise RuntimeError(
            f"str.lower of all code points has length {len(lowered)}, expected {N_CODE_POINTS}: "
            "this Python's Unicode database lowercases another character to several; "
            "add it as a special class in bloomspan.engine.text.tokenizer.char_tables")
    lower = np.frombuffer(lowered.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).copy()
    lower[DOTTED_CAPITAL_I] = DOTTED_CAPITAL_I
    lower[CAPITAL_SIGMA] = CAPITAL_SIGMA
    char_class.flags.writeable = False
    lower.flags.writeable = False
    return char_class, lower


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
                 add_new: bool = True, count_df: bool = True, chunk_chars: int = CHUNK_CHARS):
    """Tokenize a batch of documents and map the tokens to vocabulary ids (fast path).

    Returns ``(ids, doc_offsets)`` or, with ``with_offsets``, ``(ids, doc_offsets,
    char_starts, char_ends)``:
      ids:         uint32 (W,)   token ids of all documents, concatenated
      doc_offsets: int64 (D+1,)  document d is ids[doc_offsets[d]:doc_offsets[d+1]]
      char_starts: int64 (W,)    start of each token in its own document's text
      char_ends:   int64 (W,)    exclusive end, so ``texts[d][s:e]`` is the original token
    Tokens equal :func:`tokenize` of each text. New tokens get the next free ids in
    order of first occurrence (so ids do not depend on how a corpus is cut into
    batches); with ``add_new=False`` unknown tokens map to ``vocabulary.UNKNOWN``
    instead. With ``count_df`` each document is counted in the document frequencies.
    """
    texts = _check_texts(texts)
    if chunk_chars < 1:
        raise ValueError(f"chunk_chars={chunk_chars}: must be >= 1")
    char_class, lower = char_tables()
    id_parts, count_parts, start_parts, end_parts = [], [], [], []
    for chunk in _chunks(texts, chunk_chars):
        n_docs = len(chunk)
        lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=n_docs)
        doc_begin = np.zeros(n_docs, dtype=np.int64)
        if n_docs > 1:
            np.cumsum(lengths[:-1] + 1, out=doc_begin[1:])
        # "\n" is not alnum, so no token crosses from one document into the next.
        joined = "\n".join(chunk)
        if joined.isascii():  # O(1) in CPython; a byte per code point, no UTF-32 copy
            cps = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        else:
            cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        ids, starts, ends, doc_token_end = vocabulary.encode_documents(
            joined, cps, doc_begin, doc_begin + lengths, char_class, lower,
            add_new=add_new, count_df=count_df)
        id_parts.append(ids)
        counts = np.diff(doc_token_end, prepend=0)
        count_parts.append(counts)
        if with_offsets:
            base = np.repeat(doc_begin, counts)
            start_parts.append(starts - base)
            end_parts.append(ends - base)
    ids = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.uint32)
    doc_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    if texts:
        np.cumsum(np.concatenate(count_parts), out=doc_offsets[1:])
    if not with_offsets:
        return ids, doc_offsets
    return (ids, doc_offsets, np.concatenate(start_parts).astype(np.int64, copy=False),
            np.concatenate(end_parts).astype(np.int64, copy=False))


def encode_batch_reference(texts: Sequence[str], vocabulary: Vocabulary, with_offsets: bool = False,
                           *, add_new: bool = True, count_df: bool = True):
    """Plain twin of :func:`encode_batch` (same arguments and results), one token at a time."""
    texts = _check_texts(texts)
    ids: list[int] = []
    doc_offsets = [0]
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
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
    if count_df:
        vocabulary.add_document_counts(df_seen)
    out_ids = np.asarray(ids, dtype=np.uint32)
    out_off = np.asarray(doc_offsets, dtype=np.int64)
    if not with_offsets:
        return out_ids, out_off
    cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)  # noqa: E731
    return out_ids, out_off, cat(starts).astype(np.int64), cat(ends).astype(np.int64)
