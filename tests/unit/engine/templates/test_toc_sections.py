"""The table-of-contents rule (engine/templates/toc_sections.py), in the detector and at ingest."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.engine.templates.blocks import block_offsets_from_texts, block_types
from bloomspan.engine.templates.config import ConfigError, TemplateConfig
from bloomspan.engine.templates.detector import config_record, detect_templates, scope_levels
from bloomspan.engine.templates.toc_sections import (
    toc_section_lines,
    toc_section_lines_reference,
    toc_section_tokens,
)
from bloomspan.engine.text.slots import number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.template_matcher import TemplateMatcher

# A line: a short tuple of tokens from a small alphabet, so that lines repeat within a page.
LINES = st.lists(st.sampled_from([(1,), (2,), (3,), (1, 2), (4, 4, 4, 4, 4, 4), (5,) * 11, (6, 7, 8)]),
                 max_size=16)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.tuples(LINES, st.randoms(use_true_random=False)), min_size=1, max_size=5), st.integers(0, 4))
@example([([(1,), (2,), (3,), (5,) * 11, (1,), (4, 4, 4, 4, 4, 4), (2,), (4, 4, 4, 4, 4, 4), (3,)], None)], 3)
@example([([(1,), (2,), (3,), (5,) * 11, (1,), (2,), (3,), (6, 7, 8)], None)], 3)  # headings side by side: a bar
def test_toc_section_lines_equal_their_reference(pages, min_headings):
    lines = [p for p, _ in pages]
    covered = [[(r.random() < 0.7) if r is not None else len(line) < 11 for line in p] for p, r in pages]
    flat = [line for p in lines for line in p]
    ids = {line: k for k, line in enumerate(dict.fromkeys(flat))}
    types = np.asarray([ids[line] for line in flat], dtype=np.int64)
    doc_blocks = np.concatenate([[0], np.cumsum([len(p) for p in lines])]).astype(np.int64)
    got = toc_section_lines(np.asarray([c for p in covered for c in p], dtype=bool),
                            np.asarray([len(line) for line in flat], dtype=np.int64), types, doc_blocks, min_headings)
    want = toc_section_lines_reference(lines, covered, min_headings)
    assert got.tolist() == [x for p in want for x in p]
    assert not (got & ~np.asarray([c for p in covered for c in p], dtype=bool)).any()  # only covered lines come back


def test_the_example_page_gives_its_listed_sections_back():
    """Header "a / b / c" (covered), eleven uncovered tokens, then the sections a, b and c, each
    covered with a generated line under it: from the first heading in a covered run to its end."""
    page = [("a",), ("b",), ("c",), tuple("x" * 11), ("a",), ("gen", "one"), tuple("y" * 11), ("b",), ("gen", "two"),
            ("c",), ("gen", "three")]
    cov = [True, True, True, False, True, True, False, True, True, True, True]
    assert toc_section_lines_reference([page], [cov], 3) == [[False] * 4 + [True, True, False] + [True] * 4]
    assert toc_section_lines_reference([page], [cov], 4) == [[False] * 11]  # three headings only
    side_by_side = page[:4] + [("a",), ("b",), ("c",), ("end",)]  # a bottom bar repeating the top one
    assert toc_section_lines_reference([side_by_side], [[True] * 3 + [False] + [True] * 4], 3) == [[False] * 8]


def test_toc_section_tokens_reads_lines_of_tokens():
    texts = ["A\nB\nC\nw w w w w w w w w w w\nA\ngen one\nB\ngen two\nC\ngen three"]
    vocab = Vocabulary()
    tokens, offsets, starts, _ = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, offsets, starts)
    coverage = np.ones(tokens.shape[0], dtype=bool)
    coverage[3:14] = False
    back = toc_section_tokens(coverage, bo, offsets, block_types(tokens, bo)[0], 3)
    assert back.tolist() == [False] * 14 + [True] * 9
    assert not toc_section_tokens(coverage, bo, offsets, block_types(tokens, bo)[0], 0).any()


def _reference_site(n_pages: int = 40):
    """A site of reference pages: a sidebar listing the page's sections, the page's own text, then
    generated sections whose text is the same on every page (a type's blanket implementations)."""
    texts, urls = [], []
    for p in range(n_pages):
        sidebar = ["Overview", "Methods", "Inherited Methods", "Provided Traits", f"item{p} one", f"item{p} two"]
        body = [f"Type number{p} of the library", " ".join(f"w{p}x{i}" for i in range(30)),
                "Overview", " ".join(f"o{p}x{i}" for i in range(20)),
                "Methods", f"fn run{p}(self) returns the value of item {p} here",
                "Inherited Methods", "fn clone(&self) -> Self", "Returns a copy of the value. Read more",
                "fn eq(&self, other: &Self) -> bool", "Tests for equality of two values. Read more",
                "Provided Traits", "impl<T> Any for T where", "Gets the TypeId of self. Read more",
                "impl<T> Borrow<T> for T", "Immutably borrows from an owned value. Read more"]
        texts.append("\n".join(sidebar + body))
        urls.append(f"https://ref.example/api/type{p}.html")
    return texts, urls


@pytest.mark.parametrize("toc_sections", [3, 0])
def test_generated_sections_the_page_lists_stay_content_in_mining_and_at_ingest(toc_sections):
    """The generated sections repeat on every page, so the block pass finds them; the page's own
    sidebar lists their headings, so with the rule they are content (its sidebar stays chrome).
    Without it (toc_sections=0) they are removed: the test fails when the rule is taken out."""
    texts, urls = _reference_site()
    vocab = Vocabulary()
    tokens, offsets, starts, ends = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, offsets, starts)
    cfg = TemplateConfig(toc_sections=toc_sections)
    levels = scope_levels(["ref.example"] * len(texts), urls, 1)
    det = detect_templates(tokens, offsets, bo, cfg, levels, number_token_mask(vocab.tokens()))
    a, b = int(offsets[7]), int(offsets[8])
    words = [texts[7][s:e] for s, e in zip(starts[a:b], ends[a:b])]
    found = {w for w, c in zip(words, det.coverage[a:b]) if c}
    assert {"Overview", "Methods", "Inherited", "Provided"} <= found  # the sidebar, before the page's text
    generated = {"Borrow", "TypeId", "Immutably", "equality"}
    assert (generated & found == set()) if toc_sections else generated <= found
    if toc_sections:
        assert det.stats["toc_section_tokens"] > 0
    records = [config_record(cfg)] + [p.to_record(vocab.token) for p in det.phrases]
    records += [k.to_record(vocab.token) for k in det.skeletons]
    records += [m.to_record(vocab.token) for m in det.line_shapes]
    scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(len(texts))]
    at_ingest = TemplateMatcher(records).find_batch(texts, scopes)
    assert np.concatenate([m.token_mask() for m in at_ingest]).tolist() == det.coverage.tolist()


def test_records_written_before_the_rule_keep_the_old_coverage():
    texts, urls = _reference_site()
    vocab = Vocabulary()
    tokens, offsets, starts, _ = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, offsets, starts)
    levels = scope_levels(["ref.example"] * len(texts), urls, 1)
    old = detect_templates(tokens, offsets, bo, TemplateConfig(toc_sections=0), levels,
                           number_token_mask(vocab.tokens()))
    config = config_record(TemplateConfig(toc_sections=0))
    del config["template_config"]["toc_sections"]
    records = [config] + [p.to_record(vocab.token) for p in old.phrases] + [k.to_record(vocab.token)
                                                                            for k in old.skeletons]
    scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(len(texts))]
    found = TemplateMatcher(records).find_batch(texts, scopes)
    assert np.concatenate([m.token_mask() for m in found]).tolist() == old.coverage.tolist()


def test_toc_sections_must_be_a_count():
    with pytest.raises(ConfigError, match="toc_sections"):
        TemplateConfig(toc_sections=-1)
    assert TemplateConfig.from_dict({"toc_sections": 0}).toc_sections == 0
