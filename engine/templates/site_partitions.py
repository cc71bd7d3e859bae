"""The template detector by groups of whole sites: detect on each group, merge, and get exactly
the detection of the whole corpus.

Why it is exact. With sites given (``levels`` = sites, then their URL sections) and a config
without a cross-site pass (:func:`site_partition_refusal`), every pass of
:func:`.detector.detect_templates` works inside one site: the block and MCFP passes per
group of a level (a site or one of its sections), the middle-run and section-prose rules per
page and per line, the page skeletons per group, the line shapes per site (its sections for
the cross-section rule). A page without a site is in no group and nothing covers it. So a
partition of the corpus into groups of whole sites, each detected on its own, finds exactly
the phrases, skeletons and line shapes the whole corpus finds, with the same df, occurrences
and coverage: token ids differ (each partition numbers its own strings), so the merge works
on records, whose canonical order (:func:`.detector.sort_template_records`) uses strings only.
Two names of different sites meet in one place: a site named like another site's section
("a/" and the root section of "a"), whose records and stats the whole corpus lists under one
name; :func:`route_key` (the name up to its first "/") puts both sites in one partition.
Documents keep the corpus' order inside a partition (the driver sorts them by their global
number), so a site is detected on the same page sequence either way.

What a partition returns (:class:`PartitionTemplates`) is records, the detector's stats and
two small arrays per document (tokens the detection covers, whether its site or section has
a record); :func:`merge_partitions` adds them up (:func:`merge_detector_stats`: counts
summed, per-group tables joined and ordered by name, timings summed as CPU seconds), and
:func:`covered_tokens` computes the run's covered figure with the exact phrases applied
where ingest applies them (:func:`bloomspan.sidecar.run.run_templates.exact_phrases_applied`)
from each document's covered count of the exact phrases.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.text.slots import number_token_mask

from .config import TemplateConfig
from .detector import (
    config_record,
    detect_templates,
    sort_template_records,
    template_record_order_key,
    template_records,
)

# Config fields that make a pass cross sites, and why partitions of whole sites cannot run it.
_CROSS_SITE = (
    ("global_min_length", lambda c: c.global_min_length is not None,
     "the global MCFP pass counts phrases across sites; set it to None (the default) to detect by site"),
    ("global_blocks", lambda c: c.global_blocks,
     "the global block pass counts lines across sites; set it to False (the default) to detect by site"),
    ("exact_phrases_on_sites", lambda c: c.exact_phrases_on_sites,
     "the page-skeleton walk would need the exact phrases' per-token coverage of every site; "
     "set it to False (the default) to detect by site"),
    ("skeleton", lambda c: c.skeleton is None and c.line_shape_gap > 0,
     "without page skeletons a site may have line shapes and no record, where the covered figure needs "
     "the exact phrases' per-token coverage; keep the skeleton on or set line_shape_gap to 0"),
)


def site_partition_refusal(config: TemplateConfig) -> ConfigError | None:
    """The error for a config that detection by groups of whole sites cannot give exactly
    (naming the field), or None when it can."""
    for name, refused, why in _CROSS_SITE:
        if refused(config):
            return ConfigError(name, getattr(config, name), why)
    return None


def route_key(site: str) -> str:
    """The name a site is routed by: up to its first "/", so a site named like another site's
    URL section ("a/x" and section "x" of "a") lands in the same partition as that site."""
    return site.split("/", 1)[0]


def assign_partitions(keys: Sequence[str], tokens: np.ndarray, n_partitions: int) -> np.ndarray:
    """int64 (K,): a partition for each routing key, largest first onto the least loaded
    partition (ties: the lower number), so the partitions' token counts balance
    (``tokens`` int64 (K,) per key). A key is never split (see the module docstring)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    out = np.zeros(len(keys), dtype=np.int64)
    load = np.zeros(max(int(n_partitions), 1), dtype=np.int64)
    order = sorted(range(len(keys)), key=lambda i: (-int(tokens[i]), keys[i]))
    for i in order:
        p = int(np.argmin(load))
        out[i] = p
        load[p] += tokens[i]
    return out


@dataclass
class PartitionTemplates:
    """One partition's detection.

    records:  phrase, skeleton and line-shape records (token strings), canonical order
    stats:    the detector's stats of the partition (:attr:`.detector.TemplateDetection.stats`)
    docs:     int64 (d,) global numbers of the partition's documents, ascending
    covered:  int64 (d,) tokens of each the detection covers
    mined:    bool (d,) whether its site or section has a phrase or skeleton record (where
              ingest applies the detector's records and not the exact phrases)
    """

    records: list[dict]
    stats: dict
    docs: np.ndarray
    covered: np.ndarray
    mined: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.covered.nbytes + self.mined.nbytes)


def detect_partition(tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray, strings: Sequence[str],
                     levels: Sequence[Sequence[str | None]], config: TemplateConfig, docs: np.ndarray
                     ) -> PartitionTemplates:
    """Detect templates on one partition of whole sites (:func:`.detector.detect_templates`).

    tokens uint32 (W,) ids into ``strings`` (the partition's vocabulary), doc_offsets int64
    (D+1,), block_offsets int64 (B+1,); levels: the sites and (optionally) URL sections of the
    D documents (:func:`.detector.scope_levels`); docs int64 (D,): their global numbers, ascending.
    """
    refusal = site_partition_refusal(config)
    if refusal is not None:
        raise refusal
    if not levels:
        raise ValueError("levels: detection by site needs the documents' sites (scope_levels)")
    strings = list(strings)
    detection = detect_templates(tokens, doc_offsets, block_offsets, config, levels, number_token_mask(strings),
                                 token_strings=strings)
    records = template_records(detection, config, strings.__getitem__)[1:]
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    covered = np.add.reduceat(detection.coverage.astype(np.int64), doc_offsets[:-1]) if tokens.shape[0] else \
        np.zeros(doc_offsets.shape[0] - 1, dtype=np.int64)
    covered[np.diff(doc_offsets) == 0] = 0  # reduceat reads the next document at an empty one
    known = {p.scope for p in detection.phrases if p.scope is not None}
    known |= {k.scope for k in detection.skeletons if k.scope is not None}
    mined = np.asarray([any(level[d] is not None and level[d] in known for level in levels)
                        for d in range(doc_offsets.shape[0] - 1)], dtype=bool)
    return PartitionTemplates(records, detection.stats, np.asarray(docs, dtype=np.int64), covered, mined)


def _merge_value(name: str, values: list):
    first = values[0]
    if name in ("config", "global_units"):
        return first
    if isinstance(first, dict):
        if all(not isinstance(v, dict) for part in values for v in part.values()):
            out = dict(first)  # counts per name: summed (phrases_by_kind, pass_covered_tokens)
            for part in values[1:]:
                for k, v in part.items():
                    out[k] = out.get(k, 0) + v
            return out
        joined: dict = {}  # per-group tables: each group is in one partition
        for part in values:
            joined.update(part)
        return dict(sorted(joined.items()))
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return sum(values)
    raise ValueError(f"detector stats: no merge rule for {name}={first!r}")


def merge_detector_stats(stats: Sequence[dict]) -> dict:
    """The detector stats of the whole corpus from its partitions' (in any order): counts
    summed, per-group tables joined in name order, ``covered_share`` recomputed, timings
    (``seconds_*``) summed: CPU seconds over the partitions, not the wall time."""
    if not stats:
        raise ValueError("stats: no partition")
    out: dict = {}
    for name in stats[0]:
        out[name] = _merge_value(name, [s[name] for s in stats if name in s])
    if "covered_share" in out:
        out["covered_share"] = out["covered_tokens"] / out["tokens_mined"] if out["tokens_mined"] else 0.0
    return out


@dataclass
class MergedTemplates:
    """records: the template file's records (config first); stats: the detector's stats;
    covered_tokens: tokens the records and, where ingest applies them, the exact phrases cover;
    documents: documents in the partitions (every document of the corpus once)."""

    records: list[dict]
    stats: dict
    covered_tokens: int
    documents: int


@dataclass
class PartitionSummary:
    """What the merge needs of one partition (no array per document): its records and stats,
    its documents, and the tokens covered on them (:func:`summarize_partition`)."""

    records: list[dict]
    stats: dict
    documents: int
    covered_tokens: int


def summarize_partition(part: PartitionTemplates, exact_covered: np.ndarray | None) -> PartitionSummary:
    """The partition's summary. exact_covered: int64 (d,), per document of the partition (in
    its ``docs`` order), tokens the run's exact phrases cover (None: no exact phrases); ingest
    applies them on documents whose site and section have no phrase or skeleton record, where
    the detection covers nothing (with the refused configs off: a site with a line shape also
    has a skeleton), so the covered figure is the detection's on mined documents plus the exact
    phrases' elsewhere."""
    covered = int(part.covered[part.mined].sum())
    unmined = ~part.mined
    if np.any(part.covered[unmined] > 0):
        raise ValueError("a document without a record has detected tokens: its covered figure needs the "
                         "exact phrases' per-token coverage")
    if exact_covered is not None:
        exact_covered = np.asarray(exact_covered, dtype=np.int64)
        if exact_covered.shape != part.docs.shape:
            raise ValueError(f"exact_covered: {exact_covered.shape[0]} counts for {part.docs.shape[0]} documents")
        covered += int(exact_covered[unmined].sum())
    return PartitionSummary(part.records, part.stats, int(part.docs.shape[0]), covered)


def merge_summaries(parts: Sequence[PartitionSummary], config: TemplateConfig) -> MergedTemplates:
    """Merge the summaries of partitions that hold every document of the corpus once."""
    parts = [p for p in parts if p.documents]
    records = [config_record(config)] + sort_template_records([r for p in parts for r in p.records])
    stats = merge_detector_stats([p.stats for p in parts])
    return MergedTemplates(records, stats, sum(p.covered_tokens for p in parts), sum(p.documents for p in parts))


def merged_records(parts: Iterable[Iterable[dict]], config: TemplateConfig) -> Iterator[dict]:
    """The records :func:`merge_summaries` lists, one at a time: the config record, then the
    partitions' records (each in the canonical order, as :func:`detect_partition` gives them)
    merged in that order. Only the next record of each partition is held, so the partitions'
    records can be read from wherever they are kept, a part at a time."""
    yield config_record(config)
    yield from heapq.merge(*parts, key=template_record_order_key)


def merge_partitions(parts: Sequence[PartitionTemplates], config: TemplateConfig,
                     exact_covered: np.ndarray | None = None) -> MergedTemplates:
    """Merge partitions that hold every document of the corpus once. exact_covered: int64 (D,),
    per global document, tokens the run's exact phrases cover (:func:`summarize_partition`)."""
    exact = None if exact_covered is None else np.asarray(exact_covered, dtype=np.int64)
    return merge_summaries([summarize_partition(p, None if exact is None else exact[p.docs]) for p in parts], config)
