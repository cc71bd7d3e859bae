"""Detection by groups of whole sites equals detection on the whole corpus: records, stats (but
timings) and the covered figure, on random multi-site corpora with planted templates and on
the generated web crawl, for any partition of the sites."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.templates.blocks import block_offsets_from_texts
from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import detect_templates, scope_levels, template_records
from bloomspan.engine.templates.site_partitions import (
    PartitionTemplates,
    assign_partitions,
    detect_partition,
    merge_detector_stats,
    merge_partitions,
    route_key,
    site_partition_refusal,
)
from bloomspan.engine.text.slots import number_token_mask
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.run.run_templates import exact_phrases_applied

SMALL = TemplateConfig(sigma_floor=3)  # small sites detect something too
EXACT = MiningConfig(sigma=4, min_length=6)


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if not k.startswith("seconds")}
    return value


def tokenized(texts):
    vocab = Vocabulary()
    tokens, offsets, starts, _ends = encode_batch(texts, vocab, with_offsets=True, count_df=False)
    return tokens, offsets, block_offsets_from_texts(texts, offsets, starts), vocab.tokens()


def whole_corpus(texts, sites, urls, config):
    """What the single process computes: records, detector stats, covered tokens (exact phrases
    applied where ingest applies them), and each document's exact covered tokens."""
    tokens, offsets, blocks, strings = tokenized(texts)
    levels = scope_levels(sites, urls, config.section_depth)
    det = detect_templates(tokens, offsets, blocks, config, levels, number_token_mask(strings),
                           token_strings=strings)  # as run_templates (the single process) calls it
    exact = mine(tokens, offsets, EXACT).coverage
    covered = det.coverage | exact_phrases_applied(exact, offsets, levels, det, config)
    per_doc = np.asarray([int(exact[a:b].sum()) for a, b in zip(offsets[:-1], offsets[1:])], dtype=np.int64)
    return template_records(det, config, strings.__getitem__), det.stats, int(covered.sum()), per_doc


def by_partitions(texts, sites, urls, config, part_of_doc, rng):
    """Each partition tokenized on its own (its ids then shuffled), detected, merged."""
    parts = []
    for p in sorted(set(part_of_doc)):
        docs = np.asarray([d for d, q in enumerate(part_of_doc) if q == p], dtype=np.int64)
        tokens, offsets, blocks, strings = tokenized([texts[d] for d in docs])
        perm = rng.permutation(len(strings))  # any numbering of the strings gives the same records
        shuffled = [None] * len(strings)
        for old, new in enumerate(perm.tolist()):
            shuffled[new] = strings[old]
        tokens = perm.astype(np.uint32)[tokens] if tokens.shape[0] else tokens
        levels = scope_levels([sites[d] for d in docs], [urls[d] for d in docs], config.section_depth)
        parts.append(detect_partition(tokens, offsets, blocks, shuffled, levels, config, docs))
    rng.shuffle(parts)  # partitions arrive in any order
    return parts


def site_corpus(seed: int):
    """Sites of 4-40 pages with a header, a footer and a "Next/Previous" bar (planted
    templates), pages in URL sections, numbers in the footer, a few pages without a site, and
    sometimes a site named like another site's section ("s0/b" and section b of s0)."""
    rng = np.random.default_rng(seed)
    n_sites = int(rng.integers(1, 6))
    names = [f"s{i}" for i in range(n_sites)]
    if rng.random() < 0.4:
        names.append("s0/b")
    texts, sites, urls = [], [], []
    word = lambda: f"w{int(rng.integers(0, 300))}"  # noqa: E731
    for name in names:
        header = " ".join(f"{name}h{i}" for i in range(int(rng.integers(3, 10))))
        footer = f"© {int(rng.integers(1990, 2030))} " + " ".join(f"f{i}" for i in range(int(rng.integers(4, 12))))
        for page in range(int(rng.integers(4, 41))):
            lines = [header] if rng.random() < 0.9 else []
            if rng.random() < 0.7:
                lines.append(f"Next: {word()} Previous: {word()} {word()} Up: {word()} Index")
            for _ in range(int(rng.integers(1, 6))):
                lines.append(" ".join(word() for _ in range(int(rng.integers(2, 30)))))
            if rng.random() < 0.85:
                lines.append(footer.replace("©", "©" if rng.random() < 0.5 else f"{int(rng.integers(1, 99))}"))
            texts.append("\n".join(lines))
            sites.append(name)
            section = ["a", "b", "c", ""][int(rng.integers(0, 4))]
            urls.append(f"https://{name.split('/')[0]}/{section + '/' if section else ''}p{page}.html")
    for _ in range(int(rng.integers(0, 4))):  # pages without a site
        texts.append(" ".join(word() for _ in range(int(rng.integers(0, 20)))))
        sites.append(None)
        urls.append(None)
    order = rng.permutation(len(texts))  # sites interleave in corpus order
    return [texts[i] for i in order], [sites[i] for i in order], [urls[i] for i in order]


def assert_equal_to_whole(texts, sites, urls, config, part_of_doc, rng):
    records, stats, covered, exact_per_doc = whole_corpus(texts, sites, urls, config)
    merged = merge_partitions(by_partitions(texts, sites, urls, config, part_of_doc, rng), config, exact_per_doc)
    assert merged.records == records
    assert without_timings(merged.stats) == without_timings(stats)
    assert list(merged.stats) == list(stats)  # keys in the same order (the JSON text matches)
    assert merged.covered_tokens == covered and merged.documents == len(texts)
    return records


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), n_partitions=st.integers(1, 4), small=st.booleans())
def test_detection_by_site_partitions_equals_the_whole_corpus(seed, n_partitions, small):
    texts, sites, urls = site_corpus(seed)
    rng = np.random.default_rng(seed + 1)
    keys = sorted({route_key(s) for s in sites if s is not None})
    where = dict(zip(keys, rng.integers(0, n_partitions, len(keys)).tolist()))
    part_of_doc = [where[route_key(s)] if s is not None else int(rng.integers(0, n_partitions)) for s in sites]
    assert_equal_to_whole(texts, sites, urls, SMALL if small else TemplateConfig(), part_of_doc, rng)


def test_planted_templates_are_found_so_the_comparison_is_not_empty():
    texts, sites, urls = site_corpus(7)
    records, _, _, _ = whole_corpus(texts, sites, urls, SMALL)
    kinds = {r["kind"] for r in records}
    assert {"config", "block", "skeleton"} <= kinds


@pytest.mark.parametrize("n_partitions", [2, 3])
def test_the_web_crawl_by_balanced_partitions_equals_the_whole_crawl(n_partitions):
    from bloomspan.corpora.web import generate_web

    docs = list(generate_web(500, seed=2, n_sites=12))
    texts, sites, urls = [d["text"] for d in docs], [d["site"] for d in docs], [d["url"] for d in docs]
    keys = sorted({route_key(s) for s in sites})
    lengths = {k: sum(len(t) for t, s in zip(texts, sites) if route_key(s) == k) for k in keys}
    part = dict(zip(keys, assign_partitions(keys, np.asarray([lengths[k] for k in keys]), n_partitions).tolist()))
    records = assert_equal_to_whole(texts, sites, urls, TemplateConfig(), [part[route_key(s)] for s in sites],
                                    np.random.default_rng(0))
    assert sum(r["kind"] == "skeleton" for r in records) >= 5 and sum(r["kind"] == "block" for r in records) >= 20


def test_assign_partitions_puts_the_largest_keys_first_onto_the_least_loaded():
    keys = ["a", "b", "c", "d", "e"]
    got = assign_partitions(keys, np.asarray([10, 7, 6, 5, 1]), 2)
    assert got.tolist() == [0, 1, 1, 0, 1]  # 10 | 7, then 6 -> 1 (7 < 10), 5 -> 0 (10 < 13), 1 -> 1 (13 < 15)
    loads = np.bincount(got, weights=[10, 7, 6, 5, 1], minlength=2)
    assert loads.tolist() == [15, 14]


def test_route_key_puts_a_site_named_like_a_section_with_its_site():
    assert route_key("s0/b") == route_key("s0") == "s0"
    assert route_key("example.com") == "example.com"


@pytest.mark.parametrize("field,value", [("global_min_length", 8), ("global_blocks", True),
                                         ("exact_phrases_on_sites", True)])
def test_cross_site_configs_are_refused_naming_the_field(field, value):
    config = TemplateConfig(**{field: value})
    refusal = site_partition_refusal(config)
    assert isinstance(refusal, ConfigError) and refusal.field == field
    with pytest.raises(ConfigError, match=field):
        detect_partition(np.zeros(0, dtype=np.uint32), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                         [], [[]], config, np.zeros(0, dtype=np.int64))


def test_skeleton_off_with_line_shapes_is_refused_and_the_defaults_are_not():
    assert site_partition_refusal(TemplateConfig(skeleton=None)).field == "skeleton"
    assert site_partition_refusal(TemplateConfig(skeleton=None, line_shape_gap=0)) is None
    assert site_partition_refusal(TemplateConfig()) is None


def test_merge_detector_stats_sums_counts_and_joins_group_tables_in_name_order():
    a = {"config": {"x": 1}, "tokens_mined": 10, "level0_groups": {"b": {"documents": 2}},
         "phrases_by_kind": {"mcfp": 1, "block": 2}, "covered_tokens": 4, "covered_share": 0.4, "seconds_total": 1.0}
    b = {"config": {"x": 1}, "tokens_mined": 30, "level0_groups": {"a": {"documents": 5}},
         "phrases_by_kind": {"mcfp": 0, "block": 3}, "covered_tokens": 6, "covered_share": 0.2, "seconds_total": 2.0}
    for first, second in itertools.permutations([a, b]):
        got = merge_detector_stats([first, second])
        assert got["tokens_mined"] == 40 and got["covered_tokens"] == 10 and got["covered_share"] == 10 / 40
        assert list(got["level0_groups"]) == ["a", "b"]
        assert got["phrases_by_kind"] == {"mcfp": 1, "block": 5} and got["seconds_total"] == 3.0


def test_merge_refuses_detected_tokens_on_a_document_without_a_record():
    part = PartitionTemplates([], {"tokens_mined": 3}, np.asarray([0]), np.asarray([2]), np.asarray([False]))
    with pytest.raises(ValueError, match="without a record"):
        merge_partitions([part], TemplateConfig())
