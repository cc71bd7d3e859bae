"""The pipeline's scopes (Python twin of its Painless state script) are the matcher's
``template_scopes``, and None where the cleaner refuses the document (the script itself is
compared with this twin on a real node in tests/integration/ingest/pipeline_export/test_pipeline_scoped.py)."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.engine.text.slots import number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.ingest.pipeline_export.scopes import document_scopes, line_repeats, repeats_a_line

URLS = ["https://a.example/docs/api/x.html", "https://a.example/", "https://a.example", "https://a.example/x",
        "https://a.example/docs/", "a.example/docs/x", "/docs/x", "//host/a/b/c", "  https://a.example/d/x",
        "https://a.ex\tample/d\n/x", "https://a.example/d/x?q=/e/f#/g/h", "https://a.example/d/x#frag/y",
        "mailto:x@y/z/w", "1http:/a/b/c", "ht+tp://h/a/b", "https://a.example//d//e/x", "", "?/a/b", "#/a/b/c",
        "H:/a/b/c"]


@pytest.mark.parametrize("url", URLS)
def test_scopes_of_chosen_urls_are_the_matchers(url):
    assert document_scopes("a.example", url) == template_scopes("a.example", url)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab:/?#.+- \t\n[]19Hé", max_size=24))
def test_scopes_of_any_url_are_the_matchers(url):
    try:
        expected = template_scopes("s.example", url)
    except ValueError:  # urlsplit refuses the URL: so does the cleaner, and so the pipeline
        expected = None
    got = document_scopes("s.example", url)
    if got is None and expected is not None:  # refused where the cleaner might be: only a bracketed host
        assert "[" in urlsplit(url).netloc or "]" in urlsplit(url).netloc
    else:
        assert got == expected


def test_no_site_no_scope_and_wrong_types_refuse_the_document():
    assert document_scopes(None, "https://a.example/d/x") == [] == template_scopes(None, "https://a.example/d/x")
    assert document_scopes("", "https://a.example/d/x") == []
    assert document_scopes("a.example", None) == ["a.example"]
    assert document_scopes(["a.example"], None) is None
    assert document_scopes("a.example", 7) is None
    assert document_scopes(None, 7) is None
    assert document_scopes("a.example", "https://[::1/a/b") is None
    assert document_scopes("a.example", "https://[::1]/a/b") is None  # a bracketed host is not validated: refused
    assert document_scopes("a.example", "https://[ab]/a/b") is None


def _matcher_repeats_a_line(text: str) -> bool:
    """The matcher's notion: two lines (runs of tokens between line breaks) with the same
    tokens, numbers read as one slot."""
    return _matcher_line_repeats(text) > 0


LINE_PARTS = ["Contact", "contact", "CONTACT", "Straße", "STRASSE", "ﬁle", "file", "Ｆile", "2024", "2031", "²",
              "x\u0306", "x̆", "·", " ", "—", "Σας", "σας", "İ", "i", "𝐀", "a", "中文"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINE_PARTS), max_size=4).map(" ".join), min_size=1, max_size=6))
def test_a_page_the_matcher_sees_repeating_a_line_repeats_one_for_the_pipeline(lines):
    text = "\n".join(lines)
    if _matcher_repeats_a_line(text):
        assert repeats_a_line(text), text


def _matcher_line_repeats(text: str) -> int:
    """The matcher's count: lines (runs of tokens between line breaks) whose tokens, numbers read as
    one slot, an earlier line has (each table-of-contents heading is one)."""
    vocab = Vocabulary()
    ids, offsets, starts, _ = encode_batch([text], vocab, True, count_df=False)
    names = vocab.tokens()
    number = number_token_mask(names) if names else []
    lines: dict[int, list] = {}
    for t, c in zip(ids.tolist(), starts.tolist()):
        lines.setdefault(text.count("\n", 0, c), []).append("<num>" if number[t] else names[t])
    keys = [tuple(v) for v in lines.values()]
    return len(keys) - len(set(keys))


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINE_PARTS), max_size=4).map(" ".join), min_size=1, max_size=8))
@example(["Contact", "contact 2024", "CONTACT", "Σας", "σας"])
def test_the_pipeline_counts_at_least_the_matchers_repeated_lines(lines):
    text = "\n".join(lines)
    assert line_repeats(text) >= _matcher_line_repeats(text), text
    assert repeats_a_line(text) is (line_repeats(text) > 0)


def test_line_repeats_counts_each_line_that_repeats_an_earlier_one():
    assert line_repeats("A\nB\nC\nbody\nA\nx\nB\ny\nC") == 3
    assert line_repeats("A\nA\nA") == 2 and line_repeats("") == 0 and line_repeats("---\n---") == 0


def test_repeats_a_line_reads_letters_only():
    assert repeats_a_line("Since: 3\nbody\nSince: 12") and repeats_a_line("2024\n2031")
    assert not repeats_a_line("Home | Shop\nContact\n---\n---") and not repeats_a_line("")
