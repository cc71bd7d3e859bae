"""One generated crawl written plain, gzip and Zstandard through every document command: the
mined phrases are the same bytes, strip-clean and dedup outputs the same documents line for
line (in the compression the output's name asks for), templates the same records. A
truncated .gz ends in one line naming the file and the line; clean and dedup keep every
document before it. (`mine --dask` reads a compressed file as one partition:
tests/integration/sidecar/distributed/test_file_partitions.py.)"""
from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from bloomspan.corpora import corpus_by_name, write_jsonl
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.inputs import open_lines

DOCS = 150
FORMATS = ("jsonl", "jsonl.gz", "jsonl.zst")


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    """``{suffix: path}`` of the same crawl in each format."""
    folder = tmp_path_factory.mktemp("crawl")
    docs = list(corpus_by_name("web", DOCS, 3))
    paths = {}
    for suffix in FORMATS:
        paths[suffix] = folder / f"web.{suffix}"
        write_jsonl(docs, paths[suffix])
    return paths


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _lines(path) -> list[bytes]:
    with open_lines(str(path)) as lines:
        return list(lines)


def _mine(src, out):
    return _run("mine", "--jsonl", src, "--field", "text", "--id-field", "id", "--sigma", 8, "--min-length", 8,
                "--out", out, "--progress", "none")


@pytest.fixture(scope="module")
def mined(crawls, tmp_path_factory):
    """``{suffix: out dir}`` of `mine --jsonl` on each format."""
    outs = {}
    for suffix, path in crawls.items():
        outs[suffix] = tmp_path_factory.mktemp("mined") / "out"
        res = _mine(path, outs[suffix])
        assert res.exit_code == 0, res.output
    return outs


def test_the_compressed_files_are_compressed(crawls):
    assert crawls["jsonl.gz"].read_bytes()[:2] == b"\x1f\x8b"
    assert crawls["jsonl.zst"].read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert _lines(crawls["jsonl.gz"]) == _lines(crawls["jsonl.zst"]) == crawls["jsonl"].read_bytes().splitlines(True)


def test_mined_phrases_are_identical_in_every_format(mined):
    plain = (mined["jsonl"] / "phrases.jsonl").read_bytes()
    assert plain.count(b"\n") > 5
    for suffix in FORMATS[1:]:
        assert (mined[suffix] / "phrases.jsonl").read_bytes() == plain, suffix


@pytest.mark.parametrize("suffix", FORMATS)
def test_strip_clean_is_identical_per_document_and_written_as_its_name_asks(crawls, mined, tmp_path, suffix):
    phrases = mined["jsonl"] / "phrases.jsonl"
    plain_out = tmp_path / "plain.jsonl"
    assert _run("clean", "--phrases", phrases, "--in", crawls["jsonl"], "--out", plain_out).exit_code == 0
    out = tmp_path / f"clean.{suffix}"
    res = _run("clean", "--phrases", phrases, "--in", crawls[suffix], "--out", out)
    assert res.exit_code == 0, res.output
    assert f"{DOCS:,} documents: {DOCS:,} cleaned" in res.output
    if suffix == "jsonl.gz":
        assert out.read_bytes()[:2] == b"\x1f\x8b"
    got = _lines(out)
    assert got == plain_out.read_bytes().splitlines(True) and len(got) == DOCS
    assert got != crawls["jsonl"].read_bytes().splitlines(True)  # the phrases did strip something


def test_dedup_and_templates_read_compressed_crawls(crawls, tmp_path):
    outs = {}
    for suffix in ("jsonl", "jsonl.zst"):
        outs[suffix] = tmp_path / f"dedup.{suffix}"
        res = _run("dedup", "--in", crawls[suffix], "--out", outs[suffix])
        assert res.exit_code == 0, res.output
        res = _run("templates", "--jsonl", crawls[suffix], "--out", tmp_path / f"templates-{suffix}.jsonl")
        assert res.exit_code == 0, res.output
    assert outs["jsonl.zst"].read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert _lines(outs["jsonl.zst"]) == outs["jsonl"].read_bytes().splitlines(True)
    assert (tmp_path / "templates-jsonl.zst.jsonl").read_bytes() == (tmp_path / "templates-jsonl.jsonl").read_bytes()


def test_a_site_field_no_document_holds_is_refused_in_a_compressed_crawl_too(crawls, tmp_path):
    res = _run("mine", "--jsonl", crawls["jsonl.gz"], "--field", "text", "--site-field", "sitex", "--out", tmp_path)
    assert res.exit_code == 2 and f"'sitex': none of the {DOCS} documents of {crawls['jsonl.gz']}" in res.output, res.output


@pytest.fixture
def truncated(crawls, tmp_path):
    """The gzip crawl cut in half, and how many whole lines it still holds."""
    whole = crawls["jsonl.gz"].read_bytes()
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    kept = 0
    try:
        with gzip.open(path, "rb") as f:
            for _ in f:
                kept += 1
    except EOFError:
        pass
    assert 0 < kept < DOCS
    return path, kept


def test_mine_on_a_truncated_gz_is_one_line_naming_file_and_line(truncated, tmp_path):
    path, kept = truncated
    res = _mine(path, tmp_path / "out")
    assert res.exit_code == 1
    assert res.output.startswith(f"Error: {path}:{kept + 1}: compressed data ends early (a truncated file) at byte ")
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert not (tmp_path / "out" / "report.json").exists()


def test_clean_on_a_truncated_gz_keeps_every_document_before_the_damage(crawls, mined, truncated, tmp_path):
    path, kept = truncated
    phrases = mined["jsonl"] / "phrases.jsonl"
    plain_out = tmp_path / "plain.jsonl"
    assert _run("clean", "--phrases", phrases, "--in", crawls["jsonl"], "--out", plain_out).exit_code == 0
    out = tmp_path / "cut-clean.jsonl"
    res = _run("clean", "--phrases", phrases, "--in", path, "--out", out)
    assert res.exit_code == 1
    assert res.output.splitlines()[-1].startswith(f"Error: {path}:{kept + 1}: compressed data ends early")
    assert out.read_bytes().splitlines(True) == plain_out.read_bytes().splitlines(True)[:kept]
    errors = [json.loads(line) for line in (tmp_path / "cut-clean.jsonl.errors.jsonl").read_text().splitlines()]
    assert [e["line"] for e in errors] == [kept + 1] and "the input ends here" in errors[0]["reason"]


def test_dedup_on_a_truncated_gz_keeps_every_document_before_the_damage(crawls, truncated, tmp_path):
    path, kept = truncated
    prefix = tmp_path / "prefix.jsonl"
    prefix.write_bytes(b"".join(crawls["jsonl"].read_bytes().splitlines(True)[:kept]))
    assert _run("dedup", "--in", prefix, "--out", tmp_path / "want.jsonl").exit_code == 0
    res = _run("dedup", "--in", path, "--out", tmp_path / "got.jsonl")
    assert res.exit_code == 1
    assert res.output.splitlines()[-1].startswith(f"Error: {path}:{kept + 1}: compressed data ends early")
    assert (tmp_path / "got.jsonl").read_bytes() == (tmp_path / "want.jsonl").read_bytes()
