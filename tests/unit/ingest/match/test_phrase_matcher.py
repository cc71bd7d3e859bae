"""Aho–Corasick matcher: kernel vs plain twins, span merging, character offsets."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.base.batch_tokens import tokenize_batch
from bloomspan.ingest.match.automaton import ac_scan, build_automaton, find_matches_reference, scan_symbols
from bloomspan.ingest.match.phrase_matcher import PhraseMatcher, junction_segments
from bloomspan.ingest.match.spans import merge_spans, merge_spans_reference
from bloomspan.ingest.records.phrase_set import PhraseSet

_pattern = st.lists(st.integers(1, 4), min_size=1, max_size=5).map(tuple)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(_pattern, min_size=1, max_size=12), st.lists(st.integers(0, 5), max_size=60))
def test_kernel_equals_reference(patterns, sym):
    """Small alphabet: many overlaps, nested and duplicate patterns, sentinels (0) and
    symbols outside the automaton's alphabet (5 may be > V) in the text."""
    auto = build_automaton(patterns)
    start, end, idx = scan_symbols(auto, np.asarray(sym, dtype=np.int32))
    got = list(zip(start.tolist(), end.tolist(), idx.tolist()))
    assert got == find_matches_reference(patterns, sym)


def test_capacity_overflow_reruns_with_the_exact_count():
    patterns = [(1,) * k for k in range(1, 6)]
    sym = np.ones(200, dtype=np.int32)
    auto = build_automaton(patterns)
    a = auto
    small = np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int32)
    total = ac_scan(sym, np.array([0, 200]), a.root_goto, a.edge_ptr, a.edge_sym, a.edge_dst, a.fail, a.out_ptr, a.out_phrase,
                    a.dict_link, a.depth, *small)  # fmt: skip
    assert total == sum(200 - k + 1 for k in range(1, 6))
    start, end, idx = scan_symbols(auto, sym)
    assert len(start) == total
    assert list(zip(start.tolist(), end.tolist(), idx.tolist())) == find_matches_reference(patterns, sym.tolist())


def test_automaton_rejects_empty_or_sentinel_patterns():
    with pytest.raises(ValueError, match="pattern 1"):
        build_automaton([(1, 2), ()])
    with pytest.raises(ValueError, match="sentinel"):
        build_automaton([(1, 0)])


def test_automaton_arrays_are_consistent():
    auto = build_automaton([(1, 2, 3), (2, 3), (3,), (1, 2, 3)])
    assert auto.n_states == 7  # root, 1, 12, 123, 2, 23, 3
    assert auto.depth.max() == 3
    # every row sorted; dict_link of the deepest state points at a state with outputs
    for s in range(auto.n_states):
        row = auto.edge_sym[auto.edge_ptr[s]:auto.edge_ptr[s + 1]]
        assert np.all(np.diff(row) > 0)
    deepest = int(np.argmax(auto.depth))
    assert sorted(auto.out_phrase[auto.out_ptr[deepest]:auto.out_ptr[deepest + 1]].tolist()) == [0, 3]
    link = auto.dict_link[deepest]
    assert auto.out_ptr[link + 1] > auto.out_ptr[link] and auto.depth[link] == 2


_span = st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(1, 6)).map(lambda t: (t[0], t[1], t[1] + t[2]))


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(_span, max_size=25))
def test_merge_kernel_equals_reference(spans):
    """Spans of three documents: merged per document, never across a document boundary."""
    spans = sorted(spans)
    doc = np.asarray([d for d, _, _ in spans], dtype=np.int64)
    start = np.asarray([s for _, s, _ in spans], dtype=np.int64)
    end = np.asarray([e for _, _, e in spans], dtype=np.int64)
    m = len(spans)
    out_s, out_e, out_d, group = (np.empty(m, np.int64) for _ in range(4))
    k = merge_spans(start, end, doc, out_s, out_e, out_d, group)
    merged = list(zip(out_d[:k].tolist(), out_s[:k].tolist(), out_e[:k].tolist()))
    expected = [(d, s, e) for d in range(3) for s, e in merge_spans_reference([(s, e) for dd, s, e in spans if dd == d])]
    assert merged == expected
    for (d, s, e), g in zip(spans, group.tolist()):
        assert merged[g][0] == d and merged[g][1] <= s and e <= merged[g][2]
    # merged spans of one document are disjoint and not adjacent
    assert all(a[2] < b[1] for a, b in zip(merged, merged[1:]) if a[0] == b[0])


def _ps(*texts, scopes=None):
    scopes = scopes or [None] * len(texts)
    return PhraseSet.from_records([{"text": t, "id": f"id{i}", "scope": s} for i, (t, s) in enumerate(zip(texts, scopes))])


def test_char_spans_cover_first_to_last_token():
    text = "«Share  this,article» and more: READ MORE!"
    m = PhraseMatcher(_ps("share this article", "read more")).find(text)
    assert [text[s:e] for s, e in zip(m.span_char_start.tolist(), m.span_char_end.tolist())] == [
        "Share  this,article", "READ MORE"]  # fmt: skip
    assert m.span_phrases() == [[0], [1]]
    assert m.covered_tokens == 5 and m.n_tokens == 7


def test_overlapping_and_adjacent_matches_merge():
    text = "a b c d e f. g"
    m = PhraseMatcher(_ps("a b c", "b c d", "e f", "g")).find(text)
    # a..d overlap, e f is adjacent to d, g is adjacent to f: one span over everything
    assert m.span_token_start.tolist() == [0] and m.span_token_end.tolist() == [7]
    assert text[m.span_char_start[0]:m.span_char_end[0]] == text
    assert m.span_phrases() == [[0, 1, 2, 3]]


def test_tokens_outside_phrases_break_matches():
    m = PhraseMatcher(_ps("a b")).find("a x b, a b")
    assert m.match_start.tolist() == [3] and m.match_end.tolist() == [5]


def test_phrases_at_start_and_end_and_cyrillic():
    text = "Главная страница. Новости дня: всё хорошо. Все права защищены"
    m = PhraseMatcher(_ps("главная страница", "все права защищены")).find(text)
    spans = [text[s:e] for s, e in zip(m.span_char_start.tolist(), m.span_char_end.tolist())]
    assert spans == ["Главная страница", "Все права защищены"]
    assert m.span_char_start[0] == 0 and m.span_char_end[-1] == len(text)


def test_dotted_capital_i_matches_its_lowercase_token():
    text = "İstanbul haberleri"
    ps = PhraseSet.from_records([{"tokens": tokenize("İstanbul haberleri")}])
    m = PhraseMatcher(ps).find(text)
    assert (m.span_char_start.tolist(), m.span_char_end.tolist()) == ([0], [len(text)])


def test_scoped_phrases_apply_only_to_their_scope():
    ps = _ps("read more", "share this", scopes=["site-a", None])
    matcher = PhraseMatcher(ps)
    text = "read more share this"
    assert matcher.find(text, scope="site-a").match_phrase.tolist() == [0, 1]
    assert matcher.find(text, scope="site-b").match_phrase.tolist() == [1]
    assert matcher.find(text, scope=None).match_phrase.tolist() == [1]


def test_no_vocabulary_token_is_a_fast_no_match():
    m = PhraseMatcher(_ps("a b")).find("nothing to see here")
    assert m.n_spans == 0 and m.match_start.shape == (0,) and m.n_tokens == 4
    assert m.span_phrases() == []


_words = st.sampled_from(["a", "b", "c", "Жук", "жук", "ёж", "x1", "2024", "ΟΔΟΣ", "ΣΑΣ", "İstanbul"])
_gaps = st.sampled_from([" ", ", ", ". ", "\n", " - ", "—", "«", "» ", "\n\n"])


@st.composite
def _text_and_phrases(draw):
    words = draw(st.lists(_words, min_size=0, max_size=25))
    gaps = draw(st.lists(_gaps, min_size=len(words) + 1, max_size=len(words) + 1))
    lead = draw(st.booleans())
    text = (gaps[0] if lead else "") + "".join(w + g for w, g in zip(words, gaps[1:]))
    toks = tokenize(text)
    phrases = set()
    for _ in range(draw(st.integers(1, 5))):
        if toks and draw(st.booleans()):  # a phrase that occurs in the text
            i = draw(st.integers(0, len(toks) - 1))
            j = draw(st.integers(i + 1, min(len(toks), i + 4)))
            phrases.add(tuple(toks[i:j]))
        else:
            phrases.add(tuple(draw(st.lists(_words, min_size=1, max_size=3).map(lambda ws: tokenize(" ".join(ws))))))
    return text, sorted(phrases)


@settings(derandomize=True, max_examples=120, deadline=None)
@given(_text_and_phrases())
def test_find_equals_reference_and_spans_retokenize_to_their_phrases(case):
    text, phrases = case
    ps = PhraseSet.from_records([{"tokens": list(p)} for p in phrases])
    m = PhraseMatcher(ps).find(text)
    toks = tokenize(text)
    got = list(zip(m.match_start.tolist(), m.match_end.tolist(), m.match_phrase.tolist()))
    assert got == find_matches_reference([p.tokens for p in ps], toks)
    merged = merge_spans_reference([(s, e) for s, e, _ in got])
    assert list(zip(m.span_token_start.tolist(), m.span_token_end.tolist())) == merged
    for (cs, ce), phrase_ids in zip(zip(m.span_char_start.tolist(), m.span_char_end.tolist()), m.span_phrases()):
        span_toks = tokenize(text[cs:ce])
        # the span text starts and ends with a token and re-tokenizes to a sequence
        # covered, position by position, by occurrences of the span's phrases
        assert text[cs].isalnum() and text[ce - 1].isalnum()
        covered = [False] * len(span_toks)
        for p in phrase_ids:
            pt = list(ps[p].tokens)
            occ = [i for i in range(len(span_toks) - len(pt) + 1) if span_toks[i:i + len(pt)] == pt]
            assert occ, (pt, span_toks)
            for i in occ:
                covered[i:i + len(pt)] = [True] * len(pt)
        assert all(covered)


def test_matches_never_cross_document_boundaries():
    matcher = PhraseMatcher(_ps("read more", "more"))
    a, b, c = matcher.find_batch(["x read", "more y", ""])
    assert a.n_spans == 0
    assert b.match_phrase.tolist() == [1] and (b.span_char_start.tolist(), b.span_char_end.tolist()) == ([0], [4])
    assert c.n_tokens == 0 and c.n_spans == 0


def _same(got, want):
    for name in ("match_start", "match_end", "match_phrase", "match_span", "span_token_start", "span_token_end",
                 "span_char_start", "span_char_end", "token_starts", "token_ends"):  # fmt: skip
        assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
    assert got.n_tokens == want.n_tokens


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(_text_and_phrases(), min_size=1, max_size=6),
       st.lists(st.sampled_from([None, "s1", "s2"]), min_size=6, max_size=6))  # fmt: skip
def test_find_batch_equals_reference_pipeline(cases, scopes):
    texts = [t for t, _ in cases]
    phrases = sorted({p for _, ps in cases for p in ps})
    recs = [{"tokens": list(p), "scope": [None, "s1", "s2"][i % 3]} for i, p in enumerate(phrases)]
    matcher = PhraseMatcher(PhraseSet.from_records(recs))
    got = matcher.find_batch(texts, scopes[: len(texts)])
    for text, scope, g in zip(texts, scopes, got):
        _same(g, matcher.find_reference(text, scope))


def test_rounds_of_batch_chars_give_the_same_result(monkeypatch):
    import bloomspan.ingest.match.phrase_matcher as matcher_module

    texts = ["share this article now", "", "read more, read more!", "Share this. Article", "x" * 30 + " read more"]
    matcher = PhraseMatcher(_ps("share this article", "read more"))
    whole = matcher.find_batch(texts)
    monkeypatch.setattr(matcher_module, "BATCH_CHARS", 8)
    for g, w in zip(matcher.find_batch(texts), whole):
        _same(g, w)


def test_empty_phrase_set_matches_nothing():
    m = PhraseMatcher(PhraseSet([])).find("anything at all")
    assert m.n_tokens == 3 and m.n_spans == 0


def test_find_batch_checks_scopes_length():
    with pytest.raises(ValueError, match="scopes has 1 entries for 2 texts"):
        PhraseMatcher(_ps("a b")).find_batch(["a", "b"], [None])


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(_text_and_phrases(), min_size=1, max_size=6),
       st.lists(st.sampled_from([None, "s1", "s2"]), min_size=6, max_size=6))  # fmt: skip
def test_match_results_read_the_tokens_the_cleaner_carries(cases, scopes):
    """The cleaner hands every matcher the tokens of ``matcher.tokenize``: read in the phrase
    vocabulary (or a batch's own), they give what the matcher's own encoding gives."""
    texts = [t for t, _ in cases]
    scopes = scopes[: len(texts)]
    phrases = sorted({p for _, ps in cases for p in ps})
    recs = [{"tokens": list(p), "scope": [None, "s1", "s2"][i % 3]} for i, p in enumerate(phrases)]
    matcher = PhraseMatcher(PhraseSet.from_records(recs))
    want = matcher.find_batch(texts, scopes, fixed_point=True)
    own = matcher.tokenize(texts)
    assert own.words is matcher.vocabulary and len(matcher.vocabulary) == matcher.index.n_symbols  # nothing added
    for tokens in (own, tokenize_batch(texts)):
        for g, w, text, scope in zip(matcher.find_match_results(texts, scopes, tokens), want, texts, scopes):
            _same(g, w)
            _same(g, matcher.find_reference(text, scope, fixed_point=True))


def test_junction_segments_are_the_tokens_left_within_reach_of_a_new_junction():
    # 20 tokens of two documents (0..11, 12..19); the pass covered 4-5 (new) and 15; 9 was covered before.
    left = np.array([0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 16, 17, 18, 19], dtype=np.int64)
    left_doc = (left >= 12).astype(np.int64)
    cut = np.zeros(20, dtype=bool)
    cut[[4, 5, 15]] = True
    picked, offsets = junction_segments(left, left_doc, cut, reach=3)
    # junctions before 6 (left index 4) and before 16 (index 12); the old one before 10 is none;
    # two tokens on each side, clipped to the document
    assert left[picked].tolist() == [2, 3, 6, 7, 13, 14, 16, 17]
    assert offsets.tolist() == [0, 4, 8]
    near_end = junction_segments(left, left_doc, np.eye(20, dtype=bool)[9], reach=4)
    assert left[near_end[0]].tolist() == [6, 7, 8, 10, 11]  # three on each side, none of the next document
    assert junction_segments(left, left_doc, cut, reach=1)[0].shape[0] == 0  # a 1-token match straddles nothing


_word = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def _junction_corpus(draw):
    """Long texts of few words and phrases built to form across junctions (a removed middle and
    the words on both sides), some matched by windows, some whole, some scoped."""
    texts = [" ".join(draw(st.lists(_word, min_size=1, max_size=120))) for _ in range(draw(st.integers(1, 4)))]
    toks = [tokenize(t) for t in texts]
    phrases = set(tuple(draw(st.lists(_word, min_size=1, max_size=7))) for _ in range(draw(st.integers(0, 4))))
    for _ in range(draw(st.integers(0, 6))):
        t = toks[draw(st.integers(0, len(toks) - 1))]
        if len(t) < 4:
            continue
        i = draw(st.integers(0, len(t) - 4))
        j = draw(st.integers(i + 1, len(t) - 3))
        k = draw(st.integers(j + 1, min(len(t) - 1, j + 4)))
        phrases.add(tuple(t[j:k]))
        phrases.add(tuple(t[max(i, j - 3):j] + t[k:k + draw(st.integers(1, 3))]))
    phrases = sorted(phrases or {("a",)})
    records = [{"tokens": list(p), **({"min_length": draw(st.sampled_from([2, 3]))} if draw(st.booleans()) else {}),
                **({"scope": s} if (s := draw(st.sampled_from([None, None, "s1"]))) else {})} for p in phrases]
    return texts, records, [draw(st.sampled_from([None, "s1", "s2"])) for _ in texts]


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_junction_corpus(), st.sampled_from(["phrases", "windows"]))
def test_fixed_point_scanning_only_near_junctions_equals_the_full_fixed_point(case, match):
    """The fixed point re-scans only the tokens within reach of a new junction; the plain twin
    re-scans every token left: same spans, and (whole phrases) the same matches."""
    texts, records, scopes = case
    matcher = PhraseMatcher(PhraseSet.from_records(records), match=match)
    for got, text, scope in zip(matcher.find_batch(texts, scopes, fixed_point=True), texts, scopes):
        want = matcher.find_reference(text, scope, fixed_point=True)
        names = ["span_token_start", "span_token_end", "span_char_start", "span_char_end"]
        if match == "phrases":
            names += ["match_start", "match_end", "match_phrase", "match_span"]
        for name in names:
            assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
        assert got.covered_tokens == want.covered_tokens


def test_the_phrase_matchers_tokens_hold_no_line_starts():
    """Phrases match anywhere: PhraseMatcher.tokenize does not compute the line starts it never reads."""
    matcher = PhraseMatcher(_ps("a b"))
    tokens = matcher.tokenize(["a b\nc", "b"])
    assert tokens.line_starts is None and tokens.words is matcher.vocabulary
    assert matcher.find_match_results(["a b\nc", "b"], None, tokens)[0].covered_tokens == 2
