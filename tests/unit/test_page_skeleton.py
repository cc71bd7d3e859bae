"""Page skeletons (engine/page_skeleton.py): kernel vs plain twin, mining, records, ingest."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomspan.engine.config import ConfigError
from bloomspan.engine.page_skeleton import (PageSkeleton, SkeletonParams, echo_flags, skeleton_kernel,
                                            skeleton_reference)
from bloomspan.engine.template_detector import TemplateConfig, detect_templates_in_texts
from bloomspan.ingest.errors import PhraseSetError
from bloomspan.ingest.template_matcher import TemplateMatcher

# ----------------------------------------------------------------------------- kernel vs twin
line_st = st.fixed_dictionaries({
    "type": st.integers(0, 5), "len": st.integers(1, 12), "anchor": st.booleans(),
    "rare": st.booleans(), "detected": st.booleans(), "elsewhere": st.booleans()})


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.lists(line_st, max_size=12), min_size=1, max_size=5),
       st.sets(st.tuples(st.integers(-2, 5), st.integers(-2, 5)), max_size=25),
       st.integers(1, 10), st.integers(1, 12))
def test_kernel_equals_plain_twin(docs, pairs, line_length, echo_length):
    params = SkeletonParams(0.5, line_length, echo_length)
    # a line's class is its type when it is an anchor; -1 / -2 are the page start / end
    doc_lines = [[{**ln, "cls": ln["type"] if ln["anchor"] else None} for ln in lines] for lines in docs]
    name = {-1: "^", -2: "$"}
    ok_pairs = {(name.get(a, a), name.get(b, b)) for a, b in pairs}
    want = skeleton_reference(doc_lines, ok_pairs, params)

    flat = [ln for lines in doc_lines for ln in lines]
    doc_blocks = np.concatenate([[0], np.cumsum([len(x) for x in doc_lines])]).astype(np.int64)
    block_doc = np.repeat(np.arange(len(doc_lines)), [len(x) for x in doc_lines]).astype(np.int64)
    types = np.asarray([ln["type"] for ln in flat], dtype=np.int64)
    before, after, repeats = echo_flags(types, block_doc)
    n_cls = 6
    keys = np.unique(np.asarray([(a + 2) * (n_cls + 2) + (b + 2) for a, b in pairs], dtype=np.int64))
    out = np.zeros(len(flat), dtype=bool)
    skeleton_kernel(np.arange(len(doc_lines), dtype=np.int64), doc_blocks,
                    np.asarray([-1 if ln["cls"] is None else ln["cls"] for ln in flat], dtype=np.int64),
                    np.asarray([ln["len"] for ln in flat], dtype=np.int64),
                    np.asarray([ln["rare"] for ln in flat], dtype=bool), before, after, repeats,
                    np.asarray([ln["elsewhere"] for ln in flat], dtype=bool),
                    np.asarray([ln["detected"] for ln in flat], dtype=bool), keys, n_cls,
                    line_length, echo_length, out)
    assert out.tolist() == [c for cov in want for c in cov]


def test_echo_flags_look_inside_one_document_only():
    before, after, repeats = echo_flags(np.asarray([1, 2, 1, 1, 1, 2]), np.asarray([0, 0, 0, 1, 1, 1]))
    assert before.tolist() == [False, False, True, False, True, False]
    assert after.tolist() == [True, False, False, True, False, False]
    assert repeats.tolist() == [False, False, False, False, True, False]


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
    covered = np.zeros(len(text) + 1, dtype=bool)
    for a, b in spans:
        covered[a:b] = True
    out, pos = [], 0
    for line in text.split("\n"):
        if line and covered[pos:pos + len(line)].all():
            out.append(line)
        pos += len(line) + 1
    return out


def test_skeleton_finds_page_specific_navigation_and_leaves_content(site):
    pages, truth = site
    off = detect_templates_in_texts(pages, ["s"] * len(pages), config=TemplateConfig(skeleton=False, slots=False))
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
    ("skeleton", "yes", "True or False"), ("skeleton_anchor_fraction", 0.0, "(0, 1]"),
    ("skeleton_line_length", 0, ">= 1"), ("skeleton_echo_length", "8", ">= 1"),
])
def test_skeleton_config_errors(field, value, fix):
    with pytest.raises(ConfigError) as exc:
        TemplateConfig(**{field: value})
    assert exc.value.field == field and fix in str(exc.value)


def test_a_level_without_groups_mines_nothing():
    """Regression: a section level whose groups all repeat the site level's is passed with
    every group None; the pass must return nothing instead of indexing an empty sigma array."""
    from bloomspan.engine.page_skeleton import mine_skeletons

    tokens = np.arange(6, dtype=np.uint32)
    r = mine_skeletons(tokens, np.asarray([0, 3, 6]), np.asarray([0, 1, 3, 6]), [None, None],
                       np.zeros(6, dtype=bool), lambda n: 2)
    assert r.skeletons == [] and not r.coverage.any() and r.coverage.shape == (6,)


def test_echo_extension_stops_at_a_repeated_title_but_not_at_a_repeated_list_entry():
    """A breadcrumb's last item followed by the same heading: the heading is content. Deeper
    in a table of contents, "array" then "ARRAY" (one type once lowercased) are two entries."""
    def line(t, cls=None, detected=False, length=2):
        return {"type": t, "cls": cls, "len": length, "rare": True, "detected": detected, "elsewhere": False}
    params = SkeletonParams(0.5, 6, 20)
    header = [line("nav", "nav", True)]
    body = [line(f"text{i}", length=30) for i in range(3)]
    # title repeated right after the header: only the breadcrumb copy is taken
    page = header + [line("title"), line("title")] + body + [line("title")]
    assert skeleton_reference([page], set(), params)[0][:4] == [True, True, False, False]
    # a table of contents whose third entry repeats the second: all entries are taken
    toc = [line("intro"), line("array"), line("array"), line("other")]
    page = header + toc + body + [line("intro"), line("array"), line("other")]
    assert skeleton_reference([page], set(), params)[0][:6] == [True] * 5 + [False]
