"""The engine dispatch by name: each name runs its engine, and both engines agree (exact MCFP)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.oracles.fhk import mine_fhk


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
