"""Brute-force MCFP miner: the definition, executed literally. Tiny inputs only.

Every n-gram of every document is counted (document frequency through a set of
document ids, occurrences through the list of their start positions), then a phrase is kept iff

* ``len(P) >= min_length`` and ``df(P) >= sigma``, and
* no one-token extension ``xP`` or ``Px`` has ``df >= sigma``.

n-grams never cross a document boundary because they are cut from one document at a
time. Memory and time are cubic in the document length: use it as the oracle that the
real engines (BloomSpan, FHK) are tested against, on inputs of a few hundred tokens.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from bloomspan.engine.mining.corpus import validate_corpus
from bloomspan.engine.mining.phrases import Phrase, sort_phrases


def _documents(tokens: np.ndarray, doc_offsets: np.ndarray) -> list[list[int]]:
    tokens, doc_offsets = validate_corpus(tokens, doc_offsets)
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
    starts_of: dict[tuple[int, ...], list[int]] = defaultdict(list)  # ascending: documents in order
    for d, doc in enumerate(_documents(tokens, doc_offsets)):
        base = int(doc_offsets[d])
        for start in range(len(doc)):
            for end in range(start + 1, len(doc) + 1):
                gram = tuple(doc[start:end])
                docs_of[gram].add(d)
                starts_of[gram].append(base + start)

    frequent = {gram for gram, docs in docs_of.items() if len(docs) >= sigma}
    # A frequent phrase P is not maximal when some frequent Q = xP or Q = Px exists.
    extended = set()
    for gram in frequent:
        extended.add(gram[1:])   # gram = x + P  ->  P extends to the left
        extended.add(gram[:-1])  # gram = P + x  ->  P extends to the right
    found = [
        Phrase(tokens=gram, df=len(docs_of[gram]), occurrences=len(starts_of[gram]),
               starts=np.asarray(starts_of[gram], dtype=np.int64))
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
