"""The tokenizer kernels' working buffers, kept per thread from one batch to the next.

:meth:`bloomspan.engine.text.vocabulary.Vocabulary.encode_documents` scans a chunk into
buffers sized for the worst case (a token per two code points: keys, ids, spans, line flags)
and a scratch for :func:`.token_keys.simple_document`. Allocated afresh for every chunk, each
4 KB page the kernels touch costs a page fault: 14,000 to 34,000 per pass over the web crawl,
5 to 24 ns of system CPU per token (measured on this project's 2-core VM, beside 34-40 ns of
user CPU). Kept, they are touched once. Callers get copies of their own (the results are
never views of these buffers), and each thread has its own set (the kernels release the GIL,
so two threads may tokenize at once).

A thread keeps at most the buffers of its largest chunk (``CHUNK_CHARS`` code points of
:mod:`.tokenizer`: ~58 MB of address space, of which only the pages a chunk's tokens used
are resident).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

_local = threading.local()


@dataclass
class ScanBuffers:
    """Buffers of B tokens and a simple_document scratch (shapes and dtypes as allocated)."""

    keys: np.ndarray  # uint64 (B,)
    ids: np.ndarray  # uint32 (B,)
    starts: np.ndarray  # int64 (B,)
    ends: np.ndarray  # int64 (B,)
    lines: np.ndarray  # uint8 (B,)
    scratch: np.ndarray  # uint64 (S,)


def scan_buffers(tokens: int, scratch_words: int) -> ScanBuffers:
    """This thread's buffers, with room for at least ``tokens`` tokens and a scratch of at least
    ``scratch_words`` words: the kept ones, or larger ones that replace them."""
    kept = getattr(_local, "buffers", None)
    if kept is not None and kept.keys.size >= tokens and kept.scratch.size >= scratch_words:
        return kept
    if kept is not None:
        tokens = max(tokens, kept.keys.size)
        scratch_words = max(scratch_words, kept.scratch.size)
    kept = ScanBuffers(np.empty(tokens, dtype=np.uint64), np.empty(tokens, dtype=np.uint32),
                       np.empty(tokens, dtype=np.int64), np.empty(tokens, dtype=np.int64),
                       np.empty(tokens, dtype=np.uint8), np.empty(scratch_words, dtype=np.uint64))
    _local.buffers = kept
    return kept


def release_scan_buffers() -> None:
    """Drop this thread's buffers (the next scan allocates afresh). For a thread done
    tokenizing for a long while, such as a Dask worker's once its shard is read: what the
    buffers held resident (~12 MB after a 13 M-token shard) would otherwise stay in the
    worker's peak through every later stage."""
    _local.buffers = None
