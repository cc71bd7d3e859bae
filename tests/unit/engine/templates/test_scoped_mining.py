"""Site scope (engine/templates/scoped_mining.py): group-relative sigma, sub-corpora, per-group exact mining."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.oracles.naive_oracle import coverage_of, mine_naive
from bloomspan.engine.templates.blocks import mine_blocks
from bloomspan.engine.templates.scoped_mining import group_documents, group_sigma, mcfp_miner, mine_scoped, sub_corpus

docs_st = st.lists(st.lists(st.integers(0, 3), max_size=8), min_size=1, max_size=9)


def pack(docs):
    tokens = np.asarray([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return tokens, offsets


def test_group_sigma_is_relative_with_a_floor():
    assert group_sigma(200, 0.05, 5) == 10  # not 11: 0.05 * 200 rounds to 10 exactly
    assert group_sigma(201, 0.05, 5) == 11
    assert group_sigma(30, 0.05, 5) == 5
    assert group_sigma(0, 0.5, 2) == 2


def test_group_documents_sorted_and_none_left_out():
    groups = group_documents(["b", None, "a", "b"])
    assert list(groups) == ["a", "b"]
    assert groups["b"].tolist() == [0, 3] and groups["a"].tolist() == [2]
    with pytest.raises(ValueError, match="groups\\[0\\]"):
        group_documents([""])


@settings(derandomize=True, max_examples=60, deadline=None)
@given(docs_st, st.data())
def test_sub_corpus_cuts_documents_and_blocks(docs, data):
    tokens, offsets = pack(docs)
    chosen = sorted(set(data.draw(st.lists(st.integers(0, len(docs) - 1), max_size=len(docs)))))
    # blocks: every document split after its first token
    bo = sorted({0, tokens.shape[0]} | set(offsets.tolist())
                | {int(offsets[d]) + 1 for d in range(len(docs)) if len(docs[d]) > 1})
    sub = sub_corpus(tokens, offsets, np.asarray(chosen, dtype=np.int64), "g", np.asarray(bo))
    assert sub.tokens.tolist() == [t for d in chosen for t in docs[d]]
    assert np.diff(sub.doc_offsets).tolist() == [len(docs[d]) for d in chosen]
    assert tokens[sub.positions].tolist() == sub.tokens.tolist()
    expected_blocks = [0]
    for d in chosen:
        if len(docs[d]) > 1:
            expected_blocks.append(expected_blocks[-1] + 1)
        if docs[d]:
            expected_blocks.append(expected_blocks[-1] + len(docs[d]) - (1 if len(docs[d]) > 1 else 0))
    assert sub.block_offsets.tolist() == expected_blocks


@settings(derandomize=True, max_examples=50, deadline=None)
@given(docs_st, st.data(), st.sampled_from([0.0, 0.3, 0.6]), st.integers(2, 3))
def test_scoped_mcfp_equals_oracle_per_group(docs, data, fraction, floor):
    tokens, offsets = pack(docs)
    groups = data.draw(st.lists(st.sampled_from(["a", "b", None]), min_size=len(docs), max_size=len(docs)))
    result = mine_scoped(tokens, offsets, groups, mcfp_miner(2, "fhk"), fraction, floor)
    expected_cov = np.zeros(tokens.shape[0], dtype=bool)
    expected = set()
    for name in ("a", "b"):
        members = np.asarray([d for d, g in enumerate(groups) if g == name], dtype=np.int64)
        if members.shape[0] == 0:
            assert name not in result.groups
            continue
        sigma = group_sigma(members.shape[0], fraction, floor)
        assert result.groups[name]["sigma"] == sigma
        if members.shape[0] < sigma:
            assert result.groups[name]["skipped"]
            continue
        sub = sub_corpus(tokens, offsets, members, name)
        oracle = mine_naive(sub.tokens, sub.doc_offsets, sigma, 2)
        expected |= {(p.tokens, p.df, p.occurrences, name) for p in oracle}
        expected_cov[sub.positions[coverage_of(sub.tokens, sub.doc_offsets, oracle)]] = True
    assert {(p.tokens, p.df, p.occurrences, p.scope) for p in result.phrases} == expected
    assert all(p.kind == "mcfp" for p in result.phrases)
    assert result.coverage.tolist() == expected_cov.tolist()


def test_small_site_template_found_only_with_a_relative_sigma():
    """A footer on 8 of 8 pages of a small site and an idiom on 12 of 200 pages of a large one."""
    docs, groups = [], []
    footer = [50, 51, 52]
    for d in range(8):
        docs.append([100 + d, 101 + d] + footer)
        groups.append("small")
    for d in range(200):
        docs.append([1000 + d] + ([60, 61, 62] if d < 12 else []) + [2000 + d])
        groups.append("large")
    tokens, offsets = pack(docs)
    global_20 = mine_naive(tokens, offsets, 20, 3)
    assert global_20 == []  # one sigma for all: the footer (8 pages) is missed
    result = mine_scoped(tokens, offsets, groups, mcfp_miner(3), 0.1, 5)
    assert {(p.tokens, p.scope) for p in result.phrases} == {((50, 51, 52), "small")}
    assert result.groups["large"]["sigma"] == 20


def test_block_miner_through_mine_scoped_uses_group_blocks():
    docs = [[1, 2, 9 + d] for d in range(4)]
    tokens, offsets = pack(docs)
    bo = np.asarray([0, 2, 3, 5, 6, 8, 9, 11, 12], dtype=np.int64)  # lines "1 2" and "9+d"

    def miner(sub, sigma):
        r = mine_blocks(sub.tokens, sub.doc_offsets, sub.block_offsets, sigma, 2, 99, scope=sub.name)
        return r.phrases, r.coverage, {}

    result = mine_scoped(tokens, offsets, ["s", "s", "s", "t"], miner, 1.0, 2, block_offsets=bo)
    assert [(p.tokens, p.scope, p.df) for p in result.phrases] == [((1, 2), "s", 3)]
    assert result.coverage.tolist() == [True, True, False] * 3 + [False] * 3
    assert result.groups["t"]["skipped"]


def test_mine_scoped_validates_arguments():
    tokens, offsets = pack([[1], [2]])
    with pytest.raises(ValueError, match="one per document"):
        mine_scoped(tokens, offsets, ["a"], mcfp_miner(2), 0.1, 2)
    with pytest.raises(ValueError, match="sigma_fraction"):
        mine_scoped(tokens, offsets, ["a", "a"], mcfp_miner(2), 1.5, 2)
