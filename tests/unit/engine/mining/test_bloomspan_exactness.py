"""BloomSpan equals the MCFP definition exactly: phrases, df, occurrences, coverage.

Compared with the brute force (engine/oracles/naive_oracle.py) and the suffix-array oracle
(engine/mining/fhk.py) on random corpora built to hit every mechanism BloomSpan uses: small
vocabularies (2-6 symbols), planted and nested repeats, repeats inside one document,
repeats touching document boundaries, empty documents, self-overlapping runs ("a a a a"),
sigma 2-5, min_length 2-5, filters of 1-16 bytes (many false positives), sparse token ids,
and every combination of the optional prunings.

Hypothesis runs derandomized; HYPOTHESIS_PROFILE=thorough raises the example counts.
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.fhk import mine_fhk
from bloomspan.engine.oracles.naive_oracle import coverage_of, mine_naive

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
MANY = 4000 if THOROUGH else 300
PROPERTY = settings(max_examples=MANY, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


SPARSE_STEP = 4_000_037


def corpus(docs: list[list[int]], sparse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated tokens and offsets; ``sparse`` spreads the ids (order kept) up to 2**32."""
    ids = {t: t for d in docs for t in d}
    if sparse:
        ids = {t: 7 + i * SPARSE_STEP for i, t in enumerate(sorted(ids))}
    tokens = np.array([ids[t] for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


@st.composite
def corpora(draw):
    """Documents assembled from pieces: noise, rare words (ids >= 100, almost surely each
    in one document), planted phrases (and nested parts of them), a rare word glued before
    a planted phrase, self-overlapping runs. A piece may land at a document's start or end,
    a document may hold several copies of a phrase, and documents may be empty."""
    alphabet = draw(st.integers(2, 6))
    symbol = st.integers(0, alphabet - 1)
    phrases = draw(st.lists(st.lists(symbol, min_size=2, max_size=9), min_size=1, max_size=3))
    first = phrases[0]
    cut_lo = draw(st.integers(0, len(first) - 2))
    cut_hi = draw(st.integers(cut_lo + 2, len(first)))
    phrases.append(first[cut_lo:cut_hi])  # nested inside the first
    piece = st.one_of(
        st.lists(symbol, max_size=4),                                   # noise
        st.lists(st.integers(100, 10**6), min_size=1, max_size=2),      # rare words
        st.sampled_from(range(len(phrases))).map(lambda i: phrases[i]),  # planted
        st.tuples(st.integers(100, 10**6), st.sampled_from(range(len(phrases)))).map(
            lambda r: [r[0]] + phrases[r[1]]),                            # rare word + planted
        st.tuples(symbol, st.integers(2, 6)).map(lambda r: [r[0]] * r[1]),  # a a a a
    )
    docs = draw(st.lists(st.lists(piece, max_size=4).map(lambda ps: [t for p in ps for t in p]),
                         min_size=0, max_size=10))
    return docs


settings_strategy = st.fixed_dictionaries({
    "sigma": st.integers(2, 5),
    "min_length": st.integers(2, 5),
    "filter_bytes": st.one_of(st.integers(1, 16), st.none()),
    "mask_skip": st.booleans(),
    "left_prune": st.booleans(),
    "kgram_filter": st.booleans(),
})


def check_against_oracles(docs, cfg: MiningConfig, sparse: bool = False):
    tokens, offsets = corpus(docs, sparse)
    got = mine_bloomspan(tokens, offsets, cfg)
    want = mine_naive(tokens, offsets, cfg.sigma, cfg.min_length)
    assert got.phrases == want
    assert got.coverage.dtype == bool and got.coverage.shape == tokens.shape
    assert got.coverage.tolist() == coverage_of(tokens, offsets, want).tolist()
    fhk = mine_fhk(tokens, offsets, MiningConfig(sigma=cfg.sigma, min_length=cfg.min_length, engine="fhk"))
    assert got.phrases == fhk.phrases
    assert got.coverage.tolist() == fhk.coverage.tolist()
    return got


@PROPERTY
@given(corpora(), settings_strategy)
def test_bloomspan_equals_brute_force_and_fhk(docs, params):
    check_against_oracles(docs, MiningConfig(**params))


@PROPERTY
@given(corpora(), st.integers(2, 5), st.integers(2, 5))
def test_sparse_token_ids_change_nothing(docs, sigma, min_length):
    # ids far above the corpus size take the compressing path (np.unique) of the word filter
    got = check_against_oracles(docs, MiningConfig(sigma=sigma, min_length=min_length, filter_bytes=7),
                                sparse=True)
    assert all(t % SPARSE_STEP == 7 for p in got.phrases for t in p.tokens)


@st.composite
def template_corpora(draw):
    """Boilerplate-shaped corpora: headers and footers at document starts and ends over
    noise, several templates sharing inner pieces; these drive the frequent-suffix mask."""
    alphabet = draw(st.integers(3, 6))
    symbol = st.integers(0, alphabet - 1)
    shared = draw(st.lists(symbol, min_size=2, max_size=4))
    templates = [draw(st.lists(symbol, max_size=3)) + shared + draw(st.lists(symbol, max_size=3))
                 for _ in range(draw(st.integers(1, 3)))]
    docs = []
    for _ in range(draw(st.integers(2, 10))):
        body = draw(st.lists(symbol, max_size=5))
        head = templates[draw(st.integers(0, len(templates) - 1))] if draw(st.booleans()) else []
        foot = templates[draw(st.integers(0, len(templates) - 1))] if draw(st.booleans()) else []
        docs.append(head + body + foot)
    return docs


@PROPERTY
@given(template_corpora(), settings_strategy)
def test_templates_at_document_edges(docs, params):
    check_against_oracles(docs, MiningConfig(**params))
