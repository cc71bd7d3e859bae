"""The pipeline's scopes (Python twin of its Painless state script) are the matcher's
``template_scopes``, and None where the cleaner refuses the document (the script itself is
compared with this twin on a real node in tests/integration/ingest/test_pipeline_scoped.py)."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.pipeline_scopes import document_scopes
from bloomspan.ingest.template_matcher import template_scopes

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
