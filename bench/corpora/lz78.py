"""LZ78 phrases per token: how much a token stream "compresses" thanks to repeats.

The article (Part 5) characterises a corpus by c/n, the number of phrases ``c`` of an
LZ78 parse divided by the number of tokens ``n``: about 1 for Synthetic 1 (every
background token is new), about 0.27 for 3 G tokens of Gutenberg books. For reference,
476 k tokens of Gutenberg fiction (Norvig's big.txt, first 2.8 MB) give 0.394, 100 k
tokens 0.419: c/n falls slowly as the stream grows, so compare corpora of equal size.

LZ78 parse: read tokens into the current phrase while the phrase extended by the next
token is a known phrase; when it is not, that extension becomes a new phrase (one trie
node), and the next phrase starts empty. A last, incomplete phrase counts as one.
Tokens are any hashable values (str or int); they are interned to small ints, and the
trie is a dict ``node * 2**32 + token -> child``. Memory: one dict entry per phrase plus
one per distinct token (roughly 100-150 bytes each), streaming otherwise.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LZ78Stats:
    """phrases: c; tokens: n; ratio: c / n (0.0 for an empty stream)."""

    phrases: int
    tokens: int

    @property
    def ratio(self) -> float:
        return self.phrases / self.tokens if self.tokens else 0.0


def lz78_parse(token_iter: Iterable[Hashable]) -> LZ78Stats:
    """Count LZ78 phrases of a token stream (a numpy array is read as Python ints)."""
    if isinstance(token_iter, np.ndarray):
        token_iter = token_iter.tolist()
    intern: dict[Hashable, int] = {}
    trie: dict[int, int] = {}
    node = 0           # 0 = root (empty phrase)
    next_node = 1
    phrases = 0
    n = 0
    shift = 1 << 32
    for tok in token_iter:
        n += 1
        t = intern.get(tok)
        if t is None:
            t = len(intern)
            intern[tok] = t
        key = node * shift + t
        child = trie.get(key)
        if child is None:
            trie[key] = next_node
            next_node += 1
            phrases += 1
            node = 0
        else:
            node = child
    if node:
        phrases += 1
    return LZ78Stats(phrases=phrases, tokens=n)


def lz78_phrases_per_token(token_iter: Iterable[Hashable]) -> float:
    """c/n of an LZ78 parse over ``token_iter`` (0.0 for an empty stream)."""
    return lz78_parse(token_iter).ratio
