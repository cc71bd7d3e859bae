"""The corpus every engine mines: ``tokens`` uint32 (W,) and ``doc_offsets`` int64 (D+1,).

Document d is ``tokens[doc_offsets[d]:doc_offsets[d + 1]]``. BloomSpan, FHK and the
brute-force oracle check their input here, so a malformed corpus gets the same message from
every engine.
"""
from __future__ import annotations

import numpy as np


def validate_corpus(tokens, doc_offsets) -> tuple[np.ndarray, np.ndarray]:
    """Check and normalise ``tokens`` (uint32 (W,)) and ``doc_offsets`` (int64 (D+1,)).

    Other integer dtypes are converted; contiguous arrays are returned. Raises ValueError
    naming the array and what is wrong with it.
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets)
    if tokens.ndim != 1:
        raise ValueError(f"tokens has shape {tokens.shape}: must be 1-D")
    if tokens.dtype != np.uint32:
        if tokens.size and not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(f"tokens dtype {tokens.dtype}: must be uint32 token ids")
        if tokens.size and (tokens.min() < 0 or tokens.max() > np.iinfo(np.uint32).max):
            raise ValueError("tokens: ids must lie in [0, 2**32)")
        tokens = tokens.astype(np.uint32)
    if doc_offsets.ndim != 1 or doc_offsets.size < 1:
        raise ValueError(f"doc_offsets has shape {doc_offsets.shape}: must be 1-D with D+1 >= 1 entries")
    if doc_offsets.size and not np.issubdtype(doc_offsets.dtype, np.integer):
        raise ValueError(f"doc_offsets dtype {doc_offsets.dtype}: must be integer")
    doc_offsets = doc_offsets.astype(np.int64)
    if doc_offsets[0] != 0 or doc_offsets[-1] != tokens.shape[0] or np.any(np.diff(doc_offsets) < 0):
        raise ValueError(f"doc_offsets: must start at 0, end at len(tokens)={tokens.shape[0]} and never decrease "
                         f"(got first={int(doc_offsets[0])}, last={int(doc_offsets[-1])})")
    if doc_offsets.shape[0] - 1 >= np.iinfo(np.int32).max:
        raise ValueError("doc_offsets: at most 2**31 - 2 documents")
    return np.ascontiguousarray(tokens), np.ascontiguousarray(doc_offsets)
