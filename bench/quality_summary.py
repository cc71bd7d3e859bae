"""The default path's quality on every site set, one row per set, from the result files
``python -m bench.quality_eval`` wrote (``bench/results/quality-eval*.json``): no evaluation runs
here, the figures are the ones measured, each with the date and commit of its run.

    python -m bench.quality_summary          # write bench/results/quality-summary.json

Each set's row is the "mine + clean, defaults" line of its method table and the worst site of its
damage audit. The page shows this table; the per-method and per-site tables stay in the files.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from bench.result_file import RESULTS_DIR, command_line, read_result, write_section

DEFAULT_PATH = "mine + clean, defaults"
GOAL = ("Goal (issue 27, sets never tuned on, defaults only): ≥ 85 % per-site recall, ≥ 96 % overall, "
        "content damage ≤ 0.5 % overall and ≤ 1 % on every site.")
# tuning first, then the sets in the order they were added
SET_ORDER = ("quality-eval", "quality-eval-unseen", "quality-eval-new-unseen", "quality-eval-third-unseen",
             "quality-eval-fourth-unseen", "quality-eval-fifth-unseen")
NEVER_TUNED = "never tuned on"  # in the title of a set no parameter was chosen on (bench.quality_eval.SITE_SETS)
HEADER = ["set", "run", "documents", "sites", "per-site recall", "overall recall", "content damaged",
          "worst site's damage", "sites damaged > 1 %"]


def _percent(cell: str) -> float:
    return float(cell.rstrip(" %"))


def set_rows(record: dict) -> list[list[str]]:
    """One row per site set in a quality-eval result: the set named by the heading above its
    method table, the default path's recall and damage, the worst site of its damage audit."""
    rows, heading, current = [], None, None
    for block in record["body"]:
        if "text" in block:
            line = block["text"][0]
            if line.startswith("### ") and not line.startswith("### damage audit"):
                heading = line[4:]
            continue
        table = block["table"]
        if table["header"][0] == "method" and heading is not None:
            default = next((r for r in table["rows"] if r[0] == DEFAULT_PATH), None)
            if default is None:
                raise ValueError(f"{record['name']}: the method table of {heading!r} has no {DEFAULT_PATH!r} row")
            split = re.search(r": (?=[\d,]+ (?:documents|pages))", heading)
            name, facts = (heading[:split.start()], heading[split.end():]) if split else (heading, "")
            docs = re.search(r"([\d,]+) (?:documents|pages)", facts)
            sites = re.search(r"([\d,]+) sites", facts)
            current = [name, f"{record['date']} · {record['commit']}", docs.group(1) if docs else "—",
                       sites.group(1) if sites else "—", default[1], default[2], default[3], "—", "—"]
            rows.append(current)
        elif table["header"][:4] == ["site", "content tokens", "removed", "share"] and current is not None:
            shares = {r[0]: _percent(r[3]) for r in table["rows"]}
            worst = max(shares, key=shares.get)
            current[7] = f"{shares[worst]:.2f} % ({worst})"
            current[8] = f"{sum(1 for v in shares.values() if v > 1.0)} of {len(shares)}"
    return rows


def summary_section(results_dir: Path, argv: list[str] | None) -> str:
    paths = sorted(results_dir.glob("quality-eval*.json"), key=lambda p: (p.stem not in SET_ORDER, SET_ORDER.index(
        p.stem) if p.stem in SET_ORDER else 0, p.stem))
    if not paths:
        raise SystemExit(f"no quality-eval result in {results_dir}: run `python -m bench.quality_eval` first")
    rows = [row for path in paths for row in set_rows(read_result(path))]
    lines = ["## Template quality, the default path on every site set",
             f"`{command_line('bench.quality_summary', argv)}`", "",
             "Read from the `quality-eval*` result files below (each row names the run it comes from); "
             "a set looked at while fixing counts as tuning. The sets tuned on, then those never tuned on:"]
    # Two tables, so that each stays short enough for the page (bench.results_page.MAX_ROWS).
    for part in ([r for r in rows if NEVER_TUNED not in r[0]], [r for r in rows if NEVER_TUNED in r[0]]):
        if part:
            lines += ["", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
            lines += ["| " + " | ".join(row) + " |" for row in part]
    lines += ["", GOAL]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR, help="where the quality-eval files are")
    args = ap.parse_args(argv)
    section = summary_section(args.results_dir, argv)
    print(section)
    write_section("quality-summary", "Template quality", section, results_dir=args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
