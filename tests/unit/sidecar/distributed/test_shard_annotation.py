"""A shard's annotation updates equal the single process's: the same ``document_update`` over
the same tokens and character offsets, the key and version of each stored document, skipped
hits left out."""
from __future__ import annotations

import numpy as np
import pytest

from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.distributed.coverage import shard_mask
from bloomspan.sidecar.distributed.shard_annotation import annotate_shard, shard_annotation_items
from bloomspan.sidecar.distributed.shards import _Tokenizer
from bloomspan.sidecar.publish.document_annotation import document_update

TEXTS = ["Home | Shop. Great kettle! © 2024 Acme, all rights.", "Only  words\nhere, and more words", "x"]


def _shard(texts, statuses):
    """A shard read with offsets: hits with ``statuses`` (STORED ones take the texts in order)."""
    tok = _Tokenizer(with_offsets=True)
    tok.add(texts)
    keys = [f"i:doc-{k}" for k in range(len(statuses))]
    meta = np.zeros((len(statuses), 5), dtype=np.int64)
    meta[:, 0] = np.arange(len(statuses)) + 10  # seq_no
    meta[:, 1] = 2                              # primary_term
    meta[:, 3] = statuses
    return tok.corpus(keys=keys, meta=meta)


def test_items_are_the_single_process_updates_of_the_stored_documents():
    shard = _shard(TEXTS, [STORED, 3, STORED, STORED])
    assert shard.n_docs == 3
    ids, offsets, starts, ends = encode_batch(TEXTS, Vocabulary(), with_offsets=True, count_df=False)
    np.testing.assert_array_equal(shard.char_starts, starts)
    np.testing.assert_array_equal(shard.char_ends, ends)
    parts = [(np.array([0, 9], dtype=np.int64), np.array([2, 3], dtype=np.int64)),
             (np.array([offsets[2]], dtype=np.int64), np.array([1], dtype=np.int64))]
    mask = shard_mask(shard.doc_offsets, parts)
    assert mask.sum() == 6
    items = shard_annotation_items(shard, mask, ["i", "j"], "r1", 0, 3)
    assert [(it.index, it.doc_id, it.seq_no, it.primary_term) for it in items] == [
        ("i", "doc-0", 10, 2), ("i", "doc-2", 12, 2), ("i", "doc-3", 13, 2)]
    for d, it in enumerate(items):
        a, b = offsets[d], offsets[d + 1]
        assert it.update == document_update(mask[a:b], starts[a:b], ends[a:b], "r1")
    assert items[0].update["spans"] and items[2].update["boilerplate_ratio"] == 1.0


def test_a_shard_read_without_offsets_is_refused_naming_the_reader():
    tok = _Tokenizer()
    tok.add(TEXTS[:1])
    shard = tok.corpus(keys=["a"], meta=np.array([[1, 1, 0, STORED, -1]], dtype=np.int64))
    with pytest.raises(ValueError, match="with_offsets=True"):
        annotate_shard(None, shard, [], ["i"], "r", 50, 0)
