"""Find every phrase of a :class:`PhraseSet` in documents in one pass (Aho–Corasick over token ids).

Pipeline for a batch of texts (:meth:`PhraseMatcher.find_batch`):

1. :func:`bloomspan.engine.text.tokenizer.encode_batch` (through :meth:`PhraseMatcher.tokenize`; the numba fast path of
   :func:`~bloomspan.engine.text.tokenizer.token_spans`: same tokens, same character offsets)
   tokenizes every text and maps tokens to ids of a frozen
   :class:`~bloomspan.engine.text.vocabulary.Vocabulary` holding the phrase tokens only.
   Symbol = id + 1 for the V phrase tokens (1..V); a token in no phrase is the sentinel 0,
   which resets the automaton to the root.
2. :func:`ac_scan` (numba) runs the automaton over all documents (reset at each document
   start) and reports every occurrence of every phrase as ``(start_token, end_token,
   phrase_index)``, end exclusive, overlaps included.
3. Matches of phrases scoped to another site are dropped; the rest, sorted, go through
   :func:`merge_spans`, which merges overlapping *or adjacent* token spans of one document.
4. A merged span ``[ts, te)`` maps to characters ``[starts[ts], ends[te - 1])``: from the
   first token's first character to the last token's last character, so the punctuation
   and whitespace between its tokens is inside, nothing before or after it.
5. With ``fixed_point=True`` (what the cleaner asks for) the spans are closed under
   removal: the automaton runs again over the tokens the spans leave (the token sequence a
   stripped text has, see :mod:`~bloomspan.ingest.clean.cleaner`), and a phrase found there — necessarily across
   the place where a span was cut out, since every other occurrence was found in step 2 —
   is covered too, from its first to its last token in the original text (the removed
   tokens between its parts are inside). Repeated until a pass finds nothing, so a
   stripped text holds no phrase of the set: stripping it again removes nothing. Each pass
   re-scans only the tokens left within reach of a junction the previous pass created (as
   many tokens on each side as the longest pattern holds, :func:`junction_segments`), not
   the whole text: every other stretch of the tokens left was scanned already.

Window matching (``match="windows"``, what the cleaner and the proxy use by default): a
phrase mined with ``min_length`` L is found wherever any run of L of its consecutive tokens
occurs, not only whole. Every such window is itself frequent (it occurs in every document
its phrase occurs in), so a banner whose neighbours differ from every mined page is still
known boilerplate. The windows are looked up in a hash index (:mod:`.window_index`);
overlapping window occurrences of one phrase are reported as one match (a *run*), so a
match's tokens are exactly the tokens its windows cover. Phrases with no known L (a
hand-written list), and phrases of at most L tokens, are matched whole: by the automaton,
or, for a phrase of exactly L tokens (its one window), by the window index of L, which
reports each of its occurrences as the automaton would, so the automaton is not run at all
when every phrase has its L.
Step 5 (``fixed_point``) applies to windows as to phrases: a stripped text holds no window.

The automaton (:class:`Automaton`) is a set of numpy arrays: a dense transition row for
the root, a CSR table of sorted transitions for the other states, failure links,
dictionary-suffix links and per-state outputs. Plain twins: :func:`find_matches_reference`
(scan), :func:`merge_spans_reference` (merge) and :meth:`PhraseMatcher.find_reference`
(the whole pipeline on :func:`~bloomspan.engine.text.tokenizer.token_spans`).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from bloomspan.engine.text.tokenizer import token_spans

from ..base.batch_tokens import BatchTokens, tokenize_batch
from ..records.phrase_set import PhraseSet
from .automaton import find_matches_reference
from .phrase_index import MATCH_MODES, PhraseIndex, window_lengths
from .scopes import GLOBAL_SCOPE, UNKNOWN_SCOPE
from .spans import MatchResult, merge_spans, merge_spans_reference, span_mask

logger = logging.getLogger(__name__)

__all__ = ["BATCH_CHARS", "MATCH_MODES", "MatchResult", "PhraseMatcher", "junction_segments", "window_lengths"]

BATCH_CHARS = 1 << 22  # characters per encode/scan round: bounds the token arrays


def junction_segments(left: np.ndarray, left_doc: np.ndarray, cut: np.ndarray, reach: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The stretches of the tokens left that a match across a new junction can lie in.

    ``left``: int64 (n,) sorted positions of the tokens a pass leaves, ``left_doc`` their
    documents; ``cut``: bool (W,) the tokens the pass's matches newly covered. A new junction
    lies between consecutive left tokens of one document with a cut token between them; a
    match holding both has at most ``reach`` tokens, so lies within ``reach - 1`` left tokens
    on either side. Returns ``picked``, int64 indices into ``left`` of the tokens within that
    reach of some new junction, and ``offsets``, int64 (S+1,) the bounds in ``picked`` of its
    stretches (consecutive left tokens of one document), each scanned as a document of its own."""
    n = left.shape[0]
    none = np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    if n < 2 or reach < 2:
        return none
    cut_before = np.concatenate([[0], np.cumsum(cut, dtype=np.int64)])
    same_doc = left_doc[1:] == left_doc[:-1]
    junction = np.flatnonzero(same_doc & (cut_before[left[1:]] > cut_before[left[:-1] + 1])) + 1
    if junction.shape[0] == 0:
        return none
    doc = left_doc[junction]
    lo = np.maximum(junction - (reach - 1), np.searchsorted(left_doc, doc, side="left"))
    hi = np.minimum(junction + (reach - 1), np.searchsorted(left_doc, doc, side="right"))
    inside = np.zeros(n + 1, dtype=np.int64)
    np.add.at(inside, lo, 1)
    np.add.at(inside, hi, -1)
    picked = np.flatnonzero(np.cumsum(inside[:-1]) > 0).astype(np.int64)
    starts = np.ones(picked.shape[0], dtype=bool)
    starts[1:] = (picked[1:] != picked[:-1] + 1) | (left_doc[picked[1:]] != left_doc[picked[:-1]])
    return picked, np.append(np.flatnonzero(starts), picked.shape[0]).astype(np.int64)


class PhraseMatcher:
    """Matcher for every phrase of ``phrase_set`` (built once, reused per batch).

    match:        "phrases" (whole phrases, the default of this class) or "windows" (every
                  window of :func:`window_lengths` tokens; module docstring).
    min_length:   window length for every phrase (None: each phrase's own ``min_length``).
    window_length: int64 (P,) window length per phrase (None: :func:`window_lengths` of
                  ``match`` / ``min_length``); 0 = matched whole.
    slot_token:   phrases holding it read the text with numbers as the slot: scanned by
                  :class:`~.template_matcher.TemplateMatcher`, which reads numbers; this
                  class's own :meth:`find_batch` does not look for them.
    index:        the :class:`~.phrase_index.PhraseIndex` (vocabulary, scopes, automaton and
                  window indices) every matcher shares; ``vocabulary``, ``scope_ids``
                  (scope string -> id) and ``phrase_scope`` (int32 (P,), GLOBAL_SCOPE for
                  unscoped phrases) are its.
    """

    def __init__(self, phrase_set: PhraseSet, match: str = "phrases", min_length: int | None = None, *,
                 window_length: np.ndarray | None = None, slot_token: str | None = None):
        self.phrase_set = phrase_set
        self.match = match
        if window_length is None:
            window_length = window_lengths(phrase_set, match, min_length)
        self.index = PhraseIndex(phrase_set, window_length, slot_token)
        self.window_length = self.index.window_length
        self.vocabulary = self.index.vocabulary
        self.scope_ids = self.index.scope_ids
        self.phrase_scope = self.index.phrase_scope
        plain = self.index.plain
        # The most tokens one match of the plain scan holds: a match across a junction lies within
        # this many tokens of it (``_close_under_removal``).
        phrase_length = np.fromiter((p.length for p in phrase_set), dtype=np.int64, count=len(phrase_set))
        self.reach = int(max([0, *phrase_length[plain.automaton_phrase].tolist(), *(w.length for w, _ in plain.windows)]))
        logger.debug("matcher: %d phrases (%d whole, %d by windows of %s tokens), %d symbols, %d states, %d windows",
                     len(phrase_set), plain.automaton_phrase.shape[0], len(phrase_set) - plain.automaton_phrase.shape[0],
                     [w.length for w, _ in plain.windows], self.index.n_symbols, plain.automaton.n_states,
                     sum(w.n_entries for w, _ in plain.windows))

    @property
    def nbytes(self) -> int:
        """Bytes held by the automaton and window indices (the vocabulary aside)."""
        return self.index.nbytes

    # The interface every matcher gives the cleaner (:class:`~bloomspan.ingest.clean.cleaner.Cleaner`).
    reads_url = False  # a document's scope is its site alone
    closed_under_removal = True  # find_match_results' spans are closed under removal: no second strip pass

    def tokenize(self, texts: Sequence[str]) -> BatchTokens:
        """The texts' tokens as :meth:`find_match_results` reads them: ids of this matcher's
        frozen phrase vocabulary (a token in no phrase is UNKNOWN), one probe per token; no line
        starts (phrases match anywhere)."""
        return tokenize_batch(texts, self.vocabulary, with_lines=False)

    @property
    def span_ids(self) -> list:
        """The id of each ``match_phrase`` index of the results (the phrase ids)."""
        return self.phrase_set.ids

    def document_scopes(self, site: str | None, url: str | None = None) -> str | None:
        """What :meth:`find_match_results` takes as a document's scope: its site."""
        return site

    def find_match_results(self, texts: Sequence[str], scopes: Sequence[str | None] | None = None,
                           tokens: BatchTokens | None = None) -> list[MatchResult]:
        """:meth:`find_batch` with ``fixed_point=True``: what the cleaner strips. ``tokens``: the
        texts' tokens when the caller has them (:mod:`~bloomspan.ingest.base.batch_tokens`), read
        as one round instead of encoding the texts again."""
        if tokens is None:
            return self.find_batch(texts, scopes, fixed_point=True)
        texts = list(texts)
        scopes = [None] * len(texts) if scopes is None else list(scopes)
        if len(scopes) != len(texts) or tokens.doc_offsets.shape[0] != len(texts) + 1:
            raise ValueError(f"{len(texts)} texts, {len(scopes)} scopes, tokens of {tokens.doc_offsets.shape[0] - 1} texts")
        return self._match_round(texts, scopes, True, self.index.symbols(tokens), tokens.doc_offsets,
                                 tokens.char_starts, tokens.char_ends)

    def _doc_scope(self, scope: str | None) -> int:
        return self.scope_ids.get(scope, UNKNOWN_SCOPE) if scope is not None else UNKNOWN_SCOPE

    def find(self, text: str, scope: str | None = None, fixed_point: bool = False) -> MatchResult:
        """Matches of one text (see :meth:`find_batch`)."""
        return self.find_batch([text], [scope], fixed_point=fixed_point)[0]

    def find_batch(self, texts: Sequence[str], scopes: Sequence[str | None] | None = None,
                   fixed_point: bool = False) -> list[MatchResult]:
        """Tokenize, match, merge and map to character offsets, for each text.

        ``scopes[d]`` is text d's scope: phrases scoped elsewhere are left out
        (None: only unscoped phrases apply). ``fixed_point``: close the spans under
        removal (module docstring, step 5). Texts are processed in rounds of about
        BATCH_CHARS characters.
        """
        texts = list(texts)
        scopes = [None] * len(texts) if scopes is None else list(scopes)
        if len(scopes) != len(texts):
            raise ValueError(f"scopes has {len(scopes)} entries for {len(texts)} texts")
        out: list[MatchResult] = []
        begin = 0
        while begin < len(texts):
            end, chars = begin, 0
            while end < len(texts) and (end == begin or chars + len(texts[end]) <= BATCH_CHARS):
                chars += len(texts[end])
                end += 1
            out.extend(self._find_round(texts[begin:end], scopes[begin:end], fixed_point))
            begin = end
        return out

    def _scan_scoped(self, sym: np.ndarray, tok_off: np.ndarray, doc_scope: np.ndarray | None):
        """Matches ``(start, end, index, doc)`` in ``sym`` whose phrase applies to their document
        (``doc_scope[d]``: the scope id of document d of ``tok_off``)."""
        m_start, m_end, m_idx = self.index.scan(sym, tok_off)
        m_doc = np.searchsorted(tok_off, m_start, side="right") - 1
        if doc_scope is not None and m_idx.shape[0]:
            ps = self.phrase_scope[m_idx]
            keep = (ps == GLOBAL_SCOPE) | (ps == doc_scope[m_doc])
            if not keep.all():
                m_start, m_end, m_idx, m_doc = m_start[keep], m_end[keep], m_idx[keep], m_doc[keep]
        return m_start, m_end, m_idx, m_doc

    def _close_under_removal(self, sym, tok_off, doc_scope, m_start, m_end, m_idx, m_doc):
        """Add the matches found across removed spans until none is left (step 5); returns
        the matches, sorted by (start, end, index), in the coordinates of ``sym``.

        Each pass scans only the tokens left near a new junction (:func:`junction_segments`):
        a match of the tokens left that lies within a stretch the pass's spans did not cut was
        a match of the previous pass's tokens already, found and covered then, so every new one
        holds the two tokens of a new junction and at most ``reach`` tokens in all."""
        n_docs = tok_off.shape[0] - 1
        tok_doc = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(tok_off))
        is_covered = np.zeros(sym.shape[0], dtype=bool)
        parts = [(m_start, m_end, m_idx, m_doc)]
        new_start, new_end, new_doc = m_start, m_end, m_doc
        while new_doc.shape[0]:
            was_covered = is_covered
            is_covered = was_covered | span_mask(new_start, new_end, sym.shape[0])
            changed = np.zeros(n_docs, dtype=bool)
            changed[new_doc] = True
            left = np.flatnonzero(~is_covered & changed[tok_doc])
            picked, seg_off = junction_segments(left, tok_doc[left], is_covered & ~was_covered, self.reach)
            if picked.shape[0] == 0:
                break
            seg_doc = tok_doc[left[picked[seg_off[:-1]]]]
            s, e, idx, d = self._scan_scoped(sym[left[picked]], seg_off,
                                             doc_scope[seg_doc] if doc_scope is not None else None)
            if s.shape[0] == 0:
                break
            at = left[picked]
            new_start, new_end, new_doc = at[s], at[e - 1] + 1, seg_doc[d]
            parts.append((new_start, new_end, idx, new_doc))
        if len(parts) == 1:
            return m_start, m_end, m_idx, m_doc
        m_start, m_end, m_idx, m_doc = (np.concatenate(col) for col in zip(*parts))
        order = np.lexsort((m_idx, m_end, m_start))
        return m_start[order], m_end[order], m_idx[order], m_doc[order]

    def _find_round(self, texts: list[str], scopes: list[str | None], fixed_point: bool = False) -> list[MatchResult]:
        tokens = self.tokenize(texts)
        return self._match_round(texts, scopes, fixed_point, self.index.symbols(tokens), tokens.doc_offsets,
                                 tokens.char_starts, tokens.char_ends)

    def _match_round(self, texts: list[str], scopes: list[str | None], fixed_point: bool, sym: np.ndarray,
                     tok_off: np.ndarray, cstart: np.ndarray, cend: np.ndarray) -> list[MatchResult]:
        """The results of one round from its phrase symbols ``sym`` (int32 (W,), 0: in no phrase),
        token offsets per text and character offsets per token."""
        n_docs = len(texts)
        if not sym.any():
            return [MatchResult.no_match(cstart[a:b], cend[a:b]) for a, b in zip(tok_off[:-1].tolist(), tok_off[1:].tolist())]
        doc_scope = np.fromiter(map(self._doc_scope, scopes), dtype=np.int32, count=n_docs) if self.scope_ids else None
        m_start, m_end, m_idx, m_doc = self._scan_scoped(sym, tok_off, doc_scope)
        if fixed_point and m_start.shape[0]:
            m_start, m_end, m_idx, m_doc = self._close_under_removal(sym, tok_off, doc_scope, m_start, m_end, m_idx, m_doc)
        m = m_start.shape[0]
        s_start, s_end, s_doc, group = (np.empty(m, dtype=np.int64) for _ in range(4))
        k = merge_spans(m_start, m_end, m_doc, s_start, s_end, s_doc, group)
        s_start, s_end, s_doc = s_start[:k], s_end[:k], s_doc[:k]
        # Everything per document is computed here for the whole round (relative to the
        # document's first token / first span), so the loop below only slices.
        doc_first, doc_stop = tok_off[:-1], tok_off[1:]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n_docs)
        doc_range = np.arange(n_docs + 1)
        m_bound = np.searchsorted(m_doc, doc_range)
        s_bound = np.searchsorted(s_doc, doc_range)
        s_cstart, s_cend = cstart[s_start], cend[s_end - 1]
        has_before = s_start > doc_first[s_doc]
        s_gstart = np.where(has_before, cend[np.maximum(s_start - 1, 0)], 0)
        has_after = s_end < doc_stop[s_doc]
        s_gend = np.where(has_after, cstart[np.minimum(s_end, max(len(cstart) - 1, 0))], lengths[s_doc])
        covered = np.bincount(s_doc, weights=s_end - s_start, minlength=n_docs).astype(np.int64).tolist()
        m_start, m_end = m_start - doc_first[m_doc], m_end - doc_first[m_doc]
        group = group - s_bound[m_doc]
        s_start, s_end = s_start - doc_first[s_doc], s_end - doc_first[s_doc]
        t_bound, m_bound, s_bound = tok_off.tolist(), m_bound.tolist(), s_bound.tolist()
        results = []
        for d in range(n_docs):
            a, b = t_bound[d], t_bound[d + 1]
            m0, m1, k0, k1 = m_bound[d], m_bound[d + 1], s_bound[d], s_bound[d + 1]
            if m0 == m1:
                results.append(MatchResult.no_match(cstart[a:b], cend[a:b]))
                continue
            results.append(MatchResult(
                b - a, covered[d], cstart[a:b], cend[a:b], m_start[m0:m1], m_end[m0:m1], m_idx[m0:m1],
                group[m0:m1], s_start[k0:k1], s_end[k0:k1], s_cstart[k0:k1], s_cend[k0:k1],
                s_gstart[k0:k1], s_gend[k0:k1],
            ))  # fmt: skip
        return results

    def find_reference(self, text: str, scope: str | None = None, fixed_point: bool = False) -> MatchResult:
        """Plain twin of :meth:`find`: token_spans, a dict lookup, the reference scan and merge
        (``fixed_point``: scan the tokens left by the spans again until nothing is found)."""
        tokens, starts, ends = token_spans(text)
        doc_scope = self._doc_scope(scope)
        # Windows mode: every window of a phrase is a pattern of its own, reported as the phrase.
        patterns, owner = [], []
        for p, (ph, w) in enumerate(zip(self.phrase_set, self.window_length.tolist())):
            w = w or ph.length
            patterns += [ph.tokens[j:j + w] for j in range(ph.length - w + 1)]
            owner += [p] * (ph.length - w + 1)

        def scan(toks: list) -> list[tuple[int, int, int]]:
            return sorted({(s, e, owner[k]) for s, e, k in find_matches_reference(patterns, toks)
                           if self.phrase_scope[owner[k]] in (GLOBAL_SCOPE, doc_scope)})

        found = scan(tokens)
        covered = {i for s, e, _ in found for i in range(s, e)}
        while fixed_point:
            left = [i for i in range(len(tokens)) if i not in covered]
            across = [(left[s], left[e - 1] + 1, p) for s, e, p in scan([tokens[i] for i in left])]
            if not across:
                break
            found = sorted(found + across)
            covered |= {i for s, e, _ in across for i in range(s, e)}
        merged = merge_spans_reference([(s, e) for s, e, _ in found])
        span_of = [next(k for k, (a, b) in enumerate(merged) if a <= s and e <= b) for s, e, _ in found]
        i64 = lambda xs: np.asarray(xs, dtype=np.int64).reshape(-1)  # noqa: E731
        n = len(tokens)
        return MatchResult(
            n_tokens=n,
            covered_tokens=sum(b - a for a, b in merged),
            token_starts=starts,
            token_ends=ends,
            match_start=i64([f[0] for f in found]),
            match_end=i64([f[1] for f in found]),
            match_phrase=np.asarray([f[2] for f in found], dtype=np.int32).reshape(-1),
            match_span=i64(span_of),
            span_token_start=i64([a for a, _ in merged]),
            span_token_end=i64([b for _, b in merged]),
            span_char_start=i64([starts[a] for a, _ in merged]),
            span_char_end=i64([ends[b - 1] for _, b in merged]),
            span_gap_start=i64([ends[a - 1] if a > 0 else 0 for a, _ in merged]),
            span_gap_end=i64([starts[b] if b < n else len(text) for _, b in merged]),
        )
