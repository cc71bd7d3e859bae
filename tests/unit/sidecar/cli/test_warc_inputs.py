"""WARC and WET archives (built with warcio) through the document commands: a WET file of a
generated crawl mines the phrases and templates its JSON Lines file mines, and cleans to the
same texts; a WARC response record gives its page's crawler text with URL and site from the
headers, other records none; a record with bad headers, a Content-Length that misses the next
record, and a file cut inside a record are each one line naming the file and the record,
with every document before it kept."""
from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from bloomspan.corpora import corpus_by_name, write_jsonl
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.inputs import open_lines
from bloomspan.sidecar.inputs.html_text import html_to_text

DOCS = 120


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _html(text: str) -> str:
    return "<html><head><title>t</title></head><body>" + "".join(f"<p>{line}</p>" for line in text.split("\n")) \
        + "</body></html>"


def write_archive(docs: list[dict], path, kind: str, gzip: bool = True) -> None:
    """A warcinfo record, then per document a WET conversion record (``kind="wet"``) or a
    request and an HTML response record (``kind="warc"``)."""
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "bloomspan tests"}))
        for doc in docs:
            if kind == "wet":
                record = writer.create_warc_record(doc["url"], "conversion", payload=io.BytesIO(doc["text"].encode()),
                                                   warc_headers_dict={"Content-Type": "text/plain"})
            else:
                writer.write_record(writer.create_warc_record(doc["url"], "request",
                                                              payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n")))
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
                record = writer.create_warc_record(doc["url"], "response", payload=io.BytesIO(_html(doc["text"]).encode()),
                                                   http_headers=http)
            writer.write_record(record)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warc")
    docs = list(corpus_by_name("web", DOCS, 2))
    paths = {"jsonl": folder / "web.jsonl", "wet": folder / "web.warc.wet.gz", "warc": folder / "web.warc.gz",
             "plain-warc": folder / "web.warc"}
    write_jsonl(docs, paths["jsonl"])
    write_archive(docs, paths["wet"], "wet")
    write_archive(docs, paths["warc"], "warc")
    write_archive(docs, paths["plain-warc"], "warc", gzip=False)
    return docs, paths


def _mine(src, out, *extra):
    return _run("mine", "--jsonl", src, "--field", "text", "--sigma", 8, "--min-length", 8, "--out", out,
                "--progress", "none", *extra)


def test_a_wet_file_mines_what_its_json_lines_file_mines(crawl, tmp_path):
    docs, paths = crawl
    assert all(d["site"] == d["url"].split("/")[2] for d in docs)  # the site is the URL's host in this crawl
    for name in ("jsonl", "wet"):
        res = _mine(paths[name], tmp_path / name, "--site-field", "site", "--url-field", "url")
        assert res.exit_code == 0, res.output
    for name in ("phrases.jsonl", "templates.jsonl"):
        assert (tmp_path / "wet" / name).read_bytes() == (tmp_path / "jsonl" / name).read_bytes(), name
    assert (tmp_path / "jsonl" / "phrases.jsonl").read_bytes().count(b"\n") > 5


def test_records_are_documents_with_url_site_and_id_from_the_headers(crawl):
    docs, paths = crawl
    for name in ("warc", "plain-warc"):
        with open_lines(str(paths[name])) as lines:
            got = [json.loads(line) if line.strip() else None for line in lines]
        assert len(got) == 1 + 2 * DOCS and got[0] is None and all(g is None for g in got[1::2])  # warcinfo, requests
        pages = got[2::2]
        assert [p["url"] for p in pages] == [d["url"] for d in docs]
        assert [p["site"] for p in pages] == [d["site"] for d in docs]
        assert [p["text"] for p in pages] == [html_to_text(_html(d["text"]))[0] for d in docs]
        assert all(p["warc_type"] == "response" and p["id"].startswith("<urn:uuid:") and p["date"] for p in pages)


def test_clean_and_dedup_of_a_wet_file_give_the_texts_of_json_lines(crawl, tmp_path):
    docs, paths = crawl
    assert _mine(paths["jsonl"], tmp_path / "m").exit_code == 0
    phrases = tmp_path / "m" / "phrases.jsonl"
    for name in ("jsonl", "wet"):
        res = _run("clean", "--phrases", phrases, "--in", paths[name], "--out", tmp_path / f"c-{name}.jsonl")
        assert res.exit_code == 0 and f"{DOCS:,} documents: {DOCS:,} cleaned" in res.output, res.output
        assert _run("dedup", "--in", paths[name], "--out", tmp_path / f"d-{name}.jsonl").exit_code == 0
    for kind in ("c", "d"):
        want = [json.loads(line)["text"] for line in (tmp_path / f"{kind}-jsonl.jsonl").read_text().splitlines()]
        got = [json.loads(line)["text"] for line in (tmp_path / f"{kind}-wet.jsonl").read_text().splitlines()]
        assert got == want and len(want) >= DOCS - 5, kind


def _record_starts(data: bytes) -> list[int]:
    starts, at = [], data.find(b"WARC/1.")
    while at >= 0:
        starts.append(at)
        at = data.find(b"\r\n\r\nWARC/1.", at + 1)
        at = at + 4 if at >= 0 else -1
    return starts


def test_a_record_with_bad_headers_is_one_line_and_clean_keeps_the_documents_before_it(crawl, tmp_path):
    docs, paths = crawl
    data = paths["plain-warc"].read_bytes()
    start = _record_starts(data)[6]  # record 7: the response of the third page (warcinfo, then request, response)
    bad = tmp_path / "bad.warc"
    bad.write_bytes(data[:start] + b"GARBAGE/1.1" + data[start + len(b"WARC/1.1"):])
    res = _mine(bad, tmp_path / "m")
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert res.output.startswith(f"Error: {bad}: record 7 (at byte ") and "bad WARC record" in res.output
    assert "the 6 records before it were read" in res.output
    assert _mine(paths["jsonl"], tmp_path / "m").exit_code == 0
    res = _run("clean", "--phrases", tmp_path / "m" / "phrases.jsonl", "--in", bad, "--out", tmp_path / "c.jsonl")
    assert res.exit_code == 1 and res.output.splitlines()[-1].startswith(f"Error: {bad}: record 7 ")
    kept = [json.loads(line)["url"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert kept == [d["url"] for d in docs[:2]]


def test_a_content_length_that_misses_the_next_record_names_the_record(crawl, tmp_path):
    _, paths = crawl
    data = paths["plain-warc"].read_bytes()
    start = _record_starts(data)[5]  # record 6
    at = data.index(b"Content-Length: ", start) + len(b"Content-Length: ")
    end = data.index(b"\r\n", at)
    bad = tmp_path / "length.warc"
    bad.write_bytes(data[:at] + str(int(data[at:end]) - 7).encode() + data[end:])
    res = _mine(bad, tmp_path / "m")
    assert res.exit_code == 1, res.output
    assert res.output.startswith(f"Error: {bad}: record 6 (at byte {start:,}): its Content-Length does not end")
    assert "WARNING" not in res.output  # warcio's own stderr warning is not shown


def test_a_truncated_warc_gz_is_one_line_and_clean_keeps_the_documents_before_it(crawl, tmp_path):
    docs, paths = crawl
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(paths["warc"].read_bytes()[: paths["warc"].stat().st_size // 2])
    res = _mine(cut, tmp_path / "m")
    assert res.exit_code == 1 and "before the record's end (a truncated file)" in res.output, res.output
    assert _mine(paths["jsonl"], tmp_path / "m").exit_code == 0
    res = _run("clean", "--phrases", tmp_path / "m" / "phrases.jsonl", "--in", cut, "--out", tmp_path / "c.jsonl")
    assert res.exit_code == 1 and "a truncated file" in res.output.splitlines()[-1]
    kept = [json.loads(line)["url"] for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert 0 < len(kept) < DOCS and kept == [d["url"] for d in docs[: len(kept)]]


def test_the_first_bytes_decide(crawl, tmp_path):
    _, paths = crawl
    misnamed = tmp_path / "web.jsonl.gz"
    misnamed.write_bytes(paths["wet"].read_bytes())
    assert _mine(misnamed, tmp_path / "m").exit_code == 0


def test_corpus_writes_a_wet_file_that_mines_like_its_json_lines(tmp_path):
    for name in ("w.jsonl", "w.warc.wet.gz"):
        assert _run("corpus", "web", "--docs", 120, "--out", tmp_path / name).exit_code == 0
        assert _run("mine", "--jsonl", tmp_path / name, "--sigma", 10, "--out", tmp_path / f"m-{name}",
                    "--progress", "none").exit_code == 0
    assert (tmp_path / "w.warc.wet.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert (tmp_path / "m-w.warc.wet.gz" / "phrases.jsonl").read_bytes() == \
        (tmp_path / "m-w.jsonl" / "phrases.jsonl").read_bytes()
