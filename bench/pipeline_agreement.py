"""How much of what `bloomspan clean` removes the exported native pipeline removes too, on a
real node (the measure: bench/agreement.py).

A generated multi-site crawl is split: the first ``--mine-docs`` pages are mined with the
template detector (``bloomspan mine --jsonl … --site-field site --url-field url``), the
pipeline is exported from that run (``bloomspan pipeline --site-field site --url-field url``)
and PUT, and the next ``--new-docs`` pages are indexed through it; the same new pages go
through the cleaner ``bloomspan clean --phrases out/phrases.jsonl --site-field site
--url-field url`` builds.

    python -m bench.pipeline_agreement --url http://127.0.0.1:9200 --mine-docs 1000 --new-docs 300

``--baseline-rev REV`` measures the pipeline that the exporter of commit REV (``ingest/pipeline_export.py``,
or ``ingest/pipeline_export/`` since the ingest rooms) exports from the same run on the same pages too (its module read with ``git show``).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import types
from pathlib import Path

from bench.agreement import run
from bench.result_file import write_section

ROOT = Path(__file__).resolve().parents[1]


# The exporter's three modules at a commit, before the ingest rooms (ingest/pipeline_*.py, imported
# relative to bloomspan.ingest) and after them (ingest/pipeline_export/, relative to its package).
_LAYOUTS = (
    ("ingest/pipeline_export/export.py", "{package}", ("regex", "scopes", "export")),
    ("ingest/pipeline_export.py", "bloomspan.ingest", ("pipeline_regex", "pipeline_scopes", "pipeline_export")),
)


def _git_show(rev: str, path: str) -> str | None:
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def baseline_exporter(rev: str):
    """``(phrases_path) -> body``: the export of the pipeline exporter at ``rev`` (with that
    commit's own regex and scope modules beside it), as its ``bloomspan pipeline --phrases``
    called it (phrases plus the run's template records)."""
    found = [layout for layout in _LAYOUTS if _git_show(rev, layout[0]) is not None]
    if not found:
        raise SystemExit(f"--baseline-rev {rev}: no pipeline exporter at that commit")
    export_path, package, names = found[0]
    package = package.format(package=f"bloomspan.ingest._pipeline_export_{rev}")
    if package not in sys.modules:  # the commit's modules live in a package of their own
        holder = types.ModuleType(package)
        holder.__path__ = []
        sys.modules[package] = holder
    folder = export_path.rsplit("/", 1)[0]
    module = None
    for name in names:  # dependencies first: the exporter imports the other two relatively
        path = f"{folder}/{name}.py"
        module = types.ModuleType(f"{package}.{name}")
        module.__package__ = package
        sys.modules[module.__name__] = module
        exec(compile(_git_show(rev, path), f"{rev}:{path}", "exec"), module.__dict__)

    def body_of(phrases_path):
        from bloomspan.ingest.match.loading import run_template_records
        from bloomspan.ingest.records.phrase_set import PhraseSet

        return module.build_pipeline(PhraseSet.from_jsonl(phrases_path), templates=run_template_records(phrases_path))

    return body_of


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:9200")
    ap.add_argument("--mine-docs", type=int, default=1000)
    ap.add_argument("--new-docs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--baseline-rev", default=None, help="also measure the export of this commit's pipeline_export.py")
    args = ap.parse_args()
    baselines = {f"`pipeline_export.py` of {args.baseline_rev}": baseline_exporter(args.baseline_rev)} \
        if args.baseline_rev else {}
    with tempfile.TemporaryDirectory() as tmp:
        a, printed, seconds, others = run(args.url, args.mine_docs, args.new_docs, args.seed, Path(tmp), baselines)
    summary = [line for line in printed.splitlines() if line.startswith(("pipeline:", "left out", "note:"))]
    rows = [("this commit's `bloomspan pipeline --site-field site --url-field url`", a), *others.items()]
    table = "\n".join(
        ["| pipeline | pages | tokens | cleaner removes | pipeline removes | removed by both (share of the cleaner's) "
         "| pipeline removes, cleaner keeps | pages token-identical | pages with other fields changed |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        + [f"| {name} | {r.pages:,} | {r.tokens:,} | {r.cleaner_removed:,} | {r.pipeline_removed:,} | {r.shared:,} "
           f"({r.share:.1%}) | {r.extra:,} ({r.pages_with_extra} pages) | {r.identical_pages:,} | "
           f"{r.other_fields_differ} |" for name, r in rows])
    print(table)
    print("\n".join(summary))
    print(f"indexing through the pipeline: {seconds:.2f} s wall for {a.pages} pages")
    command = (f"python -m bench.pipeline_agreement --url {args.url} --mine-docs {args.mine_docs} --new-docs "
               f"{args.new_docs} --seed {args.seed}" + (f" --baseline-rev {args.baseline_rev}" if args.baseline_rev
                                                         else ""))
    section = (f"\n### Native pipeline vs `bloomspan clean`: generated crawl, {args.mine_docs:,} pages mined + "
               f"{args.new_docs:,} new (seed {args.seed})\n"
               f"`{command}` (OpenSearch 2.19.6; tokens of the tokenizer; the cleaner is `bloomspan clean "
               "--phrases out/phrases.jsonl --site-field site --url-field url`; both pipelines measured in one "
               "run on the same pages)\n\n"
               + table + "\n\n" + "\n".join(f"> {line}  " for line in summary)
               + f"\n\nIndexing the {a.pages:,} pages through the pipeline (`_bulk`, one shared node): "
               f"{seconds:.1f} s wall.\n")
    write_section("pipeline-agreement", "Bulk proxy and ingest pipeline", section)


if __name__ == "__main__":
    main()
