"""The skeleton set (engine/templates/skeleton_set.py): its segment lookup against the plain
twin, and its batched walk against each skeleton's plain walk (PageSkeleton.cover_pages)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.detector import TemplateConfig, detect_templates_in_texts
from bloomspan.engine.templates.page_skeleton import END_KEY, START_KEY, PageSkeleton
from bloomspan.engine.templates.skeleton_set import SkeletonSet, segment_lookup, segment_lookup_reference
from tests.unit.engine.templates.test_page_skeleton import apache_page, module_page


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.integers(0, 40), st.integers(-5, 50), max_size=12), min_size=1, max_size=5),
       st.data())
def test_segment_lookup_equals_plain_twin(tables, data):
    keys = [np.asarray(sorted(t), dtype=np.uint64) for t in tables]
    flat_keys = np.concatenate(keys).astype(np.uint64)
    flat_values = np.asarray([t[int(k)] for t, ks in zip(tables, keys) for k in ks], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([k.shape[0] for k in keys])]).astype(np.int64)
    n = data.draw(st.integers(0, 30))
    segment = np.asarray(data.draw(st.lists(st.integers(0, len(tables) - 1), min_size=n, max_size=n)), dtype=np.int64)
    query = np.asarray(data.draw(st.lists(st.integers(0, 45), min_size=n, max_size=n)), dtype=np.uint64)
    default = np.asarray(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    segment_lookup(flat_keys, flat_values, offsets, segment, query, default, out)
    assert out.tolist() == segment_lookup_reference(tables, segment, query, default).tolist()


def _words(line: str) -> tuple:
    return tuple(w.lower() for w in line.replace("|", " ").split())


@pytest.fixture(scope="module")
def skeletons_and_pages():
    """Three skeletons (two mined from two sites, one made by hand with prefix classes) in one
    integer token space, and lines of both sites' pages."""
    rng = np.random.default_rng(5)
    site_a = [module_page(i, rng)[0] for i in range(30)]
    site_b = [apache_page(i, [f"Topic {i} {k} alpha" for k in range(3 + i % 3)], rng)[0] for i in range(30)]
    out = detect_templates_in_texts(site_a + site_b, ["a"] * 30 + ["b"] * 30, config=TemplateConfig(slots=False))
    mined = [PageSkeleton.from_record(r) for r in out.records if r["kind"] == "skeleton"]
    assert {k.scope for k in mined} == {"a", "b"}
    home, langs, server = ("home",), ("available", "languages"), ("apache", "http", "server")
    made = PageSkeleton(scope="c", sigma=2, documents=10, anchor_lines=frozenset({home, ("quick", "search")}),
                        anchor_prefixes=frozenset({langs, server}), frequent_lines=frozenset({home}),
                        pairs=frozenset({(START_KEY, ("line", home)), (("line", home), ("prefix", langs)),
                                         (("prefix", langs), ("prefix", server)), (("prefix", server), END_KEY)}))
    crafted = [home, langs + ("en", "fr"), ("short", "gap"), server + ("version", "2"), ("content",) * 40]
    pages = [crafted] + [[_words(line) for line in p.split("\n")] for p in site_a[:6] + site_b[:6]]
    vocab = {t: i for i, t in enumerate(sorted({w for p in pages for line in p for w in line}
                                               | set().union(*(k.tokens() for k in [*mined, made]))))}
    skeletons = [k.map_tokens(vocab.__getitem__) for k in [*mined, made]]
    return skeletons, [[tuple(vocab[w] for w in line) for line in p] for p in pages]


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.data())
def test_batched_walk_equals_each_skeletons_plain_walk(skeletons_and_pages, data):
    skeletons, pages = skeletons_and_pages
    pages = data.draw(st.permutations(pages))
    detected = [[data.draw(st.booleans()) for _ in p] for p in pages]
    single = [[data.draw(st.booleans()) and not data.draw(st.booleans()) for _ in p] for p in pages]
    # every page walked by none, one or several skeletons (a page of a site and of its section)
    walks = [(p, k) for p in range(len(pages)) for k in range(len(skeletons)) if data.draw(st.booleans())]
    want = [np.zeros(len(p), dtype=bool) for p in pages]
    for p, k in walks:
        want[p] |= skeletons[k].cover_pages([pages[p]], [detected[p]], [single[p]])[0]
    flat = [t for p in pages for t in p]
    lengths = np.asarray([len(t) for t in flat], dtype=np.int64)
    ends = np.cumsum(lengths)
    tokens = np.asarray([x for t in flat for x in t], dtype=np.uint32)
    page_lines = np.concatenate([[0], np.cumsum([len(p) for p in pages])]).astype(np.int64)
    got = SkeletonSet(skeletons).cover_walks(
        tokens, ends - lengths, ends, page_lines, np.asarray([x for p in detected for x in p], dtype=bool),
        np.asarray([x for p in single for x in p], dtype=bool),
        np.asarray([p for p, _ in walks], dtype=np.int64), np.asarray([k for _, k in walks], dtype=np.int64))
    assert got.tolist() == np.concatenate(want).tolist()


def test_the_walks_cover_lines_and_none_without_walks(skeletons_and_pages):
    skeletons, pages = skeletons_and_pages
    flat = [t for p in pages for t in p]
    lengths = np.asarray([len(t) for t in flat], dtype=np.int64)
    ends = np.cumsum(lengths)
    tokens = np.asarray([x for t in flat for x in t], dtype=np.uint32)
    page_lines = np.concatenate([[0], np.cumsum([len(p) for p in pages])]).astype(np.int64)
    none = np.zeros(len(flat), dtype=bool)
    sset = SkeletonSet(skeletons)
    walks = np.arange(len(pages), dtype=np.int64)
    site_a = sset.cover_walks(tokens, ends - lengths, ends, page_lines, none, none, walks,
                              np.full(len(pages), [k.scope for k in skeletons].index("a"), dtype=np.int64))
    assert site_a[page_lines[1]:page_lines[7]].any()  # site a's pages: its navigation
    empty = np.zeros(0, dtype=np.int64)
    assert not sset.cover_walks(tokens, ends - lengths, ends, page_lines, none, none, empty, empty).any()
