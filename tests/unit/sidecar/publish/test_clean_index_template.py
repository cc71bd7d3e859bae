"""Clean-index templates without a cluster: pattern overlap, template names, the mappings."""
from __future__ import annotations

import re
from itertools import product

from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.publish.clean_index_template import document_mappings, globs_overlap, template_name

_pattern = st.text(alphabet="ab*", min_size=0, max_size=5)


def _names(max_len: int = 10):
    for n in range(max_len + 1):
        for chars in product("ab", repeat=n):
            yield "".join(chars)


NAMES = list(_names())


def _matches(pattern: str, name: str) -> bool:
    return re.fullmatch("".join(".*" if c == "*" else re.escape(c) for c in pattern), name) is not None


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_pattern, _pattern)
def test_overlap_equals_a_brute_force_search_for_a_common_name(a, b):
    # a common name, if any, needs at most the literal characters of both patterns (<= 10)
    common = any(_matches(a, n) and _matches(b, n) for n in NAMES)
    assert globs_overlap(a, b) == common == globs_overlap(b, a)


def test_overlap_examples():
    assert globs_overlap("crawl-*", "*")
    assert globs_overlap("crawl-*", "crawl-2024*")
    assert globs_overlap("crawl-*", "*-2024")
    assert not globs_overlap("crawl-*", "news-*")
    assert not globs_overlap("crawl-*", "crawl")


def test_template_names_are_valid_and_distinct_per_pattern():
    patterns = ["crawl-*", "crawl*", "Crawl-*", "crawl", "crawl-2024", "*", "a,b"]
    names = [template_name(p) for p in patterns]
    assert len(set(names)) == len(names)
    assert template_name("crawl") == "bloomspan-clean-crawl"
    for name in names:
        assert re.fullmatch(r"bloomspan-clean-[a-z0-9._-]+", name), name


def test_document_mappings_map_the_ratio_as_a_negative_rank_feature_and_the_derived_fields_as_text():
    m = document_mappings(["text", "title"])["properties"]
    assert m["bloomspan"]["properties"]["boilerplate_ratio"] == {"type": "rank_feature", "positive_score_impact": False}
    assert m["bloomspan"]["properties"]["fingerprint"]["type"] == "binary"
    assert m["bloomspan"]["properties"]["spans"] == {"type": "object", "enabled": False}
    for f in ("text_clean", "text_chunks", "title_clean", "title_chunks"):
        assert m[f] == {"type": "text"}
    assert "text" not in m  # the source field itself is the user's
