from __future__ import annotations

import numpy as np

from bloomspan.engine.distributed.windows import PackedStrings
from bloomspan.engine.text import scan_buffers
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.distributed import shards
from bloomspan.sidecar.distributed.shards import _Tokenizer, read_jsonl_range


def _texts(n_docs: int) -> list[str]:
    rng = np.random.default_rng(5)
    words = ["the", "Cat", "ΟΔΟΣ", "İstanbul", "½", "cafe\u0301", "😀x", "42"] + [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choice(words, size=int(rng.integers(0, 400)))) for _ in range(n_docs)]


def test_a_shard_of_many_batches_is_one_batch_of_all_its_documents():
    """The reader's one ids buffer (grown in place past its first 65,536 slots, many times) and
    the strings packed from the vocabulary's pool equal tokenizing every document at once."""
    texts = _texts(2000)
    tok = _Tokenizer()
    for a in range(0, len(texts), 7):
        tok.add(texts[a:a + 7])
    shard = tok.corpus()
    v = Vocabulary()
    ids, offsets = encode_batch(texts, v, count_df=False)
    assert ids.shape[0] > 4 * 65536  # several growths by a quarter
    assert np.array_equal(shard.ids, ids) and shard.ids.dtype == np.uint32
    assert np.array_equal(shard.doc_offsets, offsets)
    assert list(shard.strings) == v.tokens()
    assert np.array_equal(shard.token_hash, PackedStrings.of(v.tokens()).hashes())


def test_an_empty_shard():
    shard = _Tokenizer().corpus()
    assert shard.n_tokens == 0 and shard.n_docs == 0 and len(shard.strings) == 0


def test_a_range_read_in_small_batches_equals_one_batch(tmp_path, monkeypatch):
    texts = _texts(60)
    path = tmp_path / "c.jsonl"
    path.write_text("".join(f'{{"id": {i}, "text": {t!r}}}\n'.replace("'", '"') for i, t in enumerate(texts)
                            if '"' not in t and "\\" not in t), encoding="utf-8")
    whole = read_jsonl_range(str(path), 0, path.stat().st_size, "text", "id", 0)
    monkeypatch.setattr(shards, "TOKENIZE_DOCS", 3)
    small = read_jsonl_range(str(path), 0, path.stat().st_size, "text", "id", 0)
    assert np.array_equal(small.ids, whole.ids) and np.array_equal(small.doc_offsets, whole.doc_offsets)
    assert list(small.strings) == list(whole.strings) and small.external_ids == whole.external_ids


def test_a_read_shard_leaves_no_scan_buffers_on_its_thread():
    """The tokenizer keeps its scan buffers per thread between batches; a worker that has read
    its shard tokenizes nothing more for the rest of the run, so they are dropped with the
    vocabulary (they stayed in the worker's peak: 11.7 -> 12.6 B per token of its share)."""
    tok = _Tokenizer()
    tok.add(_texts(50))
    assert scan_buffers._local.buffers is not None  # kept between batches
    shard = tok.corpus()
    assert scan_buffers._local.buffers is None
    assert shard.n_tokens > 0
