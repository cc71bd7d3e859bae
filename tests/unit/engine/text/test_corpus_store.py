"""Corpus store: batches on disk equal one in-memory batch; crashes between batches are harmless."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.templates import blocks
from bloomspan.engine.templates.blocks import line_start_flags
from bloomspan.engine.text import corpus_store
from bloomspan.engine.text.corpus_store import CorpusStore, CorpusStoreError
from bloomspan.engine.text.tokenizer import encode_batch, token_spans
from bloomspan.engine.text.vocabulary import Vocabulary

TEXTS = ["The cat sat on the mat.", "", "İstanbul ΟΔΟΣ — the CAT!\nmat", "mat\r\nmat mat",
         "\n\nПривет, мир 42\n"]
IDS = ["doc-0", "doc/1", "ünï\ncode", "", "😀"]


def _expected(texts):
    v = Vocabulary()
    ids, off, s, e = encode_batch(texts, v, with_offsets=True)
    return v, ids, off, s, e


def _check_store(store: CorpusStore, texts, ext_ids):
    v, ids, off, s, e = _expected(texts)
    assert store.n_docs == len(texts) and store.n_tokens == ids.size
    assert store.tokens.dtype == np.uint32 and np.array_equal(store.tokens, ids)
    assert store.doc_offsets.dtype == np.int64 and np.array_equal(store.doc_offsets, off)
    assert store.vocabulary.tokens() == v.tokens()
    assert np.array_equal(store.vocabulary.df, v.df) and store.vocabulary.n_docs == len(texts)
    assert store.external_ids() == ext_ids
    for d, text in enumerate(texts):
        assert store.external_id(d) == ext_ids[d]
        assert np.array_equal(store.doc_tokens(d), ids[off[d]:off[d + 1]])
        toks, ref_s, ref_e = token_spans(text)
        if store.with_offsets:
            starts, ends = store.char_spans(d)
            assert np.array_equal(starts, ref_s) and np.array_equal(ends, ref_e)
        if store.with_lines:
            lines = store.line_starts[off[d]:off[d + 1]]
            assert lines.dtype == np.uint8 and lines.tolist() == line_start_flags(text, ref_s).astype(int).tolist()
    if store.with_lines:
        assert store.line_starts.shape == (store.n_tokens,)
    else:
        assert store.line_starts is None


def test_create_append_open(tmp_path):
    with CorpusStore.create(tmp_path / "c", with_offsets=True) as store:
        store.append(IDS[:2], TEXTS[:2])
        store.append(IDS[2:], TEXTS[2:])
        _check_store(store, TEXTS, IDS)
    store = CorpusStore.open(tmp_path / "c")
    assert store._vocabulary is None  # loaded lazily
    _check_store(store, TEXTS, IDS)
    assert store.external_ids(1, 3) == IDS[1:3] and store.external_ids(2, 2) == []
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["n_docs"] == 5 and manifest["generation"] == 2
    assert sorted(p.name for p in (tmp_path / "c").glob("vocabulary.df.*")) == ["vocabulary.df.2.i64"]
    store.close()


def test_documents_without_tokens_keep_their_count_across_a_reopen(tmp_path):
    """A store of token-less documents has an empty vocabulary; reopening it lost the documents
    it had counted (n_docs 0 instead of 2), so the next batch's document numbers started over."""
    with CorpusStore.create(tmp_path / "c") as store:
        store.append(["a", "b"], ["", "!?"])
    store = CorpusStore.open(tmp_path / "c")
    assert store.vocabulary.n_docs == store.n_docs == 2 and len(store.vocabulary) == 0
    store.append(["c"], ["cat cat"])
    store.close()
    store = CorpusStore.open(tmp_path / "c")
    assert store.vocabulary.n_docs == 3 and store.vocabulary.df.tolist() == [1]
    store.close()


@settings(derandomize=True, max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.sampled_from(list("abAB İΣς,.\n\r😀_")), max_size=15), max_size=12),
       st.lists(st.integers(0, 12), max_size=4), st.booleans())
def test_batches_equal_one_batch(tmp_path_factory, texts, cuts, reopen):
    """However the corpus is cut into appends (and reopens), the store equals encode_batch(all)."""
    work = tmp_path_factory.mktemp("store")
    ext = [f"id{i}" for i in range(len(texts))]
    bounds = sorted({0, len(texts), *[min(c, len(texts)) for c in cuts]})
    store = CorpusStore.create(work, with_offsets=True, fsync=False)
    for a, b in zip(bounds, bounds[1:]):
        store.append(ext[a:b], texts[a:b])
        if reopen:
            store.close()
            store = CorpusStore.open(work, fsync=False)
    _check_store(store, texts, ext)
    store.close()


def _crash(store: CorpusStore) -> None:
    """What a killed process leaves: files closed, nothing flushed, lock released."""
    store._release()


def test_crash_between_batches_keeps_the_last_commit(tmp_path):
    store = CorpusStore.create(tmp_path, with_offsets=True, fsync=False)
    store.append(IDS[:3], TEXTS[:3])
    store.append(["lost"], ["a batch that never got committed zzz"], flush=False)
    _crash(store)
    for name in ["tokens.u32", "doc_offsets.i64", "doc_ids.txt", "vocabulary.txt", "char_ends.i64", "line_starts.u8"]:
        with open(tmp_path / name, "ab") as f:
            f.write(b"\xff" * 13)  # torn writes past the committed end
    (tmp_path / "vocabulary.df.9.i64").write_bytes(b"\x00" * 8)  # a flush cut before its manifest
    store = CorpusStore.open(tmp_path, fsync=False)
    _check_store(store, TEXTS[:3], IDS[:3])
    assert "zzz" not in store.vocabulary
    store.append(IDS[3:], TEXTS[3:])
    _check_store(store, TEXTS, IDS)
    assert not (tmp_path / "vocabulary.df.9.i64").exists()
    assert (tmp_path / "tokens.u32").stat().st_size == 4 * store.n_tokens  # garbage truncated
    assert (tmp_path / "line_starts.u8").stat().st_size == store.n_tokens
    store.close()
    _check_store(CorpusStore.open(tmp_path), TEXTS, IDS)


def test_failed_append_leaves_store_unchanged(tmp_path, monkeypatch):
    store = CorpusStore.create(tmp_path, fsync=False)
    store.append(IDS[:2], TEXTS[:2])
    real = corpus_store.pwrite_all
    calls = []

    def failing(fd, data, offset):
        calls.append(offset)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(fd, data, offset)

    monkeypatch.setattr(corpus_store, "pwrite_all", failing)
    with pytest.raises(OSError, match="No space"):
        store.append(["x"], ["brand new words here"])
    monkeypatch.setattr(corpus_store, "pwrite_all", real)
    _check_store(store, TEXTS[:2], IDS[:2])
    assert "brand" not in store.vocabulary
    store.append(IDS[2:], TEXTS[2:])
    _check_store(store, TEXTS, IDS)
    store.close()


def test_empty_store(tmp_path):
    store = CorpusStore.create(tmp_path)
    assert store.n_docs == 0 and store.tokens.size == 0 and store.doc_offsets.tolist() == [0]
    store.append([], [])
    store.close()
    store = CorpusStore.open(tmp_path)
    assert len(store.vocabulary) == 0 and store.external_ids() == []
    with pytest.raises(IndexError):
        store.external_id(0)


def test_errors(tmp_path):
    with pytest.raises(CorpusStoreError, match="no corpus store"):
        CorpusStore.open(tmp_path / "missing")
    store = CorpusStore.create(tmp_path)
    with pytest.raises(CorpusStoreError, match="already holds"):
        CorpusStore.create(tmp_path)
    with pytest.raises(CorpusStoreError, match="another process is writing"):
        CorpusStore.open(tmp_path).append(["a"], ["b"])
    with pytest.raises(ValueError, match="one id per text"):
        store.append(["a"], [])
    with pytest.raises(TypeError, match=r"ids\[0\] is int"):
        store.append([1], ["x"])
    store.append(["a"], ["some words"])
    with pytest.raises(CorpusStoreError, match="with_offsets=True"):
        store.char_spans(0)
    with pytest.raises(IndexError):
        store.doc_tokens(1)
    store.close()
    os.truncate(tmp_path / "line_starts.u8", 1)
    with pytest.raises(CorpusStoreError, match="line_starts.u8 has 1 bytes.*needs 2"):
        CorpusStore.open(tmp_path)
    os.truncate(tmp_path / "tokens.u32", 4)
    with pytest.raises(CorpusStoreError, match="tokens.u32 has 4 bytes.*needs 8") as info:
        CorpusStore.open(tmp_path)
    assert info.value.path == str(tmp_path / "tokens.u32")
    (tmp_path / "manifest.json").write_text('{"format": "bloomspan-corpus-store", "version": 99}')
    with pytest.raises(CorpusStoreError, match="version 99"):
        CorpusStore.open(tmp_path)


def test_reader_sees_committed_state_only(tmp_path):
    writer = CorpusStore.create(tmp_path, fsync=False)
    writer.append(IDS[:2], TEXTS[:2])
    reader = CorpusStore.open(tmp_path)
    writer.append(IDS[2:4], TEXTS[2:4], flush=False)
    assert reader.n_docs == 2 and np.array_equal(reader.tokens, writer.tokens[:reader.n_tokens])
    writer.flush()  # unlinks the df file of the reader's generation
    writer.append(IDS[4:], TEXTS[4:])
    _check_store(reader, TEXTS[:2], IDS[:2])  # lazy vocabulary of its own generation
    writer.close()
    reader.close()
    _check_store(CorpusStore.open(tmp_path), TEXTS, IDS)


# ---------------------------------------------------------------------- line starts
def test_line_starts_mark_the_first_token_of_each_line(tmp_path):
    """Only "\\n" breaks a line ("\\r\\n" through its "\\n"; a lone "\\r", "\\u2028" or a form feed
    do not); token 0 of every non-empty document starts a line, documents without tokens
    have none."""
    texts = ["one two\nthree", "a\r\nb c\r\n", "a\rb\u2028c\x0cd\x85e", "", "\n\n\nx y\n\nz",
             "\n \n", "  lead\ntrail\n\n", "ü ğ\nİş 😀 ok\nΣ"]
    expected = [[1, 0, 1], [1, 1, 0], [1, 0, 0, 0, 0], [], [1, 0, 1], [], [1, 1], [1, 0, 1, 0, 1]]
    with CorpusStore.create(tmp_path, fsync=False) as store:
        assert store.with_lines and not store.with_offsets
        store.append([f"d{i}" for i in range(len(texts))], texts)
        assert store.line_starts.dtype == np.uint8
        off = store.doc_offsets
        assert [store.line_starts[off[d]:off[d + 1]].tolist() for d in range(len(texts))] == expected
        _check_store(store, texts, [f"d{i}" for i in range(len(texts))])
    assert json.loads((tmp_path / "manifest.json").read_text())["with_lines"] is True
    reopened = CorpusStore.open(tmp_path)
    assert reopened.with_lines
    assert reopened.line_starts.tolist() == [x for e in expected for x in e]


def test_line_starts_of_batches_larger_than_a_chunk(tmp_path, monkeypatch):
    """The batch is scanned in chunks of documents (as encode_batch does): cuts change nothing."""
    texts = ["a b\nc", "\nd", "", "e\n\nf g", "h", "ÿ\ni"] * 3
    ids = [str(i) for i in range(len(texts))]
    for chunk in (1, 4, 7):
        monkeypatch.setattr(blocks, "CHUNK_CHARS", chunk)  # line_starts_batch's chunks
        with CorpusStore.create(tmp_path / str(chunk), fsync=False) as store:
            store.append(ids, texts)
            _check_store(store, texts, ids)


def test_a_store_of_version_1_is_refused_in_one_line_naming_the_manifest_and_the_fix(tmp_path):
    """Version 1 stores could lack the "with_lines" key (no line starts); they are not read as
    stores without lines but refused: one line naming the manifest, the versions and the fix."""
    with CorpusStore.create(tmp_path, fsync=False) as store:
        store.append(IDS[:2], TEXTS[:2])
    manifest_path = tmp_path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["with_lines"]
    manifest_path.write_text(json.dumps({**manifest, "version": 1}))
    with pytest.raises(CorpusStoreError) as caught:
        CorpusStore.open(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{manifest_path}: version 1, this bloomspan reads version 2") and "\n" not in message
    assert f"delete {tmp_path} and ingest again" in message
