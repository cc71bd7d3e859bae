"""Canonical snapshots: order, dedup, the gather kernel, and incremental == full assembly."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.blocks import block_offsets_from_texts, line_start_flags
from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.run.checkpoint import EMPTY, LISTED, MISSING, STORED, DocLog, keys_array
from bloomspan.sidecar.run.incremental import _search_sorted, assemble_full, assemble_incremental, plan
from bloomspan.sidecar.run.snapshot import Snapshot, canonical_rows, gather_runs, gather_runs_reference

WORDS = "home about contact shop cart news the a of price free shipping returns 2024 © rights".split()


def _keys(words):
    return keys_array([w.encode() for w in words])


def test_canonical_rows_sorts_and_keeps_the_last_record_of_a_key():
    keys = _keys(["b", "a", "c", "a", "b"])
    rows = canonical_rows(keys)
    assert rows.tolist() == [3, 4, 2]  # a (last at 3), b (last at 4), c


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 50), max_size=12), max_size=15), st.randoms(use_true_random=False))
def test_gather_runs_matches_reference(docs, rnd):
    src = np.array([t for d in docs for t in d], dtype=np.uint32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    pick = [i for i in range(len(docs)) if rnd.random() < 0.7]
    rnd.shuffle(pick)
    starts = off[pick] if pick else np.zeros(0, dtype=np.int64)
    lengths = (off[np.array(pick, dtype=np.int64) + 1] - starts) if pick else np.zeros(0, dtype=np.int64)
    dst_start = np.concatenate([[0], np.cumsum(lengths)])[:-1].astype(np.int64)
    remap = (np.arange(51, dtype=np.uint32) * 7 + 3).astype(np.uint32)
    for use_remap in (False, True):
        a = np.zeros(int(lengths.sum()), dtype=np.uint32)
        b = np.zeros_like(a)
        gather_runs(src, starts.astype(np.int64), lengths.astype(np.int64), dst_start, a, remap, use_remap)
        gather_runs_reference(src, starts, lengths, dst_start, b, remap, use_remap)
        assert np.array_equal(a, b)


def test_search_sorted_finds_exact_keys_only():
    hay = _keys(["a", "ab", "b", "ba"])
    assert _search_sorted(hay, _keys(["ab", "zz", "a", "b", "aa"])).tolist() == [1, -1, 0, 2, -1]


# ---------------------------------------------------------------------- full vs incremental
def _status_text(value):
    if value is None:
        return MISSING, None
    if not value.strip():
        return EMPTY, None
    return STORED, value


def _read(store, log, key, value, seq) -> None:
    """One document as a run reads it: its version in the log, its text in the store if stored."""
    status, t = _status_text(value)
    meta = np.array([[seq, 1, 0, status, -1]], dtype=np.int64)
    if status == STORED:
        meta[0, 4] = store.n_docs
        store.append([key], [t], flush=False)
    log.append([key], meta)


def _without_lines(store: CorpusStore) -> CorpusStore:
    """The store as one that keeps no line starts ("with_lines": false, no line_starts.u8)."""
    store.close()
    path = store.work_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "with_lines": False}))
    (store.work_dir / "line_starts.u8").unlink()
    store = CorpusStore.open(store.work_dir)
    assert not store.with_lines
    return store


def _full(tmp, name, docs: dict, rnd, with_offsets=True, duplicate=True, lines=True):
    """Full-run snapshot of docs {key: (text|None, seq)}, read in a shuffled order, one key twice."""
    store = CorpusStore.create(tmp / f"{name}-store", with_offsets=with_offsets)
    log = DocLog(tmp, f"{name}-log")
    order = list(docs)
    rnd.shuffle(order)
    if duplicate and order:
        order.insert(0, order[-1])  # an early, stale read of a key re-read later
    for key in order:
        _read(store, log, key, *docs[key])
    store.flush()
    if not lines:
        store = _without_lines(store)
    snap = assemble_full(tmp / f"{name}-snap", log, store, {"indices": ["src"]}, with_offsets)
    log.close()
    store.close()
    return snap


def _contents(snap: Snapshot):
    vocab = snap.vocabulary
    off = snap.doc_offsets
    docs = [vocab.tokens(snap.tokens[off[d]:off[d + 1]].tolist()) for d in range(snap.n_docs)]
    return ([k.decode() for k in snap.keys().tolist()], np.asarray(snap.meta()).tolist(), docs,
            snap.char_starts.tolist(), snap.char_ends.tolist(), snap.with_lines, snap.line_starts.tolist())


def _check_lines(snap: Snapshot, docs: dict):
    """The snapshot's line starts and blocks are those of the stored texts (docs {key: (text, seq)})."""
    texts = [docs[k][0] for k in snap.stored_keys()]
    off = snap.doc_offsets
    _ids, ref_off, char_starts, _ends = encode_batch(texts, Vocabulary(), with_offsets=True)
    assert np.array_equal(off, ref_off)
    assert snap.with_lines and snap.line_starts.dtype == np.uint8 and snap.line_starts.shape == (snap.n_tokens,)
    for d, text in enumerate(texts):
        want = line_start_flags(text, char_starts[off[d]:off[d + 1]])
        assert snap.line_starts[off[d]:off[d + 1]].tolist() == want.astype(int).tolist()
    blocks = snap.block_offsets()
    assert blocks.dtype == np.int64
    assert np.array_equal(blocks, block_offsets_from_texts(texts, off, char_starts))
    assert blocks[0] == 0 and blocks[-1] == snap.n_tokens and np.all(np.diff(blocks) > 0)
    assert np.isin(off[off < snap.n_tokens], blocks).all()


def _incremental(tmp, base: Snapshot, before: dict, after: dict, rnd, lines=True):
    """Incremental snapshot of ``after`` over ``base`` (a full snapshot of ``before``)."""
    # listing: keys and versions of the current docs, shuffled, one listed twice
    listing = DocLog(tmp, "list")
    order = list(after)
    rnd.shuffle(order)
    for key in order + order[:1]:
        listing.append([key], np.array([[after[key][1], 1, 0, LISTED, -1]], dtype=np.int64))
    the_plan = plan(listing, base, use_timestamp=False)
    fetch = sorted(the_plan.fetch_keys)
    assert fetch == sorted(k for k in after if k not in before or before[k][1] != after[k][1])
    delta = CorpusStore.create(tmp / "delta", with_offsets=True)
    flog = DocLog(tmp, "fetch")
    for key in fetch:
        _read(delta, flog, key, *after[key])
    delta.flush()
    if not lines:
        delta = _without_lines(delta)
    inc = assemble_incremental(tmp / "inc", the_plan, base, flog, delta, {"indices": ["src"]}, True)
    listing.close()
    flog.close()
    delta.close()
    return inc, the_plan


@settings(derandomize=True, max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_incremental_assembly_equals_full_assembly(tmp_path_factory, seed):
    rnd = random.Random(seed)
    tmp = tmp_path_factory.mktemp("snap")

    def text():
        r = rnd.random()
        if r < 0.08:
            return None
        if r < 0.12:
            return "  "
        def word():
            w = rnd.choice(WORDS)
            return w.capitalize() if rnd.random() < 0.2 else w

        # words on lines: separators " " mostly, sometimes "\n", "\r\n " or a blank line
        return "".join(rnd.choice([" ", " ", " ", "\n", "\r\n ", " \n\n"]) + word()
                       for _ in range(rnd.randint(0, 15)))

    before = {f"d{i:03d}": (text(), i) for i in range(rnd.randint(0, 30))}
    base = _full(tmp, "base", before, rnd)
    after = dict(before)
    seq = 1000
    for key in list(after):
        r = rnd.random()
        if r < 0.2:
            del after[key]
        elif r < 0.4:
            seq += 1
            after[key] = (text(), seq)
    for i in range(rnd.randint(0, 10)):
        seq += 1
        after[f"n{i:02d}"] = (text(), seq)
    inc, the_plan = _incremental(tmp, base, before, after, rnd)
    scratch = _full(tmp, "scratch", after, rnd, duplicate=False)
    assert _contents(inc) == _contents(scratch)
    _check_lines(base, before)
    _check_lines(inc, after)
    counts = the_plan.counts(base.n_all)
    assert counts["deleted"] == len(set(before) - set(after))
    assert counts["new"] == len(set(after) - set(before))


def test_snapshot_without_offsets_and_empty_corpus(tmp_path):
    snap = _full(tmp_path, "empty", {}, random.Random(0), with_offsets=False)
    assert (snap.n_all, snap.n_docs, snap.n_tokens) == (0, 0, 0)
    assert snap.stored_keys() == [] and snap.char_starts is None
    snap = _full(tmp_path, "one", {"x": ("Hello, world", 1), "y": (None, 2)}, random.Random(0), with_offsets=False)
    assert snap.stored_keys() == ["x"] and snap.skipped_by_reason() == {"missing": 1, "empty": 0, "not_text": 0}


# ---------------------------------------------------------------------- line starts
LINES_BEFORE = {"a": ("Home About\nShop Cart\n\nNews", 1), "b": ("\n\nthe price\r\nfree shipping", 2),
                "c": ("one line only", 3), "d": ("Returns\nRights", 4), "e": (None, 5)}
LINES_AFTER = {"a": LINES_BEFORE["a"], "b": ("the\nprice free\nshipping\n", 12), "c": LINES_BEFORE["c"],
               "f": ("© 2024\nRights", 13), "g": ("   ", 14)}


def _line_lists(snap: Snapshot) -> dict:
    off = snap.doc_offsets
    return {k: snap.line_starts[off[d]:off[d + 1]].tolist() for d, k in enumerate(snap.stored_keys())}


def test_full_and_incremental_snapshots_keep_line_starts(tmp_path):
    """A changed document gets its new lines, an unchanged one keeps its old lines."""
    rnd = random.Random(1)
    base = _full(tmp_path, "base", LINES_BEFORE, rnd)
    assert json.loads((base.folder / "snapshot.json").read_text())["with_lines"] is True
    assert _line_lists(base) == {"a": [1, 0, 1, 0, 1], "b": [1, 0, 1, 0], "c": [1, 0, 0], "d": [1, 1]}
    _check_lines(base, LINES_BEFORE)
    assert base.token_source().line_starts.tolist() == base.line_starts.tolist()
    inc, _plan = _incremental(tmp_path, base, LINES_BEFORE, LINES_AFTER, rnd)
    assert _line_lists(inc) == {"a": [1, 0, 1, 0, 1], "b": [1, 1, 0, 1], "c": [1, 0, 0], "f": [1, 1]}
    _check_lines(inc, LINES_AFTER)
    assert _contents(inc) == _contents(_full(tmp_path, "scratch", LINES_AFTER, rnd, duplicate=False))
    # doc a: 2 + 2 + 1 tokens on three lines; b: the | price free | shipping; c: one line; f: 2024 | rights
    assert inc.block_offsets().tolist() == [0, 2, 4, 5, 6, 8, 9, 12, 13, 14]


def test_snapshot_without_offsets_keeps_line_starts(tmp_path):
    snap = _full(tmp_path, "plain", LINES_BEFORE, random.Random(2), with_offsets=False)
    assert snap.char_starts is None and snap.with_lines
    _check_lines(snap, LINES_BEFORE)


def test_sources_without_line_starts_give_snapshots_without_them(tmp_path):
    rnd = random.Random(3)
    old = _full(tmp_path, "old", LINES_BEFORE, rnd, lines=False)
    assert not old.with_lines and old.line_starts is None and old.block_offsets() is None
    assert json.loads((old.folder / "snapshot.json").read_text())["with_lines"] is False
    assert old.token_source().line_starts is None
    # an incremental run over a base without lines: unchanged documents have none, so neither has the result
    inc, _plan = _incremental(tmp_path / "i1", old, LINES_BEFORE, LINES_AFTER, rnd)
    assert not inc.with_lines and inc.line_starts is None and inc.block_offsets() is None
    # a delta store without lines, over a base with them
    base = _full(tmp_path, "base", LINES_BEFORE, rnd)
    inc, _plan = _incremental(tmp_path / "i2", base, LINES_BEFORE, LINES_AFTER, rnd, lines=False)
    assert not inc.with_lines and inc.line_starts is None
    # ... but when only documents with lines contribute, the result has them
    unchanged_only = {k: v for k, v in LINES_BEFORE.items() if k != "b"}
    inc, _plan = _incremental(tmp_path / "i3", base, LINES_BEFORE, unchanged_only, rnd, lines=False)
    assert inc.with_lines
    _check_lines(inc, unchanged_only)


def test_a_snapshot_of_version_1_is_refused_in_one_line_naming_it_and_the_fix(tmp_path):
    """Version 1 snapshots could lack the "with_lines" key; they are not read as snapshots without
    lines but refused: one line naming the folder, the versions and the fix (a full read)."""
    snap = _full(tmp_path, "base", LINES_BEFORE, random.Random(4))
    manifest = json.loads((snap.folder / "snapshot.json").read_text())
    del manifest["with_lines"]
    (snap.folder / "snapshot.json").write_text(json.dumps({**manifest, "version": 1}))
    with pytest.raises(CheckpointError) as caught:
        Snapshot(snap.folder)
    message = str(caught.value)
    assert message.startswith(f"{snap.folder}: snapshot version 1, this bloomspan reads 2") and "\n" not in message
    assert message.endswith("run once with --full to read the documents again")


def test_empty_snapshot_has_one_block_boundary(tmp_path):
    snap = _full(tmp_path, "empty", {}, random.Random(0))
    assert snap.with_lines and snap.line_starts.tolist() == [] and snap.block_offsets().tolist() == [0]
    docs = {"x": ("© — ©", 1), "y": ("©\n\n—", 2)}
    snap = _full(tmp_path, "blank", docs, random.Random(0))
    assert snap.n_docs == 2 and snap.n_tokens == 0 and snap.block_offsets().tolist() == [0]
    docs["z"] = ("a\nb", 3)  # documents without tokens around one with two lines
    docs["zz"] = ("—\n", 4)
    snap = _full(tmp_path, "some", docs, random.Random(0))
    assert snap.n_docs == 4 and snap.block_offsets().tolist() == [0, 1, 2]
    _check_lines(snap, docs)
