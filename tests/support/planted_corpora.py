"""Token-id corpora with planted repeats, shared by the exactness tests of the sharded paths."""
from __future__ import annotations

import numpy as np


def corpus_of(docs) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens uint32 (W,), doc_offsets int64 (D+1,))`` of a list of token-id lists."""
    tokens = np.asarray([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return tokens, offsets


def nested_phrases(rng, vocab: int) -> list[list[int]]:
    """A 25-token phrase, two overlapping pieces of it (one extended by a fresh token) and an
    unrelated 12-token phrase, all over ids above the background's ``vocab``."""
    base = list(rng.integers(vocab, vocab + 50, 25))
    return [base, base[3:14], base[10:22] + [vocab + 60], list(rng.integers(vocab, vocab + 50, 12))]


def planted_corpus(rng, n_docs: int, vocab: int, phrases, doc_len=(20, 80)) -> tuple[np.ndarray, np.ndarray]:
    """Background documents over ids ``[0, vocab)``, each phrase planted into 45 % of them, a
    fifth of those at the very start or end of the document (boundary-touching)."""
    docs = []
    for _ in range(n_docs):
        doc = list(rng.integers(0, vocab, rng.integers(*doc_len)))
        for p in phrases:
            if rng.random() < 0.45:
                at = int(rng.integers(0, len(doc) + 1))
                if rng.random() < 0.2:
                    at = 0 if rng.random() < 0.5 else len(doc)
                doc[at:at] = p
        docs.append(doc)
    return corpus_of(docs)
