"""mine_bloomspan end to end: the article's example, saved regressions, validation, stats."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.oracles.naive_oracle import coverage_of, mine_naive

DATA = Path(__file__).resolve().parents[3] / "data"

SHOP = [
    "new laptop acer swift free shipping on orders over 50 dollars",
    "case for iphone 15 free shipping on orders over 50 dollars",
    "free shipping on orders over 50 dollars sony headphones",
    "sony headphones wh 1000 free shipping",
]


def word_corpus(texts: list[str]):
    """Tokens (ids = rank in the sorted vocabulary), offsets and the vocabulary."""
    vocab = sorted({w for t in texts for w in t.split()})
    ids = {w: i for i, w in enumerate(vocab)}
    tokens = np.array([ids[w] for t in texts for w in t.split()], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(t.split()) for t in texts]).astype(np.int64)
    return tokens, offsets, vocab


def spelled(phrases, vocab):
    return [(" ".join(vocab[t] for t in p.tokens), p.df, p.occurrences) for p in phrases]


@pytest.mark.parametrize("min_length", [2, 3, 7])
def test_article_shop_example(min_length):
    # Part 2 of the article: sigma = 3, the one answer is the 7-token shipping phrase.
    tokens, offsets, vocab = word_corpus(SHOP)
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=3, min_length=min_length))
    assert spelled(result.phrases, vocab) == [("free shipping on orders over 50 dollars", 3, 3)]
    covered = [w for w, c in zip(" ".join(SHOP).split(), result.coverage) if c]
    assert covered == "free shipping on orders over 50 dollars".split() * 3


def test_article_shop_example_too_long():
    tokens, offsets, _ = word_corpus(SHOP)
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=3, min_length=8))
    assert result.phrases == [] and not result.coverage.any()


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.stem)
@pytest.mark.parametrize("flags", [dict(), dict(mask_skip=False, left_prune=False, kgram_filter=False),
                                   dict(filter_bytes=1)])
def test_saved_regressions(path, flags):
    case = json.loads(path.read_text())
    tokens, offsets, vocab = word_corpus(case["docs"])
    cfg = MiningConfig(sigma=case["sigma"], min_length=case["min_length"], **flags)
    result = mine_bloomspan(tokens, offsets, cfg)
    want = [(e["phrase"], e["df"], e["occurrences"]) for e in case["expected"]]
    assert spelled(result.phrases, vocab) == want, case["what_broke"]
    assert result.coverage.tolist() == coverage_of(tokens, offsets, result.phrases).tolist()


def test_article_mask_skip_counterexample_still_is_one():
    """The saved corpus must keep demonstrating the article's failure (Part 4, "The coverage mask"): every occurrence of
    the seed "x y" lies inside the phrases grown from the seeds ordered before it."""
    from bloomspan.engine.mining.counting_filter import build_counting_filter, candidate_occurrences
    from bloomspan.engine.mining.seeds import gather_seeds

    case = json.loads((DATA / "mask_skip_seed_covered.json").read_text())
    tokens, offsets, vocab = word_corpus(case["docs"])
    ids = {w: i for i, w in enumerate(vocab)}
    counters = build_counting_filter(tokens, offsets, 1024)
    pos, doc = candidate_occurrences(tokens, offsets, counters, 2)
    seeds = gather_seeds(tokens, np.arange(len(vocab), dtype=np.uint32), pos, doc, 2, len(vocab))
    order = [(int(k) >> 32, int(k) & 0xFFFFFFFF) for k in seeds.keys]
    xy = order.index((ids["x"], ids["y"]))
    assert {(ids["a"], ids["x"]), (ids["c"], ids["x"])} <= set(order[:xy])
    earlier = [p for p in mine_naive(tokens, offsets, 2, 3) if p.tokens[:2] in order[:xy]]
    mask = coverage_of(tokens, offsets, earlier)
    xy_at = [p for p in range(len(tokens) - 1) if (tokens[p], tokens[p + 1]) == (ids["x"], ids["y"])]
    assert xy_at and all(mask[p] and mask[p + 1] for p in xy_at)
    found = mine_bloomspan(tokens, offsets, MiningConfig(sigma=2, min_length=3)).phrases
    assert (ids["x"], ids["y"], ids["z"]) in [p.tokens for p in found]


def test_sigma_above_255_keeps_frequent_bigrams():
    # Counters saturate at 255: comparing them with sigma=300 would reject every bigram.
    docs = ["a b c"] * 300 + ["a b d"] * 5
    tokens, offsets, vocab = word_corpus(docs)
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=300, min_length=2))
    assert spelled(result.phrases, vocab) == [("a b c", 300, 300)]
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=305, min_length=2))
    assert spelled(result.phrases, vocab) == [("a b", 305, 305)]
    assert result.stats["filter_threshold"] == 255


def test_empty_corpora():
    for tokens, offsets in [([], [0]), ([], [0, 0, 0]), ([1, 2], [0, 1, 2])]:
        result = mine_bloomspan(np.array(tokens, dtype=np.uint32), np.array(offsets), MiningConfig(2, 2))
        assert result.phrases == []
        assert result.coverage.shape == (len(tokens),) and not result.coverage.any()


def test_largest_token_ids():
    top = 2**32 - 1
    tokens = np.array([top, 0, top, 0, 5], dtype=np.uint32)
    result = mine_bloomspan(tokens, np.array([0, 2, 5]), MiningConfig(2, 2))
    assert result.phrases == [Phrase((top, 0), 2, 2)]


def test_stats_report_every_stage():
    tokens, offsets, _ = word_corpus(SHOP)
    stats = mine_bloomspan(tokens, offsets, MiningConfig(sigma=3, min_length=2)).stats
    for stage in ("word_filter", "counting_filter", "candidates", "seeds", "grow", "maximal", "coverage"):
        assert stats[f"seconds_{stage}"] >= 0
    assert stats["bigrams"] == 33 and stats["tokens_mined"] == 37 and stats["docs_mined"] == 4
    assert stats["seeds"] == 6  # the six frequent bigrams of the article's Step 0 table (Part 3)
    assert stats["filter_bytes"] == 1024 and 0 < stats["filter_fill_ratio"] < 1
    assert stats["phrases"] == 1 and stats["covered_tokens"] == 21
    json.dumps(stats)  # JSON-serialisable


def test_false_positives_are_counted_and_dropped():
    # One byte of filter: every bigram of frequent words shares the cell and passes;
    # "c b", "b a" and "c a" occur in one document each and are dropped by exact df.
    tokens, offsets, vocab = word_corpus(["a b c", "c b a", "a b c", "b c a"])
    result = mine_bloomspan(tokens, offsets, MiningConfig(sigma=2, min_length=2, filter_bytes=1))
    assert result.stats["candidate_occurrences"] == 8
    stats = result.stats
    assert (stats["candidate_bigrams"], stats["false_positive_bigrams"], stats["seeds"]) == (5, 3, 2)
    assert spelled(result.phrases, vocab) == [("a b c", 2, 2)]


def test_config_flags_are_validated():
    with pytest.raises(ConfigError, match="mask_skip=1"):
        MiningConfig(2, 2, mask_skip=1)
    with pytest.raises(ConfigError, match="kgram_filter"):
        MiningConfig(2, 2, kgram_filter="yes")


def test_accepts_other_integer_dtypes():
    tokens, offsets, _ = word_corpus(SHOP)
    a = mine_bloomspan(tokens.astype(np.int64), offsets.astype(np.int32), MiningConfig(3, 2))
    b = mine_bloomspan(tokens, offsets, MiningConfig(3, 2))
    assert a.phrases == b.phrases


def test_coverage_matches_oracle_on_overlapping_phrases():
    docs = ["a b c d e", "a b c d f", "x c d e", "y c d e", "c d e a b c d"]
    tokens, offsets, _ = word_corpus(docs)
    result = mine_bloomspan(tokens, offsets, MiningConfig(2, 2))
    assert result.phrases == mine_naive(tokens, offsets, 2, 2)
    assert result.coverage.tolist() == coverage_of(tokens, offsets, result.phrases).tolist()
