"""Random 8-letter words, all distinct across a corpus, generated in any order.

The article builds Synthetic 1 (Part 5) from "N x 5,000 strings of 8 random lowercase Latin
letters, discarding duplicates". Holding 150 M strings in a set to discard duplicates
does not stream, so we draw them as a keyed pseudo-random permutation instead: word
number ``x`` is ``spell(P(x))`` where ``P`` is a bijection of [0, 26**8) (a 4-round
Feistel network on 38 bits, cycle-walked back into [0, 26**8)). Distinct ``x`` give
distinct words, and the words are as uniform as the article's (a random injection);
any slice of the sequence is computed directly, which is what streaming needs.

``forbidden`` words (e.g. "sentence", an 8-letter token of a planted phrase) are removed
from the image: indices are first mapped to the ``x``-th code not in ``forbidden`` and
the walk skips forbidden outputs, so a background word never equals a planted token.
"""
from __future__ import annotations

import numpy as np

LETTERS = 8
SPACE = 26**LETTERS            # 208,827,064,576 possible words
_HALF_BITS = 19                # Feistel halves: 2 * 19 = 38 bits >= log2(26**8) = 37.6
_HALF_MASK = np.uint64((1 << _HALF_BITS) - 1)
_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)
_POW26 = (26 ** np.arange(LETTERS - 1, -1, -1, dtype=np.int64)).astype(np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (numpy array arithmetic wraps)."""
    x = (x ^ (x >> np.uint64(30))) * _C1
    x = (x ^ (x >> np.uint64(27))) * _C2
    return x ^ (x >> np.uint64(31))


def encode(word: str) -> int:
    """The code of an 8-letter lowercase ASCII word (inverse of spelling)."""
    if len(word) != LETTERS or not (word.isascii() and word.isalpha() and word.islower()):
        raise ValueError(f"word={word!r}: must be {LETTERS} lowercase ASCII letters")
    code = 0
    for ch in word:
        code = code * 26 + (ord(ch) - 97)
    return code


class UniqueWords:
    """Word ``x`` for x in [0, capacity): distinct words for distinct x, keyed by ``seed``."""

    def __init__(self, seed: int, forbidden: tuple[str, ...] = ()) -> None:
        keys = np.random.default_rng([seed, 0x5EED]).integers(0, 1 << 62, size=4, dtype=np.int64)
        self._keys = [np.uint64(k) for k in keys.tolist()]
        self._forbidden = np.asarray(sorted({encode(w) for w in forbidden}), dtype=np.uint64)
        self.capacity = SPACE - int(self._forbidden.shape[0])

    def _feistel(self, x: np.ndarray) -> np.ndarray:
        left = x >> np.uint64(_HALF_BITS)
        right = x & _HALF_MASK
        for k in self._keys:
            left, right = right, left ^ (_mix(right ^ k) & _HALF_MASK)
        return (left << np.uint64(_HALF_BITS)) | right

    def _allowed(self, y: np.ndarray) -> np.ndarray:
        ok = y < np.uint64(SPACE)
        if self._forbidden.shape[0]:
            ok &= ~np.isin(y, self._forbidden)
        return ok

    def codes(self, start: int, count: int) -> np.ndarray:
        """Codes of words ``start .. start+count-1``: uint64 (count,), distinct, in [0, 26**8)."""
        if start < 0 or count < 0 or start + count > self.capacity:
            raise ValueError(f"start={start}, count={count}: the range must lie in [0, {self.capacity})")
        x = np.arange(start, start + count, dtype=np.uint64)
        for f in self._forbidden:      # x-th element of [0, SPACE) minus forbidden (ascending)
            x += (x >= f).astype(np.uint64)
        y = self._feistel(x)
        bad = ~self._allowed(y)
        while bad.any():               # cycle walking: a bijection on the allowed codes
            y[bad] = self._feistel(y[bad])
            bad[bad] = ~self._allowed(y[bad])
        return y

    def words(self, start: int, count: int) -> list[str]:
        """Words ``start .. start+count-1`` as strings."""
        return self.joined(start, count).split()

    def joined(self, start: int, count: int) -> str:
        """Words ``start .. start+count-1`` separated by single spaces (one ASCII buffer)."""
        if count == 0:
            return ""
        codes = self.codes(start, count)
        buf = np.empty((count, LETTERS + 1), dtype=np.uint8)
        buf[:, :LETTERS] = (codes[:, None] // _POW26[None, :]) % np.uint64(26) + np.uint64(97)
        buf[:, LETTERS] = 32
        return buf.tobytes()[:-1].decode("ascii")
