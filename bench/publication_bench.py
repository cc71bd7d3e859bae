"""Publication's bitmap stage: phrase documents from the engines' occurrence starts vs the
corpus scan that built them before (``bench/scan_publication.py``).

    python -m bench.publication_bench --jsonl web.jsonl --sigma 20 --min-length 10 --repeats 7

Tokenizes the file into a corpus store once, mines it once, then times both constructions
alternately on the same store and result (wall and CPU seconds of each repeat) and checks
that their phrase documents are byte-identical. Prints one Markdown table row per
construction (best and median of the repeats); add it to ``bench/RESULTS.md`` by hand.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.result_file import command_line, write_section
from bench.scan_publication import scan_phrase_documents_for
from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.sidecar.publish.publication import phrase_documents_for

BATCH = 500


def build_store(path: Path, folder: Path, field: str, id_field: str) -> CorpusStore:
    store = CorpusStore.create(str(folder), with_offsets=False, fsync=False)
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            ids.append(str(doc[id_field]))
            texts.append(doc[field])
            if len(ids) == BATCH:
                store.append(ids, texts, flush=False)
                ids, texts = [], []
    if ids:
        store.append(ids, texts, flush=False)
    store.flush()
    return store


def timed(fn) -> tuple[float, float, bytes]:
    t0, c0 = time.perf_counter(), time.process_time()
    docs, _ = fn()
    return time.perf_counter() - t0, time.process_time() - c0, json.dumps(docs, sort_keys=True).encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jsonl", type=Path, required=True)
    ap.add_argument("--field", default="text")
    ap.add_argument("--id-field", default="id")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--engine", default="bloomspan")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(args.jsonl, Path(tmp) / "store", args.field, args.id_field)
        result = mine(store.tokens, store.doc_offsets,
                      MiningConfig(sigma=args.sigma, min_length=args.min_length, engine=args.engine))
        keys = [store.external_id(i) for i in range(store.n_docs)]
        ways = {"from starts": lambda: phrase_documents_for(store, result, keys),
                "corpus scan": lambda: scan_phrase_documents_for(store, result, keys)}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        outputs: dict[str, bytes] = {}
        for _ in range(args.repeats):
            for name, fn in ways.items():
                wall, cpu, out = timed(fn)
                times[name].append((wall, cpu))
                outputs[name] = out
        out: list[str] = []
        out.append(f"tokens={store.n_tokens} docs={store.n_docs} phrases={len(result.phrases)} "
              f"occurrences={sum(p.occurrences for p in result.phrases)} "
              f"byte_identical={len(set(outputs.values())) == 1}")
        out.append("| construction | wall s best / median | CPU s best / median |")
        out.append("| --- | ---: | ---: |")
        for name, rows in times.items():
            walls, cpus = [w for w, _ in rows], [c for _, c in rows]
            out.append(f"| {name} | {min(walls):.3f} / {statistics.median(walls):.3f} | "
                  f"{min(cpus):.3f} / {statistics.median(cpus):.3f} |")
        print("\n".join(out))
        write_section("publication", "Publication", "\n".join(
            ["## Phrase documents from the engines' occurrence starts vs a corpus scan", f"`{command_line('bench.publication_bench', None)}`", "", *out]))
        store.close()


if __name__ == "__main__":
    main()
