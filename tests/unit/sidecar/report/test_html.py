"""The HTML report without a browser: a `mine --jsonl` result rendered to one self-contained
page, its figures, the phrase table's data, escaping of untrusted text, the top-N cut, and
the CLI (`report --results DIR [--html FILE]`)."""
from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.report.html import highlighted, render_html, script_json, write_html
from bloomspan.sidecar.report.model import ReportSourceError, results_report_model

HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A real `mine --jsonl` result of a generated crawl; one page carries hostile markup."""
    from bloomspan.corpora import generate_web
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

    folder = tmp_path_factory.mktemp("results")
    src = folder / "crawl.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for i, doc in enumerate(generate_web(300, 5)):
            text = doc["text"] + (f"\n\n{HOSTILE}" if i % 2 else "")
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    mine_jsonl(str(src), "text", MiningConfig(sigma=8, min_length=5), str(folder / "out"))
    return folder / "out"


def _bars(page: str, figure: str) -> int:
    return len(re.findall(rf'<g id="{figure}-bar-\d+"', page))


def test_page_is_self_contained_with_every_figure(results):
    model = results_report_model(str(results))
    page = render_html(model)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r'<(link|img|iframe)\b|\bsrc=["\']?https?:|href=["\']?https?:', page)
    assert _bars(page, "hist") == len(model["clutter_histogram"]) == 10
    assert _bars(page, "psi") == min(12, model["phrases_total"]) > 0
    assert len(re.findall(r'<g id="runs-point-\d+"', page)) == 1
    assert "no per-site numbers" in page  # a --jsonl result has no site field
    q = model["quantities"]
    assert f"{q['covered_share']:.1%}" in page and "covered_share" in page and "mean_doc_covered_fraction" in page
    rows = json.loads(re.search(r'<script type="application/json" id="phrase-data">(.*?)</script>', page, re.S).group(1))
    assert rows == model["phrases"] and len(rows) == model["phrases_total"]
    assert [r["psi"] for r in rows] == sorted((r["psi"] for r in rows), reverse=True)
    assert set(rows[0]) == {"kind", "text", "length", "df", "psi", "scope", "slots", "example_ids"}


def test_hostile_text_never_becomes_markup(results):
    model = results_report_model(str(results))
    assert any("script" in r["text"] for r in model["phrases"])  # the hostile line is boilerplate here
    page = render_html(model)
    assert HOSTILE not in page and "<img src=x" not in page
    body = page[page.index("<body>"):]
    assert body.count("<script") == 2  # the phrase data and the table's script, nothing injected
    assert model["examples"] and all(ex["spans"] for ex in model["examples"])


def test_script_json_cannot_close_its_script_element():
    text = script_json([{"text": "</script><!-- & \u2028"}])
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == [{"text": "</script><!-- & \u2028"}]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab<&\" \n", max_size=40), data=st.data())
def test_highlighted_marks_exactly_the_spans(text, data):
    cut = st.integers(0, len(text) + 3)
    spans = [sorted(p) for p in data.draw(st.lists(st.tuples(cut, cut), max_size=4))]
    tspans = [sorted(p) for p in data.draw(st.lists(st.tuples(cut, cut), max_size=3))]
    out = highlighted(text, spans, tspans)
    assert html.unescape(re.sub(r"</?mark[^>]*>", "", out)) == text
    exact = set()
    for s, e in spans:
        exact.update(range(s, min(e, len(text))))
    got, pos = set(), 0
    for m in re.finditer(r'<mark class="(bp|tp)">(.*?)</mark>|([^<]+)', out, re.S):
        piece = html.unescape(m.group(2) if m.group(2) is not None else m.group(3))
        if m.group(1) == "bp":
            got.update(range(pos, pos + len(piece)))
        pos += len(piece)
    assert got == exact


def test_table_is_cut_to_the_top_rows_with_the_count_and_where_the_rest_is(results):
    model = results_report_model(str(results), table_rows=5)
    assert len(model["phrases"]) == 5 < model["phrases_total"]
    full = results_report_model(str(results))["phrases"]
    assert model["phrases"] == full[:5]
    page = render_html(model)
    assert f"top 5 of {model['phrases_total']:,} phrases" in page and "phrases.jsonl" in page


def test_missing_or_foreign_result_directories_are_clear_errors(tmp_path):
    with pytest.raises(ReportSourceError, match="no report.json"):
        results_report_model(str(tmp_path))
    (tmp_path / "report.json").write_text("{}")
    with pytest.raises(ReportSourceError, match="not a report"):
        results_report_model(str(tmp_path))
    (tmp_path / "report.json").write_text('{"covered_share": 0.1, "covered_tokens": 1, "tokens_mined": 10, '
                                          '"docs_mined": 1, "phrases": 1}')
    with pytest.raises(ReportSourceError, match="no phrases.jsonl"):
        results_report_model(str(tmp_path))
    (tmp_path / "phrases.jsonl").write_text('{"text": "a b", "df": 2, "length": 2}\nnot json\n')
    with pytest.raises(ReportSourceError, match="phrases.jsonl:2"):
        results_report_model(str(tmp_path))


def test_a_report_json_with_the_names_of_an_earlier_version_is_refused_in_one_line(tmp_path):
    """A report.json that spells a quantity otherwise (n_docs, n_tokens, n_phrases) is not read under
    other names: one line names the file, the missing names and the fix (mine again)."""
    path = tmp_path / "report.json"
    path.write_text('{"covered_share": 0.1, "covered_tokens": 1, "n_tokens": 10, "n_docs": 1, "n_phrases": 1}')
    with pytest.raises(ReportSourceError) as caught:
        results_report_model(str(tmp_path))
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert "no tokens_mined, docs_mined, phrases" in message and "run `bloomspan mine --jsonl` again" in message


def test_cli_writes_the_page_and_prints_the_text_report(results, tmp_path):
    from bloomspan.sidecar.cli.cluster import cluster_cli

    out = tmp_path / "report.html"
    r = CliRunner().invoke(cluster_cli, ["report", "--results", str(results), "--html", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0 and f"wrote {out}" in r.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    r = CliRunner().invoke(cluster_cli, ["report", "--results", str(results)], catch_exceptions=False)
    assert r.exit_code == 0 and "documents by boilerplate share" in r.output
    r = CliRunner().invoke(cluster_cli, ["report", "--results", str(tmp_path), "--html", str(out)])
    assert r.exit_code == 1 and "no report.json" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cluster_cli, ["report", "--results", str(results), "--html", str(tmp_path / "no" / "x.html")])
    assert r.exit_code == 2 and "--html" in r.output


def test_write_html_replaces_the_file_atomically(results, tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old")
    size = write_html(results_report_model(str(results)), str(target))
    assert target.stat().st_size == size and [p.name for p in tmp_path.iterdir()] == ["r.html"]
