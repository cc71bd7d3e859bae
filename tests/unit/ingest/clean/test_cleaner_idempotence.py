"""Strip is idempotent: a stripped text holds no phrase of the set, not even one formed where
a span was cut out, so a second pass removes nothing."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.match.phrase_matcher import PhraseMatcher
from bloomspan.ingest.records.phrase_set import PhraseSet

# Few words, so phrases formed across a junction are frequent in generated cases.
_words = st.sampled_from(["a", "b", "c", "Жук", "x1", "ΟΔΟΣ"])
_gaps = st.sampled_from([" ", ", ", ". ", "\n", "\n\n", " | ", " (", ") ", " — ", "»", " 😀 ", "© ", " \x00 "])
_phrase = st.lists(_words, min_size=1, max_size=4).map(lambda ws: tuple(tokenize(" ".join(ws))))


@st.composite
def _case(draw):
    """A text and a phrase set: random phrases, windows of the text, and pairs that form a
    phrase only once a window between them is removed (the junction case)."""
    words = draw(st.lists(_words, min_size=1, max_size=40))
    gaps = draw(st.lists(_gaps, min_size=len(words), max_size=len(words)))
    text = "".join(w + g for w, g in zip(words, gaps))
    toks = tokenize(text)
    phrases = set(draw(st.lists(_phrase, min_size=0, max_size=3)))
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(toks) - 1))
        phrases.add(tuple(toks[i:draw(st.integers(i + 1, min(len(toks), i + 3)))]))
    for _ in range(draw(st.integers(0, 3))):
        if len(toks) < 3:
            break
        i = draw(st.integers(0, len(toks) - 3))
        j = draw(st.integers(i + 1, len(toks) - 2))
        k = draw(st.integers(j + 1, min(len(toks) - 1, j + 3)))
        phrases.add(tuple(toks[j:k]))  # removed, and
        phrases.add(tuple(toks[i:j] + toks[k:k + draw(st.integers(1, 2))]))  # formed across the junction
    return text, sorted(phrases or {("a",)})


def _strip(phrases, text, mode="strip"):
    ps = PhraseSet.from_records([{"tokens": list(p)} for p in phrases])
    return Cleaner(ps, CleanerConfig(fields=["body"], mode=mode, id_field=None)).clean({"body": text})


def test_a_phrase_formed_at_the_junction_is_removed_with_the_span_around_it():
    # "about us" + (cookie banner) + "contact": the footer interrupted by the banner is boilerplate too
    phrases = [("we", "use", "cookies"), ("about", "us", "contact")]
    first = _strip(phrases, "Great article.\n\nAbout us | we use cookies | Contact")
    assert first.doc["body"] == "Great article."
    assert first.covered_tokens == 6 and first.n_tokens == 8
    again = _strip(phrases, first.doc["body"])
    assert again.doc["body"] == first.doc["body"] and again.covered_tokens == 0


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_case())
def test_strip_twice_equals_strip_once_and_the_second_pass_covers_nothing(case):
    text, phrases = case
    once = _strip(phrases, text)
    assert once.ok
    twice = _strip(phrases, once.doc["body"])
    if not once.doc["body"]:
        assert twice.action == "error"  # an empty field is an error, as for any empty text
        return
    assert twice.doc["body"] == once.doc["body"]
    assert twice.covered_tokens == 0
    # the tokens that remain are exactly the original tokens not covered
    assert len(tokenize(once.doc["body"])) == once.n_tokens - once.covered_tokens


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_case())
def test_downweight_clean_copy_is_a_fixed_point_too(case):
    text, phrases = case
    down = _strip(phrases, text, mode="downweight")
    clean = down.doc["body_clean"]
    assert clean == _strip(phrases, text).doc["body"]
    if clean:
        assert _strip(phrases, clean).covered_tokens == 0


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(_case(), min_size=1, max_size=5))
def test_fixed_point_kernel_path_equals_the_plain_twin(cases):
    phrases = sorted({p for _, ps in cases for p in ps})
    matcher = PhraseMatcher(PhraseSet.from_records([{"tokens": list(p)} for p in phrases]))
    texts = [t for t, _ in cases]
    for got, text in zip(matcher.find_batch(texts, fixed_point=True), texts):
        want = matcher.find_reference(text, fixed_point=True)
        for name in ("match_start", "match_end", "match_phrase", "match_span", "span_token_start", "span_token_end",
                     "span_char_start", "span_char_end", "span_gap_start", "span_gap_end"):
            assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
        assert got.covered_tokens == want.covered_tokens


def test_with_template_records_the_stripped_text_is_a_fixed_point_and_the_extra_pass_counts():
    from bloomspan.ingest.match.template_matcher import TemplateMatcher

    records = [{"kind": "config", "template_config": {"run_min_length": 2, "slots": False}},
               {"tokens": ["we", "use", "cookies"], "kind": "mcfp"},
               {"tokens": ["about", "us", "contact"], "kind": "mcfp"}]
    cleaner = Cleaner(None, CleanerConfig(fields=("body",), id_field=None), templates=TemplateMatcher(records))
    first = cleaner.clean({"body": "Great article.\n\nAbout us | we use cookies | Contact"})
    assert first.doc["body"] == "Great article."
    assert (first.covered_tokens, first.n_tokens) == (6, 8)  # the pass after the first one counts too
    again = cleaner.clean({"body": first.doc["body"]})
    assert again.doc["body"] == first.doc["body"] and again.covered_tokens == 0


_TEMPLATE_RECORDS = [{"kind": "config", "template_config": {"run_min_length": 2, "slots": True}},
                     {"tokens": ["we", "use", "cookies"], "kind": "mcfp"},
                     {"tokens": ["about", "us", "contact"], "kind": "mcfp"},
                     {"tokens": ["home", "<num>"], "kind": "mcfp", "slots": [1]},
                     {"tokens": ["skip", "to", "content"], "kind": "block", "block_lengths": [3]},
                     {"tokens": ["about", "us"], "kind": "block", "block_lengths": [2]}]
_template_words = st.sampled_from(["we", "use", "cookies", "about", "us", "contact", "home", "2024", "skip", "to",
                                   "content", "great", "¼", "Straße"])
_template_gap = st.sampled_from([" ", " | ", "\n", "\n\n", ". ", ", ", " (", ") "])


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(_template_words, _template_gap), min_size=1, max_size=14)
                .map(lambda ps: "".join(w + g for w, g in ps)), min_size=1, max_size=5))
def test_template_passes_on_carried_tokens_equal_tokenizing_every_pass(bodies):
    """The cleaner derives each later pass's tokens from the first pass's (ingest/base/batch_tokens.py);
    the result is what matching every stripped text afresh gives."""
    from bloomspan.ingest.clean.cleaner import strip_spans
    from bloomspan.ingest.match.template_matcher import TemplateMatcher

    matcher = TemplateMatcher(_TEMPLATE_RECORDS)
    cleaner = Cleaner(None, CleanerConfig(fields=("body",), id_field=None), templates=matcher)
    results = cleaner.clean_batch([{"body": b} for b in bodies])
    for body, res in zip(bodies, results):
        text, covered = body, 0
        m = matcher.find_match_results([text])[0]
        while m.n_spans:
            text, covered = strip_spans(text, m), covered + m.covered_tokens
            m = matcher.find_match_results([text])[0]
        assert res.doc["body"] == text
        assert res.covered_tokens == covered
