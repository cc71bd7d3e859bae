"""Growth: kernel against its twin, the candidate invariant, and each pruning rule."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining import counting_filter as cf, word_filter as wf
from bloomspan.engine.mining.coverage import new_suffix_mask
from bloomspan.engine.mining.grow import STAT_NAMES, grow_seeds, grow_seeds_reference
from bloomspan.engine.mining.seeds import gather_seeds
from bloomspan.engine.oracles.naive_oracle import mine_naive

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KERNEL = settings(max_examples=1500 if THOROUGH else 150, derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow])


def corpus(docs):
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def prepared(docs, sigma, n_cells=64):
    """Everything growth needs, built the way mine_bloomspan builds it."""
    tokens, offsets = corpus(docs)
    df = wf.document_frequency(tokens, offsets, 1 + (int(tokens.max()) if tokens.size else 0))
    rank_of, n_frequent = wf.frequent_word_ranks(df, sigma)
    frequent = wf.frequent_bitmap(df, sigma)
    counters = cf.build_counting_filter(tokens, offsets, n_cells, frequent)
    pos, doc = cf.candidate_occurrences(tokens, offsets, counters, cf.filter_threshold(sigma), frequent)
    seeds = gather_seeds(tokens, rank_of, pos, doc, sigma, n_frequent)
    return tokens, offsets, rank_of, n_frequent, seeds


def grow(docs, sigma, min_length, twin=False, **flags):
    tokens, offsets, rank_of, n_frequent, seeds = prepared(docs, sigma)
    dead_from = new_suffix_mask(offsets)
    fn = grow_seeds_reference if twin else grow_seeds
    cands = fn(tokens, rank_of, offsets, seeds.pos, seeds.doc, seeds.lo, seeds.hi, sigma, min_length, n_frequent,
               dead_from=dead_from, **flags)
    found = [(tuple(tokens[cands.pos[lo]:cands.pos[lo] + n].tolist()), int(df), cands.occurrences(i).tolist(), int(s))
             for i, (lo, n, df, s) in enumerate(zip(cands.lo, cands.length, cands.df, cands.seed))]
    return found, cands.stats, dead_from.tolist()


docs_strategy = st.lists(
    st.lists(st.one_of(st.lists(st.integers(0, 4), max_size=4), st.sampled_from([[0, 1, 2], [1, 2, 1, 2], [3, 3, 3]]),
                       st.lists(st.integers(50, 99), min_size=1, max_size=1)),
             max_size=5).map(lambda ps: [t for p in ps for t in p]),
    max_size=9)
flags_strategy = st.fixed_dictionaries({"mask_skip": st.booleans(), "left_prune": st.booleans()})


@KERNEL
@given(docs_strategy, st.integers(2, 4), st.integers(2, 5), flags_strategy)
def test_kernel_matches_twin(docs, sigma, min_length, flags):
    assert grow(docs, sigma, min_length, **flags) == grow(docs, sigma, min_length, twin=True, **flags)


@KERNEL
@given(docs_strategy, st.integers(2, 4), st.integers(2, 5), flags_strategy)
def test_candidates_are_frequent_and_include_every_maximal_phrase(docs, sigma, min_length, flags):
    found, stats, _ = grow(docs, sigma, min_length, **flags)
    tokens, offsets = corpus(docs)
    texts = [tuple(d) for d in docs]

    def true_df(phrase):
        n = len(phrase)
        return sum(any(d[i:i + n] == phrase for i in range(len(d) - n + 1)) for d in texts)

    for phrase, df, occ, _ in found:
        assert len(phrase) >= min_length and true_df(phrase) >= df >= sigma
        assert len(occ) >= df
    by_phrase = {phrase: (df, len(occ)) for phrase, df, occ, _ in found}
    for m in mine_naive(tokens, offsets, sigma, min_length):
        assert by_phrase.get(m.tokens) == (m.df, m.occurrences)
    assert stats["candidates"] == len(found)
    assert set(stats) == set(STAT_NAMES)


def test_left_prune_counts_document_start_as_a_neighbour():
    # "b c" at the start of doc 0, after "a" elsewhere: not prunable ("a b c" has df 2 < 3)
    found, stats, _ = grow([[1, 2], [0, 1, 2], [0, 1, 2]], 3, 2)
    assert [f[0] for f in found] == [(1, 2)]
    assert stats["seeds_pruned_by_left_neighbour"] == 0


def test_left_prune_treats_rare_words_as_distinct():
    # three different rare words (df 1) before "b c": all map to the sentinel
    found, stats, _ = grow([[7, 1, 2], [8, 1, 2], [9, 1, 2]], 3, 2)
    assert [f[0] for f in found] == [(1, 2)]
    assert stats["seeds_pruned_by_left_neighbour"] == 0


def test_left_prune_fires_on_a_common_left_neighbour():
    # (documents end in different rare words, so no frequent suffix kills "b c" first)
    found, stats, _ = grow([[0, 1, 2, 5], [0, 1, 2, 6], [0, 1, 2, 7]], 3, 2)
    assert [f[0] for f in found] == [(0, 1, 2)]
    assert stats["seeds_pruned_by_left_neighbour"] == 1  # "b c", always after "a"
    assert stats["seeds_skipped_by_mask"] == 0


def test_frequent_suffix_skips_seeds_left_pruning_cannot():
    # "a b c b c" ends every document. "a b" (first by token order) grows into it and kills
    # positions 1.. of each document; "b c" has left neighbours a and c, yet is skipped.
    found, stats, dead_from = grow([[0, 1, 2, 1, 2]] * 3, 3, 2)
    assert [f[0] for f in found] == [(0, 1, 2, 1, 2)]
    assert dead_from == [1, 6, 11]
    assert stats["seeds_skipped_by_mask"] >= 1
    found_off, stats_off, _ = grow([[0, 1, 2, 1, 2]] * 3, 3, 2, mask_skip=False)
    assert stats_off["seeds_skipped_by_mask"] == 0 and stats_off["seeds_grown"] > stats["seeds_grown"]


def test_self_overlapping_run():
    found, _, _ = grow([[3, 3, 3, 3], [3, 3, 3, 3]], 2, 2)
    assert [(f[0], f[1], f[2]) for f in found] == [((3, 3, 3, 3), 2, [0, 4])]


def test_reach_drops_occurrences_too_close_to_the_end():
    # "a b" ends two documents: it cannot start a phrase of length 3 there
    found, stats, _ = grow([[0, 1], [0, 1], [0, 1, 2], [5, 0, 1, 2]], 2, 3)
    assert [(f[0], f[1]) for f in found] == [((0, 1, 2), 2)]


def test_checks_arrays():
    tokens, offsets = corpus([[1, 2]])
    rank_of = np.arange(3, dtype=np.uint32)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="uint32"):
        grow_seeds(tokens.astype(np.int64), rank_of, offsets, *empty, 2, 2, 3)
    with pytest.raises(ValueError, match="every token id"):
        grow_seeds(tokens, rank_of[:2], offsets, *empty, 2, 2, 3)
    with pytest.raises(ValueError, match="one entry per document"):
        grow_seeds(tokens, rank_of, offsets, *empty, 2, 2, 3, dead_from=np.zeros(3, np.int64))


@pytest.mark.parametrize("flags", [{"mask_skip": True, "left_prune": True}, {"mask_skip": False, "left_prune": False}])
def test_long_chains_match_twin(flags):
    """Long phrases shared by many documents (footers running to the document end, a header
    that forks after 25 tokens, a run broken by a rare word) are grown as chains of branches
    that keep every occurrence: the kernel skips those links and must still agree with the
    twin on every candidate, occurrence and counter (branches visited, occurrences scanned)."""
    rng = np.random.default_rng(11)
    header = list(range(100, 140))
    footer = list(range(200, 260))
    docs = []
    for d in range(12):
        fork = header[:25] + ([300 + d % 3] if d % 4 else [400 + d]) + header[26:]
        body = rng.integers(0, 30, size=rng.integers(0, 20)).tolist()
        tail = footer if d % 5 else footer[:30] + [900 + d] + footer[31:]
        docs.append(fork + body + tail[: 40 + d])
    for min_length in (3, 10, 30):
        want = grow(docs, 3, min_length, twin=True, **flags)
        assert want[0] and grow(docs, 3, min_length, **flags) == want
        assert want[1]["branches_visited"] > 50  # long chains were walked
