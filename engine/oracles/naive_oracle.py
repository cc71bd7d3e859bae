"""Brute-force MCFP miner: the definition, executed literally. Tiny inputs only.

Every n-gram of every document is counted (document frequency through a set of
document ids, occurrences through a counter), then a phrase is kept iff

* ``len(P) >= min_length`` and ``df(P) >= sigma``, and
* no one-token extension ``xP`` or ``Px`` has ``df >= sigma``.

n-grams never cross a document boundary because they are cut from one document at a
time. Memory and time are cubic in the document length: use it as the oracle that the
real engines (BloomSpan, FHK) are tested against, on inputs of a few hundred tokens.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from bloomspan.engine.mining.phrases import Phrase, sort_phrases


def _documents(tokens: np.ndarray, doc_offsets: np.ndarray) -> list[list[int]]:
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets)
    if tokens.ndim != 1:
        raise ValueError(f"tokens.ndim={tokens.ndim}: tokens must be a 1-D array of token ids")
    if doc_offsets.ndim != 1 or doc_offsets.size < 1:
        raise ValueError("doc_offsets must be a 1-D array of D+1 offsets starting at 0")
    if int(doc_offsets[0]) != 0 or int(doc_offsets[-1]) != tokens.size or np.any(np.diff(doc_offsets) < 0):
        raise ValueError(
            f"doc_offsets={doc_offsets.tolist()[:8]}...: must start at 0, never decrease, "
            f"and end at len(tokens)={tokens.size}"
        )
    ids = [int(t) for t in tokens]
    return [ids[int(doc_offsets[d]):int(doc_offsets[d + 1])] for d in range(len(doc_offsets) - 1)]


def mine_naive(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int) -> list[Phrase]:
    """All maximal contiguous frequent phrases, by counting every n-gram.

    tokens: integer (W,) token ids; doc_offsets: integer (D+1,), doc d is
    ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
    Returns the phrases ordered by :func:`bloomspan.engine.mining.phrases.sort_phrases`.
    """
    if sigma < 2:
        raise ValueError(f"sigma={sigma}: must be >= 2")
    if min_length < 2:
        raise ValueError(f"min_length={min_length}: must be >= 2")
    docs_of: dict[tuple[int, ...], set[int]] = defaultdict(set)
    occurrences: dict[tuple[int, ...], int] = defaultdict(int)
    for d, doc in enumerate(_documents(tokens, doc_offsets)):
        for start in range(len(doc)):
            for end in range(start + 1, len(doc) + 1):
                gram = tuple(doc[start:end])
                docs_of[gram].add(d)
                occurrences[gram] += 1

    frequent = {gram for gram, docs in docs_of.items() if len(docs) >= sigma}
    # A frequent phrase P is not maximal when some frequent Q = xP or Q = Px exists.
    extended = set()
    for gram in frequent:
        extended.add(gram[1:])   # gram = x + P  ->  P extends to the left
        extended.add(gram[:-1])  # gram = P + x  ->  P extends to the right
    found = [
        Phrase(tokens=gram, df=len(docs_of[gram]), occurrences=occurrences[gram])
        for gram in frequent
        if len(gram) >= min_length and gram not in extended
    ]
    return sort_phrases(found)


def coverage_of(tokens: np.ndarray, doc_offsets: np.ndarray, phrases: list[Phrase]) -> np.ndarray:
    """Coverage mask bool (W,): True where a token lies inside an occurrence of a phrase.

    An occurrence lies inside one document (it never crosses a boundary). Plain
    Python: compares every phrase length at every position.
    """
    docs = _documents(tokens, doc_offsets)
    wanted = {p.tokens for p in phrases}
    lengths = sorted({len(t) for t in wanted})
    covered = np.zeros(len(tokens), dtype=bool)
    for d, doc in enumerate(docs):
        base = int(doc_offsets[d])
        for start in range(len(doc)):
            for length in lengths:
                if start + length <= len(doc) and tuple(doc[start:start + length]) in wanted:
                    covered[base + start:base + start + length] = True
    return covered
