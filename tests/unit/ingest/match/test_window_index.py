"""Window matching: every ``min_length`` window of a known phrase is found, merged into spans
with exact character offsets, scoped like its phrase, and strip stays idempotent."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.text.tokenizer import token_spans, tokenize
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.phrase_index import window_lengths
from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.match.window_index import (
    GLOBAL_SCOPE,
    build_window_index,
    window_cover_reference,
    window_runs_reference,
)
from bloomspan.ingest.records.phrase_set import PhraseSet

BANNER = "we use cookies to improve your experience read our cookie policy"


def _set(*records):
    return PhraseSet.from_records(list(records))


def _covered(text, m):
    return [text[a:b] for a, b in zip(m.span_char_start.tolist(), m.span_char_end.tolist())]


def test_a_banner_next_to_a_button_never_mined_is_found_by_its_windows_only():
    phrases = _set({"text": BANNER + " accept all", "min_length": 5}, {"text": BANNER + " read more here", "min_length": 5})
    page = "Top story.\n\nWe use cookies to improve your experience. Read our cookie policy! Decline everything\n\nEnd"
    assert PhraseMatcher(phrases).find(page).n_spans == 0  # whole phrases: neither button is there
    m = PhraseMatcher(phrases, match="windows").find(page)
    assert _covered(page, m) == ["We use cookies to improve your experience. Read our cookie policy"]
    assert m.covered_tokens == len(BANNER.split())


def test_min_length_overrides_the_recorded_one_and_shorter_phrases_match_whole():
    phrases = _set({"text": "a b c d e f", "min_length": 5}, {"text": "x y"})
    assert window_lengths(phrases, "windows").tolist() == [5, 0]
    assert window_lengths(phrases, "windows", 3).tolist() == [3, 0]  # "x y" is shorter than 3: whole
    assert window_lengths(phrases, "phrases", 3).tolist() == [0, 0]
    text = "q c d e q x y"
    assert _covered(text, PhraseMatcher(phrases, "windows").find(text)) == ["x y"]
    assert _covered(text, PhraseMatcher(phrases, "windows", min_length=3).find(text)) == ["c d e", "x y"]


def test_a_scoped_phrase_windows_apply_to_its_scope_only():
    phrases = _set({"text": "a b c d", "min_length": 2, "scope": "one.example"})
    matcher = PhraseMatcher(phrases, match="windows")
    assert matcher.find("z b c z", scope="one.example").covered_tokens == 2
    assert matcher.find("z b c z", scope="two.example").covered_tokens == 0
    assert matcher.find("z b c z").covered_tokens == 0


def test_a_window_shared_by_two_phrases_is_one_entry_attributed_to_the_first():
    index = build_window_index([(1, 2, 3), (9, 2, 3), (2, 3)], 2)
    assert index.n_entries == 3  # (1,2) (2,3) (9,2): (2,3) of the later phrases is the first one's
    start, end, pattern = index.find_runs(np.array([2, 3, 0, 9, 2], dtype=np.int32), np.array([0, 5]))
    assert list(zip(start.tolist(), end.tolist(), pattern.tolist())) == [(0, 2, 0), (3, 5, 1)]


def _runs(index, docs):
    sym = np.asarray([a for doc in docs for a in doc], dtype=np.int32)
    offsets = np.cumsum([0] + [len(doc) for doc in docs]).astype(np.int64)
    return list(zip(*(col.tolist() for col in index.find_runs(sym, offsets))))


def test_a_document_leaving_the_first_occurrence_of_a_window_is_still_followed_window_by_window():
    # (1 2) first occurs in pattern 0, followed there by 3; the page follows pattern 1 (1 2 4),
    # so the scan leaves the successor chain and must find (2 4) by its hash.
    patterns = [(1, 2, 3), (5, 1, 2, 4, 6)]
    index = build_window_index(patterns, 2)
    # windows by first occurrence: (1 2) (2 3) (5 1) (2 4) (4 6); (5 1) is followed by (1 2)
    assert index.window_next.tolist() == [1, -1, 0, 4, -1]
    docs = [[5, 1, 2, 4, 6, 0, 1, 2, 3, 1, 2, 4]]
    # (1 2) belongs to pattern 0 (its first holder), so pattern 1's windows at 0, 2, 3 are two runs
    assert _runs(index, docs) == window_runs_reference(patterns, 2, None, docs) == [
        (0, 2, 1), (1, 3, 0), (2, 5, 1), (6, 9, 0), (9, 11, 0), (10, 12, 1)]


_symbols = st.integers(1, 4)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(st.lists(_symbols, min_size=1, max_size=9).map(tuple), min_size=0, max_size=6),
       st.integers(1, 4), st.lists(st.sampled_from([GLOBAL_SCOPE, GLOBAL_SCOPE, 0, 1]), min_size=6, max_size=6),
       st.lists(st.booleans(), min_size=6, max_size=6),
       st.lists(st.lists(st.integers(0, 5), max_size=30), min_size=1, max_size=4))
def test_window_runs_kernel_equals_its_plain_twin(patterns, length, scopes, whole, docs):
    """Few symbols, so windows repeat inside and across patterns, first occurrences' successors
    differ from what the documents hold, and runs of one pattern overlap those of others;
    some patterns of exactly ``length`` symbols are matched whole."""
    scopes = scopes[:len(patterns)]
    whole = [w and len(p) == length for w, p in zip(whole, patterns)]
    index = build_window_index(patterns, length, np.asarray(scopes, dtype=np.int32), np.asarray(whole, dtype=bool))
    assert _runs(index, docs) == window_runs_reference(patterns, length, scopes, docs, whole)
    assert index.n_windows == len({p[j:j + length] for p in patterns for j in range(len(p) - length + 1)})


def test_a_whole_pattern_is_reported_at_every_occurrence_and_never_given_to_another():
    patterns = [(1, 1, 2), (1, 1), (1, 1)]  # pattern 0 holds (1 1) too; 1 and 2 are equal whole patterns
    index = build_window_index(patterns, 2, whole=np.array([False, True, True]))
    assert _runs(index, [[1, 1, 1, 2]]) == [(0, 2, 1), (0, 2, 2), (0, 4, 0), (1, 3, 1), (1, 3, 2)]
    with pytest.raises(ValueError, match="whole"):
        build_window_index([(1, 2, 3)], 2, whole=np.array([True]))


def test_mark_mode_names_the_phrase_whose_windows_matched():
    phrases = _set({"id": "banner", "text": BANNER, "min_length": 4})
    cleaner = Cleaner(phrases, CleanerConfig(fields=("body",), mode="mark", id_field=None))
    doc = {"body": "Hello. Improve your experience, read our cookie policy now."}
    spans = cleaner.clean(doc).doc["bloomspan"]["spans"]
    assert [(doc["body"][s["start"]:s["end"]], s["phrase_ids"]) for s in spans] == [
        ("Improve your experience, read our cookie policy", ["banner"])]


def test_cleaner_config_names_a_bad_match_mode_and_min_length():
    with pytest.raises(IngestConfigError, match="match"):
        CleanerConfig(fields=("body",), match="tokens")
    with pytest.raises(IngestConfigError, match="min_length"):
        CleanerConfig(fields=("body",), min_length=0)


def test_phrases_mode_of_the_cleaner_matches_whole_phrases_as_before():
    phrases = _set({"text": BANNER, "min_length": 4})
    doc = {"body": "Hello. Improve your experience, read our cookie policy now."}
    windows = Cleaner(phrases, CleanerConfig(fields=("body",), id_field=None)).clean(doc)
    whole = Cleaner(phrases, CleanerConfig(fields=("body",), id_field=None, match="phrases")).clean(doc)
    assert windows.covered_tokens == 7 and whole.covered_tokens == 0


def test_template_matcher_finds_windows_of_the_run_phrases_and_keeps_block_rules():
    records = [{"kind": "config", "template_config": {"run_min_length": 4, "slots": True}},
               {"text": BANNER, "min_length": 4},
               {"text": "home docs", "kind": "block", "block_lengths": [2], "slots": []}]
    text = "home docs\nImprove your experience, read our cookie policy\nhome docs again"
    windows = TemplateMatcher(records)  # adjacent spans merge: the line and the banner are one
    assert _covered(text, windows.find(text)) == ["home docs\nImprove your experience, read our cookie policy"]
    whole = windows.matching("phrases")
    assert _covered(text, whole.find(text)) == ["home docs"]  # "home docs again" is not the whole line


# -- the matcher against the definition ------------------------------------------------
_words = st.sampled_from(["a", "b", "c", "d", "Жук", "x1"])
_gaps = st.sampled_from([" ", ", ", ". ", "\n", " | ", " (", ") "])


@st.composite
def _corpus(draw):
    """Texts, phrases (some copied from the texts, so windows occur), a window length, scopes."""
    texts = []
    for _ in range(draw(st.integers(1, 4))):
        words = draw(st.lists(_words, min_size=0, max_size=30))
        gaps = draw(st.lists(_gaps, min_size=len(words), max_size=len(words)))
        texts.append("".join(w + g for w, g in zip(words, gaps)))
    toks = [tokenize(t) for t in texts]
    phrases = [tuple(tokenize(" ".join(draw(st.lists(_words, min_size=1, max_size=6)))))
               for _ in range(draw(st.integers(0, 3)))]
    for _ in range(draw(st.integers(0, 4))):
        source = draw(st.sampled_from(toks))
        if source:
            i = draw(st.integers(0, len(source) - 1))
            phrases.append(tuple(source[i:draw(st.integers(i + 1, min(len(source), i + 8)))]))
    phrases = sorted(set(phrases)) or [("a",)]
    scopes = [draw(st.sampled_from([None, None, "s1", "s2"])) for _ in phrases]
    doc_scopes = [draw(st.sampled_from([None, "s1", "s2"])) for _ in texts]
    return texts, phrases, scopes, doc_scopes, draw(st.integers(1, 4))


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_corpus())
def test_window_matcher_covers_exactly_the_tokens_the_definition_covers(case):
    texts, phrases, scopes, doc_scopes, length = case
    records = [{"tokens": list(p), "min_length": length, **({"scope": s} if s else {})} for p, s in zip(phrases, scopes)]
    matcher = PhraseMatcher(PhraseSet.from_records(records), match="windows")
    scope_id = {s: i for i, s in enumerate(sorted({s for s in scopes if s}))}
    pattern_scope = [GLOBAL_SCOPE if s is None else scope_id[s] for s in scopes]
    for text, doc_scope, m in zip(texts, doc_scopes, matcher.find_batch(texts, doc_scopes)):
        tokens, starts, ends = token_spans(text)
        expect = window_cover_reference(phrases, pattern_scope, tokens, length, scope_id.get(doc_scope, -2))
        mask = np.zeros(len(tokens), dtype=bool)
        for a, b in zip(m.span_token_start.tolist(), m.span_token_end.tolist()):
            mask[a:b] = True
        assert mask.tolist() == expect
        assert m.covered_tokens == sum(expect)
        # character offsets: first covered token's start to the last one's end, as for phrases
        for ts, te, cs, ce in zip(m.span_token_start.tolist(), m.span_token_end.tolist(),
                                  m.span_char_start.tolist(), m.span_char_end.tolist()):
            assert (cs, ce) == (starts[ts], ends[te - 1])


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_corpus(), st.booleans())
def test_window_matcher_equals_its_plain_twin_with_and_without_fixed_point(case, fixed_point):
    texts, phrases, scopes, doc_scopes, length = case
    records = [{"tokens": list(p), "min_length": length, **({"scope": s} if s else {})} for p, s in zip(phrases, scopes)]
    matcher = PhraseMatcher(PhraseSet.from_records(records), match="windows")
    for text, scope, fast in zip(texts, doc_scopes, matcher.find_batch(texts, doc_scopes, fixed_point=fixed_point)):
        slow = matcher.find_reference(text, scope, fixed_point=fixed_point)
        for name in ("span_token_start", "span_token_end", "span_char_start", "span_char_end", "span_gap_start",
                     "span_gap_end"):
            assert getattr(fast, name).tolist() == getattr(slow, name).tolist(), name
        assert fast.covered_tokens == slow.covered_tokens


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_corpus())
def test_phrases_matched_whole_among_windows_are_reported_as_the_automaton_reports_them(case):
    """Those of exactly ``length`` tokens are found by the window index, the shorter ones by
    the automaton: either way every occurrence, overlapping or not, of every equal phrase."""
    texts, phrases, scopes, doc_scopes, length = case
    records = [{"tokens": list(p), "min_length": length, **({"scope": s} if s else {})} for p, s in zip(phrases, scopes)]
    phrase_set = PhraseSet.from_records(records + [{**records[0], "id": "twin"}])  # an equal phrase twice
    windows = PhraseMatcher(phrase_set, match="windows")
    whole = PhraseMatcher(phrase_set, match="phrases")
    matched_whole = windows.window_length == 0

    def whole_matches(m):
        return [(s, e, p) for s, e, p in zip(m.match_start.tolist(), m.match_end.tolist(), m.match_phrase.tolist())
                if matched_whole[p]]

    for w, p in zip(windows.find_batch(texts, doc_scopes), whole.find_batch(texts, doc_scopes)):
        assert whole_matches(w) == whole_matches(p)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_corpus())
def test_strip_with_windows_is_idempotent(case):
    texts, phrases, _scopes, _doc_scopes, length = case
    ps = PhraseSet.from_records([{"tokens": list(p), "min_length": length} for p in phrases])
    cleaner = Cleaner(ps, CleanerConfig(fields=("body",), id_field=None, skip_missing=True))
    for text in texts:
        once = cleaner.clean({"body": text})
        assert once.ok
        twice = cleaner.clean({"body": once.doc["body"]})
        assert twice.doc["body"] == once.doc["body"]
        assert twice.covered_tokens == 0
        assert len(tokenize(once.doc["body"])) == once.n_tokens - once.covered_tokens
