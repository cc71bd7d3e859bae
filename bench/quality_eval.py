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
4. ``--unseen``: the same tables for the earlier unseen sites
   (:data:`bloomspan.corpora.real_corpus.UNSEEN_DOC_SITES`); they have been looked at while
   fixing since, so they count as tuning and their section says so.
5. ``--new-unseen``: the same tables for the six sites issue 27 added
   (:data:`bloomspan.corpora.real_corpus.NEW_UNSEEN_DOC_SITES`), defaults only; they have been
   looked at while fixing since (the syn-rustdoc damage), so they count as tuning now too.
5b. ``--third-unseen``: the same tables for the third six sites
   (:data:`bloomspan.corpora.real_corpus.THIRD_UNSEEN_DOC_SITES`), defaults only; their damaged
   lines were looked at while building the own-facts rule, so they count as tuning now.
5c. ``--fourth-unseen``: the same for the six sites added after the third set was scored
   (:data:`bloomspan.corpora.real_corpus.FOURTH_UNSEEN_DOC_SITES`); their failures were looked
   at while fixing since, so they count as tuning now too.
5d. ``--fifth-unseen``: the same for the six sites added after the fourth set became tuning
   (:data:`bloomspan.corpora.real_corpus.FIFTH_UNSEEN_DOC_SITES`), never tuned on.
6. Per documentation set, the damage audit
   (:func:`bloomspan.corpora.quality_eval.damage_audit`): per site, the content tokens the
   default path removes, by the record kind and rule that took them (``--no-audit`` skips it).
7. The tables and this command go to ``bench/results/quality-eval.json`` (every run).
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


# The site sets, by the name their cached corpus, their section and their JSON key use.
SITE_SETS = {
    "real": ("DEBIAN_DOC_SITES", "real documentation sites (tuning)"),
    "unseen": ("UNSEEN_DOC_SITES", "earlier unseen documentation sites (looked at while fixing: tuning now)"),
    "new-unseen": ("NEW_UNSEEN_DOC_SITES", "new unseen documentation sites of issue 27 (looked at while fixing: tuning now)"),
    "third-unseen": ("THIRD_UNSEEN_DOC_SITES", "third unseen documentation sites (looked at while fixing: tuning now)"),
    "fourth-unseen": ("FOURTH_UNSEEN_DOC_SITES", "fourth unseen documentation sites (looked at while fixing: tuning now)"),
    "fifth-unseen": ("FIFTH_UNSEEN_DOC_SITES", "fifth unseen documentation sites (never tuned on)"),
}
# The sets scored on request only, each by its own flag (``--unseen``, ``--new-unseen``, …).
EXTRA_SETS = tuple(k for k in SITE_SETS if k != "real")


def real_corpus(max_pages: int | None, rebuild: bool, site_set: str = "real") -> tuple[Path | None, dict]:
    """The corpus of one of :data:`SITE_SETS` (its installed sites), cached under bench/out."""
    from bloomspan.corpora import real_corpus as rc

    sites = getattr(rc, SITE_SETS[site_set][0])
    path = OUT / f"{'real' if site_set == 'real' else site_set}-docs-p{max_pages or 'all'}.jsonl"
    meta = path.with_suffix(".sites.json")
    present = rc.installed_sites(sites)
    if path.exists() and meta.exists() and not rebuild:
        cached = json.loads(meta.read_text())
        if sorted(cached) == sorted(s.name for s in present):  # a site added or installed since: convert again
            return path, cached
    if not present:
        return None, {}
    OUT.mkdir(parents=True, exist_ok=True)
    summary = rc.build_real_corpus(path, sites, max_pages_per_site=max_pages)
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


def site_section(args, site_set: str, sections: list, dump: dict):
    """Score one of :data:`SITE_SETS`: one section appended to ``sections``, its results under
    the set's name in ``dump``; returns the corpus, or None when none of its sites is installed."""
    path, sites = real_corpus(args.real_max_pages or None, args.rebuild_real, site_set)
    variable, title = SITE_SETS[site_set]
    if path is None:
        print(f"no site of {title} installed: skipping them (see real_corpus.{variable})", file=sys.stderr)
        return None
    corpus, results, head, summary, per_site = evaluate(path, title)
    pages = ", ".join(f"{k} {v['documents']}/{v['pages_found']}" for k, v in sites.items())
    sections.append((head + f"; pages used/found per site: {pages}", summary, per_site))
    dump[site_set] = results
    if not args.no_audit:
        from bloomspan.corpora.quality_eval import damage_audit, damage_audit_table

        sections.append((f"damage audit, {title}: the content tokens the default path removes, per site, "
                         "by the record kind and rule that took them", damage_audit_table(corpus, damage_audit(corpus)),
                         ""))
    return corpus


def result_name(args) -> str:
    """The result file a run writes: ``quality-eval`` when it scores the generated crawl or the
    tuning sites, else one per set it scores (``quality-eval-new-unseen``), so scoring one set
    alone does not replace the full run's tables."""
    if args.web_docs or not args.no_real:
        return "quality-eval"
    sets = [s for s in EXTRA_SETS if getattr(args, s.replace("-", "_"))]
    return "quality-eval-" + "-".join(sets) if sets else "quality-eval-empty"


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
                    help="Also score the earlier unseen sites, tuning now (real_corpus.UNSEEN_DOC_SITES).")
    ap.add_argument("--new-unseen", action="store_true",
                    help="Also score issue 27's first six sites, tuning now (real_corpus.NEW_UNSEEN_DOC_SITES).")
    ap.add_argument("--third-unseen", action="store_true",
                    help="Also score the third six sites, tuning now (real_corpus.THIRD_UNSEEN_DOC_SITES).")
    ap.add_argument("--fourth-unseen", action="store_true",
                    help="Also score the fourth six sites, tuning now (real_corpus.FOURTH_UNSEEN_DOC_SITES).")
    ap.add_argument("--fifth-unseen", action="store_true",
                    help="Also score the sites added last, never tuned on (real_corpus.FIFTH_UNSEEN_DOC_SITES).")
    ap.add_argument("--no-audit", action="store_true",
                    help="Skip the damage audit (which record kind and rule removed each content token).")
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
    corpus = None if args.no_real else site_section(args, "real", sections, dump)
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
    for site_set in EXTRA_SETS:
        if getattr(args, site_set.replace("-", "_")):
            site_section(args, site_set, sections, dump)
    for head, a, b in sections:
        print(f"\n## {head}\n\n{a}\n\n{b}")
    if args.json:
        from bloomspan.corpora.quality_eval import results_to_dict

        args.json.write_text(json.dumps({k: results_to_dict(v) for k, v in dump.items()}, indent=1))
    name = result_name(args)
    heading = "Template quality" + ("" if name == "quality-eval" else ": " + ", ".join(
        SITE_SETS[k][1] for k in EXTRA_SETS if getattr(args, k.replace("-", "_"))))
    lines = [f"## {heading}", f"`{command}`", ""]
    for head, a, b in sections:
        lines += [f"### {head}", "", a, "", b, ""]
    write_section(name, "Template quality", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
