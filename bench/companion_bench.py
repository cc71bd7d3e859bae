"""Companion systems: paragraph dedup, emerging boilerplate, near-duplicate collapse.

    python -m bench.companion_bench --crawl-docs 4000

1. **Paragraph dedup** — a synthetic corpus with a known share of repeated paragraphs
   (``--dedup-docs`` documents): throughput and the screen's false-positive rate at several
   bytes per item B against the formula ``p = exp(-8 B ln2^2)`` (the rate of the full
   filter) and against the rate expected while the filter fills (each once-occurring
   paragraph is asked about when ``n`` digests are in: ``(1 - e^(-kn/m))^k``); then the
   throughput on the web crawl.
2. **Emerging boilerplate** — :func:`bloomspan.ingest.companions.emerging.measure_emerging` on Zipfian
   streams (a template from mid-stream on vs none): detection delay and false-trigger rate
   at several filter sizes (fixed memory); then the crawl's second half streamed with the
   phrases mined from its first half as known: how many emerging shingles, and what share of
   them lies inside the generator's true template spans.
3. **Collapse time for the top 80** (reference: 66 ms): :func:`collapse_hits` on 80 hits
   from the crawl, and :func:`search_collapsed` end to end on the real node.
4. **Near-duplicate precision/recall** on the crawl's planted near-duplicates, fingerprints
   of the raw text vs text stripped with mined phrases vs text stripped of the true
   template spans (an upper bound): all pairs within each site, and per query on the node
   (top 80 of 10-word queries).

Writes its figures to ``bench/results/companion.json``.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import math
import os
import random
import shlex
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from bench.mining_bench import machine
from bench.result_file import RESULTS_DIR, write_section

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)


# --------------------------------------------------------------------------- 1. paragraph dedup


def synthetic_paragraph_corpus(n_docs: int, seed: int = 0) -> list[dict]:
    """Documents of 3-9 paragraphs; 30 % of paragraphs come from a pool of 2,000 shared ones."""
    rng = random.Random(seed)
    pool = [f"Shared block {i}: " + " ".join(f"w{rng.randrange(50_000)}" for _ in range(rng.randint(5, 30)))
            for i in range(2000)]
    docs = []
    for d in range(n_docs):
        paras = []
        for j in range(rng.randint(3, 9)):
            if rng.random() < 0.3:
                paras.append(rng.choice(pool))
            else:
                paras.append(f"Doc {d} part {j}: " + " ".join(f"w{rng.randrange(50_000)}" for _ in range(rng.randint(5, 40))))
        docs.append({"id": d, "text": "\n\n".join(paras)})
    return docs


def expected_false_positives(docs: list[dict], m: int, k: int) -> tuple[float, int]:
    """``(E[false positives], once-occurring paragraphs)`` with the filter filling in input order."""
    from bloomspan.ingest.companions.paragraph_dedup import paragraphs

    counts = Counter(p for d in docs for p in paragraphs(d["text"]))
    seen: set[str] = set()
    expected = 0.0
    for d in docs:
        for p in paragraphs(d["text"]):
            if p in seen:
                continue
            if counts[p] == 1:
                expected += (1.0 - math.exp(-k * len(seen) / m)) ** k
            seen.add(p)
    return expected, sum(1 for c in counts.values() if c == 1)


def bench_dedup(docs: list[dict], b: float) -> dict:
    from bloomspan.ingest.companions.paragraph_dedup import DedupStats, dedup_documents

    stats = DedupStats()
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    w0, c0 = time.perf_counter(), time.process_time()
    out = sum(1 for _ in dedup_documents(docs, "text", b, stats=stats))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert out == stats.documents_out
    return {"b": b, "stats": stats, "wall": wall, "cpu": cpu, "mb": mb}


def section_dedup(n_docs: int, crawl: list[dict]) -> list[str]:
    from bloomspan.engine.sketches.bloom_filter import bloom_rate

    docs = synthetic_paragraph_corpus(n_docs)
    lines = ["", f"**1. Paragraph dedup** — synthetic corpus: {len(docs):,} documents (30 % of paragraphs from a pool "
             "of 2,000 shared ones).", "",
             "| B (bytes/item) | filter bits | k | paragraphs | duplicates removed | docs dropped | candidates | "
             "false positives | FP rate measured | expected while filling | formula p (full filter) | "
             "paragraphs/s per core | MB/s per core |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in (0.25, 0.5, 1.0, 2.0, 10.0):
        r = bench_dedup(docs, b)
        s = r["stats"]
        exp_fp, once = expected_false_positives(docs, s.filter_bits, s.filter_hashes)
        lines.append(f"| {b} | {s.filter_bits:,} | {s.filter_hashes} | {s.paragraphs:,} | {s.duplicate_paragraphs:,} | "
                     f"{s.documents_dropped:,} | {s.candidates:,} | {s.false_positives:,} | "
                     f"{s.false_positives / once:.2e} | {exp_fp / once:.2e} | {bloom_rate(b):.2e} | "
                     f"{s.paragraphs / r['cpu']:,.0f} | {r['mb'] / r['cpu']:.1f} |")
        print(f"dedup B={b}: fp {s.false_positives} expected {exp_fp:.1f}", file=sys.stderr)
    r = bench_dedup([{"id": d["id"], "text": d["text"]} for d in crawl], 10.0)
    s = r["stats"]
    lines += ["", f"Web crawl ({len(crawl):,} pages, {r['mb']:.1f} MB, B = 10): {s.paragraphs:,} paragraphs, "
              f"{s.duplicate_paragraphs:,} repeats removed ({s.duplicate_paragraphs / s.paragraphs:.1%}), "
              f"{s.documents_modified:,} pages modified, {s.documents_dropped:,} dropped; "
              f"{len(crawl) / r['cpu']:,.0f} docs/s, {r['mb'] / r['cpu']:.1f} MB/s per core "
              f"(wall {r['mb'] / r['wall']:.1f} MB/s)."]
    return lines


# --------------------------------------------------------------------------- 2. emerging


def only_template(doc: dict, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is template text: every character outside the true
    template spans is white space (a shingle may run across two adjacent template blocks)."""
    text, pos = doc["text"], start
    for s, e in doc["truth"]["template_spans"]:
        if e <= pos or s >= end:
            continue
        if text[pos:max(s, pos)].strip():
            return False
        pos = max(pos, e)
    return not text[pos:end].strip()


def section_emerging(crawl: list[dict], mine_docs: int, phrases) -> list[str]:
    from bloomspan.ingest.companions.emerging import (
        EmergingConfig,
        EmergingDetector,
        known_shingles,
        measure_emerging,
    )

    lines = ["", "**2. Emerging boilerplate** — `measure_emerging`: 4,000 Zipfian documents (40-80 tokens, 5,000 "
             "words), a 40-token template in half of the documents from document 2,000 on; k = 8, 64 bits per "
             "shingle, 8 per sighting, threshold 16 shingles. False triggers: callbacks (cooldown 0) on the same "
             "stream without the template.", "",
             "| filter | detection delay (docs) | template sightings until trigger | false triggers | "
             "false-trigger rate per doc | false emerging shingles | seconds |",
             "|---|---|---|---|---|---|---|"]
    for bits in (1 << 16, 1 << 18, 1 << 20, 1 << 22):
        cfg = EmergingConfig(filter_bits=bits, threshold=16)
        t0 = time.perf_counter()
        m = measure_emerging(cfg, n_docs=4000, template_start=2000, template_rate=0.5, template_tokens=40)
        lines.append(f"| {m.filter_bytes / 1024:,.0f} KiB | {m.detection_delay_docs} | {m.template_sightings} | "
                     f"{m.false_triggers} | {m.false_trigger_rate:.4f} | {m.false_emerging} | "
                     f"{time.perf_counter() - t0:.1f} |")
        print(f"emerging {bits}: delay {m.detection_delay_docs} false {m.false_triggers}", file=sys.stderr)
    # the crawl: second half, phrases of the first half known
    k = 8
    known = known_shingles(phrases, k)
    rest = crawl[mine_docs:]
    first_fire: list[int] = []
    det = EmergingDetector(EmergingConfig(shingle_tokens=k, threshold=16, cooldown_seconds=3600.0), known=known,
                           on_threshold=lambda shingles: first_fire.append(det.counters.documents))
    in_groups = {d["truth"]["near_duplicate_of"] for d in crawl if d["truth"]["near_duplicate_of"]}
    in_groups |= {d["id"] for d in crawl if d["truth"]["near_duplicate_of"]}
    t0 = time.perf_counter()
    for d in rest:
        det.observe(d["text"])
    seconds = time.perf_counter() - t0
    in_template = located = near_dup_content = 0
    for e in det.emerging():
        doc = rest[e.first_document - 1]
        pos = doc["text"].find(e.example)
        if pos < 0:
            continue
        located += 1
        end = pos + len(e.example)
        inside = only_template(doc, pos, end)
        in_template += inside
        near_dup_content += not inside and doc["id"] in in_groups
    c = det.counters
    lines += ["", f"Crawl: {len(rest):,} new pages after the {mine_docs:,} mined ({len(phrases):,} phrases known, "
              f"{len(known):,} shingles): {c.full_hits:,} full hits, {c.known_hits:,} of them known; "
              f"{c.emerging_reported:,} emerging shingles, {in_template:,} of {located:,} located are true template "
              f"text ({in_template / max(located, 1):.1%}; a shingle may span two adjacent template blocks), "
              f"{near_dup_content:,} are content of planted near-duplicate pages; the threshold (16) was first crossed after "
              f"{first_fire[0] if first_fire else 'no'} pages; {len(rest) / seconds:,.0f} docs/s; "
              f"filter {det.filter.nbytes / 1024:,.0f} KiB."]
    return lines


# --------------------------------------------------------------------------- 3 & 4. near duplicates


def truth_pairs(docs: list[dict]) -> set[frozenset]:
    groups = defaultdict(list)
    for d in docs:
        groups[d["truth"]["near_duplicate_of"] or d["id"]].append(d["id"])
    return {frozenset(p) for g in groups.values() for p in itertools.combinations(g, 2)}


def strip_truth(doc: dict) -> str:
    text, pieces, pos = doc["text"], [], 0
    for s, e in doc["truth"]["template_spans"]:
        pieces.append(text[pos:s])
        pos = e
    pieces.append(text[pos:])
    return "\n".join(p for p in pieces if p.strip())


def all_pairs_table(docs: list[dict], variants: dict[str, list[bytes]]) -> list[str]:
    from bloomspan.ingest.companions.near_duplicates import similarity_matrix

    truth = truth_pairs(docs)
    by_site = defaultdict(list)
    for i, d in enumerate(docs):
        by_site[d["site"]].append(i)
    lines = ["", f"All pairs within each site ({sum(len(v) * (len(v) - 1) // 2 for v in by_site.values()):,} pairs, "
             f"{len(truth)} planted pairs); a false pair is two different pages of one site:", "",
             "| fingerprints of | threshold | true pairs found | recall | false pairs | precision | false pairs by page types |",
             "|---|---|---|---|---|---|---|"]
    for name, fps in variants.items():
        sims, labels, kinds = [], [], []
        for ix in by_site.values():
            mat = similarity_matrix(np.frombuffer(b"".join(fps[i] for i in ix), dtype=np.uint8).reshape(len(ix), -1))
            a, b = np.triu_indices(len(ix), 1)
            sims.append(mat[a, b])
            labels.extend(frozenset((docs[ix[x]]["id"], docs[ix[y]]["id"])) in truth for x, y in zip(a, b))
            kinds.extend("+".join(sorted((docs[ix[x]]["page_type"], docs[ix[y]]["page_type"]))) for x, y in zip(a, b))
        sim, lab, kinds = np.concatenate(sims), np.array(labels), np.array(kinds)
        for t in THRESHOLDS:
            pred = sim >= t
            tp, fp = int((pred & lab).sum()), int((pred & ~lab).sum())
            top = Counter(kinds[pred & ~lab].tolist()).most_common(3)
            lines.append(f"| {name} | {t} | {tp} | {tp / max(lab.sum(), 1):.3f} | {fp:,} | "
                         f"{tp / max(tp + fp, 1):.3f} | {', '.join(f'{k} {v}' for k, v in top)} |")
    return lines


def section_near_dups(client, crawl: list[dict], phrases, prefix: str) -> list[str]:
    from opensearchpy import helpers

    from bloomspan.engine.sketches.chunk_fingerprint import fingerprint
    from bloomspan.engine.text.tokenizer import tokenize
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.ingest.companions.near_duplicates import collapse, pairs_from_groups, precision_recall
    from bloomspan.mappings import load
    from bloomspan.sidecar.serve.near_dup_search import collapse_hits, search_collapsed

    cleaner = Cleaner(phrases, CleanerConfig(fields=("text",), mode="mark", fingerprint=True, id_field="id"))
    t0 = time.perf_counter()
    stripped = [base64.b64decode(r.doc["bloomspan"]["fingerprint"]) for r in cleaner.clean_batch(crawl)]
    clean_fp_s = time.perf_counter() - t0
    raw = [fingerprint(d["text"]) for d in crawl]
    oracle = [fingerprint(strip_truth(d)) for d in crawl]
    truth = truth_pairs(crawl)

    # 3. collapse time of the top 80 (hits as the cluster returns them: dicts with _source)
    rng = random.Random(1)
    dup_ids = {i for p in truth for i in p}
    pick = [i for i, d in enumerate(crawl) if d["id"] in dup_ids][:30]
    pick += rng.sample([i for i in range(len(crawl)) if i not in pick], 80 - len(pick))
    hits = [{"_id": crawl[i]["id"], "_score": 80.0 - n, "_source": {"bloomspan": {
        "fingerprint": base64.b64encode(stripped[i]).decode()}}} for n, i in enumerate(pick)]
    times = []
    for _ in range(300):
        t = time.perf_counter()
        collapse_hits(hits, 0.4)
        times.append((time.perf_counter() - t) * 1e3)
    core = [(h["_id"], h["_score"], stripped[i]) for h, i in zip(hits, pick)]
    core_times = []
    for _ in range(300):
        t = time.perf_counter()
        collapse(core, 0.4)
        core_times.append((time.perf_counter() - t) * 1e3)
    lines = ["", "**3. Collapse time for the top 80** (reference: 66 ms) — 80 crawl pages incl. planted groups, "
             "threshold 0.4, 300 runs:", "",
             f"- `collapse_hits` (decode base64, pairwise AND + popcount, grouping, response objects): median "
             f"{np.median(times):.2f} ms, p99 {np.percentile(times, 99):.2f} ms",
             f"- `near_duplicates.collapse` on raw filters: median {np.median(core_times):.2f} ms, p99 "
             f"{np.percentile(core_times, 99):.2f} ms",
             f"- fingerprinting at ingest (inside `Cleaner`, mark mode, {len(crawl):,} pages): "
             f"{clean_fp_s * 1e3 / len(crawl):.2f} ms per page including the clean"]

    # index for the end-to-end and per-query measurements
    index = f"{prefix}crawl"
    mappings = load("documents")["template"]["mappings"]
    mappings["properties"].update({"text": {"type": "text"}, "site": {"type": "keyword"},
                                   "fp_raw": {"type": "binary"}, "fp_oracle": {"type": "binary"}})
    client.indices.delete(index=index, ignore_unavailable=True)
    client.indices.create(index=index, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                                             "mappings": mappings})
    try:
        helpers.bulk(client, ({"_index": index, "_id": d["id"], "_source": {
            "text": d["text"], "site": d["site"], "fp_raw": base64.b64encode(raw[i]).decode(),
            "fp_oracle": base64.b64encode(oracle[i]).decode(),
            "bloomspan": {"fingerprint": base64.b64encode(stripped[i]).decode()}}} for i, d in enumerate(crawl)),
            refresh=True, chunk_size=250)
        qrng = random.Random(3)
        by_id = {d["id"]: d for d in crawl}
        roots = sorted({d["truth"]["near_duplicate_of"] for d in crawl if d["truth"]["near_duplicate_of"]})
        picks = [by_id[r] for r in roots] + qrng.sample([d for d in crawl if d["page_type"] == "article"], 40)
        queries = []
        for d in picks:
            toks = tokenize(d["text"])
            queries.append({"query": {"match": {"text": " ".join(qrng.sample(toks, min(10, len(toks))))}}})
        site = {d["id"]: d["site"] for d in crawl}
        e2e, cms = [], []
        rows = []
        for name, fld in (("raw text", "fp_raw"), ("stripped, mined phrases", "bloomspan.fingerprint"),
                          ("stripped, true templates", "fp_oracle")):
            for t in (0.4, 0.5):
                predicted, relevant = set(), set()
                for body in queries:
                    t1 = time.perf_counter()
                    res = search_collapsed(client, index, body, k=80, threshold=t, fingerprint_field=fld)
                    e2e.append((time.perf_counter() - t1) * 1e3)
                    cms.append(res["bloomspan"]["collapse_ms"])
                    groups = [[h["_id"]] + [m["_id"] for m in h["collapsed"]] for h in res["hits"]["hits"]]
                    ids = {i for g in groups for i in g}
                    predicted |= pairs_from_groups(groups)
                    relevant |= {p for p in truth if p <= ids}
                pr = precision_recall(predicted, relevant)
                same_site = sum(1 for p in predicted - relevant if len({site[i] for i in p}) == 1)
                rows.append(f"| {name} | {t} | {pr.tp} of {pr.tp + pr.fn} | {pr.recall:.3f} | {pr.fp} | {same_site} | "
                            f"{pr.precision:.3f} |")
        lines.append(f"- `search_collapsed` end to end on the node ({len(e2e)} queries, top 80): median "
                     f"{np.median(e2e):.1f} ms, p99 {np.percentile(e2e, 99):.1f} ms, of which collapse median "
                     f"{np.median(cms):.2f} ms")
        lines += ["", f"**4. Near-duplicate precision/recall** — crawl of {len(crawl):,} pages, {len(truth)} planted "
                  f"pairs; {len(phrases):,} mined phrases (sigma 20, min_length 10) for stripping.", "",
                  f"Per query on the node: {len(queries)} queries (10 words of each planted original, and 40 of "
                  "random articles), top 80 each; pairs counted once:", "",
                  "| fingerprints of | threshold | planted pairs found | recall | false pairs | of them same site | precision |",
                  "|---|---|---|---|---|---|---|", *rows]
    finally:
        client.indices.delete(index=index, ignore_unavailable=True)
    lines += all_pairs_table(crawl, {"raw text": raw, "stripped, mined phrases": stripped,
                                     "stripped, true templates": oracle})
    return lines


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--crawl-docs", type=int, default=4000)
    ap.add_argument("--dedup-docs", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="Where companion.json goes.")
    args = ap.parse_args(argv)
    command = "python -m bench.companion_bench " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))

    from opensearchpy import OpenSearch

    from bloomspan.corpora import generate_web, write_jsonl
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.ingest.records.phrase_set import PhraseSet
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

    client = OpenSearch(hosts=[args.url], timeout=120)
    client.info()
    t_start = time.perf_counter()
    crawl = list(generate_web(args.crawl_docs, args.seed))
    half = len(crawl) // 2
    with tempfile.TemporaryDirectory(prefix="bloomspan-companion-bench-") as tmp:
        write_jsonl(iter(crawl), f"{tmp}/all.jsonl")
        write_jsonl(iter(crawl[:half]), f"{tmp}/half.jsonl")
        config = MiningConfig(sigma=20, min_length=10, engine="fhk")
        mine_jsonl(f"{tmp}/all.jsonl", "text", config, f"{tmp}/all")
        mine_jsonl(f"{tmp}/half.jsonl", "text", config, f"{tmp}/half")
        phrases_all = PhraseSet.from_jsonl(f"{tmp}/all/phrases.jsonl")
        phrases_half = PhraseSet.from_jsonl(f"{tmp}/half/phrases.jsonl")
    lines = [f"\n### Companion systems: crawl of {len(crawl):,} pages (seed {args.seed})",
             f"`{command}` — {time.strftime('%Y-%m-%d %H:%M')} — {machine()}"]
    lines += section_dedup(args.dedup_docs, crawl)
    lines += section_emerging(crawl, half, phrases_half)
    prefix = "bench-companion-" + hashlib.blake2b(os.urandom(8), digest_size=4).hexdigest() + "-"
    lines += section_near_dups(client, crawl, phrases_all, prefix)
    lines += ["", f"Whole run {time.perf_counter() - t_start:.0f} s; load average at the end {os.getloadavg()[0]:.1f}."]

    write_section("companion", "Companion systems", "\n".join(lines), results_dir=args.results_dir)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
