"""Template detector: exact MCFP plus block-anchored, site-scoped and slotted templates.

Plain MCFP mining (``mine_bloomspan`` / ``mine_fhk``) is untouched; this module runs it
as one pass among several and takes the union:

1. **global MCFP** (scope None): the exact miner at ``global_min_length``. Without groups
   its threshold is ``global_sigma`` documents (the article's 20 / 10, Part 6 "How to choose σ"); with groups it is
   *cross-site*: a phrase must occur in >= ``global_min_sites`` groups of the first level
   (each site mined as one unit, its documents separated by unique tokens), so content
   idioms of one large site never reach it, but boilerplate shared by sites does.
2. **global blocks** (scope None): whole lines and chains of whole lines (:mod:`.blocks`)
   in >= ``global_sigma`` documents, or with groups >= ``global_min_sites`` sites:
   cookie banners, newsletter prompts, "Created using Sphinx".
3. **scoped blocks** per group level (site, then site section): the block miner on each
   group with ``sigma_g = max(sigma_floor, ceil(sigma_fraction * n_g))``
   (:mod:`.scoped_mining`), so a small site's footer counts as often as a large one's.
4. optionally **scoped MCFP** (``scoped_min_length``): the exact miner per group.
4b. **head lines** (``head_line_length``; :mod:`.head_lines`): per group of the first level, a long
   line at a page's head that the chrome the passes above found closes, on ``sigma_floor`` pages
   of the group though fewer than its sigma hold it (a type's sidebar list of its members); one
   block phrase each, so ingest matches it as every block phrase.
5. **page skeletons** (``skeleton``, a :class:`.config.SkeletonConfig`; :mod:`.page_skeleton`): per group of the first level
   (or the whole corpus), the variable navigation between and around the lines the passes
   above found, walked from each page's edges (local tables of contents, "Previous: <title>").
6. **line shapes** (``line_shape_gap``; :mod:`.line_shapes`): per group of the first level, lines
   at a page's edges whose fixed words repeat in order while the words between them change
   ("Next: X, Previous: Y, Up: Z", where no whole line repeats and the walk has no anchor).
7. **title navigation** (``title_nav``; :mod:`.title_nav`): per group of the first level, lines
   at a page's edges made of other pages' titles and navigation words ("Prev 7.3. Configuring
   the Network", breadcrumbs of titles); it needs the token strings (``token_strings``).

Last, two rules give covered lines back to the content: the table-of-contents rule
(``toc_sections``; :mod:`.toc_sections`), then a page's own facts (``own_facts``;
:mod:`.own_facts`: a slotted line whose numbers differ on every page, in the page's header).

With ``slots`` every number token is replaced by the slot id before all passes
(:mod:`bloomspan.engine.text.slots`), so "© 2019 …" and "© 2024 …" are one template.

Inputs: ``tokens`` uint32 (W,), ``doc_offsets`` int64 (D+1,), ``block_offsets`` int64
(B+1,) (:func:`.blocks.block_offsets_from_texts`), ``levels``: a list of group labelings,
each a sequence of D names (or None), e.g. ``scope_levels(sites, urls)``. Without levels
the whole corpus is one group: passes 3-4 run on it with its relative sigma, scope None.
"""
from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from bloomspan.engine.mining.corpus import validate_corpus
from bloomspan.engine.text.slots import SLOT_ID, apply_slots, number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary

from .blocks import block_documents, block_offsets_from_texts, block_types, check_blocks, flags_per_span, mine_blocks
from .config import TemplateConfig
from .head_lines import mine_head_lines
from .line_shapes import LineShapeModel, mine_line_shapes
from .own_facts import OwnFactsModel, mine_own_facts, own_fact_tokens
from .page_skeleton import PageSkeleton, echo_flags, mine_skeletons
from .phrase import TemplatePhrase, kind_counts, sort_template_phrases
from .scoped_mining import SubCorpus, group_sigma, mcfp_miner, mine_scoped
from .title_nav import TitleNavModel, mine_title_nav
from .toc_sections import toc_section_tokens

logger = logging.getLogger(__name__)


@dataclass
class TemplateDetection:
    """phrases: every pass's phrases in psi order; coverage: bool (W,) union of the passes;
    pass_coverage: name -> bool (W,) per pass; stats: JSON-serialisable; skeletons: the
    page-skeleton models per group (empty when ``skeleton`` is off); line_shapes: the
    line-shape models per group and page edge (empty when ``line_shape_gap`` is 0);
    title_navs: the title-navigation models per group (empty when ``title_nav`` is off or the
    token strings were not given); own_facts: the own-fact line types per group (empty when
    ``own_facts`` or ``slots`` is off)."""

    phrases: list[TemplatePhrase]
    coverage: np.ndarray
    pass_coverage: dict[str, np.ndarray] = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    skeletons: list[PageSkeleton] = field(default_factory=list)
    line_shapes: list[LineShapeModel] = field(default_factory=list)
    title_navs: list[TitleNavModel] = field(default_factory=list)
    own_facts: list[OwnFactsModel] = field(default_factory=list)


def url_section(url: str | None, depth: int) -> str | None:
    """The first ``depth`` path segments of ``url`` without the file name ("fr/mod" for
    ".../fr/mod/x.html" at depth 2); "" for a page at the root; None for no URL."""
    if url is None:
        return None
    parts = [p for p in urlsplit(url).path.split("/") if p]
    return "/".join(parts[:-1][:depth])


def scope_levels(groups: Sequence[str | None], urls: Sequence[str | None] | None = None,
                 section_depth: int = 1) -> list[list[str | None]]:
    """Group levels for :func:`detect_templates`: the groups (e.g. sites) and, with URLs
    and ``section_depth > 0``, their sections ``"<group>/<first path segments>"``."""
    levels = [list(groups)]
    if urls is not None and section_depth > 0:
        if len(urls) != len(groups):
            raise ValueError(f"urls has {len(urls)} entries for {len(groups)} groups")
        levels.append([None if g is None else f"{g}/{url_section(u, section_depth) or ''}"
                       for g, u in zip(groups, urls)])
    return levels


def _global_units(levels: Sequence[Sequence[str | None]], n_docs: int) -> tuple[np.ndarray | None, int]:
    """Counting units of the global pass: int64 (D,) group index per document from the
    first level (a document without group is a unit of its own), or None (documents)."""
    if not levels:
        return None, n_docs
    if len(levels[0]) != n_docs:
        raise ValueError(f"levels[0] has {len(levels[0])} entries for {n_docs} documents")
    index: dict[str, int] = {}
    units = np.empty(n_docs, dtype=np.int64)
    for d, g in enumerate(levels[0]):
        units[d] = index.setdefault(g if g is not None else ("\x00doc", d), len(index))
    return units, len(index)


def unit_corpus(tokens: np.ndarray, doc_offsets: np.ndarray, units: np.ndarray, n_units: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corpus with one "document" per unit: a unit's documents concatenated, each
    followed by a token id used nowhere else (above every id but SLOT_ID), so no phrase
    crosses two documents.

    Returns ``(tokens uint32 (W+D,), unit_offsets int64 (U+1,), where int64 (W,))``:
    ``where[i]`` is the position of corpus token i in the new array.
    """
    n_docs = doc_offsets.shape[0] - 1
    real = tokens[tokens != SLOT_ID]
    base = int(real.max()) + 1 if real.shape[0] else 0
    if base + n_docs >= SLOT_ID:
        raise ValueError("unit_corpus: token ids leave no room for one separator per document")
    order = np.argsort(units, kind="stable")  # documents by unit, corpus order within a unit
    lens = np.diff(doc_offsets)[order] + 1
    new_start = np.zeros(n_docs, dtype=np.int64)
    np.cumsum(lens[:-1], out=new_start[1:])
    out = np.empty(int(lens.sum()), dtype=np.uint32)
    where = np.empty(tokens.shape[0], dtype=np.int64)
    for k, d in enumerate(order.tolist()):
        a, b = int(doc_offsets[d]), int(doc_offsets[d + 1])
        s = int(new_start[k])
        out[s:s + b - a] = tokens[a:b]
        out[s + b - a] = base + d
        where[a:b] = np.arange(s, s + b - a)
    unit_offsets = np.zeros(n_units + 1, dtype=np.int64)
    np.cumsum(np.bincount(units, weights=np.diff(doc_offsets) + 1, minlength=n_units).astype(np.int64),
              out=unit_offsets[1:])
    return out, unit_offsets, where


def slot_only_lines(tokens: np.ndarray, block_offsets: np.ndarray, config: TemplateConfig) -> np.ndarray | None:
    """bool (B,): lines whose tokens are all the slot (numbers only: a code listing's line
    numbers, a table of counts), or None with slots off. Every such line reads the same once
    numbers are slots, so it would repeat on every page; the passes count each as unique."""
    if not config.slots:
        return None
    lengths = np.diff(block_offsets)
    slots = flags_per_span(tokens == np.uint32(SLOT_ID), block_offsets[:-1], block_offsets[1:])
    return (lengths > 0) & (slots == lengths)


def _block_miner(config: TemplateConfig):
    """The whole-line pass for one group (slot-only lines never repeat)."""
    def miner(sub: SubCorpus, sigma: int):
        r = mine_blocks(sub.tokens, sub.doc_offsets, sub.block_offsets, sigma, config.block_min_length,
                        config.run_min_length, scope=sub.name, edges=config.edge_anchors,
                        single_use=slot_only_lines(sub.tokens, sub.block_offsets, config))
        return r.phrases, r.coverage, {"block_" + k: v for k, v in r.stats.items()}
    return miner


ProgressFn = Callable[[str, int, "int | None"], None]
"""``progress(stage, done, total)``, the callback the CLI's progress display takes."""


class _Passes:
    """Reports each finished pass of :func:`detect_templates` as ``progress("templates", done, total)``."""

    def __init__(self, progress: ProgressFn | None, total: int):
        self.progress, self.total, self.done = progress, max(total, 1), 0
        if progress is not None:
            progress("templates", 0, self.total)

    def finished(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress("templates", min(self.done, self.total), self.total)


def detect_templates(tokens, doc_offsets, block_offsets, config: TemplateConfig | None = None,
                     levels: Sequence[Sequence[str | None]] = (), is_number: np.ndarray | None = None,
                     anchor_coverage: np.ndarray | None = None,
                     progress: ProgressFn | None = None,
                     token_strings: Sequence[str] | None = None) -> TemplateDetection:
    """Run the passes of the module docstring and return their union.

    is_number: bool (V,) number-token flags per token id (:func:`bloomspan.engine.text.slots.number_token_mask`),
    required when ``config.slots``. A level whose groups all equal an earlier level's
    (e.g. sections of one-section sites) is mined again only for groups that differ.
    anchor_coverage: bool (W,) tokens covered by phrases found outside the detector (a
    mining run's exact MCFP phrases, applied at ingest next to the detector's records):
    where ingest applies them on the walked pages (``config.exact_phrases_on_sites``, or a
    corpus without levels) the page-skeleton walk treats them as found too, so mining and
    ingest walk alike. progress: called as ``progress("templates", passes done, passes)``.
    token_strings: the string of each token id (the vocabulary's tokens), which the
    title-navigation pass reads (``config.title_nav``); None: that pass does not run.
    """
    config = config or TemplateConfig()
    tokens, doc_offsets = validate_corpus(tokens, doc_offsets)
    block_offsets = check_blocks(block_offsets, doc_offsets, tokens.shape[0])
    n_docs = doc_offsets.shape[0] - 1
    stats: dict = {"config": config.to_dict(), "tokens_mined": int(tokens.shape[0]), "docs_mined": int(n_docs)}
    t_start = time.perf_counter()
    raw_tokens = tokens  # numbers as written: the title-navigation pass reads titles as they are
    if config.slots:
        if is_number is None:
            raise ValueError("is_number: required when config.slots is True (number_token_mask of the "
                             "vocabulary), or set slots=False")
        tokens, stats["slots"] = apply_slots(tokens, is_number)
    slot_lines = slot_only_lines(tokens, block_offsets, config)  # whole corpus: global blocks, skeleton
    phrases: list[TemplatePhrase] = []
    passes: dict[str, np.ndarray] = {}

    units, n_units = _global_units(levels, n_docs)
    sigma_global = config.global_sigma if units is None else config.global_min_sites
    stats["global_units"] = "documents" if units is None else "groups"
    runs_global = n_units >= sigma_global
    run_title_nav = bool(config.title_nav and token_strings is not None)
    steps = _Passes(progress, (config.global_min_length is not None and runs_global) + (config.global_blocks and runs_global)
                    + max(len(levels), 1) + (max(len(levels), 1) if config.skeleton else 0)
                    + (config.line_shape_gap > 0) + run_title_nav)
    if config.global_min_length is not None and n_units >= sigma_global:
        t0 = time.perf_counter()
        mcfp = mcfp_miner(config.global_min_length, config.engine)
        if units is None:
            whole = SubCorpus(None, np.arange(n_docs), tokens, doc_offsets, np.arange(tokens.shape[0]))
            found, cov, _ = mcfp(whole, sigma_global)
        else:
            u_tokens, u_offsets, where = unit_corpus(tokens, doc_offsets, units, n_units)
            found, u_cov, _ = mcfp(SubCorpus(None, np.arange(n_units), u_tokens, u_offsets, where), sigma_global)
            cov = u_cov[where]
        phrases.extend(found)
        passes["global_mcfp"] = cov
        stats["seconds_global_mcfp"] = time.perf_counter() - t0
        steps.finished()
    if config.global_blocks and n_units >= sigma_global:
        t0 = time.perf_counter()
        r = mine_blocks(tokens, doc_offsets, block_offsets, sigma_global, config.block_min_length,
                        config.run_min_length, count_unit=units, edges=config.edge_anchors,
                        single_use=slot_lines)
        phrases.extend(r.phrases)
        passes["global_blocks"] = r.coverage
        stats["global_blocks"] = r.stats
        stats["seconds_global_blocks"] = time.perf_counter() - t0
        steps.finished()

    if not levels:  # no groups: the whole corpus is the one group, its phrases global
        t0 = time.perf_counter()
        sigma = group_sigma(n_docs, config.sigma_fraction, config.sigma_floor)
        stats["corpus_sigma"] = sigma
        if n_docs >= sigma:
            whole = SubCorpus(None, np.arange(n_docs), tokens, doc_offsets, np.arange(tokens.shape[0]),
                              block_offsets)
            miners = [("corpus_blocks", _block_miner(config))]
            if config.scoped_min_length is not None:
                miners.append(("corpus_mcfp", mcfp_miner(config.scoped_min_length, config.engine)))
            for name, miner in miners:
                found, cov, _ = miner(whole, sigma)
                phrases.extend(found)
                passes[name] = cov
        stats["seconds_corpus"] = time.perf_counter() - t0
        steps.finished()

    seen_groups: set[tuple] = set()
    mined_levels: list[list[str | None]] = []  # each level without groups equal to an earlier one's
    for k, level in enumerate(levels):
        if len(level) != n_docs:
            raise ValueError(f"levels[{k}] has {len(level)} entries for {n_docs} documents")
        # A group with exactly the documents of a group already mined adds nothing.
        members: dict[str, list[int]] = {}
        for d, g in enumerate(level):
            if g is not None:
                members.setdefault(g, []).append(d)
        keep = {g for g, ds in members.items() if tuple(ds) not in seen_groups}
        seen_groups.update(tuple(ds) for ds in members.values())
        level = [g if g in keep else None for g in level]
        mined_levels.append(level)
        t0 = time.perf_counter()
        r = mine_scoped(tokens, doc_offsets, level, _block_miner(config), config.sigma_fraction,
                        config.sigma_floor, block_offsets)
        phrases.extend(r.phrases)
        passes[f"level{k}_blocks"] = r.coverage
        stats[f"level{k}_groups"] = r.groups
        if config.scoped_min_length is not None:
            r = mine_scoped(tokens, doc_offsets, level, mcfp_miner(config.scoped_min_length, config.engine),
                            config.sigma_fraction, config.sigma_floor)
            phrases.extend(r.phrases)
            passes[f"level{k}_mcfp"] = r.coverage
        stats[f"seconds_level{k}"] = time.perf_counter() - t0
        steps.finished()

    coverage = np.zeros(tokens.shape[0], dtype=bool)
    for cov in passes.values():
        coverage |= cov
    # Each line's type (numbers as the slot when ``slots``), typed once for the rules that read it.
    line_types = functools.cache(lambda: block_types(tokens, block_offsets)[0])
    site_level = np.zeros(tokens.shape[0], dtype=bool)  # what groups of the first level (or all) found
    for name, cov in passes.items():
        if not (name.startswith("level") and not name.startswith("level0_")):
            site_level |= cov
    if config.head_line_length > 0:  # a long line at a page's head that the chrome closes
        t0 = time.perf_counter()
        r = mine_head_lines(tokens, doc_offsets, block_offsets, line_types(), levels[0] if levels else None, coverage,
                            lambda n: group_sigma(n, config.sigma_fraction, config.sigma_floor), config.sigma_floor,
                            config.head_line_length, slot_lines)
        phrases.extend(r.phrases)
        passes["head_line_blocks"] = r.coverage
        coverage |= r.coverage
        site_level |= r.coverage
        stats.update(r.stats, seconds_head_lines=time.perf_counter() - t0)
    if config.middle_content_tokens > 0:  # repeated content, not chrome: out before the walk uses it
        repeated = None
        if config.middle_repeated_lines:
            block_doc = block_documents(block_offsets, doc_offsets)
            before, after, _ = echo_flags(line_types(), block_doc)
            repeated = np.repeat(before | after, np.diff(block_offsets))
        middle = middle_runs(coverage, doc_offsets, config.middle_content_tokens, site_level, repeated)
        stats["middle_tokens"] = int(middle.sum())
        coverage &= ~middle
        site_level &= ~middle
        passes = {name: cov & ~middle for name, cov in passes.items()}
    if config.section_line_length > 0:  # a sentence one URL section repeats is its reference text
        prose = section_only_long_lines(coverage, site_level, block_offsets, config.section_line_length)
        stats["section_prose_tokens"] = int(prose.sum())
        coverage &= ~prose
        passes = {name: cov & ~prose for name, cov in passes.items()}
    # The exact phrases ingest matches beside the records on the pages the rules below read: ingest
    # applies them on pages of sites without records only (unless exact_phrases_on_sites), and
    # every page a group's walk covers belongs to such a site. None: they apply on none of them.
    ingest_anchors = None
    if anchor_coverage is not None and (config.exact_phrases_on_sites or not levels):
        ingest_anchors = np.asarray(anchor_coverage, dtype=bool)
        if ingest_anchors.shape != coverage.shape:
            raise ValueError(f"anchor_coverage: must be bool of shape ({tokens.shape[0]},), "
                             f"got {ingest_anchors.shape}")
    skeletons: list[PageSkeleton] = []
    if config.skeleton:
        t0 = time.perf_counter()
        detected = coverage.copy()  # every level walks from the same anchors (as the ingest matcher does)
        if ingest_anchors is not None:
            detected |= ingest_anchors
        stats["skeleton_groups"] = {}
        for k, level in enumerate(mined_levels or [None]):
            r = mine_skeletons(tokens, doc_offsets, block_offsets, level, detected,
                               lambda n: group_sigma(n, config.sigma_fraction, config.sigma_floor),
                               config.skeleton, slot_lines,
                               config.section_line_length if k > 0 and config.section_line_length > 0 else None)
            passes[f"skeleton{k}"] = r.coverage
            coverage |= r.coverage
            skeletons.extend(r.skeletons)
            stats["skeleton_groups"].update(r.stats)
            steps.finished()
        stats["seconds_skeleton"] = time.perf_counter() - t0
    line_shapes: list[LineShapeModel] = []
    if config.line_shape_gap > 0:
        t0 = time.perf_counter()
        r = mine_line_shapes(tokens, doc_offsets, block_offsets, levels[0] if levels else None,
                             levels[1] if len(levels) > 1 else None,
                             lambda n: group_sigma(n, config.sigma_fraction, config.sigma_floor), config.line_shape_gap)
        passes["line_shapes"] = r.coverage
        coverage |= r.coverage
        line_shapes = r.models
        stats.update(r.stats, seconds_line_shapes=time.perf_counter() - t0)
        steps.finished()
    title_navs: list[TitleNavModel] = []
    if run_title_nav:
        t0 = time.perf_counter()
        r = mine_title_nav(raw_tokens, doc_offsets, block_offsets, levels[0] if levels else None, token_strings)
        passes["title_nav"] = r.coverage
        coverage |= r.coverage
        title_navs = r.models
        stats.update(r.stats, seconds_title_nav=time.perf_counter() - t0)
        steps.finished()
    if config.toc_sections > 0:  # a section the page's own table of contents lists is content
        seen = coverage if ingest_anchors is None else coverage | ingest_anchors
        back = toc_section_tokens(seen, block_offsets, doc_offsets, line_types(), config.toc_sections)
        stats["toc_section_tokens"] = int((back & coverage).sum())
        coverage &= ~back
        passes = {name: cov & ~back for name, cov in passes.items()}
    own_facts: list[OwnFactsModel] = []
    if config.own_facts and config.slots and token_strings is not None:  # numbers that differ page by page
        t0 = time.perf_counter()
        raw_types = block_types(raw_tokens, block_offsets)[0]  # the lines as written
        r = mine_own_facts(tokens, raw_tokens, doc_offsets, block_offsets, levels[0] if levels else None,
                           config.sigma_floor, token_strings, line_types(), raw_types)
        own_facts = r.models
        seen = coverage if ingest_anchors is None else coverage | ingest_anchors
        back = own_fact_tokens(seen, block_offsets, doc_offsets, r.candidate, line_types(), raw_types, raw_tokens,
                               tokens == np.uint32(SLOT_ID))
        stats.update(r.stats, own_fact_tokens=int((back & coverage).sum()), seconds_own_facts=time.perf_counter() - t0)
        coverage &= ~back
        passes = {name: cov & ~back for name, cov in passes.items()}
    phrases = sort_template_phrases(phrases)
    for name in ("skeleton_groups", "line_shape_groups", "title_nav_groups", "own_fact_groups"):  # by name, not by where a group's first page lies
        if name in stats:
            stats[name] = dict(sorted(stats[name].items()))
    stats.update(phrases=len(phrases), phrases_by_kind=kind_counts(phrases),
                 covered_tokens=int(coverage.sum()), covered_share=float(coverage.mean()) if coverage.size else 0.0,
                 pass_covered_tokens={k: int(v.sum()) for k, v in passes.items()},
                 seconds_total=time.perf_counter() - t_start)
    logger.info("templates: %d phrases, coverage %.4f in %.2f s", len(phrases), stats["covered_share"],
                stats["seconds_total"])
    return TemplateDetection(phrases, coverage, passes, stats, skeletons, line_shapes, title_navs, own_facts)


def section_only_long_lines(coverage: np.ndarray, strong: np.ndarray, block_offsets: np.ndarray,
                            max_length: int) -> np.ndarray:
    """bool (W,): the tokens of the lines longer than ``max_length`` tokens that ``coverage``
    (bool (W,)) touches and ``strong`` (bool (W,): what site-level evidence found) does not.
    Chrome that only one URL section repeats is navigation (short link and title lines); a
    long line repeated by one section alone is its reference prose ("This policy was
    introduced in version <n>..."). block_offsets int64 (B+1,), lines over all W tokens.
    :func:`section_only_long_lines_reference` is its plain twin."""
    coverage = np.asarray(coverage, dtype=bool)
    lengths = np.diff(block_offsets)
    if coverage.shape[0] == 0 or lengths.shape[0] == 0:
        return np.zeros(coverage.shape[0], dtype=bool)
    starts, ends = block_offsets[:-1], block_offsets[1:]
    touched = flags_per_span(coverage, starts, ends) > 0
    found_strong = flags_per_span(np.asarray(strong, dtype=bool), starts, ends) > 0
    return np.repeat(touched & ~found_strong & (lengths > max_length), lengths) & coverage


def section_only_long_lines_reference(coverage: Sequence[bool], strong: Sequence[bool],
                                      block_offsets: Sequence[int], max_length: int) -> list[bool]:
    """Plain twin of :func:`section_only_long_lines`, one line at a time."""
    out = [False] * len(coverage)
    for a, b in zip(block_offsets[:-1], block_offsets[1:]):
        a, b = int(a), int(b)
        if b - a > max_length and any(coverage[a:b]) and not any(strong[a:b]):
            out[a:b] = [bool(x) for x in coverage[a:b]]
    return out


def middle_runs(coverage: np.ndarray, doc_offsets: np.ndarray, min_side: int,
                strong: np.ndarray | None = None, repeated: np.ndarray | None = None) -> np.ndarray:
    """bool (W,): the tokens of the runs of ``coverage`` (bool (W,)) that have at least
    ``min_side`` uncovered tokens of their document both before and after them, unless the
    run holds a ``strong`` token (bool (W,), e.g. what a site-level pass found; None: none is
    strong) and no ``repeated`` token (bool (W,): tokens of lines that occur twice or more in
    their page, a record's labels such as "Since: <n>" or "Version Changes"; None: none);
    doc_offsets int64 (D+1,). Every token of a run has the same uncovered tokens around it, so
    a run is in or out as a whole. :func:`middle_runs_reference` is its plain twin."""
    coverage = np.asarray(coverage, dtype=bool)
    n = coverage.shape[0]
    if n == 0 or min_side <= 0:
        return np.zeros(n, dtype=bool)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    if doc_offsets[0] == 0 and doc_offsets[-1] == n:  # each token's document, in one pass
        doc = np.repeat(np.arange(doc_offsets.shape[0] - 1, dtype=np.int64), np.diff(doc_offsets))
    else:
        doc = np.searchsorted(doc_offsets, np.arange(n), side="right") - 1
    uncovered = np.zeros(n + 1, dtype=np.int64)  # uncovered[i]: uncovered tokens in [0, i)
    np.cumsum(~coverage, out=uncovered[1:])
    before = uncovered[:-1] - uncovered[doc_offsets[doc]]
    after = uncovered[doc_offsets[doc + 1]] - uncovered[1:]
    middle = coverage & (before >= min_side) & (after >= min_side)
    if strong is not None and middle.any():
        first = middle.copy()  # a run starts where coverage starts or a document does
        first[1:] &= ~coverage[:-1] | (doc[1:] != doc[:-1])
        run = np.cumsum(first) * middle  # 1-based run id per middle token, 0 elsewhere
        n_runs = int(run.max()) + 1
        exempt = np.bincount(run[middle & np.asarray(strong, dtype=bool)], minlength=n_runs) > 0
        if repeated is not None:
            exempt &= np.bincount(run[middle & np.asarray(repeated, dtype=bool)], minlength=n_runs) == 0
        exempt[0] = False
        middle &= ~exempt[run]
    return middle


def middle_runs_reference(coverage: Sequence[bool], doc_offsets: Sequence[int], min_side: int,
                          strong: Sequence[bool] | None = None, repeated: Sequence[bool] | None = None
                          ) -> list[bool]:
    """Plain twin of :func:`middle_runs`: per document, its runs of covered tokens one by one."""
    out = [False] * len(coverage)
    for d in range(len(doc_offsets) - 1):
        a, b = int(doc_offsets[d]), int(doc_offsets[d + 1])
        i = a
        while i < b:
            if not coverage[i]:
                i += 1
                continue
            j = i
            while j < b and coverage[j]:
                j += 1
            before = sum(1 for k in range(a, i) if not coverage[k])
            after = sum(1 for k in range(j, b) if not coverage[k])
            weak = strong is None or not any(strong[k] for k in range(i, j)) or (
                repeated is not None and any(repeated[k] for k in range(i, j)))
            if min_side > 0 and before >= min_side and after >= min_side and weak:
                out[i:j] = [True] * (j - i)
            i = j
    return out


def config_record(config: TemplateConfig) -> dict:
    """The record that opens a template file: ``{"kind": "config", "template_config": {...}}``;
    the ingest matcher takes ``run_min_length`` and ``slots`` from it."""
    return {"kind": "config", "template_config": config.to_dict()}


_RECORD_GROUPS = {"mcfp": 0, "block": 0, "skeleton": 1, "line_shape": 2, "title_nav": 3, "own_facts": 4}


def template_record_order_key(rec: dict) -> tuple:
    """The canonical order of a template file's records after its config record: phrases
    (psi descending, length descending, token *strings* ascending, then kind, scope with global
    first, anchor, line lengths, df, occurrences: records equal in all of these are equal),
    then page skeletons by scope, then line shapes by scope and edge, then title-navigation
    models by scope, then own-fact models by scope; a tie left among
    skeletons or line shapes (a site named like another site's section) is broken by the
    record's JSON text. It uses only what a record holds, never token ids, so a detection
    run per group of sites (:mod:`.site_partitions`) and one over the whole corpus list the
    same records in the same order."""
    group = _RECORD_GROUPS[rec["kind"]]
    if group == 0:
        return (0, -rec["length"] * rec["df"], -rec["length"], rec["tokens"], rec["kind"], "scope" in rec,
                rec.get("scope", ""), rec.get("anchor", ""), rec.get("block_lengths", []), rec["df"],
                rec["occurrences"])
    scope = rec.get("scope")
    edge = rec.get("edge", "")
    return (group, scope is not None, scope or "", edge, json.dumps(rec, sort_keys=True, ensure_ascii=False))


def sort_template_records(records: Sequence[dict]) -> list[dict]:
    """Phrase, skeleton and line-shape records in :func:`template_record_order_key` order."""
    return sorted(records, key=template_record_order_key)


def template_records(detection: TemplateDetection, config: TemplateConfig, token_text: Callable[[int], str]
                     ) -> list[dict]:
    """A template file's records: :func:`config_record`, then the detection's phrases, page
    skeletons and line shapes (their ``to_record`` with ``token_text``: id -> string) in the
    canonical order (:func:`sort_template_records`). Every writer of detector records calls this."""
    records = [p.to_record(token_text) for p in detection.phrases]
    records += [k.to_record(token_text) for k in detection.skeletons]
    records += [m.to_record(token_text) for m in detection.line_shapes]
    records += [m.to_record(token_text) for m in detection.title_navs]
    records += [m.to_record(token_text) for m in detection.own_facts]
    return [config_record(config)] + sort_template_records(records)


def coverage_char_spans(coverage: np.ndarray, doc_offsets: np.ndarray, char_starts: np.ndarray,
                        char_ends: np.ndarray) -> list[list[list[int]]]:
    """Per document, the character spans [start, end) of its runs of covered tokens (from
    the first covered token's start to the last one's end), ascending.

    coverage bool (W,); doc_offsets int64 (D+1,); char_starts/char_ends int64 (W,),
    offsets in each document's own text.
    """
    coverage = np.asarray(coverage, dtype=bool)
    n = coverage.shape[0]
    out: list[list[list[int]]] = [[] for _ in range(doc_offsets.shape[0] - 1)]
    if n == 0:
        return out
    # A run starts where coverage rises or a document starts while covered.
    starts_flag = coverage.copy()
    starts_flag[1:] &= ~coverage[:-1]
    inner = doc_offsets[(doc_offsets > 0) & (doc_offsets < n)]
    starts_flag[inner] = coverage[inner]
    ends_flag = coverage.copy()
    ends_flag[:-1] &= ~coverage[1:]
    last_of_doc = doc_offsets[1:][doc_offsets[1:] > doc_offsets[:-1]] - 1
    ends_flag[last_of_doc] = coverage[last_of_doc]
    run_start = np.flatnonzero(starts_flag)
    run_end = np.flatnonzero(ends_flag)
    docs = np.searchsorted(doc_offsets, run_start, side="right") - 1
    for d, a, b in zip(docs.tolist(), char_starts[run_start].tolist(), char_ends[run_end].tolist()):
        out[d].append([a, b])
    return out



@dataclass
class TextTemplates:
    """What :func:`detect_templates_in_texts` returns.

    detection:  the :class:`TemplateDetection` (phrases, token coverage, stats).
    records:    the detector's configuration (:func:`config_record`, kind "config"), one
                ``phrases.jsonl`` dict per phrase (:meth:`TemplatePhrase.to_record`),
                then one per page skeleton (:meth:`PageSkeleton.to_record`, kind
                "skeleton"), then one per line-shape model (:meth:`LineShapeModel.to_record`,
                kind "line_shape"), for :class:`bloomspan.ingest.match.template_matcher.TemplateMatcher`.
    char_spans: per document, its covered [start, end) character spans.
    scopes:     per document, the scopes it belongs to (what the matcher takes).
    """

    detection: TemplateDetection
    records: list[dict]
    char_spans: list[list[list[int]]]
    scopes: list[list[str]]


def detect_templates_in_texts(texts: Sequence[str], groups: Sequence[str | None] | None = None,
                              urls: Sequence[str | None] | None = None,
                              config: TemplateConfig | None = None,
                              progress: ProgressFn | None = None) -> TextTemplates:
    """The whole pipeline on raw texts: tokenize, find lines, detect, map back to characters.

    groups: one group (site) per text, or None for a corpus without groups; urls: one URL
    per text for site sections (``config.section_depth``). progress: ``("tokenize", texts
    done, texts)`` around the tokenizer, then the passes of :func:`detect_templates`.
    """
    config = config or TemplateConfig()
    texts = list(texts)
    vocab = Vocabulary()
    if progress is not None:
        progress("tokenize", 0, len(texts))
    tokens, doc_offsets, starts, ends = encode_batch(texts, vocab, with_offsets=True)
    if progress is not None:
        progress("tokenize", len(texts), len(texts))
    blocks = block_offsets_from_texts(texts, doc_offsets, starts)
    levels = [] if groups is None else scope_levels(list(groups), None if urls is None else list(urls),
                                                    config.section_depth)
    detection = detect_templates(tokens, doc_offsets, blocks, config, levels,
                                 number_token_mask(vocab.tokens()) if config.slots else None, progress=progress,
                                 token_strings=vocab.tokens())
    records = template_records(detection, config, vocab.token)
    scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(len(texts))]
    return TextTemplates(detection, records, coverage_char_spans(detection.coverage, doc_offsets, starts, ends),
                         scopes)
