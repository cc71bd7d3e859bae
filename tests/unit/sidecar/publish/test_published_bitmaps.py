"""What each publish path writes into ``doc_bitmap`` and ``coverage_bitmap`` is the canonical
serialization of its members: the single node's phrase documents and coverage, the Dask
growth shard's phrase summary and the driver's OR of the shards' coverage, for a member set
whose run and array forms cost the same bytes (the case that made them differ)."""
from __future__ import annotations

import base64

import numpy as np
from pyroaring import BitMap

from bloomspan.engine.distributed.sharded_growth import GrownPhrases
from bloomspan.engine.mining.phrases import MiningResult, Phrase
from bloomspan.sidecar.distributed.coverage import CoverageReduction, coverage_sent, shard_coverage
from bloomspan.sidecar.distributed.tasks import phrase_summary
from bloomspan.sidecar.publish.bitmaps import encode_bitmap
from bloomspan.sidecar.publish.publication import coverage_for, phrase_documents_for
from bloomspan.sidecar.publish.roaring_format import canonical_serialization

# 9 members in 4 runs: 2 + 4*4 bytes as runs, 2*9 bytes as an array
TIE = np.array([23, 369, 370, 371, 388, 389, 390, 391, 442], dtype=np.int64)


# the same members as the report found them in the OR of shard bitmaps: one run container
TIE_AS_RUN = base64.b64decode("OzAAAAEAAAgABAAXAAAAcQECAIQBAwC6AQAA")


def _canonical() -> str:
    """The expected field: the run form made canonical."""
    assert BitMap.deserialize(TIE_AS_RUN) == BitMap(TIE.astype(np.uint32))
    assert BitMap.deserialize(TIE_AS_RUN).get_statistics()["n_run_containers"] == 1
    return base64.b64encode(canonical_serialization(TIE_AS_RUN)).decode("ascii")


def _runs(members: np.ndarray) -> list[tuple[int, int]]:
    breaks = np.flatnonzero(np.diff(members) != 1)
    starts = members[np.concatenate([[0], breaks + 1])]
    ends = members[np.concatenate([breaks, [members.size - 1]])] + 1
    return list(zip(starts.tolist(), ends.tolist()))


class _Strings:
    def tokens(self, ids) -> list[str]:
        return [f"t{int(i)}" for i in ids]


class _Corpus:
    """What publication reads of a snapshot: n_docs documents of two tokens each."""

    def __init__(self, n_docs: int):
        self.doc_offsets = np.arange(0, 2 * n_docs + 1, 2, dtype=np.int64)
        self.tokens = np.ones(2 * n_docs, dtype=np.uint32)
        self.vocabulary = _Strings()
        self.n_tokens = 2 * n_docs


def test_both_phrase_paths_publish_the_canonical_doc_bitmap():
    corpus = _Corpus(450)
    phrase = Phrase((0, 1), int(TIE.size), int(TIE.size), corpus.doc_offsets[TIE])
    result = MiningResult(phrases=[phrase], coverage=np.zeros(corpus.n_tokens, dtype=bool))
    single, _ = phrase_documents_for(corpus, result, [f"d{i:03d}" for i in range(450)])
    grown = GrownPhrases([(0, 1)], np.array([TIE.size]), np.array([TIE.size]), [TIE], *([np.zeros(0, np.int64)] * 3),
                         {})
    dask = phrase_summary(grown, with_bitmaps=True, n_examples=3)
    assert single[0]["doc_bitmap"] == dask.doc_bitmaps[0] == _canonical()


def test_the_single_node_and_the_reduced_coverage_publish_the_canonical_bitmap():
    n_tokens = 500
    mask = np.zeros(n_tokens, dtype=bool)
    mask[TIE] = True
    single = [encode_bitmap(bm) for bm in coverage_for(MiningResult(phrases=[], coverage=mask), n_tokens)]
    # two document shards of 250 tokens, each one document, their covered runs as occurrences
    reduction = CoverageReduction(2, n_tokens, with_bitmaps=True)
    for k in (1, 0):
        runs = [(a - 250 * k, b - a) for a, b in _runs(TIE) if 250 * k <= a < 250 * (k + 1)]
        parts = [(np.array([a for a, _ in runs], dtype=np.int64), np.array([n for _, n in runs], dtype=np.int64))]
        reduction.add(k, coverage_sent(shard_coverage(np.array([0, 250]), parts, np.array([250 * k]), n_tokens)))
    dask = [encode_bitmap(bm) for bm in reduction.bitmaps()]
    assert single == dask == [_canonical()]
