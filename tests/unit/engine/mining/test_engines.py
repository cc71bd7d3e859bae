"""The engine dispatch by name: each name runs its engine, both engines agree (exact MCFP), and
``auto`` picks one by corpus shape."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining import engines as engines_mod
from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.fhk import mine_fhk


def _corpus(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


SHOP = [[1, 2, 3, 4, 5, 6, 7, 8, 9], [4, 5, 6, 7, 8, 9, 10, 11], [4, 5, 6, 7, 8, 9, 12, 13], [14, 15, 4, 5, 6, 7, 8, 9]]


@pytest.mark.parametrize("engine, direct", [("bloomspan", mine_bloomspan), ("fhk", mine_fhk)])
def test_each_name_runs_its_engine(engine, direct):
    tokens, offsets = _corpus(SHOP)
    config = MiningConfig(sigma=3, min_length=2, engine=engine)
    got, want = mine(tokens, offsets, config), direct(tokens, offsets, config)
    assert got.phrases == want.phrases and got.phrases
    assert np.array_equal(got.coverage, want.coverage)
    assert got.stats.get("engine", engine) == want.stats.get("engine", engine)


def test_an_unknown_engine_names_the_field():
    with pytest.raises(ConfigError, match="engine"):
        MiningConfig(sigma=2, min_length=2, engine="suffix-tree")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=0, max_size=12), min_size=1, max_size=8),
       st.integers(2, 4), st.integers(2, 4))
def test_both_names_give_the_same_phrases_and_coverage(docs, sigma, min_length):
    tokens, offsets = _corpus(docs)
    a = mine(tokens, offsets, MiningConfig(sigma=sigma, min_length=min_length, engine="bloomspan"))
    b = mine(tokens, offsets, MiningConfig(sigma=sigma, min_length=min_length, engine="fhk"))
    assert a.phrases == b.phrases
    assert np.array_equal(a.coverage, b.coverage)


def nested_repeats(seed=0, n_docs=400):
    """Documents cut from one repeated run of 150 tokens: LZ78 c/n 0.05, far below natural text."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 40, size=150)
    docs = [np.tile(base, 3)[s:s + 300] for s in rng.integers(0, 150, size=n_docs)]
    tokens = np.concatenate(docs).astype(np.uint32)
    return tokens, np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)


def fresh_text(seed=1, n_docs=60):
    rng = np.random.default_rng(seed)
    boiler = rng.integers(0, 5000, size=12)
    docs = [np.concatenate([boiler, rng.integers(0, 5000, size=200)]) for _ in range(n_docs)]
    tokens = np.concatenate(docs).astype(np.uint32)
    return tokens, np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)


def phrases(result):
    return [(p.tokens, p.df, p.occurrences) for p in result.phrases]


def test_auto_picks_fhk_on_nested_repeats_and_bloomspan_on_fresh_text():
    cfg = MiningConfig(sigma=30, min_length=4, engine="auto")
    for corpus, want in ((nested_repeats(), "fhk"), (fresh_text(), "bloomspan")):
        engine, reason = engines_mod.choose_engine(*corpus, cfg)
        assert engine == want, reason
        result = engines_mod.mine(*corpus, cfg)
        assert result.stats["engine"] == want and result.stats["engine_requested"] == "auto"
        assert "c/n" in result.stats["engine_reason"]
        for name in ("bloomspan", "fhk"):
            other = engines_mod.mine(*corpus, MiningConfig(sigma=30, min_length=4, engine=name))
            assert phrases(other) == phrases(result)
    assert phrases(result)  # the fresh text's boilerplate is found


def test_auto_keeps_bloomspan_past_the_fhk_size_limit(monkeypatch):
    monkeypatch.setattr(engines_mod, "FHK_MAX_TOKENS", 100)
    engine, reason = engines_mod.choose_engine(*nested_repeats(), MiningConfig(sigma=3, min_length=4, engine="auto"))
    assert engine == "bloomspan" and "tokens >" in reason
