"""BloomSpan: exact maximal contiguous frequent phrases (MCFP), filter first, grow second.

Stages (each timed as ``seconds_<stage>`` in the stats):

1. ``word_filter``: exact df of every token; a bitmap of the frequent words (df >= sigma)
   and their dense ranks (:mod:`.word_filter`).
2. ``counting_filter``: every in-document window of ``min_length`` frequent words
   (``kgram_filter``; else every in-document bigram of two frequent words) increments a
   saturating byte counter in a table sized by the number of such keys (:mod:`.counting_filter`).
3. ``candidates``: positions whose key's counter reads >= min(sigma, 255).
4. ``seeds``: exact df per candidate bigram, false positives dropped, psi order
   (:mod:`.seeds`).
5. ``grow``: depth-first right growth with the exact prunings (:mod:`.grow`,
   :mod:`.coverage`).
6. ``maximal``: candidates inside another candidate are dropped (:mod:`.maximal`).
7. ``coverage``: the mask of tokens inside an occurrence of a returned phrase.

The result equals the MCFP definition exactly: same phrases, df, occurrence counts and
coverage as the brute force and the suffix-array oracle (``tests/unit/engine/mining/test_bloomspan_exactness.py``).
"""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager

import numpy as np

from .config import MiningConfig
from .corpus import validate_corpus
from .counting_filter import build_counting_filter, candidate_occurrences, estimate_keys, fill_ratio, filter_threshold
from .coverage import coverage_mask
from .grow import grow_seeds
from .maximal import candidate_tokens, inside_another
from .phrases import MiningResult, Phrase, sort_phrases
from .seeds import gather_seeds
from .word_filter import document_frequency, frequent_bitmap, frequent_word_ranks

logger = logging.getLogger(__name__)


@contextmanager
def _timed(stats: dict, stage: str):
    t0 = time.perf_counter()
    c0 = time.process_time()
    try:
        yield
    finally:
        stats[f"seconds_{stage}"] = time.perf_counter() - t0
        stats[f"cpu_seconds_{stage}"] = time.process_time() - c0


def _dense_ids(tokens: np.ndarray) -> tuple[np.ndarray, int]:
    """Ids small enough to index scratch arrays: compress sparse vocabularies (order kept)."""
    n = tokens.shape[0]
    vocab = int(tokens.max()) + 1 if n else 0
    if vocab <= 2 * n + 1024:
        return tokens, vocab
    uniq, inverse = np.unique(tokens, return_inverse=True)
    return inverse.astype(np.uint32).reshape(-1), int(uniq.shape[0])


def mine_bloomspan(tokens, doc_offsets, config: MiningConfig) -> MiningResult:
    """All maximal contiguous frequent phrases of the corpus (see the contract's MCFP).

    tokens: uint32 (W,) token ids; doc_offsets: int64 (D+1,) document boundaries.
    Returns phrases in psi order (each with its occurrences' ``starts``), the coverage mask
    bool (W,), and per-stage stats.
    """
    tokens, doc_offsets = validate_corpus(tokens, doc_offsets)
    sigma, min_length = config.sigma, config.min_length
    n_tokens = int(tokens.shape[0])
    lens = np.diff(doc_offsets)
    stats: dict = {"engine": "bloomspan", "sigma": sigma, "min_length": min_length,
                   "tokens_mined": n_tokens, "docs_mined": int(lens.shape[0]),
                   "bigrams": int(np.maximum(lens - 1, 0).sum())}
    t_start = time.perf_counter()

    with _timed(stats, "word_filter"):
        ids, vocab = _dense_ids(tokens)
        df = document_frequency(ids, doc_offsets, vocab)
        rank_of, n_frequent = frequent_word_ranks(df, sigma)
        frequent = frequent_bitmap(df, sigma)
        del df
    stats.update(vocabulary=vocab, frequent_words=n_frequent)
    max_id = vocab - 1  # every stage checks its arrays against it instead of a pass to find it

    threshold = filter_threshold(sigma)
    kgram = min_length if config.kgram_filter and min_length >= 3 else 0
    with _timed(stats, "counting_filter"):
        n_keys = estimate_keys(ids, doc_offsets, frequent, kgram, max_id=max_id)  # the table is sized by what it counts
        n_cells = config.filter_size_for(n_keys)
        counters = build_counting_filter(ids, doc_offsets, n_cells, frequent, kgram, max_id=max_id)
    stats.update(filter_keys=n_keys, filter_bytes=n_cells, filter_threshold=threshold, filter_kgram=kgram,
                 filter_fill_ratio=fill_ratio(counters))

    with _timed(stats, "candidates"):
        pos, doc = candidate_occurrences(ids, doc_offsets, counters, threshold, frequent, kgram, max_id=max_id)
        del counters
    stats["candidate_occurrences"] = int(pos.shape[0])

    with _timed(stats, "seeds"):
        seeds = gather_seeds(ids, rank_of, pos, doc, sigma, n_frequent, max_id=max_id)
        del pos, doc
    stats.update(candidate_bigrams=seeds.n_candidate_bigrams, false_positive_bigrams=seeds.n_false_positives,
                 seeds=seeds.n_seeds, seed_occurrences=seeds.n_seed_occurrences)

    with _timed(stats, "grow"):
        cands = grow_seeds(ids, rank_of, doc_offsets, seeds.pos, seeds.doc, seeds.lo, seeds.hi, sigma,
                           min_length, n_frequent, mask_skip=config.mask_skip, left_prune=config.left_prune,
                           inplace=True, max_id=max_id)
    stats.update(cands.stats)

    with _timed(stats, "maximal"):
        flat, flat_starts = candidate_tokens(tokens, cands.pos[cands.lo], cands.length)
        inside = inside_another(flat, flat_starts, key_length=min_length)
        kept = np.flatnonzero(~inside).tolist()
        # A candidate's occurrences are its start positions, ascending: the phrase keeps a
        # copy (the growth buffer is scratch), so publication never scans the corpus again.
        phrases = sort_phrases(
            Phrase(tuple(flat[flat_starts[i]:flat_starts[i + 1]].tolist()), int(cands.df[i]),
                   int(cands.hi[i] - cands.lo[i]), cands.occurrences(i).copy())
            for i in kept)
    stats.update(candidates_inside_another=int(inside.sum()), phrases=len(phrases))

    with _timed(stats, "coverage"):
        if kept:
            starts = np.concatenate([cands.occurrences(i) for i in kept])
            lengths = np.repeat(cands.length[kept], (cands.hi - cands.lo)[kept]).astype(np.int64)
        else:
            starts = lengths = np.zeros(0, dtype=np.int64)
        covered = coverage_mask(n_tokens, starts, lengths)
    stats["covered_tokens"] = int(covered.sum())
    stats["covered_share"] = stats["covered_tokens"] / max(1, n_tokens)
    stats["seconds_total"] = time.perf_counter() - t_start
    logger.info("bloomspan: %d tokens, %d seeds, %d candidates, %d phrases, coverage %.4f in %.3f s",
                n_tokens, stats["seeds"], stats["candidates"], len(phrases), stats["covered_share"],
                stats["seconds_total"])
    return MiningResult(phrases=phrases, coverage=covered, stats=stats)
