"""A run filtered by the curation's deny entries: its coverage is rebuilt from the engine's
occurrence starts of the phrases that remain, equal to marking every occurrence in the corpus."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.oracles.naive_oracle import coverage_of as oracle_coverage
from bloomspan.ingest.curation import CurationEntry
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
    assert filtered.coverage.tolist() == oracle_coverage(tokens, offsets, filtered.phrases).tolist()


def test_phrases_without_their_starts_are_refused_not_guessed():
    with pytest.raises(ValueError, match="occurrence starts"):
        coverage_of(10, [Phrase((1, 2), df=2, occurrences=2)])
    assert not coverage_of(10, []).any()
