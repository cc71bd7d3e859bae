"""CPU per token of the framework steps (sidecar/integrations/) beside the cleaner they wrap.

One generated web crawl is mined into a run directory; each step is built with ``from_run`` and
cleans the crawl's pages as its framework hands them over (LangChain and LlamaIndex Documents,
datatrove Documents through the step's ``run``), against ``Cleaner.clean_batch`` on the same
texts as dicts: what wrapping costs. Building the framework's documents is not timed. Best CPU
time of ``--repeats`` passes, kernels compiled first. Prints one JSON object and writes the section ``bench/results/integrations.json``.

    python -m bench.integrations_bench --docs 3000
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from bench.mining_bench import machine
from bench.result_file import current_commit, table_of_rows, write_section


def _best_cpu(make, call, repeats: int) -> float:
    """Best CPU seconds of ``call(make())`` over ``repeats`` passes, ``make`` (the framework's
    documents, new each pass: a step may change them) untimed."""
    best = None
    for _ in range(repeats):
        inputs = make()
        t0 = time.process_time()
        call(inputs)
        cpu = time.process_time() - t0
        best = cpu if best is None else min(best, cpu)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    from datatrove.data import Document as DatatroveDocument
    from langchain_core.documents import Document as LangchainDocument
    from llama_index.core import Document as LlamaDocument

    import bloomspan
    from bloomspan.corpora import corpus_by_name, write_jsonl
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.integrations.datatrove_steps import BloomspanCleaner
    from bloomspan.sidecar.integrations.langchain_transformer import BloomspanTransformer
    from bloomspan.sidecar.integrations.llama_index_component import BloomspanTransform
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

    with tempfile.TemporaryDirectory(prefix="bloomspan-integrations-") as tmp:
        docs = list(corpus_by_name("web", args.docs, args.seed))
        write_jsonl(docs, Path(tmp) / "web.jsonl")
        mined = mine_jsonl(str(Path(tmp) / "web.jsonl"), "text", MiningConfig(sigma=20, min_length=10),
                           str(Path(tmp) / "run"))
        run = Path(tmp) / "run"
        texts = [d["text"] for d in docs]
        cleaner = bloomspan.Cleaner.from_run(run, skip_missing=True)
        cleaner.clean_batch({"text": t} for t in texts[:50])  # kernels compiled before any timing
        langchain, llama, datatrove = (BloomspanTransformer.from_run(run), BloomspanTransform.from_run(run),
                                       BloomspanCleaner.from_run(run))
        cases = {
            "Cleaner.clean_batch (dicts)": (lambda: [{"text": t} for t in texts], cleaner.clean_batch),
            "LangChain BloomspanTransformer": (lambda: [LangchainDocument(page_content=t) for t in texts],
                                               langchain.transform_documents),
            "LlamaIndex BloomspanTransform": (lambda: [LlamaDocument(text=t) for t in texts], llama),
            "datatrove BloomspanCleaner": (lambda: [DatatroveDocument(text=t, id=str(i)) for i, t in enumerate(texts)],
                                           lambda batch: list(datatrove.run(iter(batch)))),
        }
        rows, base = {}, None
        for name, (make, call) in cases.items():
            cpu = _best_cpu(make, call, args.repeats)
            base = cpu if base is None else base
            rows[name] = {"cpu_s": round(cpu, 4), "clean_ns_per_token_cpu": round(cpu * 1e9 / mined.tokens, 1),
                          "cpu_vs_cleaner": round(cpu / base, 3)}
            print(f"{name:32s} {rows[name]['clean_ns_per_token_cpu']:7.1f} ns/token CPU", file=sys.stderr)
    result = {
        "benchmark": "integrations_bench",
        "command": "python -m bench.integrations_bench " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "commit": current_commit(), "date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine(),
        "load_average": round(os.getloadavg()[0], 2), "docs": args.docs, "tokens": mined.tokens, "steps": rows,
    }
    write_section("integrations", "Framework steps", "\n".join(
        [f"## Framework steps beside the cleaner they wrap: {args.docs:,} pages of the web crawl, "
         f"{mined.tokens:,} tokens, strip mode",
         f"`{result['command']}` — load average {result['load_average']}, best of {args.repeats}", "",
         table_of_rows(rows, "step")]))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
