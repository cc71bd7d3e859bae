"""A slice re-read from its last read and a fetch equals a full read of the slice: the same
documents in listing order, the same local ids (first occurrence), strings, offsets, line
starts, character offsets and template fields; skipped and deleted documents handled."""
from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.distributed.shards import _Tokenizer
from bloomspan.sidecar.distributed.slice_state import _load, _merge, _save, _token_positions, record_own_writes

SKIPPED = STORED + 1  # any status but STORED
WORDS = ["menu", "home", "Über", "a", "b", "c", "news\nline", "x y"]


def _shard(docs: list[tuple[str, int, str | None]]):
    """A shard as a full read tokenizes it: (key, seq_no, text or None for a skipped document)."""
    tok = _Tokenizer(with_lines=True, with_offsets=True)
    stored = [d for d in docs if d[2] is not None]
    tok.add([t for _, _, t in stored])
    meta = np.array([[s, 1, 0, STORED if t is not None else SKIPPED, -1] for _, s, t in docs],
                    dtype=np.int64).reshape(-1, 5)
    return tok.corpus(keys=[k for k, _, _ in docs], meta=meta, fields={"site": [f"site-{k}" for k, _, _ in stored]})


texts = st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join))


@given(old=st.lists(texts, max_size=8), edits=st.lists(st.tuples(st.integers(0, 3), texts), max_size=12))
def test_a_merged_slice_equals_the_full_read_of_its_documents(old, edits):
    """edits[i] for listed document i: 0 unchanged, 1 changed to the text, 2 deleted, 3 deleted
    between listing and fetch; extra edits are new documents."""
    prev_docs = [(f"k{i}", 10 + i, t) for i, t in enumerate(old)]
    prev = _shard(prev_docs)
    listed, fetched, expected = [], [], []
    for i, (key, seq, text) in enumerate(prev_docs):
        op, new_text = edits[i] if i < len(edits) else (0, None)
        if op == 0:
            listed.append((key, seq, False, i))
            expected.append((key, seq, text))
        elif op in (1, 3):
            listed.append((key, seq + 100, True, i))
            if op == 1:
                fetched.append((key, seq + 100, new_text))
                expected.append((key, seq + 100, new_text))
    for j, (_, text) in enumerate(edits[len(prev_docs):]):
        listed.append((f"n{j}", 500 + j, True, -1))
        fetched.append((f"n{j}", 500 + j, text))
        expected.append((f"n{j}", 500 + j, text))
    keys = [k for k, *_ in listed]
    meta = np.array([[s, 1, 0, 0, -1] for _, s, _, _ in listed], dtype=np.int64).reshape(-1, 5)
    prev_row = np.array([r for *_, r in listed], dtype=np.int64)
    unchanged = np.array([not c for _, _, c, _ in listed], dtype=bool)
    new = _shard(fetched[::-1])  # fetch order is not listing order
    got = _merge(prev, keys, meta, prev_row, unchanged, ({k: r for r, k in enumerate(new.keys)}, new), ("site",))
    want = _shard(expected)
    assert got.keys == want.keys
    np.testing.assert_array_equal(got.meta, want.meta)
    np.testing.assert_array_equal(got.doc_offsets, want.doc_offsets)
    np.testing.assert_array_equal(got.ids, want.ids)
    assert list(got.strings) == list(want.strings)
    np.testing.assert_array_equal(got.token_hash, want.token_hash)
    for name in ("line_starts", "char_starts", "char_ends"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert got.fields == want.fields


def test_token_positions_of_documents_in_any_order():
    offsets = np.array([0, 2, 2, 5], dtype=np.int64)
    assert _token_positions(offsets, np.array([2, 0, 1], dtype=np.int64)).tolist() == [2, 3, 4, 0, 1]
    assert _token_positions(offsets, np.zeros(0, dtype=np.int64)).tolist() == []


def test_our_own_writes_are_recorded_in_the_kept_read(tmp_path):
    """The versions an annotate task's writes produced replace the read ones (the next run
    does not take them for changes); a failed write keeps its version; a file that no longer
    holds this read is left alone."""
    path = tmp_path / "slice.pkl"
    shard = _shard([("a", 3, "menu home"), ("b", 4, None), ("c", 5, "a b")])
    _save(path, shard)
    record_own_writes(str(path), ["a", "b", "c"], [(0, (30, 2)), (2, None)])
    kept = _load(path)
    assert kept.meta[:, :2].tolist() == [[30, 2], [4, 1], [5, 1]]
    record_own_writes(str(path), ["a", "c"], [(0, (99, 9))])
    assert _load(path).meta[0, :2].tolist() == [30, 2]
