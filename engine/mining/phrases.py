"""Phrases and mining results: the values every engine returns.

A phrase is a tuple of token ids with its document frequency ``df`` (distinct documents
containing it contiguously) and ``occurrences`` (start positions, overlaps and repeats
inside one document included). ``psi = length * df`` approximates how many corpus tokens
the phrase covers; results are ordered by psi descending, then length descending, then
token ids ascending, so every engine returns the same list for the same corpus.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Phrase:
    tokens: tuple[int, ...]
    df: int
    occurrences: int

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


@dataclass
class MiningResult:
    """What an engine returns.

    phrases:  ordered by :func:`phrase_order_key`.
    coverage: bool array of shape (W,): True where the token lies inside an occurrence of
              any returned phrase.
    stats:    JSON-serialisable per-stage statistics (``seconds_<stage>`` for timings).
    """

    phrases: list[Phrase]
    coverage: np.ndarray
    stats: dict = field(default_factory=dict)
