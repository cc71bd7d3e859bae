"""The matcher core (ingest/match/phrase_index.py) that both matchers share: the template
matcher's spans for plain phrase records equal the phrase matcher's on the same texts, and
the core's scan equals the plain twins (the automaton's and the window index's references)."""
from __future__ import annotations

import numpy as np
import pytest

from bloomspan.ingest.match.automaton import find_matches_reference
from bloomspan.ingest.match.phrase_index import PhraseIndex, window_lengths
from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.match.window_index import window_runs_reference
from bloomspan.ingest.records.phrase_set import PhraseSet

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]


def _case(seed: int) -> tuple[list[dict], list[str]]:
    rng = np.random.default_rng(seed)
    records = []
    for _ in range(int(rng.integers(1, 6))):
        tokens = [WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(2, 7)))]
        record = {"tokens": tokens}
        if rng.random() < 0.6:
            record["min_length"] = int(rng.integers(2, 4))
        records.append(record)
    texts = []
    for _ in range(6):
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(0, 40)))]
        texts.append(" ".join(w.capitalize() if rng.random() < 0.2 else w for w in words) + ".")
    return records, texts


@pytest.mark.parametrize("seed", range(40))
def test_template_matcher_spans_equal_the_phrase_matcher_on_plain_phrases(seed):
    records, texts = _case(seed)
    phrases = PhraseMatcher(PhraseSet.from_records(records), match="windows")
    templates = TemplateMatcher(records, match="windows")
    assert templates.phrases.index.slotted is None  # no slot token: one stream
    for p, t in zip(phrases.find_batch(texts), templates.find_batch(texts)):
        assert p.span_char_start.tolist() == t.span_char_start.tolist()
        assert p.span_char_end.tolist() == t.span_char_end.tolist()


@pytest.mark.parametrize("seed", range(40))
def test_core_scan_equals_the_plain_twins(seed):
    records, texts = _case(seed)
    phrase_set = PhraseSet.from_records(records)
    length = window_lengths(phrase_set, "windows")
    index = PhraseIndex(phrase_set, length)
    symbol = {t: int(index.vocabulary.ids_of([t])[0]) + 1 for p in phrase_set for t in p.tokens}
    docs = [[symbol.get(w.strip(".").lower(), 0) for w in text.split()] for text in texts]
    sym = np.asarray([s for d in docs for s in d], dtype=np.int32)
    tok_off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    start, end, phrase = index.scan(sym, tok_off)
    found = sorted(zip(start.tolist(), end.tolist(), phrase.tolist()))
    patterns = [tuple(symbol[t] for t in p.tokens) for p in phrase_set]
    expected = set()
    whole = [i for i in range(len(patterns)) if length[i] == 0]
    base = 0
    for d in docs:  # whole phrases: every occurrence, as the automaton reports them
        expected |= {(base + s, base + e, whole[k]) for s, e, k in find_matches_reference([patterns[i] for i in whole], d)}
        base += len(d)
    for w in sorted(set(length.tolist()) - {0}):  # windowed phrases: runs of their windows
        members = [i for i in range(len(patterns)) if length[i] == w]
        runs = window_runs_reference([patterns[i] for i in members], w, None, docs)
        expected |= {(s, e, members[k]) for s, e, k in runs}
    # A whole phrase of exactly w tokens may be reported by the window index of w (as the
    # automaton reports it); a windowed phrase's window the index attributes to the first
    # pattern holding it: compare what the matches cover, phrase by phrase set.
    assert {(s, e) for s, e, _ in found} == {(s, e) for s, e, _ in expected}
