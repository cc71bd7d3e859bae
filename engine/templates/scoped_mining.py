"""Site scope: mine each document group (site, site section) with a threshold relative to its size.

Sites differ in size by 10x and more, so one global sigma is too high for a small site
(its footer repeats on 40 pages, sigma is 100) and too low for a large one (a code idiom
repeats on 100 of its 5,000 pages). Here every group g of ``n_g`` documents is mined on
its own sub-corpus with

    sigma_g = max(sigma_floor, ceil(sigma_fraction * n_g))

and every phrase records its scope (the group name); the detector
(:mod:`.detector`) adds a global pass (scope None) for boilerplate shared across
sites. Groups with fewer than ``sigma_g`` documents cannot hold a frequent phrase and are
skipped.

The miner is a callback, so the same orchestration runs the exact MCFP engines
(:func:`mcfp_miner`) and the block miner (:func:`bloomspan.engine.templates.blocks.mine_blocks`).
A sub-corpus is a copy of its documents' tokens (and blocks); coverage is scattered back
to corpus positions.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine

from .phrase import TemplatePhrase, sort_template_phrases

logger = logging.getLogger(__name__)


def group_sigma(n_docs: int, sigma_fraction: float, sigma_floor: int) -> int:
    """``max(sigma_floor, ceil(sigma_fraction * n_docs))`` (the float product is rounded to
    12 digits first, so 0.05 * 200 is 10, not 11)."""
    return max(int(sigma_floor), math.ceil(round(sigma_fraction * n_docs, 12)))


@dataclass(frozen=True)
class SubCorpus:
    """The documents of one group, re-packed as a corpus of their own.

    name:          group name (the scope of its phrases).
    docs:          int64 (d,)   indices of its documents in the full corpus, ascending.
    tokens:        uint32 (w,)  their tokens, concatenated.
    doc_offsets:   int64 (d+1,)
    positions:     int64 (w,)   position of each token in the full corpus.
    block_offsets: int64 (b+1,) or None, the blocks of these documents.
    """

    name: str | None
    docs: np.ndarray
    tokens: np.ndarray
    doc_offsets: np.ndarray
    positions: np.ndarray
    block_offsets: np.ndarray | None = None

    @property
    def n_docs(self) -> int:
        return int(self.docs.shape[0])


def sub_corpus(tokens: np.ndarray, doc_offsets: np.ndarray, docs: np.ndarray, name: str | None = None,
               block_offsets: np.ndarray | None = None) -> SubCorpus:
    """Cut the documents ``docs`` (int64, ascending) out of a corpus (see :class:`SubCorpus`)."""
    docs = np.asarray(docs, dtype=np.int64)
    if docs.shape[0] > 1 and np.any(np.diff(docs) <= 0):
        raise ValueError("docs: must be strictly ascending document indices")
    starts, ends = doc_offsets[docs], doc_offsets[docs + 1]
    lens = ends - starts
    sub_offsets = np.zeros(docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=sub_offsets[1:])
    total = int(sub_offsets[-1])
    # positions = concatenation of arange(starts[i], ends[i])
    positions = np.arange(total, dtype=np.int64) + np.repeat(starts - sub_offsets[:-1], lens)
    sub_blocks = None
    if block_offsets is not None:
        inside = np.zeros(tokens.shape[0] + 1, dtype=bool)
        inside[block_offsets] = True
        flags = inside[positions]  # a block starts at each original block start ...
        flags[sub_offsets[:-1][lens > 0]] = True  # ... and at each document start
        sub_blocks = np.concatenate([np.flatnonzero(flags), [total]]).astype(np.int64)
    return SubCorpus(name, docs, tokens[positions], sub_offsets, positions, sub_blocks)


def group_documents(groups: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Group name -> int64 ascending document indices; documents with group None are left out.
    Names are sorted, so iteration order (and the phrase order) never depends on input order."""
    by: dict[str, list[int]] = {}
    for d, g in enumerate(groups):
        if g is None:
            continue
        if not isinstance(g, str) or not g:
            raise ValueError(f"groups[{d}]={g!r}: must be a non-empty string or None")
        by.setdefault(g, []).append(d)
    return {g: np.asarray(by[g], dtype=np.int64) for g in sorted(by)}


Miner = Callable[[SubCorpus, int], tuple[list[TemplatePhrase], np.ndarray, dict]]


@dataclass
class ScopedResult:
    """phrases: every group's phrases (scope = group), sorted; coverage: bool (W,);
    groups: per group name, its documents, sigma and stats (skipped groups included)."""

    phrases: list[TemplatePhrase]
    coverage: np.ndarray
    groups: dict[str, dict] = field(default_factory=dict)


def mine_scoped(tokens: np.ndarray, doc_offsets: np.ndarray, groups: Sequence[str | None], miner: Miner,
                sigma_fraction: float, sigma_floor: int, block_offsets: np.ndarray | None = None) -> ScopedResult:
    """Run ``miner(sub_corpus, sigma_g)`` on every group (sigma_g from :func:`group_sigma`).

    groups: one name (or None: in no group) per document, length D. The miner returns
    ``(phrases, coverage bool (w,), stats)`` for the sub-corpus; phrases must carry the
    group name as scope (:func:`mcfp_miner` and the detector's block miner do).
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    n_docs = doc_offsets.shape[0] - 1
    if len(groups) != n_docs:
        raise ValueError(f"groups has {len(groups)} entries for {n_docs} documents: give one per document")
    if not 0.0 <= sigma_fraction <= 1.0:
        raise ValueError(f"sigma_fraction={sigma_fraction!r}: must lie in [0, 1]")
    if sigma_floor < 2:
        raise ValueError(f"sigma_floor={sigma_floor!r}: must be >= 2")
    coverage = np.zeros(tokens.shape[0], dtype=bool)
    phrases: list[TemplatePhrase] = []
    report: dict[str, dict] = {}
    for name, docs in group_documents(groups).items():
        sigma = group_sigma(docs.shape[0], sigma_fraction, sigma_floor)
        info: dict = {"documents": int(docs.shape[0]), "sigma": sigma}
        report[name] = info
        if docs.shape[0] < sigma:
            info["skipped"] = "fewer documents than sigma"
            continue
        t0 = time.perf_counter()
        sub = sub_corpus(tokens, doc_offsets, docs, name, block_offsets)
        found, cov, stats = miner(sub, sigma)
        if cov.shape != (sub.tokens.shape[0],):
            raise ValueError(f"miner returned coverage of shape {cov.shape} for {sub.tokens.shape[0]} tokens")
        coverage[sub.positions[cov]] = True
        phrases.extend(found)
        info.update(tokens=int(sub.tokens.shape[0]), phrases=len(found), covered_tokens=int(cov.sum()),
                    seconds=time.perf_counter() - t0, **stats)
        logger.debug("group %s: %s", name, info)
    return ScopedResult(sort_template_phrases(phrases), coverage, report)


def mcfp_miner(min_length: int, engine: str = "bloomspan") -> Miner:
    """A :data:`Miner` running the exact MCFP engine on a sub-corpus (phrases kind "mcfp")."""
    def miner(sub: SubCorpus, sigma: int):
        result = mine(sub.tokens, sub.doc_offsets, MiningConfig(sigma=sigma, min_length=min_length, engine=engine))
        found = [TemplatePhrase.from_phrase(p, sub.name) for p in result.phrases]
        return found, result.coverage, {"mcfp_phrases": len(found)}

    return miner
