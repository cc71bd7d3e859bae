"""Line-shape templates: the kernels against their plain twin, the records, and the cleaner
covering exactly what mining reported on generated Texinfo-style pages."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.engine.templates.line_shapes import (
    EDGE_LINES,
    RECORD_VERSION,
    LineShapeModel,
    shape_key,
    shape_lines,
    shape_lines_reference,
    zone_lines,
)
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from tests.support.navigation_pages import WORDS, texinfo_site


@st.composite
def lines_of_local(draw):
    n_fixed = draw(st.integers(1, 5))
    local = draw(st.lists(st.integers(-1, n_fixed - 1), min_size=0, max_size=60))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(local)), max_size=8))) | {0, len(local)})
    return local, cuts[:-1], cuts[1:], draw(st.integers(0, 4)), draw(st.integers(1, 3))


@settings(max_examples=300, deadline=None)
@given(lines_of_local())
def test_shape_kernels_equal_their_plain_twin(case):
    local, starts, ends, max_gap, min_fixed = case
    got = shape_lines(np.asarray(local, dtype=np.int32), np.asarray(starts, dtype=np.int64),
                      np.asarray(ends, dtype=np.int64), max_gap, min_fixed)
    want = shape_lines_reference(local, starts, ends, max_gap, min_fixed)
    assert [a.tolist() for a in got] == [list(w) for w in want]


def test_a_shape_key_tells_order_and_length_apart():
    keys = {shape_key(s) for s in [(0, 1), (1, 0), (0, 1, 1), (0, 0, 1), (0,), (1,)]}
    assert len(keys) == 6


def _mask(match) -> np.ndarray:
    return match.token_mask()


def test_the_cleaner_covers_exactly_the_tokens_mining_reported():
    pages = texinfo_site(30, 1) + texinfo_site(25, 2, "other.example")
    texts = [p["text"] for p in pages]
    sites, urls = [p["site"] for p in pages], [p["url"] for p in pages]
    run = detect_templates_in_texts(texts, sites, urls)
    shapes = [r for r in run.records if r.get("kind") == "line_shape"]
    assert {(r["scope"], r["edge"]) for r in shapes} == {(s, e) for s in set(sites) for e in ("start", "end")}
    records = [json.loads(json.dumps(r)) for r in run.records]  # as read back from templates.jsonl
    matcher = TemplateMatcher(records)
    found = matcher.find_batch(texts, [template_scopes(s, u) for s, u in zip(sites, urls)])
    mined = run.detection.coverage
    offsets = np.concatenate([[0], np.cumsum([m.n_tokens for m in found])])
    for d, m in enumerate(found):
        assert _mask(m).tolist() == mined[offsets[d]:offsets[d + 1]].tolist(), f"page {d}"
    # Every top bar is found from "Next" to "Index", every bottom one from "Previous" to "Top";
    # no body line is touched.
    for d, (page, m) in enumerate(zip(pages, found)):
        covered = {(int(a), int(b)) for a, b in zip(m.span_char_start, m.span_char_end)}
        starts = [a for a, _ in covered]
        assert 0 in starts and any(b == len(page["text"]) for _, b in covered), f"page {d}: {covered}"
        body_start = page["text"].index("\n", page["text"].index("\n") + 1)
        body_end = page["text"].rindex("\n")
        assert not any(body_start < a < body_end for a, _ in covered), f"page {d}: {covered}"


def test_without_line_shapes_the_bars_stay():
    pages = texinfo_site(30, 3)
    run = detect_templates_in_texts([p["text"] for p in pages], [p["site"] for p in pages],
                                    [p["url"] for p in pages], TemplateConfig(skeleton=None, line_shape_gap=0))
    assert not [r for r in run.records if r.get("kind") == "line_shape"]
    with_shapes = detect_templates_in_texts([p["text"] for p in pages], [p["site"] for p in pages],
                                            [p["url"] for p in pages], TemplateConfig(skeleton=None))
    assert with_shapes.detection.coverage.sum() > run.detection.coverage.sum()


def test_content_lines_at_page_edges_are_not_a_shape():
    """Pages that open and close with prose of one vocabulary: the frequent words do not make
    the same ordered shape on enough pages, so nothing is covered."""
    rng = random.Random(5)
    common = ["the", "of", "and", "to", "in"]
    texts = ["\n".join(" ".join(rng.choice(common + WORDS[:60]) for _ in range(rng.randint(6, 14)))
                       for _ in range(6)) for _ in range(40)]
    run = detect_templates_in_texts(texts, ["prose.example"] * 40, [f"https://prose.example/{i}.html" for i in range(40)],
                                    TemplateConfig(skeleton=None))
    assert "line_shapes" not in run.detection.pass_coverage or not run.detection.pass_coverage["line_shapes"].any()


def test_records_read_back_and_versions():
    model = LineShapeModel(scope="s", edge="end", fixed=(7, 9, 3), shapes=((0, 1, 2), (2, 0, 1)), max_gap=4,
                           sigma=10, documents=40)
    rec = model.to_record(lambda i: f"t{i}")
    # fixed tokens in string order, shapes as indices into that list, ascending
    assert rec["kind"] == "line_shape" and rec["version"] == RECORD_VERSION and rec["fixed"] == ["t3", "t7", "t9"]
    assert rec["shapes"] == [[0, 1, 2], [1, 2, 0]]
    back = LineShapeModel.from_record(json.loads(json.dumps(rec)))
    as_words = lambda m, word: sorted(tuple(word(m.fixed[i]) for i in s) for s in m.shapes)  # noqa: E731
    assert as_words(back, str) == as_words(model, lambda i: f"t{i}")  # the same shapes, word by word
    assert back.fixed == ("t3", "t7", "t9")
    old = {k: v for k, v in rec.items() if k not in ("version", "edge_lines", "min_fixed", "sigma", "documents")}
    with pytest.raises(ValueError, match="record: line_shape version=None: must be an integer >= 1; mine again"):
        LineShapeModel.from_record(old)  # a record without its version is not read as version 1
    with pytest.raises(ValueError, match="version=2 is newer"):
        LineShapeModel.from_record({**rec, "version": RECORD_VERSION + 1})
    with pytest.raises(ValueError, match="lacks 'shapes'"):
        LineShapeModel.from_record({k: v for k, v in rec.items() if k != "shapes"})
    with pytest.raises(ValueError, match="indices into"):
        LineShapeModel(scope=None, edge="start", fixed=("a",), shapes=((0, 1),), max_gap=2)


def test_a_record_does_not_depend_on_the_token_ids():
    """The same model mined under another numbering of the strings (a partition of the sites
    numbers its own) writes the same record."""
    words = {7: "next", 9: "prev", 3: "up", 1: "home"}
    model = LineShapeModel(scope="s", edge="start", fixed=(1, 3, 7, 9), shapes=((2, 3, 1), (0, 2, 3, 1)), max_gap=4)
    renumber = {1: 40, 3: 2, 7: 11, 9: 5}  # the same strings, other ids (fixed stays in id order)
    fixed = tuple(sorted(renumber.values()))
    index = {renumber[t]: fixed.index(renumber[t]) for t in model.fixed}
    other = LineShapeModel(scope="s", edge="start", fixed=fixed,
                           shapes=tuple(tuple(index[renumber[model.fixed[i]]] for i in s) for s in model.shapes),
                           max_gap=4)
    assert other.fixed != model.fixed and other.shapes != model.shapes
    assert other.to_record({renumber[k]: v for k, v in words.items()}.__getitem__) == model.to_record(words.__getitem__)


@st.composite
def small_sites(draw):
    """12-20 pages: a bar of fixed words with 0-3 changing words (page titles, numbers) in each
    gap, at the top of most pages, at the bottom of some (now and then a fixed word missing),
    and body lines of other words, so shapes, their variants and gaps of every size occur."""
    fixed = draw(st.lists(st.sampled_from(["next", "prev", "up", "home", "index"]), min_size=3, max_size=5))
    titles = [f"t{i}" for i in range(40)] + ["7", "12", "up"]
    words = [f"w{i}" for i in range(60)] + ["next", "7"]
    pages = []
    for _ in range(draw(st.integers(12, 20))):
        bar = []
        for k, word in enumerate(fixed):
            if draw(st.integers(0, 9)) < 9:  # now and then a fixed word is missing
                bar.append(word)
            if k < len(fixed) - 1:
                bar += draw(st.lists(st.sampled_from(titles), min_size=int(k == 0), max_size=3))
        body = [" ".join(line) for line in draw(st.lists(st.lists(st.sampled_from(words), min_size=1, max_size=9),
                                                         min_size=1, max_size=5))]
        where = draw(st.sampled_from(["top"] * 7 + ["both", "bottom", "none"]))
        lines = ([" ".join(bar)] if where in ("top", "both") and bar else []) + body
        lines += [" ".join(bar)] if where in ("bottom", "both") and bar else []
        pages.append("\n".join(lines))
    return pages


@settings(max_examples=40, deadline=None)
@given(small_sites(), st.integers(0, 4))
def test_the_matcher_covers_what_mining_covered_on_random_sites(pages, gap):
    config = TemplateConfig(line_shape_gap=gap, skeleton=None, scoped_min_length=None)
    run = detect_templates_in_texts(pages, ["r.example"] * len(pages), None, config)
    matcher = TemplateMatcher(json.loads(json.dumps(run.records)))
    found = matcher.find_batch(pages, ["r.example"] * len(pages))
    assert np.concatenate([m.token_mask() for m in found]).tolist() == run.detection.coverage.tolist()


def test_a_page_no_longer_than_its_edge_has_no_zone():
    # pages of 1, 3, 4 and 7 lines (line starts 0..14): only the last two have edges beside content
    page_lines = np.array([0, 1, 4, 8, 15], dtype=np.int64)
    line_starts = np.arange(15, dtype=np.int64)
    assert EDGE_LINES == 3
    assert zone_lines(line_starts, page_lines, "start", 3).tolist() == [4, 5, 6, 8, 9, 10]
    assert zone_lines(line_starts, page_lines, "end", 3).tolist() == [5, 6, 7, 12, 13, 14]
