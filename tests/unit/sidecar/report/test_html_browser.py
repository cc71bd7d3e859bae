"""The HTML report as a person sees it: opened in a real headless Chromium (Debian's
`chromium` package), screenshot taken, the DOM dumped after the page's script ran.

Checks that the figures are drawn (their bars are in the rendered DOM and the screenshot
holds the figures' colours, not a blank page), that the phrase table filters (the page
applies ``?q=`` on load; fewer rows), that sorting by a column works (``&sort=``), and that
hostile text from a page never runs as script.
"""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from bloomspan.sidecar.report.html import write_html
from bloomspan.sidecar.report.model import results_report_model

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"{CHROMIUM} is absent (apt-get install -y chromium)")
HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


def chromium(tmp_path, url: str, *args: str) -> subprocess.CompletedProcess:
    """One headless Chromium run on ``url``, isolated (own profile, no network services)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def dump_dom(tmp_path, url: str) -> str:
    return chromium(tmp_path, url, "--dump-dom").stdout


def screenshot(tmp_path, url: str, out, size: str = "1280,2400"):
    chromium(tmp_path, url, f"--screenshot={out}", f"--window-size={size}")
    from PIL import Image

    return Image.open(out).convert("RGB")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from bloomspan.corpora import generate_web
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

    folder = tmp_path_factory.mktemp("browser")
    src = folder / "crawl.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for i, doc in enumerate(generate_web(400, 11)):
            f.write(json.dumps({"text": doc["text"] + (f"\n\n{HOSTILE}" if i % 2 else "")}, ensure_ascii=False) + "\n")
    mine_jsonl(str(src), "text", MiningConfig(sigma=10, min_length=6), str(folder / "out"))
    model = results_report_model(str(folder / "out"))
    path = folder / "report.html"
    write_html(model, str(path))
    return path, model


def rows_shown(dom: str) -> int:
    return int(re.search(r'data-phrase-rows="(\d+)"', dom).group(1))


def test_figures_render_and_the_page_is_not_blank(page, tmp_path):
    path, model = page
    dom = dump_dom(tmp_path, path.as_uri())
    assert 'data-report-ready="1"' in dom  # the table's script ran to the end
    assert len(re.findall(r'<g id="hist-bar-\d+"', dom)) == 10
    assert len(re.findall(r'<g id="psi-bar-\d+"', dom)) == min(12, model["phrases_total"])
    assert re.search(r'<g id="runs-point-0"', dom)
    assert rows_shown(dom) == len(model["phrases"]) == dom.count("<tr>") - 1
    ranks = [int(r) for r in re.findall(r'<tr><td class="num">(\d+)</td>', dom)]
    assert ranks == list(range(1, len(model["phrases"]) + 1))  # ties of psi keep the model's order
    img = screenshot(tmp_path, path.as_uri(), tmp_path / "shot.png")
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200  # text, figures, tables: not a blank page
    counts = {c: n for n, c in colours}
    bar_pixels = sum(n for c, n in counts.items() if abs(c[0] - 0xE8) < 8 and abs(c[1] - 0x59) < 8 and abs(c[2] - 0x0C) < 8)
    blue_pixels = sum(n for c, n in counts.items() if abs(c[0] - 0x3B) < 8 and abs(c[1] - 0x5B) < 8 and abs(c[2] - 0xDB) < 8)
    assert bar_pixels > 2000 and blue_pixels > 2000  # the histogram's and the psi chart's bars were painted


def test_the_search_box_filters_the_table(page, tmp_path):
    path, model = page
    word = next(w for r in model["phrases"] for w in r["text"].split() if len(w) > 5)
    expected = sum(word.lower() in r["text"].lower() for r in model["phrases"])
    dom = dump_dom(tmp_path, path.as_uri() + f"?q={word}")
    assert 0 < rows_shown(dom) == expected < len(model["phrases"])
    assert rows_shown(dump_dom(tmp_path, path.as_uri() + "?q=zzqqxxnothing")) == 0


def test_sorting_by_a_column(page, tmp_path):
    path, model = page
    for direction in ("asc", "desc"):
        dom = dump_dom(tmp_path, path.as_uri() + f"?sort=df&dir={direction}")
        body = dom[dom.index("<tbody>"):dom.index("</tbody>")]
        rows = [(int(cells[4].replace(",", "")), int(cells[0])) for cells in
                (re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", body))]
        dfs = [df for df, _ in rows]
        assert dfs == sorted((r["df"] for r in model["phrases"]), reverse=direction == "desc")
        assert len(set(dfs)) < len(dfs)  # ties exist, and keep the psi rank order in both directions
        assert rows == sorted(rows, key=lambda x: (x[0] if direction == "asc" else -x[0], x[1]))
        want = "ascending" if direction == "asc" else "descending"
        assert f'data-key="df" scope="col" aria-sort="{want}"' in dom


def test_hostile_page_text_does_not_run(page, tmp_path):
    path, _ = page
    dom = dump_dom(tmp_path, path.as_uri())
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)
    assert "<img src=" not in dom and "&lt;img src=x" in dom
