"""Line-shape templates: the default path (``mine`` with sites, then ``clean``) with and without
them, per site, on the tuning and the unseen documentation sites, in one process.

    python -m bench.line_shapes_eval

"before" is ``TemplateConfig(line_shape_gap=0)``, "after" the defaults; both through the
cleaner's own matcher on the mined pages (:func:`bloomspan.corpora.quality_eval.default_path_method`).
The corpora are bench.quality_eval's (``bench/out/{real,unseen}-docs-p1000.jsonl``, built there).
"""
from __future__ import annotations

import argparse
import sys
import time

from bench.quality_eval import real_corpus
from bench.result_file import write_section


def score(path, label: str) -> tuple[str, dict]:
    from bloomspan.corpora import read_jsonl
    from bloomspan.corpora.quality_eval import default_path_method, prepare_corpus, token_scores
    from bloomspan.engine.templates.config import TemplateConfig

    c = prepare_corpus(read_jsonl(path))
    out, seconds = {}, {}
    for name, config in (("before", TemplateConfig(line_shape_gap=0)), ("after", TemplateConfig())):
        t0 = time.process_time()
        out[name] = token_scores(c, default_path_method(config=config).run(c))
        seconds[name] = time.process_time() - t0
    b, a = out["before"], out["after"]
    rows = [f"### {label}: {len(c.docs):,} pages, {len(c.site_names)} sites", "",
            "| site | recall before | recall after | damage before | damage after |", "|---|---|---|---|---|"]
    for s in c.site_names:
        rows.append(f"| {s} | {b.per_site[s][0] * 100:.1f} % | {a.per_site[s][0] * 100:.1f} % | "
                    f"{b.per_site[s][1] * 100:.2f} % | {a.per_site[s][1] * 100:.2f} % |")
    rows.append(f"| **mean over sites / overall** | {b.mean_site_recall * 100:.1f} % / {b.recall * 100:.1f} % | "
                f"{a.mean_site_recall * 100:.1f} % / {a.recall * 100:.1f} % | {b.damage * 100:.2f} % | "
                f"{a.damage * 100:.2f} % |")
    rows += ["", f"CPU seconds of the whole path (mine + detector + clean): before {seconds['before']:.1f}, "
             f"after {seconds['after']:.1f}"]
    return "\n".join(rows), {"before": b, "after": a}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.parse_args(argv)  # --help only
    sections = []
    for site_set, label in (("real", "tuning sites"), ("unseen", "earlier unseen sites (tuning now)")):
        path, _sites = real_corpus(1000, False, site_set)
        if path is None:
            print(f"no {label} installed: skipped", file=sys.stderr)
            continue
        text, _ = score(path, label)
        print(text + "\n")
        sections.append(text)
    if sections:
        write_section("line-shapes", "Template quality", "\n\n".join(
            ["## Line-shape templates, default path before/after\n`python -m bench.line_shapes_eval`", *sections]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
