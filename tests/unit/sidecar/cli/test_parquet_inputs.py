"""One generated crawl as JSON Lines and as Parquet (several row groups): mine gives the same
phrases and templates, templates the same records, strip/mark/downweight clean the same
documents, written as Parquet with the input's schema plus bloomspan's columns and the other
columns' values and types as they were. A damaged row group or footer is one line naming the
file and the row group, and clean keeps every row group before it. Commands that do not read
Parquet refuse it in one line."""
from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bloomspan.corpora import corpus_by_name, write_jsonl
from bloomspan.sidecar.cli.main import cli

DOCS = 150
GROUP_ROWS = 50


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """``(plain path, parquet path, mined out dir)`` of the same crawl; the Parquet file has
    three row groups and two columns JSON has no type for (a timestamp, an int32)."""
    folder = tmp_path_factory.mktemp("crawl")
    docs = list(corpus_by_name("web", DOCS, 5))
    plain = folder / "web.jsonl"
    write_jsonl(docs, plain)
    table = pa.Table.from_pylist(docs)
    table = table.append_column("fetched", pa.array([datetime.datetime(2026, 1, 1, 0, 0, i % 60) for i in range(DOCS)],
                                                    type=pa.timestamp("s")))
    table = table.append_column("status", pa.array([200] * DOCS, type=pa.int32()))
    parquet = folder / "web.parquet"
    pq.write_table(table, parquet, row_group_size=GROUP_ROWS)
    out = folder / "mined"  # phrases only: the clean tests compare formats, not the template matcher
    res = _run("mine", "--jsonl", plain, "--field", "text", "--id-field", "id", "--sigma", 8, "--min-length", 8,
               "--out", out, "--progress", "none")
    assert res.exit_code == 0, res.output
    return plain, parquet, out


def _rows(path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _without_nulls(doc: dict) -> dict:
    """A Parquet row as the JSON document it stands for: a null column is a key not written."""
    doc = {k: v for k, v in doc.items() if v is not None and k not in ("fetched", "status")}
    if isinstance(doc.get("bloomspan"), dict):
        doc["bloomspan"] = {k: v for k, v in doc["bloomspan"].items() if v is not None}
    return doc


def test_mine_and_templates_of_parquet_equal_those_of_json_lines(crawl, tmp_path):
    plain, parquet, _ = crawl
    for src, out in ((plain, "plain"), (parquet, "pq")):
        res = _run("mine", "--jsonl", src, "--field", "text", "--id-field", "id", "--sigma", 8, "--min-length", 8,
                   "--site-field", "site", "--url-field", "url", "--out", tmp_path / out, "--progress", "none")
        assert res.exit_code == 0, res.output
    for name in ("phrases.jsonl", "templates.jsonl"):
        assert (tmp_path / "pq" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name
    assert (tmp_path / "plain" / "phrases.jsonl").read_bytes().count(b"\n") > 5
    for src, out in ((plain, "t-plain.jsonl"), (parquet, "t-pq.jsonl")):
        assert _run("templates", "--jsonl", src, "--out", tmp_path / out).exit_code == 0
    assert (tmp_path / "t-pq.jsonl").read_bytes() == (tmp_path / "t-plain.jsonl").read_bytes()


@pytest.mark.parametrize("mode, extra", [("strip", ("--chunk-size", 400)), ("mark", ("--fingerprint",)),
                                         ("downweight", ())])
def test_clean_of_parquet_equals_clean_of_json_lines_per_document(crawl, tmp_path, mode, extra):
    plain, parquet, mined = crawl
    args = ("--phrases", mined / "phrases.jsonl", "--mode", mode, "--site-field", "site", "--url-field", "url", *extra)
    assert _run("clean", *args, "--in", plain, "--out", tmp_path / "c.jsonl").exit_code == 0
    res = _run("clean", *args, "--in", parquet, "--out", tmp_path / "c.parquet")
    assert res.exit_code == 0, res.output
    assert f"{DOCS:,} documents: {DOCS:,} cleaned" in res.output
    want = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    got = _rows(tmp_path / "c.parquet")
    assert [_without_nulls(r) for r in got] == want
    source = pq.read_schema(parquet)
    schema = pq.read_schema(tmp_path / "c.parquet")
    assert schema.names[: len(source.names)] == source.names and "bloomspan" in schema.names
    assert all(schema.field(n).type == source.field(n).type for n in source.names)
    assert pq.ParquetFile(tmp_path / "c.parquet").metadata.num_row_groups == -(-DOCS // GROUP_ROWS)
    assert pq.read_table(tmp_path / "c.parquet", columns=["fetched", "status"]).equals(
        pq.read_table(parquet, columns=["fetched", "status"]))


def test_over_ratio_rows_go_to_their_own_parquet_file(crawl, tmp_path):
    plain, parquet, mined = crawl
    args = ("--phrases", mined / "phrases.jsonl", "--max-ratio", 0.15)
    assert _run("clean", *args, "--in", plain, "--out", tmp_path / "c.jsonl", "--over-ratio-out",
                tmp_path / "o.jsonl").exit_code == 0
    res = _run("clean", *args, "--in", parquet, "--out", tmp_path / "c.parquet", "--over-ratio-out",
               tmp_path / "o.parquet")
    assert res.exit_code == 0, res.output
    for name in ("c", "o"):
        want = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        assert [_without_nulls(r) for r in _rows(tmp_path / f"{name}.parquet")] == want and want, name


def _damage_row_group(parquet, tmp_path, group: int):
    meta = pq.ParquetFile(parquet).metadata
    text = meta.schema.names.index("text")
    chunk = meta.row_group(group).column(text)
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(parquet.read_bytes())
    at = start + chunk.total_compressed_size // 2
    data[at: at + 64] = b"\xff" * 64
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    return bad


def test_a_damaged_row_group_is_one_line_and_clean_keeps_the_groups_before_it(crawl, tmp_path):
    plain, parquet, mined = crawl
    bad = _damage_row_group(parquet, tmp_path, 1)
    res = _run("mine", "--jsonl", bad, "--field", "text", "--out", tmp_path / "m", "--progress", "none")
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert res.output.startswith(f"Error: {bad}: row group 1 (rows 51-100): cannot be read (")
    assert _run("clean", "--phrases", mined / "phrases.jsonl", "--in", plain, "--out", tmp_path / "c.jsonl").exit_code == 0
    res = _run("clean", "--phrases", mined / "phrases.jsonl", "--in", bad, "--out", tmp_path / "c.parquet")
    assert res.exit_code == 1
    assert res.output.splitlines()[-1].startswith(f"Error: {bad}: row group 1 (rows 51-100): cannot be read")
    want = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()][:GROUP_ROWS]
    assert [_without_nulls(r) for r in _rows(tmp_path / "c.parquet")] == want
    errors = [json.loads(line) for line in (tmp_path / "c.parquet.errors.jsonl").read_text().splitlines()]
    assert [(e["row_group"], e["rows"]) for e in errors] == [(1, [51, 100])]


def test_a_truncated_parquet_file_is_one_line(crawl, tmp_path):
    _, parquet, mined = crawl
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])
    for args in (("mine", "--jsonl", cut, "--out", tmp_path / "m", "--progress", "none"),
                 ("clean", "--phrases", mined / "phrases.jsonl", "--in", cut, "--out", tmp_path / "c.parquet")):
        res = _run(*args)
        assert res.exit_code == 1 and res.output.strip().splitlines()[-1].startswith(
            f"Error: {cut}: not a readable Parquet file ("), res.output
        assert "Traceback" not in res.output


def test_a_null_text_names_its_row_and_a_missing_column_names_the_flag(tmp_path):
    path = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"text": ["one page here", None], "site": ["a", "b"]}), path)
    res = _run("mine", "--jsonl", path, "--out", tmp_path / "m", "--progress", "none")
    assert res.exit_code == 1 and f"Error: {path}: row 2: column 'text' is null, not a string" in res.output
    res = _run("mine", "--jsonl", path, "--field", "body", "--out", tmp_path / "m", "--progress", "none")
    assert res.exit_code == 1 and "no column 'body' (columns: text, site); name the column with --field" in res.output
    res = _run("mine", "--jsonl", path, "--site-field", "sitex", "--out", tmp_path / "m")
    assert res.exit_code == 2 and "'sitex': " in res.output and "has no such column" in res.output


def test_corpus_writes_parquet_for_a_parquet_name(tmp_path):
    assert _run("corpus", "web", "--docs", 50, "--out", tmp_path / "w.parquet").exit_code == 0
    assert _run("corpus", "web", "--docs", 50, "--out", tmp_path / "w.jsonl").exit_code == 0
    docs = [json.loads(line) for line in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert _rows(tmp_path / "w.parquet") == docs


def test_commands_that_do_not_read_parquet_refuse_it_in_one_line(crawl, tmp_path):
    _, parquet, mined = crawl
    for args, flag in ((("dedup", "--in", parquet, "--out", tmp_path / "d.jsonl"), "--in"),
                       (("index", "--jsonl", parquet, "--index", "crawl"), "--jsonl"),
                       (("clean", "--phrases", mined / "phrases.jsonl", "--in", parquet, "--out", tmp_path / "c.jsonl"),
                        "--out")):
        res = _run(*args)
        assert res.exit_code == 2, res.output
        last = res.output.strip().splitlines()[-1]
        assert "Parquet" in last and (flag is None or f"Invalid value for {flag}" in last), last
