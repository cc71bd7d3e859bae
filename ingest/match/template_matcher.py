"""Match template records at ingest: block-aligned lines, page edges, slots, nested scopes, page models.

:class:`~.phrase_matcher.PhraseMatcher` matches plain phrases anywhere. The template
detector (:mod:`bloomspan.engine.templates.detector`) also returns phrases that are only
templates in a given position; this matcher applies them the way they were mined, so its
coverage of the mined corpus equals the detector's coverage. Records are parsed by
:func:`~bloomspan.ingest.records.template_records.parse_template_records`; every phrase
record (mcfp and block alike) is compiled into one :class:`~.phrase_matcher.PhraseMatcher`
core, so a batch is scanned once per symbol stream (the text as it is, and with its numbers
read as the slot) whatever the record kinds, and the rules then filter the matches:

* ``kind="mcfp"``: every occurrence (as PhraseMatcher); with ``match="windows"`` (the
  default) a phrase that records its run's ``min_length`` is found by its windows of that
  many tokens, as :class:`~.phrase_matcher.PhraseMatcher` does;
* ``kind="block"`` with one entry in ``block_lengths`` and no anchor: a frequent whole
  line, matched only where it is exactly one whole line of the text;
* ``kind="block"`` pairs (two lines, or one line with ``anchor`` "start"/"end": the
  first/last line of the text): matched where they are exactly those whole lines
  (``block_lengths`` gives each line's tokens); overlapping pair matches of one
  scope merge into chains, and only chains of at least ``run_min_length`` tokens count
  (the detector's :class:`~bloomspan.engine.templates.detector.TemplateConfig` value);
* ``slots``: in the text every number token (ASCII digits only) also reads as the slot
  token :data:`~bloomspan.engine.text.slots.SLOT_TOKEN`, so "© <num> acme" matches "© 2031 Acme";
  phrases holding the slot read that stream, the others the text as it is, so an exact
  phrase with a literal number (a mining run's "(c) 2024 acme") still matches only that number;
* ``scope``: a phrase with a scope applies to documents that list that scope; a document
  may list several (its site and its section: ``("docs.example.org",
  "docs.example.org/api")``);
* the detector's middle and section rules (``TemplateConfig.middle_content_tokens``,
  ``section_line_length``) drop template matches as in mining;
* then the page models (:mod:`.page_rules`): skeletons, line shapes, title navigation;
* last, the detector's table-of-contents rule (``TemplateConfig.toc_sections``,
  :mod:`bloomspan.engine.templates.toc_sections`, same kernel): on a page whose header lists its
  own headings, the covered lines from such a heading to the end of their run are content;
* then a page's own facts (``kind="own_facts"`` records, :mod:`bloomspan.engine.templates.own_facts`,
  same kernel): a covered line of its site's own-fact line types, in the page's header less its
  first line, is content.

The removal fixed point. The cleaner matches a stripped page again until a pass removes nothing
(:meth:`~bloomspan.ingest.clean.cleaner.Cleaner._strip_all`). A later pass reads the page's
tokens less the removed ones, with the line starts the junctions give
(:mod:`~bloomspan.ingest.base.batch_tokens`). What it can find that the pass before did not:

1. *Rule spans* (phrases, blocks, pairs, after the middle and section rules). Each lies in a
   scan match that :meth:`_keep` kept, so in a match of a phrase of one of the page's scopes;
   the rules read each text on its own. A page without such a match has no rule span, and
   :meth:`_rule_spans_where_matched` reads the rules only on the pages that hold one. On a
   stripped page such a match either holds both tokens of a junction (a phrase formed where a
   span was cut out: a new neighbour), or lies in one run of kept tokens and so was a match of
   the pass before that its rules refused, whose verdict a removal can change: a block that a
   removal made a whole line (its line start or end is a junction), an anchor whose page edge
   was removed, a chain of pairs, the middle rule (unmatched tokens around a run removed), the
   section rule (a long line shortened), the repeated-line rule (the lines between two echoes
   removed), or a protected phrase cut out of a span. The scan of the stripped page finds both
   kinds (a scan of the windows around the junctions alone would miss the second); on the
   14,179-page web crawl it leaves 492 pages to the rules after the first pass, 6 of which get a span.
2. *Title navigation* reads the first and last ``edge_lines`` lines and the page's first lines
   as titles: removing a line there moves the zone onto lines it never read, and changes the
   titles. That is most pages (the titles were the same on 41 of 3,000 pages of the crawl after
   the first pass), so it reads every page a pass changed;
   :func:`~.page_rules.could_be_nav` refuses most zone lines from their two edge pieces.
3. *Skeletons* walk the page's lines from its edges with the rule spans as anchors, and *line
   shapes* read its edge lines: no smaller region is proved, so they read every page a pass
   changed (one kernel call per pass for skeletons).

A page that a pass leaves unchanged is final; the cleaner stops reading it.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bloomspan.engine.templates.blocks import block_types, flags_per_span
from bloomspan.engine.templates.detector import middle_runs, section_only_long_lines
from bloomspan.engine.templates.own_facts import own_fact_tokens
from bloomspan.engine.templates.page_skeleton import echo_flags
from bloomspan.engine.templates.toc_sections import toc_section_tokens
from bloomspan.engine.text.slots import SLOT_TOKEN, vocabulary_number_mask

from ..base.batch_tokens import BatchTokens, take_rows, tokenize_batch
from ..records.template_records import RULE_ANY, RULE_PAIR, TemplateRecords, parse_template_records, read_records
from .page_rules import LineShapeCover, SkeletonCover, TitleNavCover
from .phrase_index import window_lengths
from .phrase_matcher import PhraseMatcher
from .scopes import scope_names, template_scopes
from .spans import MatchResult, TemplateMatch, merge_spans, span_mask, with_batch_mask

_EMPTY = np.zeros(0, dtype=np.int64)

TEMPLATE_SPAN_ID = "bloomspan:template"  # the phrase id mark mode gives a span found by template rules


def _batch_span_mask(results, tok_off) -> np.ndarray | None:
    """bool (n_tok,): the tokens the batch's matches cover, in batch positions; None when nothing
    is covered (or the batch holds no token), so a rule over the covered lines has nothing to do."""
    n_tok = int(tok_off[-1])
    if n_tok == 0 or not any(m.span_token_start.shape[0] for m in results):
        return None
    base = np.repeat(tok_off[:-1], [m.span_token_start.shape[0] for m in results])
    return span_mask(np.concatenate([m.span_token_start for m in results]) + base,
                     np.concatenate([m.span_token_end for m in results]) + base, n_tok)


class TemplateMatcher:
    """Matcher for the records of a template detection (``TemplatePhrase.to_record``).

    records:        dicts as in ``phrases.jsonl`` (see :mod:`~bloomspan.ingest.records.phrase_set`)
                    with the extra keys ``kind``, ``block_lengths`` and ``anchor``; absent
                    kind = "mcfp"; plus skeleton and line-shape records and at most one config
                    record (kind "config", written first by the detector); or records parsed
                    already (:class:`~bloomspan.ingest.records.template_records.TemplateRecords`).
    run_min_length: tokens a chain of pair matches needs (TemplateConfig.run_min_length);
                    None: from the config record (4 without one).
    slots:          read number tokens of the text as the slot (TemplateConfig.slots); a
                    phrase set mined without slots holds literal numbers instead; None:
                    from the config record (True without one).
    match, min_length: how ``kind="mcfp"`` phrases match, as in
                    :class:`~.phrase_matcher.PhraseMatcher` ("windows": by their windows of
                    ``min_length``, or of their own recorded ``min_length``).

    ``phrases`` is the :class:`~.phrase_matcher.PhraseMatcher` every phrase record is
    compiled into (block phrases matched whole: a block is a whole line by definition).
    """

    def __init__(self, records: Sequence[Mapping[str, Any]] | TemplateRecords, run_min_length: int | None = None,
                 slots: bool | None = None, *, source: str = "records", match: str = "windows",
                 min_length: int | None = None):
        if not isinstance(records, TemplateRecords):
            records = parse_template_records(records, run_min_length, slots, source=source)
        self.records = records
        self.phrase_set = records.phrase_set
        self.template_config = records.template_config
        self.skeletons = list(records.skeletons)
        self.line_shapes = list(records.line_shapes)
        self.match, self.min_length = match, min_length
        window_length = np.where(records.rule == RULE_ANY, window_lengths(self.phrase_set, match, min_length), 0)
        self.phrases = PhraseMatcher(self.phrase_set, match, min_length, window_length=window_length,
                                     slot_token=SLOT_TOKEN)
        self.scope_ids = self.phrases.scope_ids
        self.phrase_scope = self.phrases.phrase_scope.astype(np.int64)
        self._skeleton_cover = SkeletonCover(records.skeletons) if records.skeletons else None
        self._line_shape_cover = LineShapeCover(records.line_shapes, records.slots) if records.line_shapes else None
        self._title_nav_cover = TitleNavCover(records.title_navs) if records.title_navs else None
        # scope -> the own-fact line types (token strings, numbers as the slot)
        self._own_facts = {m.scope: frozenset(m.lines) for m in records.own_facts}
        self._strings = None  # (vocabulary, its token strings): _token_strings

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike, run_min_length: int | None = None,
                   slots: bool | None = None) -> TemplateMatcher:
        """Load records from a ``phrases.jsonl`` file (blank lines skipped)."""
        source = os.fspath(path)
        return cls(read_records(source), run_min_length, slots, source=source)

    def __len__(self) -> int:
        return len(self.phrase_set)

    @property
    def nbytes(self) -> int:
        """Bytes held by the automata and window indices (the vocabulary aside)."""
        return self.phrases.nbytes

    def matching(self, match: str, min_length: int | None = None) -> TemplateMatcher:
        """This matcher with mcfp phrases matched by ``match`` / ``min_length`` (itself when unchanged)."""
        if (match, min_length) == (self.match, self.min_length):
            return self
        return TemplateMatcher(self.records, match=match, min_length=min_length)

    # The interface every matcher gives the cleaner (:class:`~bloomspan.ingest.clean.cleaner.Cleaner`).
    reads_url = True  # a document's scopes are its site and the sections of its URL
    closed_under_removal = False  # line rules and page models change with a strip: the cleaner matches again

    def tokenize(self, texts: Sequence[str]) -> BatchTokens:
        """The texts' tokens as :meth:`find_match_results` reads them: the batch's own vocabulary
        (number tokens and line identities need every token's id, not only the phrase tokens')."""
        return tokenize_batch(texts)

    @property
    def span_ids(self) -> list:
        """The id of each ``match_phrase`` index of :meth:`find_match_results` (one pseudo-phrase)."""
        return list(self.phrase_set.ids) + [TEMPLATE_SPAN_ID]

    def document_scopes(self, site: str | None, url: str | None = None) -> list[str]:
        """What :meth:`find_match_results` takes as a document's scopes (:func:`~.scopes.template_scopes`)."""
        return template_scopes(site, url)

    def find_match_results(self, texts: Sequence[str], scopes: Sequence[str | Sequence[str] | None] | None = None,
                           tokens: BatchTokens | None = None) -> list[MatchResult]:
        """:meth:`find_batch` as :class:`~.spans.MatchResult` objects (what the
        :class:`~bloomspan.ingest.clean.cleaner.Cleaner` consumes): one match per covered span, with
        phrase index ``len(self.phrase_set)`` (:data:`TEMPLATE_SPAN_ID` in the cleaner)."""
        texts = list(texts)
        found = self.find_batch(texts, scopes, tokens)
        # Every span's gaps for the whole batch at once (from the end of the token before it,
        # 0 if none, to the start of the token after it, len(text) if none), then one slice per text.
        n_spans = [m.span_token_start.shape[0] for m in found]
        cut = np.concatenate([[0], np.cumsum(n_spans)]).astype(np.int64).tolist()
        gap_start, gap_end = _EMPTY, _EMPTY
        if cut[-1]:
            spanned = [m for m, k in zip(found, n_spans) if k]
            s = np.concatenate([m.span_token_start for m in spanned])
            e = np.concatenate([m.span_token_end for m in spanned])
            n = np.repeat([m.n_tokens for m in spanned], [m.span_token_start.shape[0] for m in spanned])
            base = np.repeat(np.concatenate([[0], np.cumsum([m.n_tokens for m in spanned])[:-1]]).astype(np.int64),
                             [m.span_token_start.shape[0] for m in spanned])
            starts = np.concatenate([m.token_starts for m in spanned])
            ends = np.concatenate([m.token_ends for m in spanned])
            length = np.repeat([len(t) for t, k in zip(texts, n_spans) if k], [k for k in n_spans if k])
            gap_start = np.where(s > 0, ends[base + np.maximum(s - 1, 0)], 0).astype(np.int64)
            gap_end = np.where(e < n, starts[base + np.minimum(e, n - 1)], length).astype(np.int64)
        pseudo = np.full(max(n_spans, default=0), len(self.phrase_set), dtype=np.int32)
        ks = np.arange(max(n_spans, default=0), dtype=np.int64)
        out = []
        for d, m in enumerate(found):
            k = n_spans[d]
            if k == 0:
                out.append(MatchResult.no_match(m.token_starts, m.token_ends))
                continue
            s, e = m.span_token_start, m.span_token_end
            out.append(MatchResult(m.n_tokens, m.covered_tokens, m.token_starts, m.token_ends, s, e, pseudo[:k], ks[:k],
                                   s, e, m.span_char_start, m.span_char_end, gap_start[cut[d]:cut[d + 1]],
                                   gap_end[cut[d]:cut[d + 1]]))
        return out

    def find(self, text: str, scopes: str | Sequence[str] | None = None) -> TemplateMatch:
        return self.find_batch([text], [scopes])[0]

    def find_batch(self, texts: Sequence[str], scopes: Sequence[str | Sequence[str] | None] | None = None,
                   tokens: BatchTokens | None = None) -> list[TemplateMatch]:
        """Covered spans of each text; ``scopes[d]``: a scope, a list of scopes or None.
        ``tokens``: the texts' tokens when the caller has them (:mod:`~bloomspan.ingest.base.batch_tokens`)."""
        texts = list(texts)
        scopes = [None] * len(texts) if scopes is None else list(scopes)
        if len(scopes) != len(texts):
            raise ValueError(f"scopes has {len(scopes)} entries for {len(texts)} texts")
        # One tokenization with the batch's own vocabulary: phrase symbols, number tokens and
        # (for skeletons) line identities all come from its ids.
        if tokens is None:
            tokens = tokenize_batch(texts)
        elif tokens.doc_offsets.shape[0] != len(texts) + 1:
            raise ValueError(f"tokens hold {tokens.doc_offsets.shape[0] - 1} texts, not {len(texts)}")
        elif tokens.line_starts is None:
            raise ValueError("tokens without line starts: line rules read them; tokenize with TemplateMatcher.tokenize")
        sym, slot_sym, is_number = self._symbols(tokens)
        line_start = tokens.line_starts.view(np.bool_)  # blocks.line_start_flags of each text
        m_start, m_end, m_idx = self.phrases.index.scan(sym, tokens.doc_offsets, slot_sym)
        results = self._rule_spans_where_matched(m_start, m_end, m_idx, tokens, is_number, scopes)
        if self._skeleton_cover is not None:
            results = self._skeleton_cover.cover(scopes, results, line_start, tokens.doc_offsets, tokens.ids,
                                                 tokens.words, is_number)
        if self._line_shape_cover is not None:
            results = self._line_shape_cover.cover(scopes, results, line_start, tokens.doc_offsets, tokens.ids,
                                                   self._token_strings(tokens.words), is_number)
        if self._title_nav_cover is not None:
            results = self._title_nav_cover.cover(scopes, results, line_start, tokens.doc_offsets, tokens.ids,
                                                  self._token_strings(tokens.words))
        if self.records.toc_sections > 0:
            results = self._toc_sections(results, tokens.ids, is_number, line_start, tokens.doc_offsets)
        if self._own_facts:
            results = self._own_fact_lines(results, scopes, tokens.ids, self._token_strings(tokens.words), is_number,
                                           line_start, tokens.doc_offsets)
        return results

    def _token_strings(self, words) -> list[str]:
        """``words.tokens()``, kept for the next call with the same vocabulary as long as nothing
        was added to it: the cleaner's later passes over a batch read the first pass's vocabulary
        (:mod:`~bloomspan.ingest.base.batch_tokens`), whose ids never change."""
        kept = self._strings
        if kept is not None and kept[0] is words and len(kept[1]) == len(words):
            return kept[1]
        strings = words.tokens()
        self._strings = (words, strings)
        return strings

    def _toc_sections(self, results, ids, is_number, line_start, tok_off) -> list[TemplateMatch]:
        """The detector's table-of-contents rule (TemplateConfig.toc_sections,
        :func:`~bloomspan.engine.templates.toc_sections.toc_section_tokens`) on every match found
        so far, lines typed as mined (numbers as one slot when ``slots``)."""
        n_tok = int(tok_off[-1])
        mask = _batch_span_mask(results, tok_off)
        if mask is None:
            return results
        offsets, types = self._line_types(ids, is_number, line_start, n_tok)
        back = toc_section_tokens(mask, offsets, tok_off, types, self.records.toc_sections)
        if not back.any():
            return results
        cut = np.concatenate([[0], np.cumsum(back)])
        changed = cut[tok_off[1:]] > cut[tok_off[:-1]]
        return with_batch_mask(results, mask & ~back, tok_off, changed)

    def _own_fact_lines(self, results, scopes, ids, names, is_number, line_start, tok_off) -> list[TemplateMatch]:
        """The detector's own-facts rule (TemplateConfig.own_facts,
        :func:`~bloomspan.engine.templates.own_facts.own_fact_tokens`) on every match found so far:
        a line is an own-fact line when its tokens, numbers as the slot, are one of the types of
        the model of the page's site (its first scope; a model without scope: every page's)."""
        n_tok = int(tok_off[-1])
        mask = _batch_span_mask(results, tok_off)
        if mask is None:
            return results
        offsets = np.append(np.flatnonzero(line_start[:n_tok]), n_tok).astype(np.int64)
        lengths = np.diff(offsets)
        numbers = is_number[ids[:n_tok]] if is_number.shape[0] else np.zeros(n_tok, dtype=bool)
        covered = flags_per_span(mask, offsets[:-1], offsets[1:]) == lengths
        maybe = covered & (lengths > 0) & (flags_per_span(numbers, offsets[:-1], offsets[1:]) > 0)
        candidate = np.zeros(lengths.shape[0], dtype=bool)
        if maybe.any():
            line_doc = np.searchsorted(tok_off, offsets[:-1], side="right") - 1
            fallback = self._own_facts.get(None)
            page_types = [self._own_facts.get(next(iter(scope_names(sc)), None), fallback) for sc in scopes]
            for k in np.flatnonzero(maybe).tolist():
                types = page_types[line_doc[k]]
                if types:
                    a, b = int(offsets[k]), int(offsets[k + 1])
                    candidate[k] = tuple(SLOT_TOKEN if x else names[t]
                                         for t, x in zip(ids[a:b].tolist(), numbers[a:b].tolist())) in types
        if not candidate.any():
            return results
        _, types = self._line_types(ids, is_number, line_start, n_tok)
        raw = ids[:n_tok].astype(np.uint32)
        back = own_fact_tokens(mask, offsets, tok_off, candidate, types, block_types(raw, offsets)[0], raw, numbers)
        if not back.any():
            return results
        cut = np.concatenate([[0], np.cumsum(back)])
        changed = cut[tok_off[1:]] > cut[tok_off[:-1]]
        return with_batch_mask(results, mask & ~back, tok_off, changed)

    def _symbols(self, tokens: BatchTokens) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """The batch's phrase symbols, the same with number tokens as the slot (None when no
        slotted phrase reads it), and bool (V,) the batch vocabulary's number tokens."""
        words, ids = tokens.words, tokens.ids
        n_words = len(words)
        sym = self.phrases.index.symbols(tokens)
        is_number = vocabulary_number_mask(words) if self.records.slots else np.zeros(n_words, dtype=bool)
        slot_sym = None
        if self.phrases.index.slotted is not None and self.records.slots and n_words:
            slot_sym = np.where(is_number[ids], np.int32(self.phrases.index.slot_symbol), sym).astype(np.int32)
        return sym, slot_sym, is_number

    def _rule_spans_where_matched(self, m_start, m_end, m_idx, tokens: BatchTokens, is_number, scopes
                                  ) -> list[TemplateMatch]:
        """:meth:`_rule_spans` of the batch, the rules read only on the texts that hold a phrase
        match of one of their scopes. Every span the rules give lies in such a match (a single
        match, or a chain of pair matches, all kept by :meth:`_keep`, which drops a match out of
        its text's scopes), and the rules read each text on its own (chains, the middle, section
        and repeated-line rules are per text), so a text without one has no span: its result is
        the empty match. This is what limits the cleaner's removal fixed point
        (:meth:`~bloomspan.ingest.clean.cleaner.Cleaner._strip_all`): a stripped page holds such a
        match only where a removal joined one across a junction or changed a rule's verdict."""
        tok_off = tokens.doc_offsets
        n_texts = tok_off.shape[0] - 1
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        matched = self._texts_matched(m_start, m_idx, tokens, scopes)
        if matched.all():
            return self._rule_spans(m_start, m_end, m_idx, tokens, is_number, scopes)
        found: list[TemplateMatch] = []
        if matched.any():
            rows = np.flatnonzero(matched)
            sub = take_rows(tokens, rows)
            mine = matched[m_doc]
            # a match of text d moves by d's offset in the batch less its offset in ``sub``
            sub_start = np.zeros(n_texts, dtype=np.int64)
            sub_start[rows] = sub.doc_offsets[:-1]
            shift = (tok_off[:-1] - sub_start)[m_doc[mine]]
            found = self._rule_spans(m_start[mine] - shift, m_end[mine] - shift, m_idx[mine], sub, is_number,
                                     [scopes[r] for r in rows.tolist()])
        results = []
        offs, cstart, cend = tok_off.tolist(), tokens.char_starts, tokens.char_ends
        at = iter(found)
        for d, has in enumerate(matched.tolist()):
            a, b = offs[d], offs[d + 1]
            results.append(next(at) if has else
                           TemplateMatch(b - a, cstart[a:b], cend[a:b], _EMPTY, _EMPTY, _EMPTY, _EMPTY, _EMPTY))
        return results

    def _texts_matched(self, m_start, m_idx, tokens: BatchTokens, scopes) -> np.ndarray:
        """bool (D,): the texts that hold a phrase match of one of their scopes."""
        tok_off = tokens.doc_offsets
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        matched = np.zeros(tok_off.shape[0] - 1, dtype=bool)
        matched[m_doc[self._in_scope(m_idx, m_doc, scopes)]] = True
        return matched

    def _rule_spans(self, m_start, m_end, m_idx, tokens: BatchTokens, is_number, scopes) -> list[TemplateMatch]:
        """Each text's covered spans from the phrase matches ``(start, end, phrase)``: those
        valid for their rule and scope, pairs merged into chains, the middle and section rules."""
        tok_off, line_start = tokens.doc_offsets, tokens.line_starts.view(np.bool_)
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        keep = self._keep(m_start, m_end, m_idx, m_doc, tok_off, line_start, scopes)
        m_start, m_end, m_idx, m_doc = m_start[keep], m_end[keep], m_idx[keep], m_doc[keep]
        is_pair = self.records.rule[m_idx] == RULE_PAIR
        c_s, c_e, c_d, c_sc, c_ok = self._chains(m_start[is_pair], m_end[is_pair], m_doc[is_pair], m_idx[is_pair])
        if self.records.middle_tokens > 0:
            repeated = self._repeated_lines(tokens.ids, is_number, line_start, tok_off) \
                if self.records.middle_repeated else None
            m_start, m_end, m_idx, m_doc, is_pair, chain_kept, c_ok = self._drop_middle(
                m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_ok, tok_off, scopes, repeated)
            c_s, c_e, c_d, c_sc = c_s[chain_kept], c_e[chain_kept], c_d[chain_kept], c_sc[chain_kept]
        prose = None
        if self.records.section_line_length > 0:
            prose = self._section_prose(m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_d, c_sc, tok_off,
                                        line_start, scopes)
        single = ~is_pair
        s = np.concatenate([m_start[single], c_s])
        e = np.concatenate([m_end[single], c_e])
        dd = np.concatenate([m_doc[single], c_d])
        order = np.lexsort((s, dd))
        s, e, dd = s[order], e[order], dd[order]
        out_s, out_e, out_d, group = (np.empty(s.shape[0], dtype=np.int64) for _ in range(4))
        k = merge_spans(s, e, dd, out_s, out_e, out_d, group)
        out_s, out_e, out_d = out_s[:k], out_e[:k], out_d[:k]
        phr_doc = np.concatenate([m_doc[single], m_doc[is_pair][c_ok]])
        phr = np.concatenate([m_idx[single], m_idx[is_pair][c_ok]])
        if prose is not None and prose.any():  # out of the spans, and a phrase matched only there contributed nothing
            cut = np.concatenate([[0], np.cumsum(prose)])
            p_s = np.concatenate([m_start[single], m_start[is_pair][c_ok]])
            p_e = np.concatenate([m_end[single], m_end[is_pair][c_ok]])
            left = (cut[p_e] - cut[p_s]) < (p_e - p_s)
            phr, phr_doc = phr[left], phr_doc[left]
            out_s, out_e, out_d = _spans_without(out_s, out_e, out_d, prose)
        return _template_matches(tokens, out_s, out_e, out_d, phr, phr_doc)

    def _repeated_lines(self, ids, is_number, line_start, tok_off) -> np.ndarray:
        """bool (W,): tokens of the lines that occur twice or more in their text (numbers read
        as one slot when ``slots``, as mined), for the middle rule's ``repeated``."""
        n_tok = int(tok_off[-1])
        if n_tok == 0:
            return np.zeros(0, dtype=bool)
        offsets, types = self._line_types(ids, is_number, line_start, n_tok)
        before, after, _ = echo_flags(types, np.searchsorted(tok_off, offsets[:-1], side="right") - 1)
        return np.repeat(before | after, np.diff(offsets))

    def _line_types(self, ids, is_number, line_start, n_tok: int) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, types)`` of the batch's lines: int64 line offsets into its tokens, and each
        line's type (:func:`~bloomspan.engine.templates.blocks.block_types`: equal tokens, equal
        type) with numbers read as one slot when ``slots``, as mined."""
        tokens = ids.astype(np.uint32)
        if self.records.slots:
            tokens = np.where(is_number[ids], np.uint32(is_number.shape[0]), tokens).astype(np.uint32)
        offsets = np.append(np.flatnonzero(line_start[:n_tok]), n_tok).astype(np.int64)
        return offsets, block_types(tokens, offsets)[0]

    def _section_prose(self, m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_d, c_sc, tok_off, line_start,
                       scopes) -> np.ndarray:
        """bool (W,): the detector's section rule (TemplateConfig.section_line_length,
        :func:`~bloomspan.engine.templates.detector.section_only_long_lines`) on the template
        phrases' matches after the middle rule: the tokens of each line longer than that that
        a phrase of a section scope (not the text's site, its first scope, nor none) touches and
        no other template phrase does; tokens an exact phrase matched are kept."""
        n = int(tok_off[-1])
        if n == 0:
            return np.zeros(0, dtype=bool)
        site_scope = np.asarray([self.scope_ids.get(next(iter(scope_names(sc)), None), -2) for sc in scopes],
                                dtype=np.int64)
        single = ~is_pair
        scope = self.phrase_scope[m_idx]
        section = (scope >= 0) & (scope != site_scope[m_doc]) & ~self.records.is_exact[m_idx]
        chain_section = (c_sc >= 0) & (c_sc != site_scope[c_d])

        def mask(s, e):
            return span_mask(s, e, n)
        weak = mask(np.concatenate([m_start[single & section], c_s[chain_section]]),
                    np.concatenate([m_end[single & section], c_e[chain_section]]))
        strong = mask(np.concatenate([m_start[single & ~section], c_s[~chain_section]]),
                      np.concatenate([m_end[single & ~section], c_e[~chain_section]]))
        exact = single & self.records.is_exact[m_idx]
        offsets = np.append(np.flatnonzero(line_start[:n]), n).astype(np.int64)
        # An exact phrase's tokens stay: mining's rule cuts the detector's coverage, not theirs.
        return section_only_long_lines(weak, strong, offsets, self.records.section_line_length) & ~mask(m_start[exact],
                                                                                                 m_end[exact])

    def _drop_middle(self, m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_ok, tok_off, scopes, repeated=None):
        """The detector's middle rule (TemplateConfig.middle_content_tokens,
        :func:`~bloomspan.engine.templates.detector.middle_runs`) on the template phrases' matches
        (the exact phrases' matches stay): a run of them with that many unmatched tokens on both
        sides in its text, that no phrase of the text's site (its first scope) or of no scope
        matched, is content one URL section repeats, as in mining. Returns the single matches
        without those (pair matches kept), which chains stay, and ``c_ok`` of the pair matches left."""
        n = int(tok_off[-1])
        if n == 0:
            return m_start, m_end, m_idx, m_doc, is_pair, np.ones(c_s.shape[0], dtype=bool), c_ok
        template = ~is_pair & ~self.records.is_exact[m_idx]
        site_scope = np.asarray([self.scope_ids.get(next(iter(scope_names(sc)), None), -2) for sc in scopes],
                                dtype=np.int64)
        scope = self.phrase_scope[m_idx]
        strong = (scope < 0) | (scope == site_scope[m_doc]) if len(scopes) else np.zeros(0, dtype=bool)
        pair_good = np.zeros(m_start.shape[0], dtype=bool)
        pair_good[np.flatnonzero(is_pair)[c_ok]] = True

        def mask(which):
            return span_mask(m_start[which], m_end[which], n)
        covered = mask(template | pair_good)
        middle = middle_runs(covered, tok_off, self.records.middle_tokens, mask((template | pair_good) & strong), repeated)
        keep = ~(template & middle[m_start])  # a match is in a run or out of it whole
        pair_ok = c_ok & ~middle[m_start[is_pair]]
        return m_start[keep], m_end[keep], m_idx[keep], m_doc[keep], is_pair[keep], ~middle[c_s], pair_ok

    def _keep(self, m_start, m_end, m_idx, m_doc, tok_off, line_start, scopes) -> np.ndarray:
        """Matches valid for their rule (line alignment, edge anchors) and scope."""
        n = line_start.shape[0]
        line_end = np.zeros(n, dtype=bool)
        if n:
            line_end[:-1] = line_start[1:]
            line_end[-1] = True
        rule = self.records.rule[m_idx]
        aligned = np.ones(m_start.shape[0], dtype=bool)
        lined = rule != RULE_ANY
        # A block match is exactly its lines: starts at a line start, ends at a line end,
        # holds as many line starts as the phrase has lines, the second at its place.
        ls_count = np.concatenate([[0], np.cumsum(line_start)])
        s, e, i = m_start[lined], m_end[lined], m_idx[lined]
        second = np.minimum(s + self.records.first_line[i], max(n - 1, 0))
        aligned[lined] = (line_start[s] & line_end[e - 1] & (ls_count[e] - ls_count[s] == self.records.n_lines[i])
                          & ((self.records.n_lines[i] == 1) | line_start[second]))
        anchor = self.records.anchor[m_idx]
        aligned &= (anchor != 1) | (m_start == tok_off[m_doc])
        aligned &= (anchor != 2) | (m_end == tok_off[m_doc + 1])
        if not self.records.exact_on_sites and self.records.is_exact.any():
            mined_site = np.asarray([any(x in self.records.mined_scopes for x in scope_names(sc)) for sc in scopes],
                                    dtype=bool)
            aligned &= ~(self.records.is_exact[m_idx] & mined_site[m_doc])
        return aligned & self._in_scope(m_idx, m_doc, scopes)

    def _in_scope(self, m_idx, m_doc, scopes) -> np.ndarray:
        """bool per match: its phrase has no scope, or one its text lists."""
        ps = self.phrase_scope[m_idx]
        if not (ps >= 0).any():
            return np.ones(m_idx.shape[0], dtype=bool)
        allowed = np.zeros((len(scopes), len(self.scope_ids)), dtype=bool)  # document x scope
        for d, sc in enumerate(scopes):
            for x in scope_names(sc):
                if x in self.scope_ids:
                    allowed[d, self.scope_ids[x]] = True
        return (ps < 0) | allowed[m_doc, np.maximum(ps, 0)]

    def _chains(self, s, e, d, idx):
        """Merge overlapping pair matches of one scope into chains; keep those with >=
        run_min_length tokens. Returns chain starts, ends, docs (int64) and, per pair
        match, whether its chain was kept (bool)."""
        if s.shape[0] == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, empty, np.zeros(0, dtype=bool)
        scope = self.phrase_scope[idx]
        # A chain key (doc, scope) as one int64: matches of different scopes never merge.
        key = d * (len(self.scope_ids) + 1) + (scope + 1)
        order = np.lexsort((e, s, key))
        ss, ee, kk = s[order], e[order], key[order]
        # Overlap (not mere adjacency) links two pairs: merge with inclusive ends.
        out_s, out_e, out_k, group = (np.empty(ss.shape[0], dtype=np.int64) for _ in range(4))
        k = merge_spans(ss, ee - 1, kk, out_s, out_e, out_k, group)
        out_s, out_e, out_k = out_s[:k], out_e[:k] + 1, out_k[:k]
        good = (out_e - out_s) >= self.records.run_min_length
        ok = np.empty(s.shape[0], dtype=bool)
        ok[order] = good[group]
        n_keys = len(self.scope_ids) + 1
        return out_s[good], out_e[good], out_k[good] // n_keys, out_k[good] % n_keys - 1, ok


def _spans_without(s: np.ndarray, e: np.ndarray, d: np.ndarray, cut: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token spans [s, e) of documents d (int64, sorted, disjoint) less the tokens of ``cut``
    (bool (W,)): each span's runs of uncut tokens, in order."""
    if not cut.any() or s.shape[0] == 0:
        return s, e, d
    span_of = np.full(cut.shape[0] + 1, -1, dtype=np.int64)
    inside = np.zeros(cut.shape[0] + 1, dtype=np.int64)
    np.add.at(inside, s, 1)
    np.add.at(inside, e, -1)
    covered = np.cumsum(inside[:-1]) > 0
    span_of[:-1][covered] = np.repeat(np.arange(s.shape[0]), e - s)
    keep = covered & ~cut
    prev = np.concatenate([[False], keep[:-1]]) & (np.concatenate([[-1], span_of[:-2]]) == span_of[:-1])
    nxt = np.concatenate([keep[1:], [False]]) & (span_of[1:] == span_of[:-1])
    rise = np.flatnonzero(keep & ~prev)
    fall = np.flatnonzero(keep & ~nxt) + 1
    return rise.astype(np.int64), fall.astype(np.int64), d[span_of[rise]]



def _template_matches(tokens: BatchTokens, out_s, out_e, out_d, phr, phr_doc) -> list[TemplateMatch]:
    """One :class:`TemplateMatch` per text from the batch's merged spans ``[out_s, out_e)`` of
    texts ``out_d`` (sorted) and the contributing phrases ``phr`` of texts ``phr_doc``."""
    tok_off, cstart, cend = tokens.doc_offsets, tokens.char_starts, tokens.char_ends
    n_texts = tok_off.shape[0] - 1
    bounds = np.searchsorted(out_d, np.arange(n_texts + 1))
    # Each text's contributing phrases, ascending and distinct: one sort for the batch.
    by_doc = np.lexsort((phr, phr_doc))
    phr, phr_doc = phr[by_doc].astype(np.int64), phr_doc[by_doc]
    first = np.ones(phr.shape[0], dtype=bool)
    first[1:] = (phr[1:] != phr[:-1]) | (phr_doc[1:] != phr_doc[:-1])
    phr, phr_doc = phr[first], phr_doc[first]
    phr_bounds = np.searchsorted(phr_doc, np.arange(n_texts + 1)).tolist()
    # The spans' local token ranges and character offsets for the whole batch, then one slice per text.
    span_cs, span_ce = cstart[out_s], cend[out_e - 1]
    local_s, local_e = out_s - tok_off[out_d], out_e - tok_off[out_d]
    offs, bounds = tok_off.tolist(), bounds.tolist()
    results = []
    for d in range(n_texts):
        a, b, k0, k1 = offs[d], offs[d + 1], bounds[d], bounds[d + 1]
        results.append(TemplateMatch(b - a, cstart[a:b], cend[a:b], local_s[k0:k1], local_e[k0:k1], span_cs[k0:k1],
                                     span_ce[k0:k1], phr[phr_bounds[d]:phr_bounds[d + 1]]))
    return results
