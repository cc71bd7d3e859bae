"""Where the proxy spends its CPU on a ``_bulk`` body: one table per stage of the item path.

    python -m bench.proxy_stage_profile --docs 3000 --chunk 500

The web crawl and the records of :mod:`bench.proxy_bench` (phrases and site templates mined
with FHK, sigma 20, min_length 10, from the first ``--mine-docs`` pages); the next ``--docs``
pages become bulk bodies of ``--chunk`` documents, written as opensearch-py's ``helpers.bulk``
writes them. Each body goes through what `serve` does with it between the socket and the
upstream connection, in this process and without a network: :func:`~bloomspan.sidecar.serve.
bulk_items.parse_bulk`, then :class:`~bloomspan.sidecar.serve.bulk_proxy.BulkRewrite` with the
strip cleaner of ``bench.proxy_bench``'s ``strip`` proxy (``--phrases phrases.jsonl``;
``--templates``: its ``strip + templates`` proxy, ``--phrases templates.jsonl --site-field site``), then the forwarded body joined.

Stages (exclusive CPU seconds, the wrappers of :class:`bench.clean_stage_profile.StageTimer`):
read actions (``parse_bulk``), read sources (the spans reader of each cleaned source), the
cleaner's own stages (tokenize, window + phrase match, template records, skeletons, removal
fixed point, apply, ...: as :mod:`bench.clean_stage_profile` names them), json splice (the
changed values cut into the original text and encoded), join (the forwarded body's pieces) and
other proxy (the rewrite's loop: patterns, rounds, stats). The bar is ``json.loads`` of every
line of the same bodies (the stdlib reader the proxy uses) and ``orjson.loads``.

Forwarding (the upstream connection) is not here: ``bench.proxy_bench``'s pass-through row
measures it against the node.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.clean_stage_profile import STAGES as CLEAN_STAGES, StageTimer, install_timers
from bench.result_file import RESULTS_DIR, command_line, write_section

PROXY_STAGES = ("read actions", "read sources", "json splice", "join", "other proxy")
INDEX = "bench-proxy-clean-a"


def bulk_bodies(docs: list[dict], chunk: int) -> list[bytes]:
    """``docs`` as NDJSON bulk bodies of ``chunk`` items, spelled as opensearch-py spells them."""
    bodies = []
    for at in range(0, len(docs), chunk):
        lines = []
        for d in docs[at:at + chunk]:
            lines.append(json.dumps({"index": {"_index": INDEX, "_id": d["id"]}}, separators=(",", ":")))
            lines.append(json.dumps({"text": d["text"], "site": d["site"]}, separators=(",", ":"), ensure_ascii=False))
        bodies.append(("\n".join(lines) + "\n").encode("utf-8"))
    return bodies


def install_proxy_timers(timer: StageTimer) -> None:
    """Wrap the proxy's stage functions in place (this process only)."""
    from bloomspan.sidecar.serve import bulk_proxy

    bulk_proxy._parse_source = timer.wrap(bulk_proxy._parse_source, "read sources")
    bulk_proxy._cleaned_source = timer.wrap(bulk_proxy._cleaned_source, "json splice")
    bulk_proxy.BulkOutput.joined = timer.wrap(bulk_proxy.BulkOutput.joined, "join")
    bulk_proxy.BulkRewrite.output = timer.wrap(bulk_proxy.BulkRewrite.output, "other proxy")


def reader_cpu(bodies: list[bytes], loads) -> float:
    """CPU seconds of ``loads`` over every line of ``bodies``."""
    lines = [line for body in bodies for line in body.splitlines() if line]
    t = time.process_time()
    for line in lines:
        loads(line)
    return time.process_time() - t


def splice_ab(bodies: list[bytes], cleaner) -> tuple[float, float, int]:
    """CPU seconds of splicing every cleaned source of ``bodies`` as text then encoded (the
    proxy before it spliced bytes) and as bytes (:func:`~bloomspan.sidecar.serve.json_splice.
    splice_bytes`, now), on the same clean results; and how many sources changed. Each output
    is checked to be the same bytes."""
    from bloomspan.sidecar.serve.bulk_items import parse_bulk
    from bloomspan.sidecar.serve.bulk_proxy import source_plan
    from bloomspan.sidecar.serve.json_splice import parse_object, splice, splice_bytes

    plan = source_plan(cleaner.config)
    cases = []
    for body in bodies:
        raws = [body[i.source_span[0]:i.source_span[1]] for i in parse_bulk(body, None).rewrite_items()]
        read = [(raw, raw.decode("utf-8")) for raw in raws]
        parsed = [(raw, text, *parse_object(text, plan)[:2]) for raw, text in read]
        results = cleaner.clean_batch([doc for _, _, doc, _ in parsed], [None] * len(parsed))
        cases += [(raw, text, spans, doc, r.doc) for (raw, text, doc, spans), r in zip(parsed, results) if r.changed]
    t0 = time.process_time()
    as_text = [splice(text, spans, doc, new, plan).encode("utf-8") for raw, text, spans, doc, new in cases]
    t1 = time.process_time()
    as_bytes = [splice_bytes(raw, text, spans, doc, new, plan) for raw, text, spans, doc, new in cases]
    t2 = time.process_time()
    if as_text != as_bytes:
        raise SystemExit("splice_bytes differs from splice(...).encode() on the bench crawl")
    return t1 - t0, t2 - t1, len(cases)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--mine-docs", type=int, default=3000)
    ap.add_argument("--chunk", type=int, default=500, help="documents per bulk body")
    ap.add_argument("--templates", action="store_true", help="clean with the site templates too (--site-field site)")
    ap.add_argument("--reps", type=int, default=2, help="passes over the bodies before the profiled one (warm-up)")
    ap.add_argument("--write", action="store_true", help="write bench/results/proxy-stage-profile.json")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args(argv)

    import orjson

    from bloomspan.corpora import default_n_sites, generate_web, write_jsonl
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl
    from bloomspan.sidecar.run.run_templates import TemplateOptions
    from bloomspan.sidecar.serve.bulk_items import parse_bulk
    from bloomspan.sidecar.serve.bulk_proxy import BulkRewrite, IndexPatterns
    from bloomspan.sidecar.serve.state import CleanerHolder, ServeConfig

    total = args.mine_docs + args.docs
    crawl = list(generate_web(total, 5, n_sites=default_n_sites(total)))
    bodies = bulk_bodies(crawl[args.mine_docs:], args.chunk)
    mb = sum(len(b) for b in bodies) / 1e6
    with tempfile.TemporaryDirectory(prefix="bloomspan-proxy-profile-") as tmp:
        write_jsonl(iter(crawl[: args.mine_docs]), str(Path(tmp) / "mine.jsonl"))
        mined = mine_jsonl(str(Path(tmp) / "mine.jsonl"), "text", MiningConfig(sigma=20, min_length=10, engine="fhk"),
                           str(Path(tmp) / "mined"), templates=TemplateOptions(site_field="site"))
        records = Path(tmp) / "mined" / ("templates.jsonl" if args.templates else "phrases.jsonl")
        config = ServeConfig(upstream_url="http://127.0.0.1:9", clean_indices=("bench-proxy-clean-*",),
                             phrases_path=str(records), scope_field="site" if args.templates else None)
        holder = CleanerHolder(config)
        holder.refresh()
        cleaner = holder.current
    del crawl
    patterns = IndexPatterns(config.clean_indices)

    def one_pass() -> int:
        changed = 0
        for body in bodies:
            bulk = timed_parse(body, None)
            rewrite = BulkRewrite(body, cleaner, patterns, bulk=bulk)
            changed += rewrite.output().joined() is not body
        return changed

    timed_parse = parse_bulk
    for _ in range(max(args.reps, 1)):  # numba's caches, the vocabulary, the allocator
        one_pass()
    json_s, orjson_s = reader_cpu(bodies, json.loads), reader_cpu(bodies, orjson.loads)
    timer = StageTimer()
    timed_parse = timer.wrap(parse_bulk, "read actions")
    install_timers(timer)
    install_proxy_timers(timer)
    t0 = time.process_time()
    changed = one_pass()
    whole = time.process_time() - t0
    text_s, bytes_s, n_spliced = splice_ab(bodies, cleaner)
    stages = [s for s in PROXY_STAGES[:2] + CLEAN_STAGES + PROXY_STAGES[2:] if timer.cpu.get(s)]
    rows = [f"| {s} | {timer.cpu[s]:.3f} | {timer.cpu[s] / whole:.0%} | {timer.cpu[s] / json_s:.2f}× |"
            for s in stages]
    kind = "strip + templates" if args.templates else "strip"
    section = "\n".join([
        f"## The proxy's item path per stage ({kind})", "",
        f"`{command_line('bench.proxy_stage_profile', argv)}` — {len(bodies)} bulk bodies of {args.chunk} pages "
        f"({mb:.1f} MB), {mined.phrases:,} phrases, {changed} bodies changed", "",
        "| stage | CPU s | share | × json.loads of the lines |",
        "|---|---|---|---|",
        f"| json.loads of every line (the bar) | {json_s:.3f} | | 1× |",
        f"| orjson.loads of every line | {orjson_s:.3f} | | {orjson_s / json_s:.2f}× |",
        f"| the whole item path (sum of the stages below) | {whole:.3f} | 100% | **{whole / json_s:.1f}×** |",
        *rows, "",
        f"Item path MB/s per core: {mb / whole:.1f} (forwarding excluded: see `bench.proxy_bench`).", "",
        f"The splice of the {n_spliced:,} changed sources, same results, same bytes: as text then encoded "
        f"(before) {text_s:.3f} CPU s, as bytes with orjson's strings (now) {bytes_s:.3f} CPU s "
        f"({text_s / bytes_s:.1f}× less).",
    ])
    print(section)
    if args.write:
        write_section("proxy-stage-profile", "Bulk proxy and ingest pipeline", section, args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
