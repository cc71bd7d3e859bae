"""The matcher core: one vocabulary of phrase tokens, the phrases' scopes, and the automaton
and window indices that find them in a batch's symbols.

Every matcher is built on it: :class:`~.phrase_matcher.PhraseMatcher` (exact phrases) and,
through it, :class:`~.template_matcher.TemplateMatcher` (the template detector's records:
mcfp phrases, whole lines, line pairs, all in the same structure).

Symbols: a phrase token's vocabulary id + 1 (1..V); a token in no phrase is the sentinel 0,
which no pattern holds. A phrase is matched either whole or by its windows of L tokens
(:func:`window_lengths`): the phrases of one window length share a
:class:`~.window_index.WindowIndex`, which also holds the whole phrases of exactly L tokens
(their one window, reported as the automaton would report them); the other whole phrases go
into one :class:`~.automaton.Automaton`. One :class:`PatternScan` holds both for the phrases
that read one symbol stream; phrases holding the slot token (``slot_token``) read the text
with its numbers as the slot, so they form a second stream of their own.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.text.vocabulary import Vocabulary

from ..base.batch_tokens import BatchTokens
from ..records.phrase_set import PhraseSet
from .automaton import Automaton, build_automaton, scan_symbols
from .scopes import GLOBAL_SCOPE
from .window_index import WindowIndex, build_window_index

MATCH_MODES = ("windows", "phrases")


def window_lengths(phrase_set: PhraseSet, match: str = "windows", min_length: int | None = None) -> np.ndarray:
    """int64 (P,): the window length each phrase is matched by, 0 for "whole phrase".

    ``match="phrases"``: all 0. ``match="windows"``: ``min_length`` when given, else the
    phrase's own ``min_length`` (the run that mined it, :attr:`PhraseRecord.min_length`);
    a phrase with neither, or of fewer tokens than its window, is matched whole (0).
    """
    if match not in MATCH_MODES:
        raise ValueError(f"match={match!r}: must be one of {', '.join(MATCH_MODES)}")
    if min_length is not None and (not isinstance(min_length, int) or isinstance(min_length, bool) or min_length < 1):
        raise ValueError(f"min_length={min_length!r}: must be an integer >= 1 (the mining run's --min-length)")
    out = np.zeros(len(phrase_set), dtype=np.int64)
    if match == "phrases":
        return out
    for i, p in enumerate(phrase_set):
        w = min_length if min_length is not None else p.min_length
        if w is not None and p.length > w:
            out[i] = w
    return out


@dataclass(frozen=True)
class PatternScan:
    """The automaton and window indices of the phrases that read one symbol stream.

    automaton:         the phrases matched whole that no window index holds; its pattern k
                       is phrase ``automaton_phrase[k]`` (int64).
    windows:           one (WindowIndex, phrase indices int64) per window length L.
    """

    automaton: Automaton
    automaton_phrase: np.ndarray
    windows: tuple[tuple[WindowIndex, np.ndarray], ...]

    @classmethod
    def build(cls, patterns: Sequence[tuple[int, ...]], members: np.ndarray, window_length: np.ndarray,
              phrase_length: np.ndarray, phrase_scope: np.ndarray) -> PatternScan:
        """The scan of phrases ``members`` (int64) of ``patterns`` (symbol tuples of every phrase)."""
        whole = window_length == 0
        in_automaton = np.zeros(window_length.shape[0], dtype=bool)
        in_automaton[members] = whole[members]
        chosen = np.zeros(window_length.shape[0], dtype=bool)
        chosen[members] = True
        windows = []
        for length in np.unique(window_length[chosen & ~whole]).tolist():
            # A whole phrase of exactly L tokens is its only L-window: the index of L finds it.
            held = np.flatnonzero(chosen & ((window_length == length) | (whole & (phrase_length == length))))
            index = build_window_index([patterns[i] for i in held.tolist()], int(length), phrase_scope[held],
                                       whole[held])
            windows.append((index, held.astype(np.int64)))
            in_automaton[held] = False
        automaton_phrase = np.flatnonzero(in_automaton).astype(np.int64)
        return cls(build_automaton([patterns[i] for i in automaton_phrase.tolist()]), automaton_phrase, tuple(windows))

    @property
    def n_phrases(self) -> int:
        return int(self.automaton_phrase.shape[0]) + sum(int(m.shape[0]) for _, m in self.windows)

    @property
    def nbytes(self) -> int:
        a = self.automaton
        auto = sum(int(x.nbytes) for x in (a.root_goto, a.edge_ptr, a.edge_sym, a.edge_dst, a.fail, a.out_ptr,
                                           a.out_phrase, a.dict_link, a.depth))
        return auto + sum(w.nbytes + int(m.nbytes) for w, m in self.windows)

    def scan(self, sym: np.ndarray, tok_off: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(start, end, phrase)`` per structure (int64, int64, int32), each sorted by
        (start, end, phrase): the automaton's occurrences and each window index's runs."""
        parts = []
        if self.automaton_phrase.shape[0] or not self.windows:
            m_start, m_end, m_idx = scan_symbols(self.automaton, sym, tok_off)
            parts.append((m_start, m_end, self.automaton_phrase[m_idx].astype(np.int32)))
        for index, members in self.windows:
            w_start, w_end, w_idx = index.find_runs(sym, tok_off)
            parts.append((w_start, w_end, members[w_idx].astype(np.int32)))
        return parts


class PhraseIndex:
    """Vocabulary, scopes and scans of a phrase set (module docstring).

    vocabulary:    frozen :class:`Vocabulary` of the phrase tokens (and ``slot_token``); id i = symbol i + 1.
    scope_ids:     scope string -> scope id; phrase_scope: int32 (P,), GLOBAL_SCOPE for unscoped phrases.
    window_length: int64 (P,) window length of each phrase, 0 = matched whole.
    plain:         the :class:`PatternScan` of the phrases that read the text as it is.
    slotted:       the one of the phrases holding ``slot_token`` (None without one): they read
                   the text with its number tokens as the slot; ``slot_symbol`` is its symbol.
    """

    def __init__(self, phrase_set: PhraseSet, window_length: np.ndarray, slot_token: str | None = None):
        self.phrase_set = phrase_set
        self.window_length = np.asarray(window_length, dtype=np.int64)
        if self.window_length.shape != (len(phrase_set),):
            raise ValueError(f"window_length: one length per phrase ({len(phrase_set)}), got {self.window_length.shape}")
        tokens = {t for p in phrase_set for t in p.tokens}
        if slot_token is not None:
            tokens.add(slot_token)
        tokens = sorted(tokens)
        self.vocabulary = Vocabulary(capacity=max(len(tokens), 1))
        ids = self.vocabulary.ids_of(tokens, add_new=True)
        symbol = dict(zip(tokens, (ids.astype(np.int64) + 1).tolist()))
        self.n_symbols = len(tokens)
        self.slot_symbol = symbol[slot_token] if slot_token is not None else 0
        patterns = [tuple(symbol[t] for t in p.tokens) for p in phrase_set]
        self.scope_ids = {s: i for i, s in enumerate(phrase_set.scopes)}
        self.phrase_scope = np.fromiter((GLOBAL_SCOPE if p.scope is None else self.scope_ids[p.scope]
                                         for p in phrase_set), dtype=np.int32, count=len(phrase_set))
        phrase_length = np.fromiter((p.length for p in phrase_set), dtype=np.int64, count=len(phrase_set))
        slotted = np.fromiter((slot_token is not None and slot_token in p.tokens for p in phrase_set), dtype=bool,
                              count=len(phrase_set))
        self.is_slotted = slotted

        def scan_of(members: np.ndarray) -> PatternScan:
            return PatternScan.build(patterns, members, self.window_length, phrase_length, self.phrase_scope)
        self.plain = scan_of(np.flatnonzero(~slotted))
        self.slotted = scan_of(np.flatnonzero(slotted)) if slotted.any() else None

    @property
    def nbytes(self) -> int:
        """Bytes held by the automata and window indices (the vocabulary aside)."""
        return self.plain.nbytes + (self.slotted.nbytes if self.slotted is not None else 0)

    def symbols(self, tokens: BatchTokens) -> np.ndarray:
        """int32 (W,): the phrase symbol of each token of a batch (0: in no phrase): its id + 1 when
        the batch was tokenized with this index's vocabulary, else read once per distinct token of
        the batch's vocabulary (``tokens.words``), not per token."""
        # uint32 wrap-around: UNKNOWN (2**32 - 1) + 1 == 0, the sentinel; id i -> i + 1.
        if tokens.words is self.vocabulary:  # tokenized with the phrase vocabulary itself
            return (tokens.ids + np.uint32(1)).astype(np.int32)
        if len(tokens.words) == 0:
            return np.zeros(tokens.ids.shape[0], dtype=np.int32)
        symbol_of = (tokens.words.ids_in(self.vocabulary) + np.uint32(1)).astype(np.int32)
        return symbol_of[tokens.ids]

    def scan(self, sym: np.ndarray, tok_off: np.ndarray, slot_sym: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every match ``(start, end, phrase)`` (int64, int64, int32) in the symbols ``sym``
        of the documents ``tok_off`` (int64 (D+1,)), sorted by (start, end, phrase): one scan of
        each structure; the slotted phrases read ``slot_sym`` (the same tokens with numbers as
        the slot symbol; None: they are not looked for)."""
        parts = self.plain.scan(sym, tok_off)
        if self.slotted is not None and slot_sym is not None:
            parts += self.slotted.scan(slot_sym, tok_off)
        m_start, m_end, m_idx = parts[0]
        if len(parts) > 1:
            m_start, m_end, m_idx = (np.concatenate(col) for col in zip(*parts))
            order = np.lexsort((m_idx, m_end, m_start))
            m_start, m_end, m_idx = m_start[order], m_end[order], m_idx[order]
        return m_start, m_end, m_idx
