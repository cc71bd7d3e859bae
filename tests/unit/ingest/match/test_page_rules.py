"""The title-navigation cover's rule with each distinct token's facts computed once equals
mining's :func:`~bloomspan.engine.templates.title_nav.page_nav_lines` on the token strings."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.title_nav import (
    MAX_LINE_PIECES,
    NAV_WORDS,
    TitleNavModel,
    is_title_nav,
    key_pieces,
    line_key,
    line_pieces,
    page_nav_lines,
    token_key,
)
from bloomspan.ingest.match import page_rules
from bloomspan.ingest.match.page_rules import LineEdges, NameEdges, TitleNavCover, could_be_nav, page_nav_lines_of
from bloomspan.ingest.match.spans import TemplateMatch

# Nav words, glued runs of them, title pieces and other words, upper case and punctuation included.
TOKENS = ["prev", "next", "up", "home", "Chapter", "prevupchapter", "modelhomenext", "storage", "model", "install",
          "guide", "7.3", "configuring", "the", "network", "précédent", "suivant", "пред", "след", "w1", "w2", "»",
          "a", "Zurück", "nextinstall", "guidehome", "12", ""]
NAMES = frozenset({"storagemodel", "install", "guide", "73configuringthenetwork", "chapter12storagemodel",
                   "installation", "modelhome", "w1w2"})

# Lines of a few tokens, and now and then one of about MAX_LINE_PIECES (the rule's prose bound).
line_st = st.one_of(st.lists(st.sampled_from(TOKENS), max_size=7),
                    st.tuples(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4),
                              st.integers(MAX_LINE_PIECES // 4 - 2, MAX_LINE_PIECES // 4 + 1),
                              st.lists(st.sampled_from(["»", "", "|"]), max_size=3)).map(
                        lambda t: t[0] * t[1] + t[2]))
lines_st = st.lists(line_st, min_size=0, max_size=14)
LONG_NAV = ["home", "guide", "install"] * (MAX_LINE_PIECES // 3)  # exactly MAX_LINE_PIECES pieces: navigation


def _nav_lines_of(lines, names, edge):
    def line_pieces(i):
        return [key_pieces(token_key(t)) for t in lines[i]]
    return page_nav_lines_of(len(lines), lambda i: [token_key(t) for t in lines[i]], line_pieces, names, edge)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(lines=lines_st, edge=st.integers(1, 4), extra_names=st.lists(st.sampled_from(TOKENS), max_size=3))
def test_page_nav_lines_of_token_keys_and_pieces_equals_mining_rule(lines, edge, extra_names):
    names = NAMES | {line_key([t]) for t in extra_names}
    assert _nav_lines_of(lines, names, edge) == page_nav_lines(len(lines), lambda i: lines[i], names, edge)


def _line_edges(lines, names) -> LineEdges:
    """LineEdges of a page given as token strings, by plain scans (the cover's are its twins)."""
    def pieces(i):
        ps = line_pieces(lines[i])
        return (ps[0], ps[-1]) if ps else None
    def key_end(i, n):
        key = line_key(lines[i])
        return key[max(len(key) - n, 0):]
    return LineEdges(pieces, lambda i, n: line_key(lines[i])[:n], key_end, NameEdges(names))


@settings(derandomize=True, max_examples=400, deadline=None)
@given(lines=lines_st, edge=st.integers(1, 4), extra_names=st.lists(st.sampled_from(TOKENS), max_size=3))
def test_page_nav_lines_of_read_from_line_edges_equals_mining_rule(lines, edge, extra_names):
    names = NAMES | {line_key([t]) for t in extra_names}
    got = page_nav_lines_of(len(lines), lambda i: [token_key(t) for t in lines[i]],
                            lambda i: [key_pieces(token_key(t)) for t in lines[i]], names, edge, _line_edges(lines, names))
    assert got == page_nav_lines(len(lines), lambda i: lines[i], names, edge)


PIECES = sorted(NAV_WORDS)[:6] + ["storage", "model", "install", "guide", "7", "3", "configuring", "the", "network",
                                  "w1", "w2", "chapter12", "x", "installation", "home"]


def _own_tests(own):
    return (lambda p: any(k.startswith(p) for k in own)), (lambda p: any(k.endswith(p) for k in own))


@settings(derandomize=True, max_examples=1000, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=8),
       own=st.frozensets(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join), max_size=2))
def test_could_be_nav_refuses_only_lines_that_are_not_navigation(pieces, own):
    if is_title_nav(pieces, NAMES, own):
        assert could_be_nav(pieces[0], pieces[-1], NameEdges(NAMES), *_own_tests(own))


def test_could_be_nav_is_caught_without_its_navigation_words_or_own_titles():
    """Planted mistakes the property test above fails on: a first piece that is a navigation word,
    a last piece that ends a name only the page's own title holds."""
    nav, own_only = ["prev", "guide"], ["install", "w1w2"]
    assert is_title_nav(nav, NAMES, frozenset()) and is_title_nav(own_only, frozenset({"install"}), frozenset({"w1w2"}))
    edges = NameEdges(NAMES)
    assert not (edges.starts_one("prev") or any(n.startswith("prev") for n in NAMES))
    assert could_be_nav("prev", "guide", edges, *_own_tests(frozenset()))
    assert could_be_nav("install", "w1w2", NameEdges({"install"}), *_own_tests(frozenset({"w1w2"})))
    assert not could_be_nav("install", "w1w2", NameEdges({"install"}), *_own_tests(frozenset()))


def test_name_edges_bisect_as_a_scan_of_every_name():
    edges = NameEdges(NAMES)
    for p in {n[:k] for n in NAMES for k in range(1, len(n) + 1)} | {"zz", "a", "storagemodelx", ""}:
        assert edges.starts_one(p) == any(n.startswith(p) for n in NAMES), p
        assert edges.ends_one(p) == any(n.endswith(p) for n in NAMES), p


def test_a_line_of_max_pieces_is_navigation_one_more_keyed_token_is_not():
    for tail, want in (([], [4]), (["»", "|"], [4]), (["home"], []), (["prevhome"], [])):
        lines = [["title"], ["w0"], ["w1"], ["w2"], LONG_NAV + tail]
        assert _nav_lines_of(lines, NAMES, 1) == page_nav_lines(5, lambda i, lines=lines: lines[i], NAMES, 1) == want


def _reference_cover(model: TitleNavModel, pages: list[list[list[str]]]) -> list[list[int]]:
    return [page_nav_lines(len(p), lambda i, p=p: p[i], model.name_set, model.edge_lines) for p in pages]


def _batch(pages: list[list[list[str]]], vocab: list[str]):
    """The batch arrays TitleNavCover.cover reads: token ids into ``vocab``, line starts, offsets."""
    ids, line_start, tok_off = [], [], [0]
    for page in pages:
        for line in page:
            for k, t in enumerate(line):
                ids.append(vocab.index(t))
                line_start.append(k == 0)
        tok_off.append(len(ids))
    return (np.asarray(ids, dtype=np.int64), np.asarray(line_start, dtype=bool), np.asarray(tok_off, dtype=np.int64))


def _no_match(n: int) -> TemplateMatch:
    at, none = np.arange(n, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return TemplateMatch(n, at, at + 1, none, none, none, none, none)


def _covered_lines(match: TemplateMatch, page: list[list[str]]) -> list[int]:
    mask, out, at = match.token_mask(), [], 0
    for i, line in enumerate(page):
        if mask[at:at + len(line)].all():
            out.append(i)
        at += len(line)
    return out


@settings(derandomize=True, max_examples=150, deadline=None)
@given(pages=st.lists(st.lists(st.lists(st.sampled_from(TOKENS[:-1]), min_size=1, max_size=6), max_size=10),
                      min_size=1, max_size=5),
       shuffle=st.randoms(use_true_random=False))
def test_cover_covers_the_lines_mining_reports_across_batches(pages, shuffle):
    model = TitleNavModel(scope="s.example", names=tuple(sorted(NAMES)), edge_lines=2)
    cover = TitleNavCover([model])
    want = _reference_cover(model, pages)
    for _ in range(2):  # a second batch with other ids for the same strings: the string cache holds
        vocab = list(TOKENS[:-1])
        shuffle.shuffle(vocab)
        ids, line_start, tok_off = _batch(pages, vocab)
        empty = [_no_match(sum(map(len, p))) for p in pages]
        out = cover.cover(["s.example"] * len(pages), empty, line_start, tok_off, ids, vocab)
        assert [_covered_lines(m, p) for m, p in zip(out, pages)] == want


def test_the_token_cache_is_emptied_when_full(monkeypatch):
    monkeypatch.setattr(page_rules, "TOKEN_FACTS_MAX", 2)
    page = [["Home"], ["Home", "guide", "install"], ["w1"], ["w2"], ["prev", "guide"]]
    model = TitleNavModel(scope=None, names=tuple(sorted(NAMES)), edge_lines=2)
    cover = TitleNavCover([model])
    vocab = sorted({t for line in page for t in line})
    ids, line_start, tok_off = _batch([page], vocab)
    empty = [_no_match(len(ids))]
    for _ in range(2):
        out = cover.cover([None], empty, line_start, tok_off, ids, vocab)
        assert _covered_lines(out[0], page) == _reference_cover(model, [page])[0] == [1, 4]
        assert len(cover._keys) <= len(vocab) and len(cover._pieces) <= len(vocab)


def test_a_zone_line_whose_edges_hold_more_unkeyed_tokens_than_the_cover_peeks_at():
    pad = ["»"] * (page_rules.EDGE_PEEK + 1)
    page = [["title"], ["w0"], ["w1"], ["w2"], pad + ["prev", "guide"] + pad, pad]
    model = TitleNavModel(scope=None, names=tuple(sorted(NAMES)), edge_lines=2)
    vocab = sorted({t for line in page for t in line})
    ids, line_start, tok_off = _batch([page], vocab)
    out = TitleNavCover([model]).cover([None], [_no_match(len(ids))], line_start, tok_off, ids, vocab)
    assert _covered_lines(out[0], page) == _reference_cover(model, [page])[0] == [4]
