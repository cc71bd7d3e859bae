"""bench/RESULTS.md is the page bench/results/*.json generate (bench/results_page.py), and the
result files' Markdown blocks (bench/result_file.py) give back what a bench wrote."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import result_file, results_page
from bench.result_file import blocks_from_markdown, markdown_from_blocks, split_section, write_section

ROOT = Path(__file__).resolve().parents[3]
MAX_PAGE_LINES = 600


def test_the_committed_page_is_the_generated_one():
    committed = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    assert committed == results_page.render(), \
        "bench/RESULTS.md differs from bench/results/*.json: run `python -m bench.results_page` and commit it"


def test_the_page_stays_short():
    lines = results_page.render().count("\n")
    assert lines <= MAX_PAGE_LINES, (f"bench/RESULTS.md has {lines} lines (limit {MAX_PAGE_LINES}): move notes to "
                                     "bench/history/ or mark breakdown tables as detail")


def test_every_result_file_is_complete_and_every_history_file_is_dated():
    results = sorted((ROOT / "bench" / "results").glob("*.json"))
    assert results, "bench/results/ holds no result"
    for path in results:
        record = result_file.read_result(path)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", record["date"]), (path.name, record["date"])
        assert record["commit"] and record["title"], path.name
        if "history" in record:
            assert (ROOT / record["history"]).is_file(), f"{path.name} names {record['history']}, which is missing"
    for path in (ROOT / "bench" / "history").glob("*"):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md", path.name), \
            f"bench/history/{path.name}: name it YYYY-MM-DD-topic.md"


def test_no_bench_appends_to_the_page():
    for path in sorted((ROOT / "bench").glob("*.py")):
        if path.name == "results_page.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert "RESULTS.md\", \"a\"" not in source and not re.search(r"RESULTS\b[^\n]*open\(|open\(RESULTS", source), \
            f"bench/{path.name} writes bench/RESULTS.md; write bench/results/NAME.json with result_file.write_section"


SECTION = """### Cleaner throughput: 10 phrases — 2026-12-02 05:00
`python -m bench.cleaner_bench --phrases 10` — 2026-12-02 05:00 — 2 cores, 24 GiB

Matcher build: 0.32 s.

| mode | MB/s | note |
|---|---:|---|
| strip | 35.9 | a \\| b |
| mark | 27.6 | |
phrase sets identical: **yes**

| site | docs |
|---|---|
| a.org | 3 |
"""


def test_a_section_splits_into_title_command_date_context_and_blocks():
    title, command, date, context, body = split_section(SECTION)
    assert (title, command, date, context) == ("Cleaner throughput: 10 phrases", "python -m bench.cleaner_bench "
                                               "--phrases 10", "2026-12-02 05:00", "2 cores, 24 GiB")
    blocks = blocks_from_markdown(body)
    assert blocks[0] == {"text": ["Matcher build: 0.32 s."]}
    assert blocks[1] == {"table": {"header": ["mode", "MB/s", "note"], "align": ["---", "---:", "---"],
                                   "rows": [["strip", "35.9", "a \\| b"], ["mark", "27.6", ""]]}}
    assert blocks[2] == {"text": ["phrase sets identical: **yes**"]}  # text right under a table is its own block
    assert blocks[3]["detail"] is True  # a per-site breakdown
    assert blocks_from_markdown(markdown_from_blocks(blocks)) == blocks


def test_a_command_wrapped_over_two_lines_and_a_ragged_table():
    title, command, date, context, body = split_section(
        "## Scaling\n`python -m bench.scaling_bench --store S\n--points 10M` — code of commit 33f9f8e\n\n| a | b |\n|---|---|\n| 1 |\n")
    assert (title, command, date, context) == ("Scaling", "python -m bench.scaling_bench --store S --points 10M", None,
                                               "— code of commit 33f9f8e")
    assert blocks_from_markdown(body) == [{"text": ["| a | b |", "|---|---|", "| 1 |"]}]


def test_a_bench_run_writes_its_json_and_the_page_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(result_file, "current_commit", lambda: "abc1234")
    path = write_section("cleaner", "Cleaner and matcher", SECTION, results_dir=tmp_path / "results")
    record = json.loads(path.read_text(encoding="utf-8"))
    assert (record["name"], record["commit"], record["command"]) == ("cleaner", "abc1234",
                                                                     "python -m bench.cleaner_bench --phrases 10")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", record["date"])
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "2026-12-02-cleaner.md").write_text("# notes\n")
    page = results_page.render(tmp_path / "results", tmp_path / "history")
    assert "## Cleaner and matcher\n\n### Cleaner throughput: 10 phrases\n`python -m bench.cleaner_bench " \
           f"--phrases 10` — {record['date']} · commit abc1234 · 2 cores, 24 GiB" in page
    assert "| strip | 35.9 | a \\| b |" in page
    assert "a.org" not in page and "*Tables by site (1 rows): in `bench/results/cleaner.json`.*" in page
    assert "- 2026-12-02: [`cleaner`](history/2026-12-02-cleaner.md)" in page


def test_a_bad_name_is_refused_in_one_line(tmp_path: Path):
    with pytest.raises(ValueError, match=r"name='Cleaner Bench': a result name is letters"):
        write_section("Cleaner Bench", "Cleaner and matcher", SECTION, results_dir=tmp_path)


def test_a_figure_measured_by_hand_is_written_from_standard_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import io

    monkeypatch.setattr(result_file, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(SECTION))
    assert result_file.main(["cleaner-by-hand", "Cleaner and matcher"]) == 0
    record = result_file.read_result(tmp_path / "cleaner-by-hand.json")
    assert record["title"] == "Cleaner throughput: 10 phrases" and record["body"][0]["text"] == ["Matcher build: 0.32 s."]


def test_a_heading_or_lead_in_of_tables_the_page_leaves_out_is_left_out_too():
    long = {"table": {"header": ["site", "n"], "align": ["---", "---:"], "rows": [[str(i), "1"] for i in range(9)]}}
    short = {"table": {"header": ["method", "n"], "align": ["---", "---:"], "rows": [["a", "1"]]}}
    blocks = [{"text": ["### corpus: 3 sites"]}, long, {"text": ["Detector variants:"]}, long,
              {"text": ["phrase sets identical: **yes**"]}, long, {"text": ["Per method:"]}, short]
    page = markdown_from_blocks(blocks, max_rows=5, where="f.json")
    assert "corpus" not in page and "Detector variants" not in page  # they introduce only left-out tables
    assert "phrase sets identical: **yes**" in page  # a statement, not a lead-in: kept
    assert "Per method:" in page and "| a | 1 |" in page
    assert "### corpus: 3 sites" in markdown_from_blocks(blocks)  # the JSON's full rendering keeps everything
