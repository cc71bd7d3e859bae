"""Where each shard's documents lie in the full corpus, kept on the workers.

A shard's documents have global numbers (a file run: the shards follow each other; an index
run: the canonical order, :mod:`.doc_numbering`) and each document starts at the tokens of
every document numbered before it. The route stage needs a shard's global numbers and the
coverage stage its documents' global starts (to cut the coverage bitmaps); both are per
document, so both stay on the workers as futures (:class:`ShardLayout`). The driver holds
two integers per shard (documents and tokens).

An index run's starts are found like its numbers: each shard's documents, ordered by number,
with their cumulative lengths (:func:`length_block`); the start of a document is the sum over
every shard of the tokens of its documents numbered below it (:func:`tokens_before`, S² small
tasks beside their inputs, :func:`summed`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ShardLayout:
    """The full corpus' layout, per shard on the workers.

    global_docs[k]: future of int64 (D_k,) the global number of each of shard k's documents
    starts[k]:      future of int64 (D_k,) where each of them starts in the full corpus
    shard_docs, shard_tokens: documents and tokens of each shard (ints)
    """

    global_docs: list
    starts: list
    shard_docs: list[int]
    shard_tokens: list[int]

    @property
    def n_docs(self) -> int:
        return int(sum(self.shard_docs))

    @property
    def n_tokens(self) -> int:
        return int(sum(self.shard_tokens))


@dataclass
class LengthBlock:
    """One shard's documents in global number order: ``numbers`` int64 (D_k,) ascending,
    ``before`` int64 (D_k+1,) the tokens of the first i of them."""

    numbers: np.ndarray
    before: np.ndarray


def length_block(shard, global_docs: np.ndarray) -> LengthBlock:
    """The shard's (:class:`~.shards.ShardCorpus`) documents ordered by global number, with
    their cumulative lengths."""
    global_docs = np.asarray(global_docs, dtype=np.int64)
    order = np.argsort(global_docs, kind="stable")
    before = np.zeros(order.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.diff(np.asarray(shard.doc_offsets, dtype=np.int64))[order], out=before[1:])
    return LengthBlock(global_docs[order], before)


def tokens_before(block: LengthBlock, global_docs: np.ndarray) -> np.ndarray:
    """int64 (D_k,): tokens of ``block``'s documents numbered below each of ``global_docs``."""
    return block.before[np.searchsorted(block.numbers, np.asarray(global_docs, dtype=np.int64), side="left")]


def summed(*parts: np.ndarray) -> np.ndarray:
    out = np.zeros(parts[0].shape[0], dtype=np.int64)
    for p in parts:
        out += p
    return out


def contiguous_numbers(n_docs: int, base: int) -> np.ndarray:
    """A file run's shard: documents ``base .. base + n_docs - 1``."""
    return np.arange(base, base + n_docs, dtype=np.int64)


def contiguous_starts(shard, token_base: int) -> np.ndarray:
    """A file run's shard: its documents start ``token_base`` tokens after its own offsets."""
    return np.asarray(shard.doc_offsets[:-1], dtype=np.int64) + token_base


def contiguous_layout(client, shards: list, headers: list[tuple[int, int]], run: str) -> ShardLayout:
    """The layout of shards that follow each other (a file's ranges in file order);
    ``headers``: (documents, tokens) of each shard."""
    numbers, starts, doc_base, token_base = [], [], 0, 0
    for k, (shard, (n_docs, n_tokens)) in enumerate(zip(shards, headers)):
        numbers.append(client.submit(contiguous_numbers, n_docs, doc_base, key=f"bloomspan-numbers-{run}-{k}"))
        starts.append(client.submit(contiguous_starts, shard, token_base, key=f"bloomspan-starts-{run}-{k}"))
        doc_base += n_docs
        token_base += n_tokens
    return ShardLayout(numbers, starts, [h[0] for h in headers], [h[1] for h in headers])


def numbered_layout(client, shards: list, global_docs: list, headers: list[tuple[int, int]], run: str,
                    homes: list[dict] | None = None) -> ShardLayout:
    """The layout of shards whose documents were numbered on the workers (``global_docs``:
    futures of each shard's global numbers); the starts are computed beside them."""
    homes = homes or [{} for _ in shards]
    blocks = [client.submit(length_block, s, g, key=f"bloomspan-lengths-{run}-{k}", **homes[k])
              for k, (s, g) in enumerate(zip(shards, global_docs))]
    starts = []
    for k, g in enumerate(global_docs):
        parts = [client.submit(tokens_before, b, g, key=f"bloomspan-before-{run}-{k}-{j}") for j, b in enumerate(blocks)]
        starts.append(client.submit(summed, *parts, key=f"bloomspan-starts-{run}-{k}", **homes[k]))
    return ShardLayout(list(global_docs), starts, [h[0] for h in headers], [h[1] for h in headers])
