"""Phrase documents built from the engines' occurrence starts are, byte for byte, the ones
the old corpus scan built (bench/scan_publication.py); a result without starts, or
with starts that disagree with df, is refused rather than published wrong."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bench.scan_publication import scan_phrase_documents_for
from bloomspan.corpora.web import generate_web
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.phrases import MiningResult, Phrase
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.errors import BloomspanSidecarError
from bloomspan.sidecar.publish.publication import phrase_documents_for


class _Strings:
    def __init__(self, strings: list[str]):
        self._strings = strings

    def tokens(self, ids) -> list[str]:
        return [self._strings[int(i)] for i in ids]


class _Corpus:
    """What publication reads of a snapshot: tokens, doc_offsets, vocabulary."""

    def __init__(self, docs: list[list[str]]):
        ids: dict[str, int] = {}
        flat = [ids.setdefault(t, len(ids)) for doc in docs for t in doc]
        self.tokens = np.asarray(flat, dtype=np.uint32)
        self.doc_offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
        self.vocabulary = _Strings(list(ids))
        self.n_tokens = int(self.tokens.shape[0])


def _as_bytes(phrase_docs: list[dict]) -> bytes:
    return json.dumps(phrase_docs, sort_keys=True, ensure_ascii=False).encode("utf-8")


@pytest.fixture(scope="module")
def crawl() -> tuple[_Corpus, list[str]]:
    pages = sorted(generate_web(400, seed=3, n_sites=10), key=lambda d: d["id"])
    return _Corpus([tokenize(d["text"]) for d in pages]), [d["id"] for d in pages]


@pytest.mark.parametrize("engine", ["bloomspan", "fhk"])
def test_phrase_documents_equal_the_scan_built_ones_byte_for_byte(crawl, engine):
    corpus, keys = crawl
    result = mine(corpus.tokens, corpus.doc_offsets, MiningConfig(sigma=5, min_length=5, engine=engine))
    assert len(result.phrases) > 50
    got, got_docs = phrase_documents_for(corpus, result, keys)
    want, want_docs = scan_phrase_documents_for(corpus, result, keys)
    assert _as_bytes(got) == _as_bytes(want)
    assert [d.tolist() for d in got_docs] == [d.tolist() for d in want_docs]


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from("abcd"), max_size=14), min_size=2, max_size=10),
       st.integers(2, 3), st.integers(2, 4), st.sampled_from(["bloomspan", "fhk"]))
def test_random_corpora_publish_what_the_scan_published(docs, sigma, min_length, engine):
    corpus = _Corpus(docs)
    keys = [f"doc-{i:03d}" for i in range(len(docs))]
    result = mine(corpus.tokens, corpus.doc_offsets, MiningConfig(sigma=sigma, min_length=min_length, engine=engine))
    got, _ = phrase_documents_for(corpus, result, keys)
    want, _ = scan_phrase_documents_for(corpus, result, keys)
    assert _as_bytes(got) == _as_bytes(want)


def _one_phrase_result(phrase: Phrase) -> tuple[_Corpus, MiningResult]:
    corpus = _Corpus([["a", "b", "x"], ["a", "b"], ["y", "a", "b"]])
    return corpus, MiningResult(phrases=[phrase], coverage=np.zeros(corpus.n_tokens, dtype=bool))


def test_a_phrase_without_starts_is_refused():
    corpus, result = _one_phrase_result(Phrase((0, 1), 3, 3))
    with pytest.raises(BloomspanSidecarError, match="no occurrence starts"):
        phrase_documents_for(corpus, result, ["d0", "d1", "d2"])


def test_starts_that_disagree_with_df_are_refused():
    good = Phrase((0, 1), 3, 3, np.array([0, 3, 6], dtype=np.int64))
    corpus, result = _one_phrase_result(good)
    assert phrase_documents_for(corpus, result, ["d0", "d1", "d2"])[1][0].tolist() == [0, 1, 2]
    bad = replace(result, phrases=[Phrase((0, 1), 3, 3, np.array([0, 3, 4], dtype=np.int64))])
    with pytest.raises(BloomspanSidecarError, match="give df=2"):
        phrase_documents_for(corpus, bad, ["d0", "d1", "d2"])
