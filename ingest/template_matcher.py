"""Match template phrases at ingest: block-aligned lines, page edges, slots and nested scopes.

:class:`~bloomspan.ingest.matcher.PhraseMatcher` matches plain phrases anywhere. The
template detector (:mod:`bloomspan.engine.templates.detector`) also returns phrases that
are only templates in a given position; this matcher applies them the way they were
mined, so its coverage of the mined corpus equals the detector's coverage:

* ``kind="mcfp"``: every occurrence (as PhraseMatcher); with ``match="windows"`` (the
  default) a phrase that records its run's ``min_length`` is found by its windows of that
  many tokens, as :class:`~bloomspan.ingest.matcher.PhraseMatcher` does;
* ``kind="block"`` with one entry in ``block_lengths`` and no anchor: a frequent whole
  line, matched only where it is exactly one whole line of the text;
* ``kind="block"`` pairs (two lines, or one line with ``anchor`` "start"/"end": the
  first/last line of the text): matched where they are exactly those whole lines
  (``block_lengths`` gives each line's tokens); overlapping pair matches of one
  scope merge into chains, and only chains of at least ``run_min_length`` tokens count
  (the detector's :class:`~bloomspan.engine.templates.detector.TemplateConfig` value);
* ``slots``: in the text every number token (ASCII digits only) also reads as the slot
  token :data:`~bloomspan.engine.text.slots.SLOT_TOKEN`, so "© <num> acme" matches "© 2031 Acme";
* ``scope``: a phrase with a scope applies to documents that list that scope; a document
  may list several (its site and its section: ``("docs.example.org",
  "docs.example.org/api")``).
* ``kind="skeleton"`` records (:class:`~bloomspan.engine.templates.page_skeleton.PageSkeleton`, one
  per site): after the phrases, each page's lines are walked from its edges as in mining,
  with the lines the phrases covered as detected anchors, and the navigation between them
  is covered too.
* ``kind="line_shape"`` records (:class:`~bloomspan.engine.templates.line_shapes.LineShapeModel`,
  one per site and page edge): then the lines at each page's edges whose fixed words repeat
  in a template shape are covered from their first fixed word to their last, as in mining.

Built on the public pieces of :mod:`.matcher` (:func:`build_automaton`,
:func:`scan_symbols`, :func:`merge_spans`); records are validated by :class:`PhraseSet`
and their extra keys (``kind``, ``block_lengths``, ``anchor``) read here.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomspan.engine.templates.blocks import block_types, flags_per_span
from bloomspan.engine.templates.detector import middle_runs, section_only_long_lines
from bloomspan.engine.templates.line_shapes import LineShapeModel, covered_positions, local_indices
from bloomspan.engine.templates.page_skeleton import PageSkeleton, echo_flags
from bloomspan.engine.text.slots import SLOT_TOKEN, vocabulary_number_mask
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary

from .batch_tokens import BatchTokens, tokenize_batch
from .errors import PhraseSetError
from .matcher import build_automaton, merge_spans, scan_symbols, window_lengths
from .phrase_set import PhraseSet
from .window_index import build_window_index

logger = logging.getLogger(__name__)

_RULE_ANY, _RULE_LINE, _RULE_PAIR = 0, 1, 2
_EMPTY = np.zeros(0, dtype=np.int64)
_ANCHOR = {None: 0, "start": 1, "end": 2}


@dataclass(frozen=True)
class TemplateMatch:
    """Covered spans of one text. N tokens, K merged spans (ascending, disjoint, never adjacent).

    token_starts/token_ends: int64 (N,) character offsets of the tokens.
    span_token_start/end:    int64 (K,) token ranges, end exclusive.
    span_char_start/end:     int64 (K,) from the first token's start to the last token's end.
    phrases:                 int64 (P,) indices of the phrases that contributed, ascending.
    """

    n_tokens: int
    token_starts: np.ndarray
    token_ends: np.ndarray
    span_token_start: np.ndarray
    span_token_end: np.ndarray
    span_char_start: np.ndarray
    span_char_end: np.ndarray
    phrases: np.ndarray

    @property
    def covered_tokens(self) -> int:
        return int((self.span_token_end - self.span_token_start).sum())

    def token_mask(self) -> np.ndarray:
        """bool (N,): True for covered tokens."""
        mask = np.zeros(self.n_tokens, dtype=bool)
        for a, b in zip(self.span_token_start.tolist(), self.span_token_end.tolist()):
            mask[a:b] = True
        return mask

    def with_mask(self, mask: np.ndarray) -> TemplateMatch:
        """This text's match with ``mask`` (bool (N,)) as its covered tokens, merged into spans."""
        rise = np.flatnonzero(mask & ~np.concatenate([[False], mask[:-1]]))
        fall = np.flatnonzero(mask & ~np.concatenate([mask[1:], [False]])) + 1
        return TemplateMatch(self.n_tokens, self.token_starts, self.token_ends, rise.astype(np.int64),
                             fall.astype(np.int64), self.token_starts[rise], self.token_ends[fall - 1], self.phrases)


def _rule_of(obj: Mapping, index: int, source: str, length: int) -> tuple[int, int, int]:
    """(rule, anchor code, tokens in the first line) of one record."""
    kind = obj.get("kind", "mcfp")
    blocks = obj.get("block_lengths", [])
    anchor = obj.get("anchor")

    def err(msg: str, key: str) -> PhraseSetError:
        return PhraseSetError(msg, source=source, index=index, key=key)

    if kind == "mcfp":
        return _RULE_ANY, 0, 0
    if kind != "block":
        raise err(f"kind={kind!r} must be 'mcfp' or 'block'", "kind")
    if anchor not in _ANCHOR:
        raise err(f"anchor={anchor!r} must be 'start', 'end' or absent", "anchor")
    if (not isinstance(blocks, list) or not all(isinstance(x, int) and x >= 1 for x in blocks)
            or sum(blocks) != length):
        raise err(f"block_lengths={blocks!r} must be positive line lengths summing to the {length} tokens",
                  "block_lengths")
    if len(blocks) == 1 and anchor is None:
        return _RULE_LINE, 0, blocks[0]
    if (len(blocks) == 2 and anchor is None) or (len(blocks) == 1 and anchor is not None):
        return _RULE_PAIR, _ANCHOR[anchor], blocks[0]
    raise err(f"block_lengths={blocks!r} with anchor={anchor!r}: block phrases span 1 line (optionally "
              "anchored) or 2 lines (not anchored)", "block_lengths")


TEMPLATE_SPAN_ID = "bloomspan:template"  # the phrase id mark mode gives a span found by template rules


def read_records(path: str | os.PathLike) -> list[dict]:
    """The JSON objects of a ``phrases.jsonl`` / ``templates.jsonl`` file, blank lines skipped;
    a line that is not JSON is a :class:`PhraseSetError` naming the file and line."""
    source = os.fspath(path)
    records = []
    with open(source, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise PhraseSetError(f"invalid JSON: {e.msg}", source=source, line=lineno) from None
    return records


def is_template_record(obj: Any) -> bool:
    """True for records only the template matcher understands (detector config, skeletons,
    line-anchored blocks, slotted phrases); a file with none of them is a plain phrase set."""
    return isinstance(obj, Mapping) and (obj.get("kind") in ("config", "skeleton", "line_shape", "block") or bool(obj.get("slots")))


def _scope_names(scopes: str | Sequence[str] | None) -> tuple[str, ...]:
    """A document's scopes as given to :meth:`TemplateMatcher.find_batch`: one, several or none."""
    return () if scopes is None else (scopes,) if isinstance(scopes, str) else tuple(scopes)


def template_scopes(site: str | None, url: str | None = None) -> list[str]:
    """The scopes a document belongs to for site-scoped records: its site, and ``site/<the
    first d folders of the URL path>`` for every d (the detector's sections use one depth;
    listing all of them lets the matcher find it without knowing which)."""
    if not site:
        return []
    out = [site]
    if url:
        from urllib.parse import urlsplit

        folders = [p for p in urlsplit(url).path.split("/") if p][:-1]
        out += [f"{site}/" + "/".join(folders[:d]) for d in range(1, len(folders) + 1)] or [f"{site}/"]
    return out


class TemplateMatcher:
    """Matcher for the records of a template detection (``TemplatePhrase.to_record``).

    records:        dicts as in ``phrases.jsonl`` (see :mod:`.phrase_set`) with the extra
                    keys ``kind``, ``block_lengths`` and ``anchor``; absent kind = "mcfp";
                    plus skeleton records and at most one config record (kind "config",
                    written first by the detector).
    run_min_length: tokens a chain of pair matches needs (TemplateConfig.run_min_length);
                    None: from the config record (4 without one).
    slots:          read number tokens of the text as the slot (TemplateConfig.slots); a
                    phrase set mined without slots holds literal numbers instead; None:
                    from the config record (True without one).
    match, min_length: how ``kind="mcfp"`` phrases match, as in
                    :class:`~bloomspan.ingest.matcher.PhraseMatcher` ("windows": by their
                    windows of ``min_length``, or of their own recorded ``min_length``).
    """

    def __init__(self, records: Sequence[Mapping[str, Any]], run_min_length: int | None = None,
                 slots: bool | None = None, *, source: str = "records", match: str = "windows",
                 min_length: int | None = None):
        records = list(records)
        self._given = (records, run_min_length, slots, source)
        configs = [r.get("template_config") for r in records if isinstance(r, Mapping) and r.get("kind") == "config"]
        if len(configs) > 1 or (configs and not isinstance(configs[0], Mapping)):
            raise PhraseSetError("expected at most one config record with a 'template_config' object", source=source)
        mined = configs[0] if configs else {}
        records = [r for r in records if not (isinstance(r, Mapping) and r.get("kind") == "config")]
        if run_min_length is None:
            run_min_length = mined.get("run_min_length", 4)
        if slots is None:
            slots = mined.get("slots", True)
        self.template_config = dict(mined)
        # Records written before the middle rule existed lack it: 0, matched as they were mined.
        self.middle_tokens = int(mined.get("middle_content_tokens", 0))
        self.middle_repeated = bool(mined.get("middle_repeated_lines", False))
        self.section_line_length = int(mined.get("section_line_length", 0))
        if not isinstance(run_min_length, int) or isinstance(run_min_length, bool) or run_min_length < 1:
            raise ValueError(f"run_min_length={run_min_length!r}: must be an integer >= 1")
        if not isinstance(slots, bool):
            raise ValueError(f"slots={slots!r}: must be True or False (as TemplateConfig.slots when mined)")
        self.skeletons: list[PageSkeleton] = []
        self.line_shapes: list[LineShapeModel] = []
        phrase_records = []
        for i, r in enumerate(records):
            if isinstance(r, Mapping) and r.get("kind") == "line_shape":
                try:
                    self.line_shapes.append(LineShapeModel.from_record(r, f"{source}: record {i + 1}"))
                except (ValueError, TypeError) as e:
                    raise PhraseSetError(str(e), source=source, line=i + 1) from None
            elif isinstance(r, Mapping) and r.get("kind") == "skeleton":
                try:
                    self.skeletons.append(PageSkeleton.from_record(r, f"{source}: record {i + 1}"))
                except (ValueError, TypeError) as e:
                    raise PhraseSetError(str(e), source=source, line=i + 1) from None
            else:
                phrase_records.append(r)
        records = phrase_records
        # A mining run's exact phrases (no "kind") next to the detector's records: on pages of
        # the sites the detector mined they apply only when the run says so (records written
        # before TemplateConfig.exact_phrases_on_sites existed: everywhere, as then).
        self.exact_on_sites = bool(mined.get("exact_phrases_on_sites", True))
        # An operator's allow entry (curation "allow") is not a mined phrase: it applies everywhere.
        self.is_exact = np.asarray([not (isinstance(r, Mapping) and ("kind" in r or r.get("curation") == "allow"))
                                    for r in records], dtype=bool)
        # Skeletons keyed by integer token ids: line keys at ingest are then built from id arrays.
        self._skeleton_token_ids = {t: i for i, t in enumerate(sorted(set().union(*(k.tokens() for k in self.skeletons))))}
        self._id_skeletons = [k.map_tokens(self._skeleton_token_ids.__getitem__) for k in self.skeletons]
        # The same ids as a vocabulary probe: a batch's distinct tokens map to them in one call.
        skeleton_tokens = list(self._skeleton_token_ids)
        self._skeleton_vocabulary = Vocabulary(capacity=max(len(skeleton_tokens), 1))
        self._skeleton_id_of = np.zeros(len(skeleton_tokens), dtype=np.uint32)
        self._skeleton_id_of[self._skeleton_vocabulary.ids_of(skeleton_tokens, add_new=True)] = np.arange(
            len(skeleton_tokens), dtype=np.uint32)
        # Skeletons per scope (None: every page), so each page looks up only its own scopes'.
        self._skeletons_of: dict[str | None, list[int]] = {}
        for k, sk in enumerate(self._id_skeletons):
            self._skeletons_of.setdefault(sk.scope, []).append(k)
        self.phrase_set = PhraseSet.from_records(records, source=source)
        self.slots = slots
        if not slots and any(SLOT_TOKEN in p.tokens for p in self.phrase_set):
            raise ValueError(f"slots=False but some phrases hold the slot token {SLOT_TOKEN!r}: they were mined "
                             "with slots; pass slots=True")
        self.length = np.asarray([p.length for p in self.phrase_set], dtype=np.int64)
        rules = [_rule_of(r, i, source, p.length) for i, (r, p) in enumerate(zip(records, self.phrase_set))]
        self.rule = np.asarray([r for r, _, _ in rules], dtype=np.int8)
        self.anchor = np.asarray([a for _, a, _ in rules], dtype=np.int8)
        self.first_line = np.asarray([f for _, _, f in rules], dtype=np.int64)
        self.n_lines = np.where(self.rule == _RULE_ANY, 0, 1 + (self.first_line < self.length)).astype(np.int64)
        self.run_min_length = run_min_length
        tokens = sorted({t for p in self.phrase_set for t in p.tokens} | {SLOT_TOKEN})
        self.vocabulary = Vocabulary(capacity=max(len(tokens), 1))
        ids = self.vocabulary.ids_of(tokens, add_new=True)
        symbol = dict(zip(tokens, (ids.astype(np.int64) + 1).tolist()))
        self.slot_symbol = symbol[SLOT_TOKEN]
        # Two automata: phrases holding the slot read the text with its numbers as the slot;
        # the others read it as it is, so an exact phrase with a literal number (a mining run's
        # "(c) 2024 acme") still matches only that number.
        slotted = [SLOT_TOKEN in p.tokens for p in self.phrase_set]
        self._slotted_index = np.asarray([i for i, f in enumerate(slotted) if f], dtype=np.int64)
        self._plain_index = np.asarray([i for i, f in enumerate(slotted) if not f], dtype=np.int64)
        patterns = [tuple(symbol[t] for t in p.tokens) for p in self.phrase_set]
        self.scope_ids = {s: i for i, s in enumerate(self.phrase_set.scopes)}
        # Scopes the detector has records for (phrases or skeletons): a run's exact phrases stand down there.
        self._mined_scopes = frozenset(self.scope_ids) | {k.scope for k in self.skeletons if k.scope is not None}
        self.phrase_scope = np.asarray([-1 if p.scope is None else self.scope_ids[p.scope] for p in self.phrase_set],
                                       dtype=np.int64)
        # Windows: mcfp phrases only (a block phrase is a whole line by definition).
        self.match, self.min_length = match, min_length
        self.window_length = np.where(self.rule == _RULE_ANY, window_lengths(self.phrase_set, match, min_length), 0)
        by_window = self.window_length > 0
        self._windows = []  # (WindowIndex, phrase indices, reads the slotted symbols)
        for length in np.unique(self.window_length[by_window]).tolist():
            for slotted_group in (False, True):
                members = np.flatnonzero((self.window_length == length)
                                         & (np.asarray(slotted, dtype=bool) == slotted_group)).astype(np.int64)
                if members.shape[0]:
                    index = build_window_index([patterns[i] for i in members.tolist()], int(length),
                                               self.phrase_scope[members].astype(np.int32))
                    self._windows.append((index, members, slotted_group))
        self._plain_index = self._plain_index[~by_window[self._plain_index]]
        self._slotted_index = self._slotted_index[~by_window[self._slotted_index]]
        self.automaton = build_automaton([patterns[i] for i in self._plain_index.tolist()])
        self.slot_automaton = build_automaton([patterns[i] for i in self._slotted_index.tolist()])

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike, run_min_length: int | None = None,
                   slots: bool | None = None) -> TemplateMatcher:
        """Load records from a ``phrases.jsonl`` file (blank lines skipped)."""
        source = os.fspath(path)
        return cls(read_records(source), run_min_length, slots, source=source)

    def __len__(self) -> int:
        return len(self.phrase_set)

    def matching(self, match: str, min_length: int | None = None) -> TemplateMatcher:
        """This matcher with mcfp phrases matched by ``match`` / ``min_length`` (itself when unchanged)."""
        if (match, min_length) == (self.match, self.min_length):
            return self
        records, run_min_length, slots, source = self._given
        return TemplateMatcher(records, run_min_length, slots, source=source, match=match, min_length=min_length)

    def find_match_results(self, texts: Sequence[str], scopes: Sequence[str | Sequence[str] | None] | None = None,
                           tokens: BatchTokens | None = None):
        """:meth:`find_batch` as :class:`~bloomspan.ingest.matcher.MatchResult` objects (what the
        :class:`~bloomspan.ingest.cleaner.Cleaner` consumes): one match per covered span, with
        phrase index ``len(self.phrase_set)`` (:data:`TEMPLATE_SPAN_ID` in the cleaner)."""
        from .matcher import MatchResult

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
        ``tokens``: the texts' tokens when the caller has them (:mod:`.batch_tokens`)."""
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
        words, ids, tok_off = tokens.words, tokens.ids, tokens.doc_offsets
        cstart, cend = tokens.char_starts, tokens.char_ends
        n_words = len(words)
        symbol_of = (words.ids_in(self.vocabulary) + np.uint32(1)).astype(np.int32)  # UNKNOWN + 1 wraps to 0
        sym = symbol_of[ids] if n_words else np.zeros(0, dtype=np.int32)
        is_number = vocabulary_number_mask(words) if self.slots else np.zeros(n_words, dtype=bool)
        slot_sym = None
        has_slotted = self._slotted_index.shape[0] or any(slotted for _, _, slotted in self._windows)
        if has_slotted and self.slots and n_words:
            slot_sym = np.where(is_number[ids], np.int32(self.slot_symbol), sym).astype(np.int32)
        line_start = tokens.line_starts.view(np.bool_)  # blocks.line_start_flags of each text
        m_start, m_end, m_idx = scan_symbols(self.automaton, sym, tok_off)
        m_idx = self._plain_index[m_idx]
        if slot_sym is not None:
            s_start, s_end, s_idx = scan_symbols(self.slot_automaton, slot_sym, tok_off)
            m_start, m_end = np.concatenate([m_start, s_start]), np.concatenate([m_end, s_end])
            m_idx = np.concatenate([m_idx, self._slotted_index[s_idx]])
        for index, members, slotted_group in self._windows:
            scanned = slot_sym if slotted_group else sym
            if scanned is None or not n_words:
                continue
            w_start, w_end, w_idx = index.find_runs(scanned, tok_off)
            m_start, m_end = np.concatenate([m_start, w_start]), np.concatenate([m_end, w_end])
            m_idx = np.concatenate([m_idx, members[w_idx]])
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        keep = self._keep(m_start, m_end, m_idx, m_doc, tok_off, line_start, scopes)
        m_start, m_end, m_idx, m_doc = m_start[keep], m_end[keep], m_idx[keep], m_doc[keep]
        is_pair = self.rule[m_idx] == _RULE_PAIR
        c_s, c_e, c_d, c_sc, c_ok = self._chains(m_start[is_pair], m_end[is_pair], m_doc[is_pair], m_idx[is_pair])
        repeated = self._repeated_lines(ids, is_number, line_start, tok_off) \
            if self.middle_tokens > 0 and self.middle_repeated else None
        if self.middle_tokens > 0:
            m_start, m_end, m_idx, m_doc, is_pair, chain_kept, c_ok = self._drop_middle(
                m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_ok, tok_off, scopes, repeated)
            c_s, c_e, c_d, c_sc = c_s[chain_kept], c_e[chain_kept], c_d[chain_kept], c_sc[chain_kept]
        prose = None
        if self.section_line_length > 0:
            prose = self._section_prose(m_start, m_end, m_idx, m_doc, is_pair, c_s, c_e, c_d, c_sc, tok_off,
                                        line_start, scopes)
        spans_s, spans_e, spans_d = [m_start[~is_pair]], [m_end[~is_pair]], [m_doc[~is_pair]]
        contributed = [m_idx[~is_pair]]
        spans_s.append(c_s)
        spans_e.append(c_e)
        spans_d.append(c_d)
        contributed.append(m_idx[is_pair][c_ok])
        s, e, dd = np.concatenate(spans_s), np.concatenate(spans_e), np.concatenate(spans_d)
        order = np.lexsort((s, dd))
        s, e, dd = s[order], e[order], dd[order]
        out_s, out_e, out_d, group = (np.empty(s.shape[0], dtype=np.int64) for _ in range(4))
        k = merge_spans(s, e, dd, out_s, out_e, out_d, group)
        out_s, out_e, out_d = out_s[:k], out_e[:k], out_d[:k]
        phr_doc = np.concatenate([m_doc[~is_pair], m_doc[is_pair][c_ok]])
        phr = np.concatenate(contributed)
        if prose is not None and prose.any():  # out of the spans, and a phrase matched only there contributed nothing
            cut = np.concatenate([[0], np.cumsum(prose)])
            p_s = np.concatenate([m_start[~is_pair], m_start[is_pair][c_ok]])
            p_e = np.concatenate([m_end[~is_pair], m_end[is_pair][c_ok]])
            left = (cut[p_e] - cut[p_s]) < (p_e - p_s)
            phr, phr_doc = phr[left], phr_doc[left]
            out_s, out_e, out_d = _spans_without(out_s, out_e, out_d, prose)
        results = []
        bounds = np.searchsorted(out_d, np.arange(len(texts) + 1))
        # Each text's contributing phrases, ascending and distinct: one sort for the batch.
        by_doc = np.lexsort((phr, phr_doc))
        phr, phr_doc = phr[by_doc].astype(np.int64), phr_doc[by_doc]
        first = np.ones(phr.shape[0], dtype=bool)
        first[1:] = (phr[1:] != phr[:-1]) | (phr_doc[1:] != phr_doc[:-1])
        phr, phr_doc = phr[first], phr_doc[first]
        phr_bounds = np.searchsorted(phr_doc, np.arange(len(texts) + 1)).tolist()
        # The spans' local token ranges and character offsets for the whole batch, then one slice per text.
        span_cs, span_ce = cstart[out_s], cend[out_e - 1]
        local_s, local_e = out_s - tok_off[out_d], out_e - tok_off[out_d]
        offs, bounds = tok_off.tolist(), bounds.tolist()
        for d in range(len(texts)):
            a, b, k0, k1 = offs[d], offs[d + 1], bounds[d], bounds[d + 1]
            results.append(TemplateMatch(b - a, cstart[a:b], cend[a:b], local_s[k0:k1], local_e[k0:k1], span_cs[k0:k1],
                                         span_ce[k0:k1], phr[phr_bounds[d]:phr_bounds[d + 1]]))
        if self.skeletons:
            results = self._apply_skeletons(scopes, results, line_start, tok_off, ids, words, is_number)
        if self.line_shapes:
            results = self._apply_line_shapes(scopes, results, line_start, tok_off, ids, words.tokens(), is_number)
        return results

    def _apply_line_shapes(self, scopes, results, line_start, tok_off, ids, names, is_number) -> list[TemplateMatch]:
        """Add what each page's line-shape models cover (mining's :func:`model_coverage`, on the
        batch's tokens with numbers read as the slot when ``slots``, as mined)."""
        n_tok = int(tok_off[-1])
        slot_id = len(names)  # every number token is the one slot token, as in mining
        tokens = np.where(is_number[ids], slot_id, ids).astype(np.int64) if self.slots and n_tok else \
            ids.astype(np.int64)
        id_of = {t: i for i, t in enumerate(names)}
        if self.slots:
            id_of[SLOT_TOKEN] = slot_id
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        ends = np.append(starts[1:], n_tok).astype(np.int64)
        doc_lines = np.searchsorted(starts, tok_off).astype(np.int64)
        mask = np.zeros(n_tok, dtype=bool)
        # The batch's pages per scope, once: each model then reads only its own pages' edge lines.
        pages_of: dict[str | None, list[int]] = {}
        for d in range(len(results)):
            if tok_off[d + 1] > tok_off[d]:
                for scope in (None, *_scope_names(scopes[d])):
                    pages_of.setdefault(scope, []).append(d)
        local = np.full(n_tok, -1, dtype=np.int32)  # filled at a model's edge tokens only, reset after
        for model in self.line_shapes:
            docs = pages_of.get(model.scope)
            if not docs:
                continue
            counts = np.asarray([doc_lines[d + 1] - doc_lines[d] for d in docs], dtype=np.int64)
            # the edge lines of each page and the line beside them, no others: zone_lines needs
            # to see that a page holds more lines than its edge (a shorter page has no zone)
            take = np.minimum(counts, model.edge_lines + 1)
            first = doc_lines[docs] if model.edge == "start" else doc_lines[np.asarray(docs) + 1] - take
            lines = (np.repeat(first, take) + np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take))
            page_lines = np.concatenate([[0], np.cumsum(take)]).astype(np.int64)
            lens = ends[lines] - starts[lines]
            at = np.repeat(starts[lines], lens) + np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            fixed_ids = np.asarray([id_of.get(t, -1) for t in model.fixed], dtype=np.int64)
            local[at] = local_indices(tokens[at], fixed_ids)
            mask[covered_positions(model, local, starts[lines], ends[lines], page_lines)] = True
            local[at] = -1
        if not mask.any():
            return results
        out = []
        for d, match in enumerate(results):
            a, b = int(tok_off[d]), int(tok_off[d + 1])
            if not mask[a:b].any():
                out.append(match)
                continue
            out.append(match.with_mask(match.token_mask() | mask[a:b]))
        return out

    def _apply_skeletons(self, scopes, results, line_start, tok_off, ids, words, is_number) -> list[TemplateMatch]:
        """Add the lines each page's skeleton covers (mining's walk, same kernel). ``ids`` are
        the batch's own token ids in its vocabulary ``words``, ``is_number`` its number tokens.
        Works on arrays: lines are token ranges of the batch, compared by hash
        (:meth:`PageSkeleton.cover_token_lines`)."""
        # Token -> the skeletons' integer id (a number token reads as the slot); a token no
        # skeleton holds gets an id of its own above theirs, so lines keep their identity for echoes.
        known = self._skeleton_token_ids
        n_known = len(known)
        n_words = len(words)
        number = known.get(SLOT_TOKEN, n_known + n_words)  # every number is one token, as in mining
        probe = words.ids_in(self._skeleton_vocabulary)
        found = probe != UNKNOWN
        as_id = np.arange(n_known, n_known + n_words, dtype=np.uint32)
        as_id[found] = self._skeleton_id_of[probe[found]]
        as_id[is_number] = number
        tokens = as_id[ids] if ids.shape[0] else np.zeros(0, dtype=np.uint32)
        n_tok = int(tok_off[-1])
        # Lines of the batch (no line crosses a document: each document's first token starts one).
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        ends = np.append(starts[1:], n_tok).astype(np.int64)
        doc_lines = np.searchsorted(starts, tok_off).astype(np.int64)  # (D+1,) line offsets per document
        # Tokens the phrases cover, and per line whether they cover at least half of it.
        diff = np.zeros(n_tok + 1, dtype=np.int64)
        if results:
            base = np.repeat(tok_off[:-1], [m.span_token_start.shape[0] for m in results])
            np.add.at(diff, np.concatenate([m.span_token_start for m in results]) + base, 1)
            np.add.at(diff, np.concatenate([m.span_token_end for m in results]) + base, -1)
        mask = np.cumsum(diff[:-1]) > 0
        lengths = ends - starts
        detected = flags_per_span(mask, starts, ends) * 2 >= lengths
        # Lines of numbers only read as lines of slots: no anchor, as in mining (slots on only).
        numbers = flags_per_span(is_number[ids] if ids.shape[0] else np.zeros(0, bool), starts, ends) == lengths
        # Each skeleton walks all the pages it applies to in one call.
        pages: dict[int, list[int]] = {}
        everywhere = self._skeletons_of.get(None, [])
        for d in range(len(results)):
            if tok_off[d + 1] == tok_off[d]:
                continue
            for scope in dict.fromkeys(_scope_names(scopes[d])):
                for k in self._skeletons_of.get(scope, ()) if scope is not None else ():
                    pages.setdefault(k, []).append(d)
            for k in everywhere:
                pages.setdefault(k, []).append(d)
        added = np.zeros(starts.shape[0], dtype=bool)
        for k, docs in pages.items():
            lines = np.concatenate([np.arange(doc_lines[d], doc_lines[d + 1]) for d in docs]).astype(np.int64)
            page_lines = np.concatenate([[0], np.cumsum([doc_lines[d + 1] - doc_lines[d] for d in docs])]).astype(np.int64)
            added[lines] |= self._id_skeletons[k].cover_token_lines(
                tokens, starts[lines], ends[lines], page_lines, detected[lines], numbers[lines])
        if not added.any():
            return results
        diff = np.zeros(n_tok + 1, dtype=np.int64)
        np.add.at(diff, starts[added], 1)
        np.add.at(diff, ends[added], -1)
        mask |= np.cumsum(diff[:-1]) > 0
        out = []
        for d, match in enumerate(results):
            a, b = int(tok_off[d]), int(tok_off[d + 1])
            if not added[doc_lines[d]:doc_lines[d + 1]].any():
                out.append(match)
                continue
            out.append(match.with_mask(mask[a:b]))
        return out

    def _repeated_lines(self, ids, is_number, line_start, tok_off) -> np.ndarray:
        """bool (W,): tokens of the lines that occur twice or more in their text (numbers read
        as one slot when ``slots``, as mined), for the middle rule's ``repeated``."""
        n_tok = int(tok_off[-1])
        if n_tok == 0:
            return np.zeros(0, dtype=bool)
        tokens = ids.astype(np.uint32)
        if self.slots:
            tokens = np.where(is_number[ids], np.uint32(is_number.shape[0]), tokens).astype(np.uint32)
        starts = np.flatnonzero(line_start[:n_tok]).astype(np.int64)
        offsets = np.append(starts, n_tok).astype(np.int64)
        types = block_types(tokens, offsets)[0]
        before, after, _ = echo_flags(types, np.searchsorted(tok_off, starts, side="right") - 1)
        return np.repeat(before | after, np.diff(offsets))

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
        site_scope = np.asarray([self.scope_ids.get(next(iter(_scope_names(sc)), None), -2) for sc in scopes],
                                dtype=np.int64)
        single = ~is_pair
        scope = self.phrase_scope[m_idx]
        section = (scope >= 0) & (scope != site_scope[m_doc]) & ~self.is_exact[m_idx]
        chain_section = (c_sc >= 0) & (c_sc != site_scope[c_d])

        def mask(s, e):
            diff = np.zeros(n + 1, dtype=np.int64)
            np.add.at(diff, s, 1)
            np.add.at(diff, e, -1)
            return np.cumsum(diff[:-1]) > 0
        weak = mask(np.concatenate([m_start[single & section], c_s[chain_section]]),
                    np.concatenate([m_end[single & section], c_e[chain_section]]))
        strong = mask(np.concatenate([m_start[single & ~section], c_s[~chain_section]]),
                      np.concatenate([m_end[single & ~section], c_e[~chain_section]]))
        exact = single & self.is_exact[m_idx]
        offsets = np.append(np.flatnonzero(line_start[:n]), n).astype(np.int64)
        # An exact phrase's tokens stay: mining's rule cuts the detector's coverage, not theirs.
        return section_only_long_lines(weak, strong, offsets, self.section_line_length) & ~mask(m_start[exact],
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
        template = ~is_pair & ~self.is_exact[m_idx]
        site_scope = np.asarray([self.scope_ids.get(next(iter(_scope_names(sc)), None), -2) for sc in scopes],
                                dtype=np.int64)
        scope = self.phrase_scope[m_idx]
        strong = (scope < 0) | (scope == site_scope[m_doc]) if len(scopes) else np.zeros(0, dtype=bool)
        pair_good = np.zeros(m_start.shape[0], dtype=bool)
        pair_good[np.flatnonzero(is_pair)[c_ok]] = True

        def mask(which):
            diff = np.zeros(n + 1, dtype=np.int64)
            np.add.at(diff, m_start[which], 1)
            np.add.at(diff, m_end[which], -1)
            return np.cumsum(diff[:-1]) > 0
        covered = mask(template | pair_good)
        middle = middle_runs(covered, tok_off, self.middle_tokens, mask((template | pair_good) & strong), repeated)
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
        rule = self.rule[m_idx]
        aligned = np.ones(m_start.shape[0], dtype=bool)
        lined = rule != _RULE_ANY
        # A block match is exactly its lines: starts at a line start, ends at a line end,
        # holds as many line starts as the phrase has lines, the second at its place.
        ls_count = np.concatenate([[0], np.cumsum(line_start)])
        s, e, i = m_start[lined], m_end[lined], m_idx[lined]
        second = np.minimum(s + self.first_line[i], max(n - 1, 0))
        aligned[lined] = (line_start[s] & line_end[e - 1] & (ls_count[e] - ls_count[s] == self.n_lines[i])
                          & ((self.n_lines[i] == 1) | line_start[second]))
        anchor = self.anchor[m_idx]
        aligned &= (anchor != 1) | (m_start == tok_off[m_doc])
        aligned &= (anchor != 2) | (m_end == tok_off[m_doc + 1])
        if not self.exact_on_sites and self.is_exact.any():
            mined_site = np.asarray([any(x in self._mined_scopes for x in _scope_names(sc)) for sc in scopes],
                                    dtype=bool)
            aligned &= ~(self.is_exact[m_idx] & mined_site[m_doc])
        ps = self.phrase_scope[m_idx]
        if not (ps >= 0).any():
            return aligned
        allowed = np.zeros((len(scopes), len(self.scope_ids)), dtype=bool)  # document x scope
        for d, sc in enumerate(scopes):
            for x in _scope_names(sc):
                if x in self.scope_ids:
                    allowed[d, self.scope_ids[x]] = True
        in_scope = (ps < 0) | allowed[m_doc, np.maximum(ps, 0)]
        return aligned & in_scope

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
        good = (out_e - out_s) >= self.run_min_length
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


def load_phrase_file(path: str | os.PathLike) -> tuple[PhraseSet, TemplateMatcher | None]:
    """A ``phrases.jsonl`` (``bloomspan mine``) or ``templates.jsonl`` (``bloomspan templates``):
    the phrase set, and a :class:`TemplateMatcher` when the file holds template records
    (:func:`is_template_record`), else None. Errors name the file and line."""
    source = os.fspath(path)
    has_templates = False
    with open(source, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if '"kind"' in line or '"slots"' in line:
                try:
                    if is_template_record(json.loads(line)):
                        has_templates = True
                        break
                except json.JSONDecodeError:
                    break  # PhraseSet.from_jsonl reports it with its line number
    if not has_templates:
        return PhraseSet.from_jsonl(source), None
    matcher = TemplateMatcher.from_jsonl(source)
    logger.info("loaded templates from %s: %d phrases, %d skeletons", source, len(matcher.phrase_set),
                len(matcher.skeletons))
    return matcher.phrase_set, matcher
