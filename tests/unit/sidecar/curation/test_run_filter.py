"""A run filtered by the curation's deny entries: its coverage is rebuilt from the engine's
occurrence starts of the phrases that remain, equal to marking every occurrence in the corpus."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.oracles.naive_oracle import coverage_of as oracle_coverage
from bloomspan.ingest.clean.denied_text import occurrence_mask_reference
from bloomspan.ingest.records.curation import CurationEntry
from bloomspan.sidecar.curation.run_filter import coverage_of, filter_mining_result


def _corpus(seed: int):
    rng = np.random.default_rng(seed)
    planted = [rng.integers(0, 40, size=6), rng.integers(40, 80, size=7)]
    docs = []
    for d in range(30):
        doc = list(rng.integers(80, 400, size=int(rng.integers(5, 40))))
        for k, phrase in enumerate(planted):
            if (d + k) % 2 == 0:
                at = int(rng.integers(0, len(doc) + 1))
                doc[at:at] = phrase.tolist()
        docs.append(doc)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    return np.concatenate(docs).astype(np.uint32), offsets


class _Vocabulary:
    def tokens(self, ids):
        return [f"w{int(i)}" for i in ids]

    def ids_of(self, tokens):
        return np.asarray([int(t[1:]) for t in tokens], dtype=np.uint32)


@pytest.mark.parametrize("engine", ["bloomspan", "fhk"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_denied_phrase_leaves_the_coverage_of_the_others(engine, seed):
    tokens, offsets = _corpus(seed)
    result = mine(tokens, offsets, MiningConfig(sigma=5, min_length=4, engine=engine))
    assert len(result.phrases) >= 2
    denied = result.phrases[0]
    entry = CurationEntry(action="deny", tokens=tuple(_Vocabulary().tokens(denied.tokens)))
    snapshot = SimpleNamespace(vocabulary=_Vocabulary(), tokens=tokens, doc_offsets=offsets)
    filtered, report = filter_mining_result(snapshot, result, [entry], min_length=4)
    assert report["filtered"] >= 1 and denied not in filtered.phrases
    # every occurrence of the denied phrase stays uncovered, also where a kept phrase overlaps it
    denied_at = occurrence_mask_reference(tokens.tolist(), offsets.tolist(), [list(denied.tokens)])
    want = oracle_coverage(tokens, offsets, filtered.phrases) & ~denied_at
    assert filtered.coverage.tolist() == want.tolist()


def test_a_kept_phrase_overlapping_a_denied_ones_edge_covers_the_rest_only():
    # six documents "1 2 ... 9": the one mined phrase is the whole document
    tokens = np.asarray([1, 2, 3, 4, 5, 6, 7, 8, 9] * 6, dtype=np.uint32)
    offsets = np.arange(0, 55, 9, dtype=np.int64)
    result = mine(tokens, offsets, MiningConfig(sigma=5, min_length=3, engine="fhk"))
    snapshot = SimpleNamespace(vocabulary=_Vocabulary(), tokens=tokens, doc_offsets=offsets)
    entry = CurationEntry(action="deny", tokens=("w7", "w8"))
    filtered, report = filter_mining_result(snapshot, result, [entry], min_length=3)
    assert report["filtered"] == len(result.phrases) and not filtered.phrases  # the one phrase holds "7 8"
    assert not filtered.coverage.any() and report["protected_tokens"] == 0
    entry = CurationEntry(action="deny", tokens=("w9", "w100"))  # never occurs: nothing protected, nothing changed
    same, report = filter_mining_result(snapshot, result, [entry], min_length=3)
    assert same is result and report["protected_tokens"] == 0
    # a phrase that only overlaps the denied text's edge is kept, and covers all of its own but that
    kept = Phrase((1, 2, 3), df=6, occurrences=6, starts=offsets[:-1].copy())
    narrowed = replace(result, phrases=[kept], coverage=coverage_of(len(tokens), [kept]))
    cut, report = filter_mining_result(snapshot, narrowed, [CurationEntry(action="deny", tokens=("w3", "w4"))],
                                       min_length=None)
    assert report["filtered"] == 0 and report["protected_tokens"] == 6
    assert cut.phrases == [kept]
    assert np.flatnonzero(cut.coverage).tolist() == [d * 9 + k for d in range(6) for k in (0, 1)]


def test_phrases_without_their_starts_are_refused_not_guessed():
    with pytest.raises(ValueError, match="occurrence starts"):
        coverage_of(10, [Phrase((1, 2), df=2, occurrences=2)])
    assert not coverage_of(10, []).any()
