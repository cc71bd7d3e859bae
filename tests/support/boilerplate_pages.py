"""Pages with a known header and footer around paragraphs of their own, and the run mined from them:
what the framework steps' tests clean (the boilerplate is known exactly, so "gone" and "intact"
are checked exactly)."""
from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from bloomspan.sidecar.cli.main import cli

HEADER = "Home | World | Business | Sport | Weather | Contact us | Subscribe to the daily newsletter"
FOOTER = ("Copyright 2026 Example Media Group. All rights reserved. Read our privacy policy and the "
          "terms of use before you share this page.")
SIGMA, MIN_LENGTH = 5, 8


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))


def pages(n: int, seed: int = 7) -> list[dict]:
    """``n`` pages ``{"id", "url", "text", "paragraphs"}``: the header, two or three paragraphs
    of random words (no 8 of them repeated across pages), the footer."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        paragraphs = [" ".join(_word(rng) for _ in range(rng.randint(12, 30))).capitalize() + "."
                      for _ in range(rng.randint(2, 3))]
        out.append({"id": f"page-{i}", "url": f"https://example.org/news/{i}", "paragraphs": paragraphs,
                    "text": "\n\n".join([HEADER, *paragraphs, FOOTER])})
    return out


def mined_run(folder: Path, docs: list[dict], name: str = "run") -> Path:
    """``bloomspan mine --jsonl`` over ``docs`` into ``folder/name`` (phrases.jsonl, report.json)."""
    folder.mkdir(parents=True, exist_ok=True)
    crawl = folder / "crawl.jsonl"
    crawl.write_text("".join(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs), encoding="utf-8")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(crawl), "--sigma", str(SIGMA), "--min-length",
                                   str(MIN_LENGTH), "--out", str(folder / name), "--progress", "none"])
    assert res.exit_code == 0, res.output
    return folder / name
