"""Template detector (engine/templates/detector.py) and its ingest twin (ingest/template_matcher.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.corpora import generate_web, spans_from_token_mask
from bloomspan.engine.mining.bloomspan import mine_bloomspan
from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.oracles.naive_oracle import mine_naive
from bloomspan.engine.templates.blocks import block_offsets_from_texts
from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import (
    config_record,
    coverage_char_spans,
    detect_templates,
    detect_templates_in_texts,
    middle_runs,
    middle_runs_reference,
    scope_levels,
    section_only_long_lines,
    section_only_long_lines_reference,
    unit_corpus,
    url_section,
)
from bloomspan.engine.templates.phrase import TemplatePhrase
from bloomspan.engine.text.slots import number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.ingest.match.template_matcher import TemplateMatcher

# Only the global exact MCFP pass: no blocks (no line is long enough, no chain either), no
# scoped MCFP, no slots.
PLAIN_GLOBAL = dict(global_blocks=False, slots=False, section_depth=0, scoped_min_length=None,
                    block_min_length=10**6, run_min_length=10**6)


def tokenized(texts):
    vocab = Vocabulary()
    tokens, offsets, starts, ends = encode_batch(texts, vocab, with_offsets=True)
    return vocab, tokens, offsets, starts, ends, block_offsets_from_texts(texts, offsets, starts)


@pytest.fixture(scope="module")
def web():
    docs = list(generate_web(80, 3, n_sites=3))
    texts = [d["text"] for d in docs]
    return docs, texts, tokenized(texts)


# ----------------------------------------------------------------------------- config
@pytest.mark.parametrize("field,value,fix", [
    ("sigma_fraction", 1.5, "[0, 1]"), ("sigma_floor", 1, ">= 2"), ("block_min_length", 0, ">= 1"),
    ("global_min_length", 1, ">= 2, or None"), ("slots", "yes", "True or False"), ("engine", "x", "one of"),
    ("global_min_sites", 1, ">= 2"), ("section_depth", -1, ">= 0"),
])
def test_config_errors_name_field_value_and_fix(field, value, fix):
    with pytest.raises(ConfigError) as exc:
        TemplateConfig(**{field: value})
    assert exc.value.field == field and fix in str(exc.value) and repr(value) in str(exc.value)


# ----------------------------------------------------------------------------- exactness
@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=10), min_size=2, max_size=8), st.integers(2, 3),
       st.integers(2, 4))
def test_plain_mcfp_pass_is_exact_mcfp(docs, sigma, min_length):
    """Without groups, blocks and slots the detector is the exact miner, unchanged."""
    tokens = np.asarray([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    bo = np.unique(offsets)  # one block per non-empty document
    cfg = TemplateConfig(global_sigma=sigma, global_min_length=min_length, **PLAIN_GLOBAL)
    det = detect_templates(tokens, offsets, bo, cfg)
    plain = mine_bloomspan(tokens, offsets, MiningConfig(sigma=sigma, min_length=min_length))
    if len(docs) >= sigma:
        assert [(p.tokens, p.df, p.occurrences) for p in det.phrases] == \
            [(p.tokens, p.df, p.occurrences) for p in plain.phrases] == \
            [(p.tokens, p.df, p.occurrences) for p in mine_naive(tokens, offsets, sigma, min_length)]
        assert det.coverage.tolist() == plain.coverage.tolist()
    assert all(isinstance(p, TemplatePhrase) and p.kind == "mcfp" and p.scope is None for p in det.phrases)


def test_unit_corpus_separates_documents():
    tokens = np.asarray([1, 2, 3, 4, 5], dtype=np.uint32)
    offsets = np.asarray([0, 2, 3, 5])
    out, unit_offsets, where = unit_corpus(tokens, offsets, np.asarray([1, 0, 1]), 2)
    assert out[where].tolist() == tokens.tolist()
    assert unit_offsets.tolist() == [0, 2, 8]  # unit 0: doc 1 + separator; unit 1: docs 0 and 2
    separators = np.setdiff1d(np.arange(out.shape[0]), where)
    assert sorted(out[separators].tolist()) == [6, 7, 8]  # one fresh id per document


def test_cross_site_pass_needs_several_sites():
    shared = "we use cookies to improve your experience on this website accept"
    texts, sites = [], []
    for s in range(3):
        for d in range(3):
            texts.append(f"title page{s}x{d}\n{shared}\nbody{s}x{d} words")
            sites.append(f"site{s}")
    for d in range(30):  # one big site repeating a long phrase
        texts.append(f"big{d}\nthe same long sentence of one big site repeated on every page\nend{d}")
        sites.append("big")
    vocab, tokens, offsets, starts, ends, bo = tokenized(texts)
    cfg = TemplateConfig(global_min_sites=3, global_min_length=5, global_blocks=False, sigma_floor=50,
                         slots=False, section_depth=0)
    det = detect_templates(tokens, offsets, bo, cfg, [sites])
    found = {" ".join(vocab.token(t) for t in p.tokens) for p in det.phrases if p.scope is None}
    assert found == {shared}


# ----------------------------------------------------------------------------- web crawl
def test_detector_finds_web_templates_without_damage(web):
    docs, texts, (vocab, tokens, offsets, starts, ends, bo) = web
    levels = scope_levels([d["site"] for d in docs], [d["url"] for d in docs], 1)
    det = detect_templates(tokens, offsets, bo, TemplateConfig(), levels, number_token_mask(vocab.tokens()))
    truth = np.zeros(tokens.shape[0], dtype=bool)
    for d, doc in enumerate(docs):
        for a, b in doc["truth"]["template_spans"]:
            sl = slice(offsets[d], offsets[d + 1])
            truth[sl] |= (starts[sl] >= a) & (ends[sl] <= b)
    recall = (det.coverage & truth).sum() / truth.sum()
    damage = (det.coverage & ~truth).sum() / (~truth).sum()
    plain = mine_bloomspan(tokens, offsets, MiningConfig(sigma=20, min_length=10)).coverage
    assert recall > 0.7 and damage < 0.005
    assert recall > (plain & truth).sum() / truth.sum() + 0.1
    assert any(p.slots for p in det.phrases) and any(p.scope for p in det.phrases)


@pytest.mark.parametrize("overrides", [
    {},
    dict(sigma_floor=3, global_sigma=5, global_min_sites=2, block_min_length=3, run_min_length=4,
         scoped_min_length=6),
    dict(sigma_floor=2, block_min_length=1, run_min_length=1, global_min_sites=2, global_min_length=3,
         scoped_min_length=3, slots=False, edge_anchors=False),
    dict(sigma_floor=3, skeleton=dict(anchor_fraction=0.2, line_length=30, echo_length=40)),
    dict(sigma_floor=3, skeleton=dict(anchor_fraction=0.3, site_echo_length=12)),
    dict(sigma_floor=3, skeleton=dict(toc_min_lines=2, toc_line_length=20, box_min_lines=2,
                                      box_fraction=0.2, line_length=10)),
    dict(skeleton=False),
    dict(middle_content_tokens=0),
    dict(sigma_floor=3, block_min_length=3, scoped_min_length=4, middle_content_tokens=3),
    dict(sigma_floor=3, block_min_length=3, scoped_min_length=4, middle_content_tokens=3,
         middle_repeated_lines=False, section_line_length=4),
    dict(middle_repeated_lines=False, section_line_length=0),
    dict(line_shape_gap=0),
    dict(sigma_floor=3, skeleton=False, line_shape_gap=12),
])
def test_ingest_matcher_reproduces_detector_coverage(web, overrides):
    """The records written for ingest find exactly what the detector covered."""
    docs, texts, (vocab, tokens, offsets, starts, ends, bo) = web
    cfg = TemplateConfig(**overrides)
    levels = scope_levels([d["site"] for d in docs], [d["url"] for d in docs], 1)
    det = detect_templates(tokens, offsets, bo, cfg, levels, number_token_mask(vocab.tokens()))
    records = [config_record(cfg)] + [p.to_record(vocab.token) for p in det.phrases]
    records += [k.to_record(vocab.token) for k in det.skeletons]
    records += [m.to_record(vocab.token) for m in det.line_shapes]
    matcher = TemplateMatcher(records, cfg.run_min_length, cfg.slots)
    scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(len(docs))]
    found = matcher.find_batch(texts, scopes)
    assert np.concatenate([m.token_mask() for m in found]).tolist() == det.coverage.tolist()


def test_block_phrase_does_not_match_inside_a_sentence():
    records = [{"tokens": ["prev", "up", "next"], "kind": "block", "block_lengths": [3]},
               {"tokens": ["home", "index", "search"], "kind": "block", "block_lengths": [2, 1]}]
    m = TemplateMatcher(records, run_min_length=3, slots=False)
    text = "Prev Up Next\nsee prev up next here\nHome Index Search\nHome Index\nSearch"
    got = m.find(text)
    assert [text[a:b] for a, b in zip(got.span_char_start, got.span_char_end)] == ["Prev Up Next", "Home Index\nSearch"]


# ----------------------------------------------------------------------------- spans, levels
@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab .\n", max_size=20), min_size=1, max_size=4), st.data())
def test_coverage_char_spans_equal_evaluate_spans(texts, data):
    vocab, tokens, offsets, starts, ends, _bo = tokenized(texts)
    cov = np.asarray(data.draw(st.lists(st.booleans(), min_size=tokens.shape[0], max_size=tokens.shape[0])),
                     dtype=bool)
    got = coverage_char_spans(cov, offsets, starts, ends)
    assert got == [spans_from_token_mask(t, cov[offsets[d]:offsets[d + 1]]) for d, t in enumerate(texts)]


def test_scope_levels_and_sections():
    assert url_section("https://h/fr/mod/x.html", 1) == "fr"
    assert url_section("https://h/fr/mod/x.html", 2) == "fr/mod"
    assert url_section("https://h/index.html", 1) == ""
    assert url_section(None, 1) is None
    levels = scope_levels(["a", None], ["https://a/x/1", "https://b/y/2"], 1)
    assert levels == [["a", None], ["a/x", None]]
    assert scope_levels(["a"], None) == [["a"]]


def test_slots_require_number_flags(web):
    _docs, _texts, (_vocab, tokens, offsets, _s, _e, bo) = web
    with pytest.raises(ValueError, match="is_number"):
        detect_templates(tokens, offsets, bo, TemplateConfig(slots=True))


def test_pipeline_on_texts_round_trips_through_the_matcher(web):
    docs, texts, _ = web
    out = detect_templates_in_texts(texts, [d["site"] for d in docs], [d["url"] for d in docs])
    matcher = TemplateMatcher(out.records, TemplateConfig().run_min_length)
    found = matcher.find_batch(texts, out.scopes)
    assert [[[int(a), int(b)] for a, b in zip(m.span_char_start, m.span_char_end)] for m in found] == out.char_spans
    assert out.detection.stats["covered_tokens"] == sum(m.covered_tokens for m in found) > 0
    json.dumps(out.records)
    json.dumps(out.detection.stats)


def test_without_groups_the_corpus_is_one_group():
    texts = [f"Home | Docs | Search here\nunique{d} body words" for d in range(12)]
    _vocab, tokens, offsets, _s, _e, bo = tokenized(texts)
    det = detect_templates(tokens, offsets, bo, TemplateConfig(slots=False))
    assert det.stats["corpus_sigma"] == 10
    assert [(p.length, p.scope, p.kind) for p in det.phrases] == [(4, None, "block")]
    assert det.coverage.reshape(12, -1)[:, :4].all() and not det.coverage.reshape(12, -1)[:, 4:].any()


# ----------------------------------------------------------------------------- middle rule
@settings(derandomize=True, max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0, 1, 2, 3, 4]), max_size=14), min_size=1, max_size=5),
       st.integers(0, 4), st.booleans(), st.booleans())
def test_middle_runs_equal_their_reference(docs, min_side, with_strong, with_repeated):
    """0: uncovered, 1: covered, 2: covered by a strong (site-level) pass, 3: covered, on a line
    its page repeats, 4: both."""
    flat = np.asarray([x for d in docs for x in d], dtype=np.int64)
    coverage = flat > 0
    strong = ((flat == 2) | (flat == 4)) if with_strong else None
    repeated = (flat >= 3) if with_repeated else None
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    got = middle_runs(coverage, offsets, min_side, strong, repeated)
    assert got.tolist() == middle_runs_reference(coverage.tolist(), offsets.tolist(), min_side,
                                                 None if strong is None else strong.tolist(),
                                                 None if repeated is None else repeated.tolist())
    assert not (got & ~coverage).any()
    if with_strong and with_repeated:  # a repeated line only ever takes a run's exemption away
        assert not (middle_runs(coverage, offsets, min_side, strong) & ~got).any()


@settings(derandomize=True, max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=9), min_size=1, max_size=6),
       st.integers(0, 6))
def test_section_only_long_lines_equal_their_reference(lines, max_length):
    """Per line, per token: 0 uncovered, 1 covered by a section pass only, 2 covered by a site-level pass."""
    flat = np.asarray([x for line in lines for x in line], dtype=np.int64)
    coverage, strong = flat > 0, flat == 2
    offsets = np.concatenate([[0], np.cumsum([len(line) for line in lines])]).astype(np.int64)
    got = section_only_long_lines(coverage, strong, offsets, max_length)
    assert got.tolist() == section_only_long_lines_reference(coverage.tolist(), strong.tolist(), offsets.tolist(),
                                                             max_length)
    assert not (got & (~coverage | strong)).any()


def test_a_label_a_page_repeats_mid_page_and_a_sentence_one_section_repeats_are_content():
    """Site-wide labels that a page repeats between its own text ("Since: <n>" under every
    function) are content, a line pasted once mid-page on every page stays chrome; a long
    sentence that only one URL section repeats next to its footer is that section's reference
    text, its short navigation line next to it stays chrome. At ingest the same."""
    urls = [f"https://s/{'ref' if p < 11 else 'guide'}/p{p}.html" for p in range(80)]  # 11: under the site's sigma (12)
    sentence = "this policy was introduced in version 3 and warns when it is not set by the project"

    def body(p, k):  # more than middle_content_tokens (50) of text around every label
        return " ".join(f"w{p}x{k}x{i}" for i in range(60))

    footer = "Previous topic\nNext topic\nQuick search for pages here\nCopyright the authors all rights reserved"
    texts = []
    for p in range(80):
        label = f"Since version {p % 7}.{p % 5} of the public library interface"
        parts = [body(p, 0), label, body(p, 1), label, body(p, 2), "Subscribe to the newsletter of the site now",
                 body(p, 3)]
        if p < 11:
            parts += [sentence, "Policies index"]
        texts.append("\n".join(parts + [footer]))
    vocab, tokens, offsets, starts, ends, bo = tokenized(texts)
    levels = scope_levels(["s"] * 80, urls, 1)

    def covered(text, cov, a, b):
        return [text[s:e] for s, e in zip(starts[a:b], ends[a:b])], cov[a:b]

    for rules in (True, False):
        cfg = TemplateConfig(skeleton=False, middle_repeated_lines=rules, section_line_length=12 if rules else 0)
        det = detect_templates(tokens, offsets, bo, cfg, levels, number_token_mask(vocab.tokens()))
        for d in (0, 45):
            words, cov = covered(texts[d], det.coverage, int(offsets[d]), int(offsets[d + 1]))
            found = {w for w, c in zip(words, cov) if c}
            assert ("Since" in found) is not rules
            assert {"Subscribe", "newsletter", "Copyright"} <= found
            if d == 0:
                assert ("policy" in found) is not rules and "Policies" in found
        records = [config_record(cfg)] + [p.to_record(vocab.token) for p in det.phrases]
        scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(80)]
        at_ingest = TemplateMatcher(records).find_batch(texts, scopes)
        assert np.concatenate([m.token_mask() for m in at_ingest]).tolist() == det.coverage.tolist()


def test_a_line_repeated_mid_page_in_one_section_is_content_and_at_the_top_or_site_wide_chrome():
    """A line on every page of one URL section (11 of a site's 80 pages: frequent in the section,
    not in the site) is a template at the pages' top, and content where text surrounds it (a
    reference sentence repeated by one section); a line mid-page on the site's pages across its
    sections (a promo pasted into every page) stays a template."""
    idiom = "import the package from the standard library before use"
    urls = [f"https://s/{'ref' if p < 11 else 'guide'}/p{p}.html" for p in range(80)]

    def body(p, k):
        return " ".join(f"w{p}x{k}x{i}" for i in range(12))

    cases = (  # (texts, covered tokens with the rule, covered tokens without it)
        ([f"{idiom}\n{body(p, 0)}\n{body(p, 1)}" if p < 11 else f"{body(p, 0)}\n{body(p, 1)}" for p in range(80)],
         9 * 11, 9 * 11),
        ([f"{body(p, 0)}\n{idiom}\n{body(p, 1)}" if p < 11 else f"{body(p, 0)}\n{body(p, 1)}" for p in range(80)],
         0, 9 * 11),
        ([f"{body(p, 0)}\n{idiom}\n{body(p, 1)}" for p in range(80)], 9 * 80, 9 * 80),
    )
    for texts, with_rule, without in cases:
        vocab, tokens, offsets, starts, ends, bo = tokenized(texts)
        levels = scope_levels(["s"] * 80, urls, 1)
        for middle, expected in ((10, with_rule), (0, without)):
            cfg = TemplateConfig(middle_content_tokens=middle, skeleton=False, scoped_min_length=None)
            det = detect_templates(tokens, offsets, bo, cfg, levels, number_token_mask(vocab.tokens()))
            assert int(det.coverage.sum()) == expected
            records = [config_record(cfg)] + [p.to_record(vocab.token) for p in det.phrases]
            scopes = [[lvl[d] for lvl in levels if lvl[d] is not None] for d in range(80)]
            at_ingest = TemplateMatcher(records).find_batch(texts, scopes)
            assert np.concatenate([m.token_mask() for m in at_ingest]).tolist() == det.coverage.tolist()


@pytest.mark.parametrize("overrides, with_groups", [
    ({}, True), ({}, False), (dict(skeleton=False, line_shape_gap=0), True),
    (dict(global_min_length=None, global_blocks=False), False),
])
def test_progress_reports_every_pass_and_ends_at_its_total(web, overrides, with_groups):
    docs, texts, _ = web
    events = []
    groups = [d["site"] for d in docs] if with_groups else None
    detect_templates_in_texts(texts, groups, None, TemplateConfig(**overrides),
                              progress=lambda stage, done, total=None: events.append((stage, done, total)))
    assert events[:2] == [("tokenize", 0, len(texts)), ("tokenize", len(texts), len(texts))]
    passes = [e for e in events if e[0] == "templates"]
    total = passes[0][2]
    assert [done for _, done, _ in passes] == list(range(total + 1)) and {t for _, _, t in passes} == {total}
