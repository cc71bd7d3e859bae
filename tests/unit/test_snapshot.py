"""Canonical snapshots: order, dedup, the gather kernel, and incremental == full assembly."""
from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomspan.engine.corpus_store import CorpusStore
from bloomspan.sidecar.checkpoint import EMPTY, LISTED, MISSING, STORED, DocLog, keys_array
from bloomspan.sidecar.incremental import _search_sorted, assemble_full, assemble_incremental, plan
from bloomspan.sidecar.snapshot import Snapshot, canonical_rows, gather_runs, gather_runs_reference

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


def _full(tmp, name, docs: dict, rnd, with_offsets=True, duplicate=True):
    """Full-run snapshot of docs {key: (text|None, seq)}, read in a shuffled order, one key twice."""
    store = CorpusStore.create(tmp / f"{name}-store", with_offsets=with_offsets)
    log = DocLog(tmp, f"{name}-log")
    order = list(docs)
    rnd.shuffle(order)
    if duplicate and order:
        order.insert(0, order[-1])  # an early, stale read of a key re-read later
    for key in order:
        text, seq = docs[key]
        status, t = _status_text(text)
        meta = np.array([[seq, 1, 0, status, -1]], dtype=np.int64)
        if status == STORED:
            meta[0, 4] = store.n_docs
            store.append([key], [t], flush=False)
        log.append([key], meta)
    store.flush()
    snap = assemble_full(tmp / f"{name}-snap", log, store, {"indices": ["src"]}, with_offsets)
    log.close()
    store.close()
    return snap


def _contents(snap: Snapshot):
    vocab = snap.vocabulary
    off = snap.doc_offsets
    docs = [vocab.tokens(snap.tokens[off[d]:off[d + 1]].tolist()) for d in range(snap.n_docs)]
    return ([k.decode() for k in snap.keys().tolist()], np.asarray(snap.meta()).tolist(), docs,
            snap.char_starts.tolist(), snap.char_ends.tolist())


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
        return " ".join(rnd.choice(WORDS).capitalize() if rnd.random() < 0.2 else rnd.choice(WORDS)
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
        status, t = _status_text(after[key][0])
        meta = np.array([[after[key][1], 1, 0, status, -1]], dtype=np.int64)
        if status == STORED:
            meta[0, 4] = delta.n_docs
            delta.append([key], [t], flush=False)
        flog.append([key], meta)
    delta.flush()
    inc = assemble_incremental(tmp / "inc", the_plan, base, flog, delta, {"indices": ["src"]}, True)
    scratch = _full(tmp, "scratch", after, rnd, duplicate=False)
    assert _contents(inc) == _contents(scratch)
    counts = the_plan.counts(base.n_all)
    assert counts["deleted"] == len(set(before) - set(after))
    assert counts["new"] == len(set(after) - set(before))


def test_snapshot_without_offsets_and_empty_corpus(tmp_path):
    snap = _full(tmp_path, "empty", {}, random.Random(0), with_offsets=False)
    assert (snap.n_all, snap.n_docs, snap.n_tokens) == (0, 0, 0)
    assert snap.stored_keys() == [] and snap.char_starts is None
    snap = _full(tmp_path, "one", {"x": ("Hello, world", 1), "y": (None, 2)}, random.Random(0), with_offsets=False)
    assert snap.stored_keys() == ["x"] and snap.skipped_by_reason() == {"missing": 1, "empty": 0, "not_text": 0}
