"""How much of what `bloomspan clean` removes the exported native pipeline removes too, on a
real node (the measure: tests/support/pipeline_agreement.py).

A generated multi-site crawl is split: the first ``--mine-docs`` pages are mined with the
template detector (``bloomspan mine --jsonl … --site-field site --url-field url``), the
pipeline is exported from that run (``bloomspan pipeline --scope-field site --url-field url``)
and PUT, and the next ``--new-docs`` pages are indexed through it; the same new pages go
through the cleaner ``bloomspan clean --phrases out/phrases.jsonl --scope-field site
--url-field url`` builds.

    python -m bench.pipeline_agreement --url http://127.0.0.1:9200 --mine-docs 1000 --new-docs 300 --append
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from tests.support.pipeline_agreement import run

RESULTS = Path(__file__).with_name("RESULTS.md")


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--mine-docs", type=int, default=1000)
    ap.add_argument("--new-docs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--append", action="store_true", help="append the figures to bench/RESULTS.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a, printed, seconds = run(args.url, args.mine_docs, args.new_docs, args.seed, Path(tmp))
    summary = [line for line in printed.splitlines() if line.startswith(("pipeline:", "left out", "note:"))]
    table = ("| pages | tokens | cleaner removes | pipeline removes | removed by both (share of the cleaner's) "
             "| pipeline removes, cleaner keeps | pages token-identical | pages with other fields changed |\n"
             "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
             f"| {a.pages:,} | {a.tokens:,} | {a.cleaner_removed:,} | {a.pipeline_removed:,} | {a.shared:,} "
             f"({a.share:.1%}) | {a.extra:,} ({a.pages_with_extra} pages) | {a.identical_pages:,} | "
             f"{a.other_fields_differ} |")
    print(table)
    print("\n".join(summary))
    print(f"indexing through the pipeline: {seconds:.2f} s wall for {a.pages} pages")
    if args.append:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        section = (f"\n### Native pipeline vs `bloomspan clean`: generated crawl, {args.mine_docs:,} pages mined + "
                   f"{args.new_docs:,} new (seed {args.seed}) — {stamp}\n"
                   f"`python -m bench.pipeline_agreement --url {args.url} --mine-docs {args.mine_docs} --new-docs "
                   f"{args.new_docs} --seed {args.seed} --append` (OpenSearch 2.19.6; tokens of the tokenizer; "
                   "`bloomspan clean` with `--scope-field site --url-field url`, the pipeline exported with the same flags)\n\n"
                   + table + "\n\n" + "\n".join(f"`{line}`" for line in summary) + "\n")
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(section)


if __name__ == "__main__":
    main()
