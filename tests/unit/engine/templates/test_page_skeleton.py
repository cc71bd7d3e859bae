"""Page skeletons (engine/templates/page_skeleton.py): kernel vs plain twin, mining, records, ingest."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.templates.config import SkeletonConfig, TemplateConfig
from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.engine.templates.page_skeleton import (
    PageSkeleton,
    SkeletonLimits,
    SkeletonLines,
    echo_flags,
    next_same_type,
    skeleton_kernel,
    skeleton_reference,
)
from bloomspan.ingest.base.errors import PhraseSetError
from bloomspan.ingest.match.template_matcher import TemplateMatcher

# ----------------------------------------------------------------------------- kernel vs twin
line_st = st.fixed_dictionaries({
    "type": st.integers(0, 5), "len": st.integers(1, 12), "anchor": st.booleans(),
    "rare": st.booleans(), "detected": st.booleans(), "elsewhere": st.booleans(), "shared": st.booleans(),
    "box_seed": st.booleans()})


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(st.lists(line_st, max_size=14), min_size=1, max_size=5),
       st.sets(st.tuples(st.integers(-2, 5), st.integers(-2, 5)), max_size=25),
       st.integers(1, 10), st.integers(1, 12), st.integers(0, 4), st.integers(1, 12), st.integers(0, 3))
def test_kernel_equals_plain_twin(docs, pairs, line_length, echo_length, toc_min_lines, toc_line_length,
                                  box_min_lines):
    params = SkeletonConfig(anchor_fraction=0.5, line_length=line_length, echo_length=echo_length, site_echo_length=0, toc_min_lines=toc_min_lines, toc_line_length=toc_line_length, box_fraction=0.4, box_min_lines=box_min_lines)
    # a line's class is its type when it is an anchor; -1 / -2 are the page start / end
    doc_lines = [[{**ln, "cls": ln["type"] if ln["anchor"] else None} for ln in lines] for lines in docs]
    name = {-1: "^", -2: "$"}
    ok_pairs = {(name.get(a, a), name.get(b, b)) for a, b in pairs}
    want = skeleton_reference(doc_lines, ok_pairs, params)

    assert kernel_cover(doc_lines, pairs, params) == [c for cov in want for c in cov]


def kernel_cover(doc_lines, pairs, params: SkeletonConfig) -> list[bool]:
    """skeleton_kernel on pages given as the twin takes them (integer classes < 6, pairs with
    -1/-2 for the page edges; any hashable types)."""
    flat = [ln for lines in doc_lines for ln in lines]
    doc_blocks = np.concatenate([[0], np.cumsum([len(x) for x in doc_lines])]).astype(np.int64)
    block_doc = np.repeat(np.arange(len(doc_lines)), [len(x) for x in doc_lines]).astype(np.int64)
    type_ids: dict = {}
    types = np.asarray([type_ids.setdefault(ln["type"], len(type_ids)) for ln in flat], dtype=np.int64)
    before, after, repeats = echo_flags(types, block_doc)
    n_cls = 6
    keys = np.unique(np.asarray([(a + 2) * (n_cls + 2) + (b + 2) for a, b in pairs], dtype=np.int64))
    out = np.zeros(len(flat), dtype=bool)
    lines = SkeletonLines(
        doc_blocks=doc_blocks, cls=np.asarray([-1 if ln["cls"] is None else ln["cls"] for ln in flat], dtype=np.int64),
        block_len=np.asarray([ln["len"] for ln in flat], dtype=np.int64),
        rare=np.asarray([ln["rare"] for ln in flat], dtype=bool), echo_before=before, echo_after=after,
        repeats_previous=repeats, elsewhere=np.asarray([ln["elsewhere"] for ln in flat], dtype=bool),
        detected=np.asarray([ln["detected"] for ln in flat], dtype=bool), next_same=next_same_type(types, block_doc),
        shared=np.asarray([ln["shared"] for ln in flat], dtype=bool),
        box_seed=np.asarray([ln.get("box_seed", False) for ln in flat], dtype=bool))
    limits = SkeletonLimits(params.line_length, params.echo_length, params.toc_min_lines, params.toc_line_length,
                            params.box_min_lines)
    skeleton_kernel(np.arange(len(doc_lines), dtype=np.int64), lines, keys, n_cls, limits, out)
    return out.tolist()


def test_echo_flags_look_inside_one_document_only():
    types, docs = np.asarray([1, 2, 1, 1, 1, 2]), np.asarray([0, 0, 0, 1, 1, 1])
    before, after, repeats = echo_flags(types, docs)
    assert before.tolist() == [False, False, True, False, True, False]
    assert after.tolist() == [True, False, False, True, False, False]
    assert repeats.tolist() == [False, False, False, False, True, False]
    assert next_same_type(types, docs).tolist() == [2, -1, -1, 4, -1, -1]


# ----------------------------------------------------------------------------- a small site
def sphinx_page(i: int, headings: list[str], body: list[str]) -> str:
    """A page as a crawler sees a Sphinx site: header, content, then a sidebar with the
    page's own headings (a local table of contents) and previous/next titles."""
    return "\n".join(["Navigation", "index", "modules", "Project Documentation 2.1",
                      *[f"{h}" for h in headings[:1]], *body,
                      "Contents", *headings, "Navigation", "Overview",
                      f"Previous: chapter {i - 1} notes", f"Next: chapter {i + 1} notes",
                      "Quick search", "Copyright 2024 The Authors. Created using Sphinx 5.3.0"])


@pytest.fixture(scope="module")
def site():
    rng = np.random.default_rng(7)
    words = [f"w{k}" for k in range(400)]
    pages, truth = [], []
    for i in range(30):
        headings = [f"Heading {i} {j} " + " ".join(rng.choice(words, 2)) for j in range(1 + i % 4)]
        body = [" ".join(rng.choice(words, 12)) for _ in range(6)]
        pages.append(sphinx_page(i, headings, body))
        truth.append(body)
    return pages, truth


def covered_lines(text: str, spans) -> list[str]:
    """The non-empty lines of ``text`` wholly inside ``spans``, in order."""
    numbers = covered_line_numbers(text, spans)
    return [line for i, line in enumerate(text.split("\n")) if i in numbers]


def test_skeleton_finds_page_specific_navigation_and_leaves_content(site):
    pages, truth = site
    off = detect_templates_in_texts(pages, ["s"] * len(pages), config=TemplateConfig(skeleton=False, slots=False,
                                                                                   line_shape_gap=0))
    on = detect_templates_in_texts(pages, ["s"] * len(pages), config=TemplateConfig(slots=False))
    page, body = pages[5], truth[5]
    missed_before = set(page.split("\n")) - set(covered_lines(page, off.char_spans[5]))
    found = covered_lines(page, on.char_spans[5])
    # the local table of contents and the previous/next titles were out of repetition's reach ...
    assert {"Previous: chapter 4 notes", "Next: chapter 6 notes"} <= missed_before
    assert {"Previous: chapter 4 notes", "Next: chapter 6 notes", "Contents"} <= set(found)
    assert all(h in found for h in page.split("\n")[page.split("\n").index("Contents") + 1:][:2])
    # ... and no content line is touched
    assert not set(body) & set(found)
    assert on.detection.stats["skeleton_groups"]["s"]["frequent_pairs"] > 0


def test_matcher_applies_skeleton_to_a_new_page(site):
    pages, _ = site
    out = detect_templates_in_texts(pages, ["s"] * len(pages), config=TemplateConfig(slots=False))
    matcher = TemplateMatcher(json.loads(json.dumps(out.records)), slots=False)
    new = sphinx_page(99, ["Heading new alpha", "Heading new beta"], ["fresh content line one two three four five"])
    m = matcher.find(new, "s")
    found = covered_lines(new, zip(m.span_char_start.tolist(), m.span_char_end.tolist()))
    assert {"Previous: chapter 98 notes", "Next: chapter 100 notes", "Heading new beta"} <= set(found)
    assert "fresh content line one two three four five" not in found
    # out of scope: the site's skeleton does not apply, only global phrases (none here)
    assert matcher.find(new, "other").covered_tokens == 0


def test_skeleton_record_round_trip_and_errors(site):
    pages, _ = site
    out = detect_templates_in_texts(pages, ["s"] * len(pages), config=TemplateConfig(slots=False))
    rec = [r for r in out.records if r["kind"] == "skeleton"]
    assert len(rec) == 1 and rec[0]["scope"] == "s"
    back = PageSkeleton.from_record(json.loads(json.dumps(rec[0])))
    assert back.to_record(str) == rec[0]
    bad = {**rec[0], "pairs": [[["bogus"], ["$"]]]}
    with pytest.raises(PhraseSetError, match="skeleton pair entry"):
        TemplateMatcher([bad])


@pytest.mark.parametrize("field,value,fix", [
    ("skeleton", "yes", "a SkeletonConfig, its fields as a dict, or None"), ("skeleton.anchor_fraction", 0.0, "(0, 1]"),
    ("skeleton.line_length", 0, ">= 1"), ("skeleton.echo_length", "8", ">= 1"),
    ("skeleton.toc_min_lines", -1, ">= 0"), ("skeleton.toc_line_length", 0, ">= 1"),
    ("skeleton.box_fraction", 1.5, "(0, 1]"), ("skeleton.box_min_lines", 2.0, ">= 0"),
])
def test_skeleton_config_errors(field, value, fix):
    name, _, knob = field.partition(".")
    with pytest.raises(ConfigError) as exc:
        TemplateConfig(**{name: {knob: value} if knob else value})
    assert exc.value.field == field and fix in str(exc.value)


def test_the_flat_skeleton_names_are_gone():
    """The skeleton's knobs live in ``skeleton`` only: a flat ``skeleton_*`` name is an unknown
    key, named with the fix (the nested form), not a second spelling."""
    with pytest.raises(ConfigError) as exc:
        TemplateConfig.from_dict({"skeleton_line_length": 8})
    assert exc.value.field == "template_config" and "skeleton.{" in str(exc.value)


def test_a_level_without_groups_mines_nothing():
    """Regression: a section level whose groups all repeat the site level's is passed with
    every group None; the pass must return nothing instead of indexing an empty sigma array."""
    from bloomspan.engine.templates.page_skeleton import mine_skeletons

    tokens = np.arange(6, dtype=np.uint32)
    r = mine_skeletons(tokens, np.asarray([0, 3, 6]), np.asarray([0, 1, 3, 6]), [None, None],
                       np.zeros(6, dtype=bool), lambda n: 2)
    assert r.skeletons == [] and not r.coverage.any() and r.coverage.shape == (6,)


def test_a_long_line_on_most_pages_anchors_only_without_an_anchor_length_limit():
    """A section's reference sentence on every page, just above its footer: with no limit it is
    an anchor, so the walk from the page end crosses it into the page's text; with
    ``anchor_max_length`` shorter than it, it is no anchor and the walk stops at the footer."""
    from bloomspan.engine.templates.page_skeleton import mine_skeletons

    texts = [f"unique{p} words of page {p} text\nthe old behaviour of this policy is deprecated and may be removed "
             f"in a future version\nPrevious topic\nQuick search" for p in range(12)]
    vocab, tokens, offsets, bo = _tokenized(texts)
    for limit, sentence_covered in ((None, True), (12, False)):
        r = mine_skeletons(tokens, offsets, bo, ["s"] * 12, np.zeros(tokens.shape[0], dtype=bool), lambda n: 10,
                           SkeletonConfig(), None, limit)
        page = r.coverage[offsets[0]:offsets[1]]
        lines = np.diff(bo[:5])
        per_line = [bool(page[a:a + n].all()) for a, n in zip(np.concatenate([[0], np.cumsum(lines)[:-1]]), lines)]
        assert per_line == [False, sentence_covered, True, True]
        assert (vocab.id_of("policy") in {t for line in r.skeletons[0].anchor_lines for t in line}) is sentence_covered


def _tokenized(texts):
    from bloomspan.engine.templates.blocks import block_offsets_from_texts
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary

    vocab = Vocabulary()
    tokens, offsets, starts, _ends = encode_batch(texts, vocab, with_offsets=True)
    return vocab, tokens, offsets, block_offsets_from_texts(texts, offsets, starts)


def test_echo_extension_stops_at_a_repeated_title_but_not_at_a_repeated_list_entry():
    """A breadcrumb's last item followed by the same heading: the heading is content. Deeper
    in a table of contents, "array" then "ARRAY" (one type once lowercased) are two entries."""
    def line(t, cls=None, detected=False, length=2):
        return {"type": t, "cls": cls, "len": length, "rare": True, "detected": detected, "elsewhere": False,
                "shared": False, "box_seed": False}
    params = SkeletonConfig(anchor_fraction=0.5, line_length=6, echo_length=20, site_echo_length=0, toc_min_lines=0, toc_line_length=10, box_fraction=0.4, box_min_lines=0)
    header = [line("nav", "nav", True)]
    body = [line(f"text{i}", length=30) for i in range(3)]
    # title repeated right after the header: only the breadcrumb copy is taken
    page = header + [line("title"), line("title")] + body + [line("title")]
    assert skeleton_reference([page], set(), params)[0][:4] == [True, True, False, False]
    # a table of contents whose third entry repeats the second: all entries are taken
    toc = [line("intro"), line("array"), line("array"), line("other")]
    page = header + toc + body + [line("intro"), line("array"), line("other")]
    assert skeleton_reference([page], set(), params)[0][:6] == [True] * 5 + [False]


def _line(t, cls=None, length=2, rare=True, shared=False, box_seed=False):
    return {"type": t, "cls": cls, "len": length, "rare": rare, "detected": False, "elsewhere": False,
            "shared": shared, "box_seed": box_seed}


def quick_view_page(entries: int, spaced: bool = True) -> list[dict]:
    """A page whose table of contents sits mid-page, after the summary, as Apache's module
    pages have it: header, title, summary, "Topics", entries, "See also", two other pages'
    titles, then the body where each entry comes back as a heading over a paragraph."""
    page = [_line("nav", 0, rare=False), _line("title"), _line("summary", length=40),
            _line("Topics", rare=False)]
    page += [_line(f"entry{i}") for i in range(entries)]
    page += [_line("See also", rare=False), _line("other page", shared=True), _line("another page", shared=True)]
    for i in range(entries):
        page += [_line(f"entry{i}")] + ([_line(f"text{i}", length=30)] if spaced else [])
    return page + [_line("footer", 1, rare=False)]


@pytest.mark.parametrize("entries,spaced,taken", [(3, True, True), (2, True, False), (3, False, False)])
def test_a_table_of_contents_mid_page_is_taken_with_its_title_and_see_also(entries, spaced, taken):
    """Its entries come back later, in order, as headings with text between them: the run,
    "Topics" and the "See also" lines after it are covered; two entries are too few, and
    copies side by side (a repeated code block) are no table of contents."""
    page = quick_view_page(entries, spaced)
    params = SkeletonConfig(anchor_fraction=0.5, line_length=6, echo_length=20, site_echo_length=0, toc_min_lines=3, toc_line_length=10, box_fraction=0.4, box_min_lines=0)
    want = skeleton_reference([page], set(), params)[0]
    assert kernel_cover([page], set(), params) == want
    box = range(3, 3 + 1 + entries + 3)  # "Topics" .. "another page"
    assert all(want[i] for i in box) == taken
    assert not any(want[i] for i in range(1, 3))  # title and summary are content
    assert not any(want[i] for i in range(box.stop, len(page) - 1))  # the body too
    off = skeleton_reference([page], set(), SkeletonConfig(anchor_fraction=0.5, line_length=6, echo_length=20, site_echo_length=0, toc_min_lines=0, toc_line_length=10, box_fraction=0.4, box_min_lines=0))[0]
    assert not any(off[i] for i in box)


def test_a_sidebar_holding_the_page_toc_is_walked_without_a_frequent_pair():
    """Between two anchors before the content, a gap of menu entries and >= toc_min_lines
    lines repeated later in the page is navigation even when the pair is new to the site."""
    toc = [_line(f"h{i}", length=9) for i in range(3)]
    page = ([_line("nav", 0, rare=False), _line("menu a"), _line("frequent menu", rare=False, length=10)] + toc
            + [_line("search", 1, rare=False), _line("intro", length=40)] + [x for i in range(3) for x in (_line(f"h{i}", length=9),
                                                                              _line(f"p{i}", length=60))]
            + [_line("footer", 2, rare=False)])
    for toc_min_lines, covered in ((3, True), (4, False)):
        params = SkeletonConfig(anchor_fraction=0.5, line_length=6, echo_length=20, site_echo_length=0, toc_min_lines=toc_min_lines, toc_line_length=10, box_fraction=0.4, box_min_lines=0)
        want = skeleton_reference([page], {("^", 0)}, params)[0]
        assert kernel_cover([page], {(-1, 0)}, params) == want
        assert all(want[:7]) == covered
        assert not any(want[7:14])  # the introduction, the headings and their text are content


def apache_page(i: int, topics: list[str], rng) -> tuple[str, range, range]:
    """(text, line numbers of the quick-view box, of the content) of a page laid out like
    Apache's manual: the table of contents box sits between the summary and the body."""
    words = [f"w{k}" for k in range(300)]
    box = ["Topics", *topics, "See also", *[f"Title{(i + k) % 30} of guide" for k in (1, 2)]]
    body = [x for t in topics for x in (t, " ".join(rng.choice(words, 20)))]
    lines = ["Modules | Directives | FAQ | Glossary | Sitemap", "Apache HTTP Server Version 2.4",
             f"Title{i} of guide", " ".join(rng.choice(words, 25)), *box, *body,
             "Copyright 2026 The Apache Software Foundation"]
    return "\n".join(lines), range(4, 4 + len(box)), [2, 3, *range(4 + len(box), len(lines) - 1)]


def covered_line_numbers(text: str, spans) -> set[int]:
    covered = np.zeros(len(text) + 1, dtype=bool)
    for a, b in spans:
        covered[a:b] = True
    out, pos = set(), 0
    for i, line in enumerate(text.split("\n")):
        if line and covered[pos:pos + len(line)].all():
            out.add(i)
        pos += len(line) + 1
    return out


def test_quick_view_box_found_at_mining_and_at_ingest():
    rng = np.random.default_rng(3)
    pages = [apache_page(i, [f"Topic {i} {k} alpha" for k in range(3 + i % 3)], rng) for i in range(30)]
    texts = [p[0] for p in pages]
    on = detect_templates_in_texts(texts, ["s"] * 30, config=TemplateConfig(slots=False))
    off = detect_templates_in_texts(texts, ["s"] * 30, config=TemplateConfig(slots=False, skeleton=SkeletonConfig(toc_min_lines=0)))
    text, box, content = pages[4]
    found = covered_line_numbers(text, on.char_spans[4])
    assert set(box) <= found and not set(box) & covered_line_numbers(text, off.char_spans[4])
    assert not set(content) & found
    # ingest walks a page the same way, and a new page too
    matcher = TemplateMatcher(json.loads(json.dumps(on.records)), slots=False)
    m = matcher.find(text, "s")
    assert covered_line_numbers(text, zip(m.span_char_start.tolist(), m.span_char_end.tolist())) == found
    text, box, content = apache_page(77, ["Fresh topic one", "Fresh topic two", "Fresh topic three"], rng)
    m = matcher.find(text, "s")
    got = covered_line_numbers(text, zip(m.span_char_start.tolist(), m.span_char_end.tolist()))
    assert set(box[:-2]) <= got and not set(content) & got  # box[-2:]: titles of no page seen (78, 79)


def module_page(i: int, rng) -> tuple[str, range, list[int]]:
    """(text, line numbers of the box, of the content) of a page laid out like Apache's module
    pages: a box in the middle listing the module's directives (whose headings read "<name>
    Directive", so no table of contents; pages i and i + 15 are one module in two languages,
    so each name is on two pages), four links found on most pages, other pages' titles."""
    words = [f"w{k}" for k in range(300)]
    names = [f"Dir{i % 15}x{k}" for k in range(2 + i % 3)]
    box = ["Directives", *names, "Bugfix checklist", "httpd changelog", "Known issues", "Report a bug",
           "See also", *[f"Title{(i + k) % 30} of guide" for k in (1, 2)]]
    heading = "Directive" if i < 15 else "Direktive"
    body = [x for n in names for x in (f"{n} {heading}", " ".join(rng.choice(words, 20)))]
    lines = ["Modules | Directives | FAQ | Glossary | Sitemap", "Apache HTTP Server Version 2.4",
             f"Title{i} of guide", " ".join(rng.choice(words, 25)), *box, *body,
             "Copyright 2026 The Apache Software Foundation"]
    return "\n".join(lines), range(4, 4 + len(box)), [2, 3, *range(4 + len(box), len(lines) - 1)]


def test_a_box_of_frequent_links_mid_page_is_taken_with_its_neighbours():
    rng = np.random.default_rng(5)
    pages = [module_page(i, rng) for i in range(30)]
    texts = [p[0] for p in pages]
    on = detect_templates_in_texts(texts, ["s"] * 30, config=TemplateConfig(slots=False))
    off = detect_templates_in_texts(texts, ["s"] * 30, config=TemplateConfig(slots=False, skeleton=SkeletonConfig(box_min_lines=0)))
    text, box, content = pages[7]
    found = covered_line_numbers(text, on.char_spans[7])
    assert set(box) <= found and not set(content) & found
    assert not {box[0], box[1], box[-1]} & covered_line_numbers(text, off.char_spans[7])
    matcher = TemplateMatcher(json.loads(json.dumps(on.records)), slots=False)
    m = matcher.find(text, "s")
    assert covered_line_numbers(text, zip(m.span_char_start.tolist(), m.span_char_end.tolist())) == found
    # the four links and "See also" are five seed lines: asking for six finds no box
    six = detect_templates_in_texts(texts, ["s"] * 30, config=TemplateConfig(slots=False, skeleton={"box_min_lines": 6}))
    assert not {box[0], box[1]} & covered_line_numbers(text, six.char_spans[7])


def test_line_numbers_of_code_listings_are_no_template():
    """With slots every line of numbers only reads the same, so a code listing's line numbers
    repeat on every page that has one: the whole-line pass counts each such line as unique and
    the skeleton never anchors on it (regression: glib's line-numbered examples were taken)."""
    rng = np.random.default_rng(11)
    words = [f"w{k}" for k in range(300)]
    texts = []
    for i in range(30):
        listing = [str(n) for n in range(1, 9)] + [" ".join(rng.choice(words, 5)) for _ in range(8)]
        texts.append("\n".join(["Home | Docs | Search", f"Title{i} of guide", " ".join(rng.choice(words, 30)),
                                *listing, " ".join(rng.choice(words, 30)), "Copyright 2026 Example"]))
    out = detect_templates_in_texts(texts, ["s"] * 30)
    numbers = range(3, 11)
    for d in (4, 17):
        found = covered_line_numbers(texts[d], out.char_spans[d])
        assert {0, 20} <= found and not set(numbers) & found
    matcher = TemplateMatcher(json.loads(json.dumps(out.records)))
    m = matcher.find(texts[4], "s")
    assert covered_line_numbers(texts[4], zip(m.span_char_start.tolist(), m.span_char_end.tolist())) == \
        covered_line_numbers(texts[4], out.char_spans[4])


def test_hashed_classes_equal_classify():
    """cover_token_lines classifies lines by hash (anchor bit, prefix hashes, class tables);
    cover_pages by classify(), the plain definition: on anchor, prefix and detected lines of a
    mined and a hand-made skeleton both walks agree."""
    from bloomspan.engine.templates.page_skeleton import END_KEY, START_KEY

    rng = np.random.default_rng(2)
    pages = [module_page(i, rng)[0] for i in range(30)] + [apache_page(i, ["T one", "T two", "T three"], rng)[0]
                                                          for i in range(30)]
    out = detect_templates_in_texts(pages, ["s"] * 60, config=TemplateConfig(slots=False))
    mined = PageSkeleton.from_record([r for r in out.records if r["kind"] == "skeleton"][0])
    home, langs, server = ("home",), ("available", "languages"), ("apache", "http", "server")
    made = PageSkeleton(scope="s", sigma=2, documents=10, anchor_lines=frozenset({home, ("quick", "search")}),
                        anchor_prefixes=frozenset({langs, server}), frequent_lines=frozenset({home}),
                        pairs=frozenset({(START_KEY, ("line", home)), (("line", home), ("prefix", langs)),
                                         (("prefix", langs), ("prefix", server)), (("prefix", server), END_KEY)}))
    # a page whose walk needs every class right: start -> home -> languages -> server, then content
    crafted = [home, langs + ("en", "fr"), ("short", "gap"), server + ("version", "2"), ("content",) * 40]
    lines = crafted + [tuple(w.lower() for w in line.replace("|", " ").split()) for p in pages[:8]
                       for line in p.split("\n")]
    lines += [("quick", "search"), langs, server, ("apache", "http", "server", "x", "y"),
              ("available", "languages") + ("w",) * 30, ("zz", "yy")]
    lines += [line + ("extra",) for line in lines[:40]] + [line[:2] for line in lines[:40]]
    assert made.classify(langs + ("en",), False) == ("prefix", langs)  # the prefix path is exercised
    for skeleton in (mined, made):
        vocab = {t: i for i, t in enumerate(sorted({w for line in lines for w in line}))}
        sk = skeleton.map_tokens(lambda w: vocab.get(w, len(vocab)))
        ids_lines = [tuple(vocab[w] for w in line) for line in lines]
        page_of = [ids_lines[:len(crafted)]] + [ids_lines[i:i + 23] for i in range(len(crafted), len(ids_lines), 23)]
        lengths = np.asarray([len(t) for t in ids_lines], dtype=np.int64)
        ends = np.cumsum(lengths)
        tokens = np.asarray([x for t in ids_lines for x in t], dtype=np.uint32)
        page_lines = np.concatenate([[0], np.cumsum([len(p) for p in page_of])]).astype(np.int64)
        for detected in (False, True):
            det = [[detected] * len(p) for p in page_of]
            plain = np.concatenate(sk.cover_pages(page_of, det))
            fast = sk.cover_token_lines(tokens, ends - lengths, ends, page_lines, np.full(len(lines), detected),
                                        np.zeros(len(lines), dtype=bool))
            assert fast.tolist() == plain.tolist()
        assert plain.sum() > 4
    # without detected lines only the classes carry the made skeleton's walk over its page
    walked = np.concatenate(sk.cover_pages(page_of, [[False] * len(p) for p in page_of]))
    assert walked[:4].all() and not walked[4]


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=6), max_size=25), min_size=1, max_size=4),
       st.data())
def test_array_walk_equals_tuple_walk(pages, data):
    """cover_token_lines (hashes, arrays: the ingest path) equals cover_pages (token tuples)."""
    rng = np.random.default_rng(4)
    site = [module_page(i, rng)[0] for i in range(20)] + [apache_page(i, ["T one", "T two", "T three"], rng)[0]
                                                         for i in range(20)]
    out = detect_templates_in_texts(site, ["s"] * 40, config=TemplateConfig(slots=False, sigma_floor=3))
    skeleton = PageSkeleton.from_record([r for r in out.records if r["kind"] == "skeleton"][0])
    vocab = {t: i for i, t in enumerate(sorted(skeleton.tokens()))}
    sk = skeleton.map_tokens(vocab.__getitem__)
    known = [tuple(vocab[w] for w in line.split()) for line in ("modules directives faq glossary sitemap",
                                                                "see also", "bugfix checklist", "topics")]
    # lines: random small ids (most are the skeleton's tokens) and some of its known lines
    pages = [[tuple(x) if x[0] % 4 else known[x[0] % len(known)] for x in page] for page in pages]
    detected = [[data.draw(st.booleans()) for _ in page] for page in pages]
    single = [[data.draw(st.booleans()) for _ in page] for page in pages]
    want = np.concatenate([c for c in sk.cover_pages(pages, detected, single)] or [np.zeros(0, bool)])
    flat = [t for page in pages for t in page]
    lengths = np.asarray([len(t) for t in flat], dtype=np.int64)
    ends = np.cumsum(lengths)
    tokens = np.asarray([x for t in flat for x in t], dtype=np.uint32)
    page_lines = np.concatenate([[0], np.cumsum([len(p) for p in pages])]).astype(np.int64)
    got = sk.cover_token_lines(tokens, ends - lengths, ends, page_lines,
                               np.asarray([x for p in detected for x in p], dtype=bool),
                               np.asarray([x for p in single for x in p], dtype=bool))
    assert got.tolist() == want.tolist()
