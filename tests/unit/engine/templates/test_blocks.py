"""Block-anchored templates (engine/templates/blocks.py): kernels against their twins, mining against a brute force."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates import blocks
from bloomspan.engine.templates.blocks import (
    block_offsets_from_flags,
    block_offsets_from_texts,
    block_types,
    block_types_reference,
    chain_cover,
    chain_cover_reference,
    check_blocks,
    distinct_documents,
    flags_per_span,
    flags_per_span_reference,
    line_start_flags,
    mine_blocks,
    mine_blocks_reference,
    tokens_of_blocks,
)
from bloomspan.engine.text.slots import SLOT_ID
from bloomspan.engine.text.tokenizer import token_spans

# A document: a list of blocks, a block a non-empty tuple of small token ids.
block_st = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple)
corpus_st = st.lists(st.lists(block_st, max_size=6), min_size=1, max_size=8)


def pack(docs):
    """tokens uint32 (W,), doc_offsets int64 (D+1,), block_offsets int64 (B+1,) of docs."""
    toks = [t for doc in docs for blk in doc for t in blk]
    doc_offsets = np.concatenate([[0], np.cumsum([sum(len(b) for b in doc) for doc in docs])]).astype(np.int64)
    bo = [0]
    for doc in docs:
        for blk in doc:
            bo.append(bo[-1] + len(blk))
    return np.asarray(toks, dtype=np.uint32), doc_offsets, np.asarray(bo, dtype=np.int64)


def as_set(phrases):
    return {(p.tokens, p.df, p.occurrences, p.block_lengths, p.anchor) for p in phrases}


# ----------------------------------------------------------------------------- boundaries
def test_line_start_flags_example():
    text = "Prev Up Next\nHome | Index\n\n  body text here"
    _tokens, starts, _ends = token_spans(text)
    assert line_start_flags(text, starts).tolist() == [True, False, False, True, False, True, False, False]


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.text(alphabet="ab \n.", max_size=40))
def test_line_start_flags_match_brute_force(text):
    tokens, starts, ends = token_spans(text)
    expected = [i == 0 or "\n" in text[ends[i - 1]:starts[i]] for i in range(len(tokens))]
    assert line_start_flags(text, starts).tolist() == expected


def test_block_offsets_from_texts_keeps_documents_apart():
    texts = ["a b\nc", "", "d\ne f\n"]
    toks = [token_spans(t) for t in texts]
    doc_offsets = np.cumsum([0] + [len(t[0]) for t in toks]).astype(np.int64)
    starts = np.concatenate([t[1] for t in toks])
    assert block_offsets_from_texts(texts, doc_offsets, starts).tolist() == [0, 2, 3, 4, 6]


def test_block_offsets_from_flags_adds_document_starts():
    flags = np.array([True, False, False, False, True])
    assert block_offsets_from_flags(flags, np.array([0, 2, 2, 5])).tolist() == [0, 2, 4, 5]


def test_check_blocks_errors_name_the_problem():
    with pytest.raises(ValueError, match="strictly increasing"):
        check_blocks(np.array([0, 2, 2, 4]), np.array([0, 4]), 4)
    with pytest.raises(ValueError, match="document boundary"):
        check_blocks(np.array([0, 3, 4]), np.array([0, 2, 4]), 4)
    with pytest.raises(ValueError, match="end at W=4"):
        check_blocks(np.array([0, 3]), np.array([0, 4]), 4)


# ----------------------------------------------------------------------------- types
def same_partition(a, b) -> bool:
    pairs = set(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    return len(pairs) == len(set(np.asarray(a).tolist())) == len(set(np.asarray(b).tolist()))


@settings(derandomize=True, max_examples=80, deadline=None)
@given(corpus_st)
def test_block_types_equal_reference_partition(docs):
    tokens, _doc_offsets, bo = pack(docs)
    types, n_types = block_types(tokens, bo)
    ref = block_types_reference(tokens, bo)
    assert same_partition(types, ref)
    assert n_types == len(set(ref.tolist()))


def test_block_types_resolve_hash_collisions(monkeypatch):
    """Regression guard: if every hash collides, types still follow the token sequences."""
    def constant_hash(tokens, block_offsets, out):
        out[:] = 7

    monkeypatch.setattr(blocks, "block_hashes", constant_hash)
    tokens, _doc_offsets, bo = pack([[(1, 2), (3,), (1, 2)], [(3,), (2, 1)]])
    types, n_types = block_types(tokens, bo)
    assert n_types == 3
    assert same_partition(types, block_types_reference(tokens, bo))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 4)), max_size=30))
def test_distinct_documents_brute_force(rows):
    keys = np.asarray([[a, b] for a, b, _ in rows], dtype=np.int64).reshape(-1, 2)
    docs = np.asarray([d for _, _, d in rows], dtype=np.int64)
    group, df, count = distinct_documents(keys, docs)
    for i, (a, b, _d) in enumerate(rows):
        members = [k for k, (x, y, _) in enumerate(rows) if (x, y) == (a, b)]
        assert df[group[i]] == len({rows[k][2] for k in members})
        assert count[group[i]] == len(members)
        assert all(group[k] == group[i] for k in members)


@settings(derandomize=True, max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 4)), max_size=25), st.integers(1, 8))
def test_chain_cover_kernel_equals_reference(rows, run_min_length):
    fp = np.asarray([r[0] for r in rows], dtype=bool)
    if fp.size:
        fp[-1] = False  # the last block has no successor
    single = np.asarray([r[1] for r in rows], dtype=bool)
    lens = np.asarray([r[2] for r in rows], dtype=np.int64)
    covered = np.zeros(len(rows), dtype=bool)
    in_chain = np.zeros(len(rows), dtype=bool)
    chain_cover(fp, single, lens, np.int64(run_min_length), covered, in_chain)
    ref_cov, ref_chain = chain_cover_reference(fp, single, lens, run_min_length)
    assert covered.tolist() == ref_cov.tolist()
    assert in_chain.tolist() == ref_chain.tolist()


# ----------------------------------------------------------------------------- mining
@settings(derandomize=True, max_examples=120, deadline=None)
@given(corpus_st, st.integers(2, 3), st.integers(1, 3), st.integers(1, 5), st.booleans())
def test_mine_blocks_equals_brute_force(docs, sigma, block_min_length, run_min_length, edges):
    tokens, doc_offsets, bo = pack(docs)
    result = mine_blocks(tokens, doc_offsets, bo, sigma, block_min_length, run_min_length, edges=edges)
    ref_phrases, ref_cov = mine_blocks_reference(docs, sigma, block_min_length, run_min_length, edges=edges)
    assert as_set(result.phrases) == ref_phrases
    assert result.block_covered.tolist() == [c for doc in ref_cov for c in doc]
    covered_tokens = np.repeat(result.block_covered, np.diff(bo))
    assert result.coverage.tolist() == covered_tokens.tolist()


@settings(derandomize=True, max_examples=60, deadline=None)
@given(corpus_st, st.integers(2, 3), st.data())
def test_mine_blocks_counting_units_equal_brute_force(docs, sigma, data):
    units = data.draw(st.lists(st.integers(0, 2), min_size=len(docs), max_size=len(docs)))
    tokens, doc_offsets, bo = pack(docs)
    result = mine_blocks(tokens, doc_offsets, bo, sigma, 1, 2, count_unit=np.asarray(units))
    ref_phrases, ref_cov = mine_blocks_reference(docs, sigma, 1, 2, units=units)
    assert as_set(result.phrases) == ref_phrases
    assert result.block_covered.tolist() == [c for doc in ref_cov for c in doc]


@settings(derandomize=True, max_examples=80, deadline=None)
@given(corpus_st, st.integers(2, 3), st.integers(1, 3), st.data())
def test_single_use_blocks_equal_brute_force(docs, sigma, run_min_length, data):
    """Blocks flagged single-use equal no other block: no phrase, no chain through them."""
    flags = [data.draw(st.lists(st.booleans(), min_size=len(d), max_size=len(d))) for d in docs]
    tokens, doc_offsets, bo = pack(docs)
    result = mine_blocks(tokens, doc_offsets, bo, sigma, 1, run_min_length,
                         single_use=np.asarray([f for doc in flags for f in doc], dtype=bool))
    ref_phrases, ref_cov = mine_blocks_reference(docs, sigma, 1, run_min_length, single_use=flags)
    assert as_set(result.phrases) == ref_phrases
    assert result.block_covered.tolist() == [c for doc in ref_cov for c in doc]
    single = np.asarray([f for doc in flags for f in doc], dtype=bool)
    assert not result.block_covered[single].any()


def test_short_navigation_line_is_found_but_not_inside_sentences():
    nav = (10, 11, 12)  # "prev up next"
    docs = []
    for d in range(6):
        docs.append([nav, (100 + d, 10, 11, 12, 200 + d), (300 + d,)])  # nav line, then a sentence using it
    tokens, doc_offsets, bo = pack(docs)
    r = mine_blocks(tokens, doc_offsets, bo, sigma=5, block_min_length=3, run_min_length=99)
    assert [p.tokens for p in r.phrases] == [nav]
    assert r.phrases[0].kind == "block" and r.phrases[0].df == 6 and r.phrases[0].block_lengths == (3,)
    per_doc = r.coverage.reshape(6, -1)
    assert per_doc[:, :3].all() and not per_doc[:, 3:].any()


def test_first_line_pairs_with_the_page_start():
    docs = [[(1, 2), (50 + d,), (60 + d, 1, 2)] for d in range(4)]
    tokens, doc_offsets, bo = pack(docs)
    r = mine_blocks(tokens, doc_offsets, bo, sigma=4, block_min_length=9, run_min_length=2)
    assert [(p.tokens, p.anchor, p.block_lengths) for p in r.phrases] == [((1, 2), "start", (2,))]
    off = mine_blocks(tokens, doc_offsets, bo, sigma=4, block_min_length=9, run_min_length=2, edges=False)
    assert off.phrases == [] and not off.coverage.any()


def test_slot_positions_of_block_phrases():
    docs = [[(7, SLOT_ID, 8)] for _ in range(3)]
    tokens, doc_offsets, bo = pack(docs)
    r = mine_blocks(tokens, doc_offsets, bo, sigma=3, block_min_length=3, run_min_length=99)
    assert r.phrases[0].slots == (1,)


def test_mine_blocks_validates_thresholds():
    tokens, doc_offsets, bo = pack([[(1,)]])
    with pytest.raises(ValueError, match="sigma=1"):
        mine_blocks(tokens, doc_offsets, bo, 1, 1, 1)
    with pytest.raises(ValueError, match="count_unit"):
        mine_blocks(tokens, doc_offsets, bo, 2, 1, 1, count_unit=np.array([0, 1]))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab \n\r.ÿ", max_size=15), min_size=1, max_size=6), st.integers(1, 12))
def test_line_starts_batch_equals_line_start_flags_per_document(texts, chunk):
    """The batch kernel (one pass over the joined texts, in chunks like encode_batch) gives
    each document's line_start_flags, however the batch is cut."""
    from bloomspan.engine.templates.blocks import line_start_flags, line_starts_batch
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary

    _ids, offsets, starts, _ends = encode_batch(texts, Vocabulary(), with_offsets=True)
    want = [f for d, t in enumerate(texts) for f in line_start_flags(t, starts[offsets[d]:offsets[d + 1]]).tolist()]
    saved = blocks.CHUNK_CHARS
    try:
        blocks.CHUNK_CHARS = chunk
        got = line_starts_batch(texts, offsets, starts)
    finally:
        blocks.CHUNK_CHARS = saved
    assert got.dtype == np.uint8 and got.astype(bool).tolist() == want


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=40), st.data())
def test_flags_per_span_equals_plain_twin(flags, data):
    n = len(flags)
    spans = data.draw(st.lists(st.integers(0, n).flatmap(lambda s: st.tuples(st.just(s), st.integers(s, n))),
                               max_size=10))
    starts = np.asarray([s for s, _ in spans], dtype=np.int64)
    ends = np.asarray([e for _, e in spans], dtype=np.int64)
    flags = np.asarray(flags, dtype=bool)
    got = flags_per_span(flags, starts, ends)
    assert got.dtype == np.int64
    assert got.tolist() == flags_per_span_reference(flags, starts, ends).tolist()
    assert got.tolist() == [int(flags[s:e].sum()) for s, e in spans]


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=12), seed=st.integers(0, 1000))
def test_tokens_of_blocks_are_the_tokens_of_the_chosen_blocks(lengths, seed):
    """The difference array marks exactly the tokens of the chosen blocks (empty blocks, repeats
    and any order included), as a loop over the blocks does."""
    rng = np.random.default_rng(seed)
    block_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n_tokens = int(block_offsets[-1])
    chosen = rng.integers(0, len(lengths), int(rng.integers(0, 2 * len(lengths) + 1)))
    expected = np.zeros(n_tokens, dtype=bool)
    for b in chosen.tolist():
        expected[block_offsets[b]:block_offsets[b + 1]] = True
    assert np.array_equal(tokens_of_blocks(block_offsets, chosen, n_tokens), expected)
