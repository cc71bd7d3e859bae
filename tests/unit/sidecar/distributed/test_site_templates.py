"""The template stage's task functions, called in this process (the Dask run is in
tests/integration/sidecar/distributed/test_site_templates.py): a byte-range shard read with the
template fields keeps the values and line starts the single-node reader has, and routing the
shards' pages to partitions, detecting each and merging gives detect_run_templates' records
and stats."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.mining.report import covered_per_doc
from bloomspan.engine.templates.blocks import block_offsets_from_flags
from bloomspan.engine.templates.site_partitions import merge_summaries, merged_records
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.distributed.coverage import ShardCoverage
from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range
from bloomspan.sidecar.distributed.site_templates import detect_site_partition, site_loads, site_pages
from bloomspan.sidecar.run.jsonl_mining import read_documents_with
from bloomspan.sidecar.run.run_templates import TemplateOptions, detect_run_templates

OPTIONS = TemplateOptions(site_field="site", url_field="url")


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if not k.startswith("seconds")}
    return value


def _write(path, docs):
    with open(path, "w", encoding="utf-8", newline="") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")


def test_a_shard_read_for_templates_keeps_the_fields_and_line_starts_of_the_single_reader(tmp_path):
    docs = [{"id": i, "text": f"line one {i}\nline two\r\nthree", "site": ["a.org", "", 7, None, "b.org"][i % 5],
             "url": f"https://a.org/s{i % 3}/p{i}.html"} for i in range(40)]
    docs[5]["text"] = "a lone\rreturn splits"  # read through the slow path
    del docs[9]["site"]
    path = tmp_path / "d.jsonl"
    _write(path, docs)
    expected = list(read_documents_with(str(path), "text", "id", ("site", "url")))
    _, _, lines = encode_batch([t for _, t, _ in expected], Vocabulary(), count_df=False, with_lines=True)
    got_sites, got_urls, got_lines = [], [], []
    for k, (a, b) in enumerate(byte_ranges(str(path), 4)):
        shard = read_jsonl_range(str(path), a, b, "text", "id", k, ("site", "url"))
        got_sites += shard.fields["site"]
        got_urls += shard.fields["url"]
        got_lines.append(shard.line_starts)
    assert got_sites == [v[0] for _, _, v in expected] and got_urls == [v[1] for _, _, v in expected]
    assert np.array_equal(np.concatenate(got_lines), lines)
    plain = read_jsonl_range(str(path), 0, path.stat().st_size, "text", "id", 0)
    assert plain.fields is None and plain.line_starts is None  # nothing extra unless asked


@pytest.mark.parametrize("n_ranges,n_partitions", [(1, 1), (3, 2), (5, 4)])
def test_routed_partitions_merge_to_the_single_process_templates(tmp_path, n_ranges, n_partitions):
    from bloomspan.corpora.web import generate_web

    docs = [{"id": d["id"], "text": d["text"], "site": d["site"], "url": d["url"]}
            for d in generate_web(400, seed=9, n_sites=10)]
    for d in docs[::37]:
        d.pop("site")  # pages without a site: their URL's host is their site
    for d in docs[::53]:
        d.pop("site", None)
        d["url"] = "not a url"  # ... and without either, no site at all
    path = tmp_path / "web.jsonl"
    _write(path, docs)
    texts = [d["text"] for d in docs]
    vocab = Vocabulary()
    tokens, offsets, lines = encode_batch(texts, vocab, count_df=False, with_lines=True)
    exact = mine(tokens, offsets, MiningConfig(sigma=10, min_length=8)).coverage
    single_records, single_stats = detect_run_templates(
        tokens, offsets, block_offsets_from_flags(lines.view(np.bool_), offsets), vocab,
        [d.get("site") or None for d in docs], [d["url"] for d in docs], OPTIONS, exact)

    fields = (OPTIONS.site_field, OPTIONS.url_field, OPTIONS.detector_config().section_depth)
    shards = [read_jsonl_range(str(path), a, b, "text", "id", k, OPTIONS.fields)
              for k, (a, b) in enumerate(byte_ranges(str(path), n_ranges))]
    loads = [site_loads(s, *fields) for s in shards]
    keys = sorted({k for ld in loads for k in ld.keys})
    where = {k: i % n_partitions for i, k in enumerate(keys)}
    base = np.cumsum([0] + [s.n_docs for s in shards])
    exact_per_doc = covered_per_doc(exact, offsets)
    # each shard's exact covered counts travel with its pages (the driver holds none of them)
    parts = [site_pages(s, *fields, where, n_partitions, np.arange(base[k], base[k + 1]), k,
                        ShardCoverage(exact_per_doc[base[k]:base[k + 1]], None))
             for k, s in enumerate(shards)]
    detected = [detect_site_partition([p[q] for p in parts], OPTIONS.detector_config().to_dict(), q)
                for q in range(n_partitions)]
    merged = merge_summaries(detected[::-1], OPTIONS.detector_config())
    assert merged.records == single_records and len(single_records) > 50
    # the stream the Dask driver writes a record at a time lists the same records
    batches = [iter(d.records) for d in detected[::-1] if d.documents]
    assert list(merged_records(batches, OPTIONS.detector_config())) == single_records
    assert without_timings(merged.stats) == without_timings(single_stats["detector"])
    assert merged.covered_tokens == single_stats["covered_tokens"]
    assert sum(int(ld.pages.sum()) for ld in loads) == single_stats["documents_with_site"]
