"""Phrases and mining results: the values every engine returns.

A phrase is a tuple of token ids with its document frequency ``df`` (distinct documents
containing it contiguously), ``occurrences`` (start positions, overlaps and repeats
inside one document included) and, as every engine returns it, ``starts``: those start
positions themselves, so what comes after mining (the documents of each phrase, their
bitmaps, the coverage) needs no second pass over the corpus. ``psi = length * df`` approximates how many corpus tokens
the phrase covers; results are ordered by psi descending, then length descending, then
token ids ascending, so every engine returns the same list for the same corpus.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Phrase:
    """tokens: the token ids; df, occurrences: counts as above.

    starts: int64 (occurrences,) ascending start positions in the corpus the engine mined,
    or None for a phrase built without them. Not part of equality or the hash: two engines'
    phrases compare by what they are, and tests compare ``starts`` on their own.
    """

    tokens: tuple[int, ...]
    df: int
    occurrences: int
    starts: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def psi(self) -> int:
        return len(self.tokens) * self.df


def phrase_order_key(p: Phrase) -> tuple:
    """Sort key: psi descending, length descending, token ids ascending."""
    return (-p.psi, -p.length, p.tokens)


def sort_phrases(phrases: Iterable[Phrase]) -> list[Phrase]:
    return sorted(phrases, key=phrase_order_key)


def documents_of(starts: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """int64 (df,) ascending: the documents holding the occurrences ``starts``.

    starts: int64 (K,) ascending positions; doc_offsets: int64 (D+1,). An occurrence lies
    inside one document, so its start's document is the phrase's document.
    """
    doc = np.searchsorted(doc_offsets, starts, side="right") - 1
    if doc.size < 2:
        return doc.astype(np.int64)
    keep = np.empty(doc.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(doc[1:], doc[:-1], out=keep[1:])
    return doc[keep].astype(np.int64)


def documents_of_reference(starts, doc_offsets) -> np.ndarray:
    """Readable twin of :func:`documents_of`: walk the documents, keep those with a start inside."""
    bounds = [int(o) for o in doc_offsets]
    wanted = [int(s) for s in starts]
    found = [d for d in range(len(bounds) - 1) if any(bounds[d] <= s < bounds[d + 1] for s in wanted)]
    return np.asarray(found, dtype=np.int64)


@dataclass
class MiningResult:
    """What an engine returns.

    phrases:  ordered by :func:`phrase_order_key`, each with its ``starts``.
    coverage: bool array of shape (W,): True where the token lies inside an occurrence of
              any returned phrase.
    stats:    JSON-serialisable per-stage statistics (``seconds_<stage>`` for timings).
    """

    phrases: list[Phrase]
    coverage: np.ndarray
    stats: dict = field(default_factory=dict)
