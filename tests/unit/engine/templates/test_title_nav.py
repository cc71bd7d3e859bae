"""Title navigation: made-up bar and breadcrumb shapes, a page's own title kept, the records, and
the cleaner covering exactly what mining reported (and the same lines on a page it never saw)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.config import ConfigError, TemplateConfig
from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.engine.templates.title_nav import (
    NAV_WORDS,
    TitleNavModel,
    is_title_nav,
    key_pieces,
    line_key,
    line_pieces,
    page_nav_lines,
    token_key,
    token_pieces,
)
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.ingest.match.template_matcher import TemplateMatcher


def toks(line: str) -> list[str]:
    vocab = Vocabulary()
    ids, _ = encode_batch([line], vocab)
    return [vocab.token(int(i)) for i in ids]


def names_of(*titles: str) -> frozenset[str]:
    return frozenset(line_key(toks(t)) for t in titles)


SITE_TITLES = names_of("Chapter 12. Storage Model", "7.3. Configuring the Network", "Guide", "Install",
                       "Installation", "Configuration", "Установка", "Настройка")


@pytest.mark.parametrize("line", [
    "PrevUpChapter 12. Storage ModelHomeNext",
    "Prev 7.3. Configuring the Network",
    "Next: 7.3. Configuring the Network",
    "Home / Guide / Install",
    "Guide » Install",
    "Précédent Installation Suivant Configuration",
    "Пред. Установка След. Настройка",
    "Zurück Installation Weiter",
])
def test_a_line_of_other_pages_titles_and_nav_words_is_navigation(line):
    assert is_title_nav(line_pieces(toks(line)), SITE_TITLES, frozenset({"somethingelse"}))


@pytest.mark.parametrize("line", [
    "Chapter 12. Storage Model",            # another page's title alone: a heading, content
    "Prev 7.3. Configuring the Network now",  # a word that is neither a title nor a nav word
    "Next Previous Home",                   # navigation words only: no title (other rules judge it)
    "The Storage Model is configured",
    "",
])
def test_other_lines_are_not_title_navigation(line):
    assert not is_title_nav(line_pieces(toks(line)), SITE_TITLES, frozenset())


def test_a_line_naming_only_the_page_itself_is_not_navigation():
    own = names_of("Install")
    assert not is_title_nav(line_pieces(toks("Home / Install")), SITE_TITLES, own)
    assert is_title_nav(line_pieces(toks("Home / Guide / Install")), SITE_TITLES, own)


def test_nav_words_glued_to_a_token_are_split_off():
    assert token_pieces("prevupchapter") == ["prev", "up", "chapter"]
    assert token_pieces("modelhomenext") == ["model", "home", "next"]
    assert token_pieces("storage") == ["storage"]
    assert token_pieces("next") == ["next"]
    assert {"prev", "next", "up", "home", "précédent", "suivant", "пред", "след", "zurück", "weiter",
            "anterior", "siguiente"} <= NAV_WORDS


def test_only_edge_lines_and_never_the_first_line():
    lines = [toks(t) for t in ["My Page", "Prev Guide", "body one", "body two", "Prev Guide", "body three",
                               "body four", "Next Install"]]
    got = page_nav_lines(len(lines), lines.__getitem__, SITE_TITLES)
    assert got == [1, 7]  # line 4 is in the middle of the page: content
    lines[0] = lines[7] = toks("Prev Guide")  # the first line and one like it are the page's own title
    assert page_nav_lines(len(lines), lines.__getitem__, SITE_TITLES) == []
    short = lines[:3]
    assert page_nav_lines(len(short), short.__getitem__, SITE_TITLES) == []  # no zone: all edge


title_words = st.sampled_from(["storage", "model", "next", "prev", "guide", "install", "home", "7", "3",
                               "network", "chapter", "up"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(title_words, min_size=1, max_size=4), min_size=2, max_size=8), st.integers(0, 7),
       st.integers(0, 3))
def test_a_pages_own_title_line_is_never_removed(titles, which, body_lines):
    names = frozenset(line_key(t) for t in titles)
    page = titles[which % len(titles)]
    lines = [page] + [titles[(which + k + 1) % len(titles)] + ["prev"] for k in range(3)] + \
        [["body", "w"]] * body_lines + [page, list(page)]
    got = page_nav_lines(len(lines), lines.__getitem__, names)
    assert 0 not in got
    assert not any(line_key(lines[i]) == line_key(page) for i in got)


def docbook_site(n: int, seed: int, site: str = "docs.example") -> list[dict]:
    """Pages that open with their title, then a breadcrumb of chapter titles and a
    "PrevUp<chapter>HomeNext" bar, and close with "Prev <previous title>"."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    titles = [f"{i // 5 + 1}.{i % 5}. " + " ".join(rng.choice(words[:100]).title() for _ in range(2))
              for i in range(n)]
    pages = []
    for p in range(n):
        body = "\n".join(" ".join(rng.choice(words[100:]) for _ in range(12)) for _ in range(6))
        chapter = titles[p // 5 * 5]
        pages.append({"text": f"{titles[p]}\nHome / {chapter} / {titles[p]}\nPrevUp{chapter}HomeNext\n{body}\n"
                              f"Prev {titles[p - 1]}",
                      "site": site, "url": f"https://{site}/book/{p}.html"})
    return pages


NAV_ONLY = dict(skeleton=None, line_shape_gap=0, scoped_min_length=None)  # the title rule alone


def _run(pages, **config):
    texts = [p["text"] for p in pages]
    return texts, detect_templates_in_texts(texts, [p["site"] for p in pages], [p["url"] for p in pages],
                                            TemplateConfig(**config))


def test_the_detector_finds_the_bars_and_the_cleaner_covers_exactly_that():
    pages = docbook_site(30, 1) + docbook_site(20, 2, "other.example")
    texts, run = _run(pages, **NAV_ONLY)
    kinds = [r for r in run.records if r.get("kind") == "title_nav"]
    assert {r["scope"] for r in kinds} == {"docs.example", "other.example"}
    records = [json.loads(json.dumps(r)) for r in run.records]  # as read back from templates.jsonl
    found = TemplateMatcher(records).find_batch(texts, [template_scopes(p["site"], p["url"]) for p in pages])
    offsets = np.concatenate([[0], np.cumsum([m.n_tokens for m in found])])
    for d, m in enumerate(found):
        assert m.token_mask().tolist() == run.detection.coverage[offsets[d]:offsets[d + 1]].tolist(), f"page {d}"
    for d, (page, m) in enumerate(zip(pages, found)):
        lines = page["text"].split("\n")
        covered = [page["text"][a:b] for a, b in zip(m.span_char_start.tolist(), m.span_char_end.tolist())]
        assert int(m.span_char_start[0]) > len(lines[0]), f"page {d}: its title went: {covered}"
        assert covered[-1] == lines[-1], f"page {d}: {covered}"  # "Prev <previous title>"
        assert not any(" w1" in c or c.startswith("w") for c in covered), f"page {d}: body touched: {covered}"
        chapter_page = d % 5 == 0 if d < 30 else (d - 30) % 5 == 0
        if not chapter_page:  # a chapter's own page names only itself in its bar and crumb
            assert lines[1] in covered[0] and lines[2] in covered[0], f"page {d}: {covered}"


def test_without_the_rule_the_bars_stay():
    pages = docbook_site(30, 1)
    _, run = _run(pages, title_nav=False, **NAV_ONLY)
    assert not any(r.get("kind") == "title_nav" for r in run.records)
    assert not run.detection.coverage.any()


def test_a_site_without_title_navigation_gets_no_record():
    """Titles on every page but no line naming another page: no record for that site (the cleaner
    would read every page's edge lines for nothing), while the site with bars keeps its record."""
    plain = [{"text": p["text"].split("\n", 1)[0] + "\n" + "\n".join(p["text"].split("\n")[3:-1]),
              "site": "plain.example", "url": p["url"].replace("docs.example", "plain.example")}
             for p in docbook_site(30, 3)]
    _, run = _run(docbook_site(30, 1) + plain, **NAV_ONLY)
    assert {r["scope"] for r in run.records if r.get("kind") == "title_nav"} == {"docs.example"}
    groups = run.detection.stats["title_nav_groups"]
    assert groups["plain.example"]["lines"] == 0 and groups["plain.example"]["names"] >= 30
    assert groups["docs.example"]["lines"] > 0


def test_a_new_page_naming_published_titles_is_cleaned_the_same_way():
    pages = docbook_site(30, 1)
    _, run = _run(pages, **NAV_ONLY)
    matcher = TemplateMatcher([json.loads(json.dumps(r)) for r in run.records])
    titles = [p["text"].split("\n")[0] for p in pages]
    new = (f"9.9. A Page Nobody Mined\nHome / {titles[5]} / 9.9. A Page Nobody Mined\nPrevUp{titles[5]}HomeNext\n"
           "w150 w151 w152 w153 w154 w155 w156 w157\nw160 w161 w162 w163 w164 w165\n"
           f"Prev {titles[7]}")
    m = matcher.find_batch([new], [template_scopes("docs.example", "https://docs.example/book/new.html")])[0]
    covered = [new[a:b] for a, b in zip(m.span_char_start.tolist(), m.span_char_end.tolist())]
    lines = new.split("\n")
    assert covered == [lines[1] + "\n" + lines[2], lines[-1]]
    other_site = matcher.find_batch([new], [template_scopes("elsewhere.example", "https://elsewhere.example/x")])[0]
    assert other_site.span_char_start.shape[0] == 0  # a site's titles apply to its own pages only


def test_the_record_reads_back_and_refuses_what_it_cannot_read():
    model = TitleNavModel(scope="docs.example", names=("guide", "install"), documents=2)
    rec = json.loads(json.dumps(model.to_record()))
    assert TitleNavModel.from_record(rec) == model
    with pytest.raises(ValueError, match="version=2 is newer"):
        TitleNavModel.from_record({**rec, "version": 2})
    with pytest.raises(ValueError, match="lacks 'names'"):
        TitleNavModel.from_record({k: v for k, v in rec.items() if k != "names"})
    with pytest.raises(ValueError, match="names="):
        TitleNavModel.from_record({**rec, "names": "guide"})


def test_the_switch_is_a_bool():
    with pytest.raises(ConfigError, match="title_nav"):
        TemplateConfig(title_nav="yes")


def _pieces_by_scan(rest: str) -> tuple[str, ...]:
    """The plain twin of ``key_pieces``: every navigation word tried, longest first, with
    ``startswith`` / ``endswith``."""
    by_length = sorted(NAV_WORDS, key=len, reverse=True)
    head, tail, changed = [], [], True
    while rest and changed:
        changed = False
        for w in by_length:
            if len(w) < len(rest) and rest.startswith(w):
                head.append(w)
                rest = rest[len(w):]
                changed = True
                break
        for w in by_length:
            if len(w) < len(rest) and rest.endswith(w):
                tail.append(w)
                rest = rest[:-len(w)]
                changed = True
                break
    return (*head, *((rest,) if rest else ()), *tail[::-1])


# Tokens glued from navigation words (any case), their prefixes and suffixes, and other text.
NAV_SORTED = sorted(NAV_WORDS)
fragment_st = st.one_of(st.sampled_from(NAV_SORTED), st.sampled_from(NAV_SORTED).map(str.upper),
                        st.sampled_from(NAV_SORTED).map(lambda w: w[1:]), st.sampled_from(NAV_SORTED).map(lambda w: w[:-1]),
                        st.text(alphabet="abcénpux7.-ΣЁ", max_size=4))
token_st = st.lists(fragment_st, max_size=6).map("".join)


@settings(derandomize=True, max_examples=1500, deadline=None)
@given(token=token_st)
def test_key_pieces_equals_a_scan_of_every_word(token):
    assert key_pieces(token_key(token)) == _pieces_by_scan(token_key(token))


@pytest.mark.parametrize("token", ["prevupchapter", "modelhomenext", "next", "upnext", "nextup", "prevprev", "",
                                   "»", "PrévIndexTop", "upup", "homeu", "tophome", "contentsindex"])
def test_key_pieces_on_glued_navigation_words(token):
    assert key_pieces(token_key(token)) == _pieces_by_scan(token_key(token))
