"""Template quality on a generated crawl and on real documentation sites.

    python -m bench.quality_eval --web-docs 3000 --real-max-pages 1000 --sweep

1. The generated web crawl (``generate_web(web_docs, seed)``) and a real corpus built from
   the Debian documentation packages installed here (:mod:`bloomspan.corpora.real_corpus`;
   ``apt-get install apache2-doc python-sqlalchemy-doc python-scipy-doc python-flask-doc
   python-click-doc python-lxml-doc git-doc python-attr-doc debian-reference-en``), both
   written under ``bench/out/`` (git-ignored) and reused.
2. Per corpus: exact MCFP 20/10 and 10/5, whole lines in >= 20 documents, the template
   detector with its defaults, and the line-repetition ceiling, scored per site and
   overall by :mod:`bloomspan.corpora.evaluate`.
3. ``--sweep``: the detector over :func:`default_sweep_configs` on the real corpus; the
   best config (content damage <= 0.5 %, the issue's limit; then the issue's recall goals
   met; then the most template tokens found overall) is printed — TemplateConfig's defaults
   are that config.
   The first rows are the README's main path with defaults only (``mine --jsonl
   --site-field site --url-field url``, then ``clean`` with window matching, through the
   cleaner's own matcher), then its ablations: whole phrases instead of windows, and exact
   phrases without the detector.
4. ``--unseen``: the same tables for sites never used to choose a parameter
   (:data:`bloomspan.corpora.real_corpus.UNSEEN_DOC_SITES`), scored after the defaults were fixed.
5. The tables and this command go to ``bench/results/quality-eval.json`` (every run).
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path

from bench.result_file import write_section

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"


def web_corpus(n_docs: int, seed: int) -> Path:
    from bloomspan.corpora import generate_web, write_jsonl

    path = OUT / f"web-{n_docs}-s{seed}.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        write_jsonl(generate_web(n_docs, seed), path)
    return path


def real_corpus(max_pages: int | None, rebuild: bool, unseen: bool = False) -> tuple[Path | None, dict]:
    """The real corpus (or, with ``unseen``, the sites never used for tuning), cached."""
    from bloomspan.corpora.real_corpus import (
        DEBIAN_DOC_SITES,
        UNSEEN_DOC_SITES,
        build_real_corpus,
        installed_sites,
    )

    sites = UNSEEN_DOC_SITES if unseen else DEBIAN_DOC_SITES
    path = OUT / f"{'unseen' if unseen else 'real'}-docs-p{max_pages or 'all'}.jsonl"
    meta = path.with_suffix(".sites.json")
    present = installed_sites(sites)
    if path.exists() and meta.exists() and not rebuild:
        cached = json.loads(meta.read_text())
        if sorted(cached) == sorted(s.name for s in present):  # a site added or installed since: convert again
            return path, cached
    if not present:
        return None, {}
    OUT.mkdir(parents=True, exist_ok=True)
    summary = build_real_corpus(path, sites, max_pages_per_site=max_pages)
    meta.write_text(json.dumps(summary.sites, indent=1))
    return path, summary.sites


def evaluate(path: Path, title: str):
    from bloomspan.corpora import read_jsonl
    from bloomspan.corpora.quality_eval import (
        ablation_table,
        evaluate_methods,
        per_site_table,
        prepare_corpus,
        site_lines_ceiling,
        standard_methods,
        summary_table,
        window_ablations,
    )

    t0 = time.perf_counter()
    corpus = prepare_corpus(read_jsonl(path))
    seconds = time.perf_counter() - t0
    # The README's path (mine + clean, defaults) first, then its window ablations and the older methods.
    results = evaluate_methods(corpus, window_ablations() + standard_methods() + [site_lines_ceiling()])
    head = (f"{title}: {len(corpus.docs):,} documents, {corpus.tokens.shape[0]:,} tokens, "
            f"{len(corpus.site_names)} sites, {int(corpus.template.sum()):,} template tokens "
            f"(tokenized in {seconds:.1f} s)")
    summary = summary_table(results) + "\n\nDetector variants (token level):\n\n" + ablation_table(corpus)
    return corpus, results, head, summary, per_site_table(results)


def site_section(args, unseen: bool, sections: list, dump: dict):
    """Score the real documentation corpus (or, ``unseen``, the sites never tuned on): one
    section appended to ``sections``, its results under "real"/"unseen" in ``dump``; returns
    the corpus, or None when none of its sites is installed."""
    path, sites = real_corpus(args.real_max_pages or None, args.rebuild_real, unseen=unseen)
    if path is None:
        print("no unseen documentation site installed: skipping them (see real_corpus.UNSEEN_DOC_SITES)" if unseen
              else "no documentation site installed: skipping the real corpus (see the module docstring)",
              file=sys.stderr)
        return None
    title = "unseen documentation sites (never tuned on)" if unseen else "real documentation sites"
    corpus, results, head, summary, per_site = evaluate(path, title)
    pages = ", ".join(f"{k} {v['documents']}/{v['pages_found']}" for k, v in sites.items())
    sections.append((head + f"; pages used/found per site: {pages}", summary, per_site))
    dump["unseen" if unseen else "real"] = results
    return corpus


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--web-docs", type=int, default=3000, help="Documents of the generated crawl (0: skip).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--real-max-pages", type=int, default=1000,
                    help="Pages per site, spread evenly over the site (0: all pages).")
    ap.add_argument("--rebuild-real", action="store_true", help="Convert the HTML again even if cached.")
    ap.add_argument("--no-real", action="store_true", help="Skip the real documentation corpus.")
    ap.add_argument("--sweep", action="store_true", help="Sweep detector configs on the real corpus.")
    ap.add_argument("--unseen", action="store_true",
                    help="Also score the sites never used for tuning (real_corpus.UNSEEN_DOC_SITES).")
    ap.add_argument("--json", type=Path, default=None, help="Also write all scores as JSON here.")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    command = "python -m bench.quality_eval " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    sections, dump = [], {}

    if args.web_docs:
        path = web_corpus(args.web_docs, args.seed)
        _c, results, head, summary, per_site = evaluate(path, f"generated web crawl (seed {args.seed})")
        sections.append((head, summary, per_site))
        dump["web"] = results
    corpus = None if args.no_real else site_section(args, unseen=False, sections=sections, dump=dump)
    if corpus is not None and args.sweep:
        from bloomspan.corpora.quality_eval import (
            best_row,
            config_diff,
            default_sweep_configs,
            sweep,
            sweep_table,
        )
        rows = sweep(corpus, default_sweep_configs())
        best = best_row(rows)
        text = sweep_table(rows, top=15)
        best_line = ("best (content damage <= 0.5 %, recall goals met, most template tokens found): "
                     + (config_diff(best.config) if best else "none within the damage limit"))
        sections.append((f"detector sweep on the real corpus: {len(rows)} configs "
                         "(token level; differences from the defaults)", text, best_line))
    if args.unseen:
        site_section(args, unseen=True, sections=sections, dump=dump)
    for head, a, b in sections:
        print(f"\n## {head}\n\n{a}\n\n{b}")
    if args.json:
        from bloomspan.corpora.quality_eval import results_to_dict

        args.json.write_text(json.dumps({k: results_to_dict(v) for k, v in dump.items()}, indent=1))
    lines = ["## Template quality", f"`{command}`", ""]
    for head, a, b in sections:
        lines += [f"### {head}", "", a, "", b, ""]
    write_section("quality-eval", "Template quality", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
