"""A page's own facts (engine/templates/own_facts.py), in the detector and at ingest."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from bloomspan.engine.templates.blocks import block_offsets_from_texts, block_types
from bloomspan.engine.templates.config import ConfigError, TemplateConfig
from bloomspan.engine.templates.detector import (
    config_record,
    detect_templates,
    detect_templates_in_texts,
    scope_levels,
)
from bloomspan.engine.templates.own_facts import (
    OwnFactsModel,
    mine_own_facts,
    number_echoes,
    number_echoes_reference,
    own_fact_lines,
    own_fact_lines_reference,
    own_fact_tokens,
)
from bloomspan.engine.text.slots import SLOT_ID, SLOT_TOKEN, apply_slots, number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.pipeline_export.export import _touches_line, export_pipeline
from bloomspan.ingest.records.template_records import parse_template_records

S = -1  # a number in the kernel tests' lines: -1 - value reads as the slot -1
# A line: a short tuple from a small alphabet with numbers (negative ids below S), so that lines
# repeat, with and without their numbers.
LINES = st.lists(st.sampled_from([(1,), (2, -2), (2, -3), (2, -2), (3, 3), (4,) * 11, (5, -2, 6), (5, -4, 6)]),
                 max_size=14)


def _slotted(line: tuple) -> tuple:
    return tuple(S if isinstance(t, int) and t < 0 else t for t in line)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.tuples(LINES, st.randoms(use_true_random=False)), min_size=1, max_size=5))
@example([([(1,), (2, -2), (2, -2), (5, -2, 6), (4,) * 11, (2, -3)], None)])  # breadcrumb, heading, lede
@example([([(1,), (2, -2), (2, -3), (2, -4), (4,) * 11], None)])  # a list of such lines: navigation
def test_own_fact_lines_equal_their_reference(pages):
    lines = [p for p, _ in pages]
    covered = [[(r.random() < 0.8) if r is not None else len(line) < 11 for line in p] for p, r in pages]
    candidate = [[(r.random() < 0.7) if r is not None else S in _slotted(line) for line in p] for p, r in pages]
    flat = [line for p in lines for line in p]
    raw_ids = {line: k for k, line in enumerate(dict.fromkeys(flat))}
    slot_ids = {line: k for k, line in enumerate(dict.fromkeys(_slotted(x) for x in flat))}
    doc_blocks = np.concatenate([[0], np.cumsum([len(p) for p in lines])]).astype(np.int64)
    cov = np.asarray([c for p in covered for c in p], dtype=bool)
    got = own_fact_lines(cov, np.asarray([c for p in candidate for c in p], dtype=bool),
                         np.asarray([len(x) for x in flat], dtype=np.int64),
                         np.asarray([slot_ids[_slotted(x)] for x in flat], dtype=np.int64),
                         np.asarray([raw_ids[x] for x in flat], dtype=np.int64), doc_blocks)
    want = own_fact_lines_reference(lines, [[_slotted(x) for x in p] for p in lines], covered, candidate)
    assert got.tolist() == [x for p in want for x in p]
    assert not (got & ~cov).any()  # only covered lines come back


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=5))
@example([[(1,), (2, -2), (5, -2, 6), (5, -4, 6), (3, 3)]])
def test_number_echoes_equal_their_reference(pages):
    flat = [line for p in pages for line in p]
    tokens = np.asarray([t + 10 for line in flat for t in line], dtype=np.uint32)  # ids >= 0: -2 -> 8
    numbers = np.asarray([t < 0 for line in flat for t in line], dtype=bool)
    block_offsets = np.concatenate([[0], np.cumsum([len(x) for x in flat])]).astype(np.int64)
    doc_blocks = np.concatenate([[0], np.cumsum([len(p) for p in pages])]).astype(np.int64)
    got = number_echoes(tokens, numbers, block_offsets, doc_blocks, np.arange(len(flat), dtype=np.int64))
    want = number_echoes_reference(pages, [[tuple(t < 0 for t in line) for line in p] for p in pages])
    assert got.tolist() == [x for p in want for x in p]


def test_numbers_echo_when_a_run_of_three_recurs():
    lines = [("v", 7, 1, 2), ("v", 7, 1, 2, "out", 7, 1, 1), ("page", 6, "of", 18), ("x", 6), ("y", 6, 18)]
    flags = [tuple(isinstance(t, int) for t in line) for line in lines]
    assert number_echoes_reference([lines], [flags]) == [[True, True, True, True, True]]
    assert number_echoes_reference([lines[:4]], [flags[:4]]) == [[True, True, False, True]]  # "6 18" once


def test_the_example_page_gives_its_heading_and_lede_back():
    """Bar, breadcrumb "v 7", heading "v 7" (the same line), lede "v 7 out", then text no pass
    found: the heading and the lede come back, the bar (first line) and the breadcrumb stay."""
    page = [("bar",), ("v", -7), ("v", -7), ("v", -7, "out"), tuple("x" * 11), ("page", -3)]
    slotted = [_slotted(x) for x in page]
    cov = [True, True, True, True, False, True]
    cand = [False, True, True, True, False, True]
    assert own_fact_lines_reference([page], [slotted], [cov], [cand]) == [[False, False, True, True, False, False]]
    first = [("v", -7, "out")] + page[4:]  # a page's first line is its bar or title: never given back
    assert own_fact_lines_reference([first], [[_slotted(x) for x in first]], [[True, False, True]],
                                    [[True, False, True]]) == [[False] * 3]
    listed = [("bar",), ("v", -7), ("v", -6), ("v", -5), tuple("x" * 11)]  # every release in a sidebar
    assert own_fact_lines_reference([listed], [[_slotted(x) for x in listed]], [[True] * 4 + [False]],
                                    [[False] + [True] * 3 + [False]]) == [[False] * 5]
    whole = [("bar",), ("v", -7, "out"), ("a",), ("b",), ("c",), ("v", -7, "end")]  # no uncovered text: first half
    assert own_fact_lines_reference([whole], [[_slotted(x) for x in whole]], [[True] * 6],
                                    [[False, True, False, False, False, True]]) == [[False, True] + [False] * 4]


def _release_site(n_pages: int = 40):
    """Release announcements: a bar, a breadcrumb that names the release, the heading that repeats
    it, a lede with the release's numbers, a counter (numbers of its own on every page too, but
    no other line repeats them), the page's own text, then a pager and a link to the previous
    release (at the page's end)."""
    texts, urls = [], []
    for p in range(n_pages):
        lines = ["Navigation", "modules", "index", "Release announcements",
                 f"acme 4.{p}.1", f"acme 4.{p}.1",
                 f"acme 4.{p}.1 fixes several bugs in 4.{p}.0 of the library",
                 f"Showing {p + 1} of {n_pages} releases",
                 " ".join(f"w{p}x{i}" for i in range(25)),
                 "Thanks to all who contributed to this release, among them:",
                 f"Page {p + 1}", f"Previous: acme 4.{max(p - 1, 0)}.1",
                 "Copyright the acme developers", "Created using Sphinx"]
        texts.append("\n".join(lines))
        urls.append(f"https://acme.example/announce/release-4.{p}.1.html")
    return texts, urls


def _words(texts, starts, ends, offsets, d, coverage):
    a, b = int(offsets[d]), int(offsets[d + 1])
    return [texts[d][s:e] for s, e, c in zip(starts[a:b], ends[a:b], coverage[a:b]) if c]


@pytest.mark.parametrize("own_facts", [True, False])
def test_a_release_pages_heading_and_lede_stay_content_in_mining_and_at_ingest(own_facts):
    """Slots make every page's breadcrumb, heading and lede one template; their numbers differ on
    every page, so in the header the heading and the lede are content (the bar, the breadcrumb,
    the counter, the pager and the previous link stay chrome). Without the rule (own_facts=False) they are
    removed: the test fails when the rule is taken out. Ingest covers what mining covered."""
    texts, urls = _release_site()
    cfg = TemplateConfig(own_facts=own_facts)
    found = detect_templates_in_texts(texts, ["acme.example"] * len(texts), urls, cfg)
    det = found.detection
    vocab = Vocabulary()
    tokens, offsets, starts, ends = encode_batch(texts, vocab, with_offsets=True)
    assert tokens.shape == det.coverage.shape
    page = " ".join(_words(texts, starts, ends, offsets, 7, det.coverage))
    assert page.startswith("Navigation modules index Release announcements acme 4 7 1")
    assert "Showing 8 of 40 releases" in page and "Page 8 Previous acme 4 6 1" in page
    lede = "fixes several bugs"
    if own_facts:
        assert lede not in page and page.count("acme 4 7 1") == 1  # the breadcrumb only
        assert det.stats["own_fact_tokens"] > 0
        assert [r["kind"] for r in found.records].count("own_facts") == 1
    else:
        assert lede in page and page.count("acme 4 7 1") == 3
        assert "own_facts" not in [r["kind"] for r in found.records]
    at_ingest = TemplateMatcher(found.records).find_batch(texts, found.scopes)
    assert np.concatenate([m.token_mask() for m in at_ingest]).tolist() == det.coverage.tolist()


def test_own_facts_by_kernel_tokens_and_detector_agree():
    """own_fact_tokens on the detector's coverage without the rule gives back exactly what the
    detector with the rule leaves out."""
    texts, urls = _release_site()
    vocab = Vocabulary()
    tokens, offsets, starts, _ = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, offsets, starts)
    levels = scope_levels(["acme.example"] * len(texts), urls, 1)
    is_number = number_token_mask(vocab.tokens())
    off = detect_templates(tokens, offsets, bo, TemplateConfig(own_facts=False), levels, is_number,
                           token_strings=vocab.tokens())
    on = detect_templates(tokens, offsets, bo, TemplateConfig(), levels, is_number, token_strings=vocab.tokens())
    slotted, _ = apply_slots(tokens, is_number)
    types, raw_types = block_types(slotted, bo)[0], block_types(tokens, bo)[0]
    r = mine_own_facts(slotted, tokens, offsets, bo, levels[0], 10, vocab.tokens(), types, raw_types)
    back = own_fact_tokens(off.coverage, bo, offsets, r.candidate, types, raw_types, tokens, slotted == SLOT_ID)
    assert back.any() and (off.coverage & ~back).tolist() == on.coverage.tolist()
    assert [m.scope for m in r.models] == ["acme.example"]
    lines = {" ".join(SLOT_TOKEN if t == SLOT_ID else vocab.token(t) for t in line) for line in r.models[0].lines}
    assert "acme <num> <num> <num>" in lines and "showing <num> of <num> releases" in lines  # kept: no echo
    assert not any(line.startswith("previous") for line in lines)  # a navigation word: a neighbour's facts


def test_only_slots_whose_values_differ_on_every_page_are_own_facts():
    """A version the same on every page is a form letter's blank; a sidebar that lists every release
    holds the type many times a page; neither is an own fact. Fewer than min_pages pages: none."""
    texts = []
    for p in range(20):
        texts.append("\n".join(["bar", "acme 7.2 documentation", f"acme {p}.1", f"acme {p}.1",
                                "\n".join(f"rel {q}.0" for q in range(20)), "text " * 12]))
    vocab = Vocabulary()
    tokens, offsets, starts, _ = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, offsets, starts)
    slotted, _ = apply_slots(tokens, number_token_mask(vocab.tokens()))
    types = (block_types(slotted, bo)[0], block_types(tokens, bo)[0])
    r = mine_own_facts(slotted, tokens, offsets, bo, ["s"] * 20, 10, vocab.tokens(), *types)
    assert [[vocab.token(t) if t != SLOT_ID else SLOT_TOKEN for t in line] for line in r.models[0].lines] == [
        ["acme", SLOT_TOKEN, SLOT_TOKEN]]
    assert mine_own_facts(slotted, tokens, offsets, bo, ["s"] * 20, 21, vocab.tokens(), *types).models == []
    assert mine_own_facts(slotted, tokens, offsets, bo, [None] * 20, 10, vocab.tokens(), *types).models == []


def test_own_facts_records_round_trip_and_are_checked():
    model = OwnFactsModel(scope="s", lines=((5, SLOT_ID),), documents=9)
    rec = model.to_record(lambda t: f"t{t}")
    assert rec == {"kind": "own_facts", "version": 1, "scope": "s", "lines": [["t5", SLOT_TOKEN]], "documents": 9}
    assert OwnFactsModel.from_record(rec).lines == (("t5", SLOT_TOKEN),)
    for bad in ({**rec, "version": 2}, {**rec, "lines": [["t5"]]}, {**rec, "scope": 3},
                {k: v for k, v in rec.items() if k != "documents"}):
        with pytest.raises(ValueError, match="own_facts"):
            OwnFactsModel.from_record(bad)
    parsed = parse_template_records([config_record(TemplateConfig()), rec])
    assert parsed.own_facts == (OwnFactsModel.from_record(rec),) and len(parsed.phrase_set) == 0


def test_own_facts_must_be_a_flag():
    with pytest.raises(ConfigError, match="own_facts"):
        TemplateConfig(own_facts=1)
    assert TemplateConfig.from_dict({"own_facts": False}).own_facts is False


def test_the_pipeline_leaves_out_records_that_can_touch_an_own_fact_line():
    """No regex knows a page's header: a record that can cover a token of an own-fact line stands
    down on that site (the cleaner gives the line back), the others stay."""
    line = ("acme", SLOT_TOKEN, "fixes")
    assert _touches_line({"kind": "block", "block_lengths": [1, 3]}, ["bar", "acme", "12", "fixes"], line)
    assert not _touches_line({"kind": "block", "block_lengths": [2]}, ["acme", SLOT_TOKEN], line)
    assert _touches_line({"kind": "mcfp"}, ["fixes", "several", "bugs"], line)  # overlaps its end
    assert not _touches_line({"kind": "mcfp"}, ["several", "bugs"], line)
    texts, urls = _release_site()
    found = detect_templates_in_texts(texts, ["acme.example"] * len(texts), urls)
    out = export_pipeline([], templates=found.records, scope_field="site", url_field="url")
    assert out.left_out["own_facts"] == 1 and out.left_out["own_fact_lines"] > 0
    kept = export_pipeline([], templates=[r for r in found.records if r["kind"] != "own_facts"],
                           scope_field="site", url_field="url")
    assert kept.left_out["own_fact_lines"] == 0
