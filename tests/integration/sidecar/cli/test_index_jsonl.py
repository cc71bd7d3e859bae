"""`bloomspan index --jsonl FILE --index NAME` on the real node: the bytes of each line stored
as written, the bloomspan document mappings on a new index, per-line errors with their line
numbers while the other lines are indexed, progress on stderr, retries when the cluster
answers 503, and an existing index left with its own mappings."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from opensearchpy.exceptions import TransportError

from bloomspan.sidecar.cli.index import index as index_command
from bloomspan.sidecar.cli.index_jsonl import IndexJsonlConfig, IndexLoadError, index_jsonl, parse_line

LINES = [
    b'\xef\xbb\xbf{"id": "a", "text": "First page.", "price": 1.10, "n": 1E+2}',  # BOM, number literals
    b"",
    b"[1, 2]",
    b"not json",
    b'{"text": "no id here"}',
    b'{"id": "b", "text": "Second page.", "tags": ["x"]}\r',  # CRLF line ending
    b'{"id": "c", "count": 5}',
    b'{"id": "d", "count": "not a number"}',  # the cluster rejects it: count is a long now
    b'{"id": "e", "text": "caf\xc3\xa9 \\ud83d\\ude00"}',
    b"\xff\xfe",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"id": {"nested": 1}}',
    b'{"id": "a", "text": "First page, again."}',  # same id: updated
]


@pytest.fixture
def export(tmp_path):
    path = tmp_path / "export.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


def test_cli_indexes_every_good_line_and_names_every_bad_one(os_client, opensearch_url, index_prefix, export):
    target = f"{index_prefix}load"
    r = CliRunner().invoke(index_command, ["--url", opensearch_url, "--jsonl", str(export), "--index", target,
                                           "--id-field", "id", "--batch-size", "3"])
    assert r.exit_code == 1, r.output
    errors = {int(line.split(":")[1]): line for line in r.stderr.splitlines() if line.startswith(str(export))}
    assert sorted(errors) == [3, 4, 5, 8, 10, 11, 12]
    assert "expected a JSON object, got list" in errors[3] and "invalid JSON" in errors[4]
    assert "id field 'id' is missing" in errors[5] and "mapper_parsing_exception" in errors[8]
    assert "not valid UTF-8" in errors[10] and "nested too deeply" in errors[11] and "string or an integer" in errors[12]
    # the wording and 0-based byte clean and mine give for the same line (index said "byte 1: ...")
    assert errors[10].endswith(":10: not valid UTF-8 (invalid start byte at byte 0)"), errors[10]
    assert "bloomspan: index" in r.stderr and "Traceback" not in r.output
    assert "indexed 5 of 12 documents" in r.stdout and "4 created, 1 updated, 7 failed, 1 blank lines skipped" in r.stdout
    assert "7 line(s)" in r.stderr
    raw = os_client.transport.perform_request("GET", f"/{target}/_doc/c")["_source"]
    assert raw == {"id": "c", "count": 5}
    got = os_client.transport.perform_request("GET", f"/{target}/_source/b")
    assert got == {"id": "b", "text": "Second page.", "tags": ["x"]}
    assert os_client.get(index=target, id="a")["_source"]["text"] == "First page, again."
    assert os_client.get(index=target, id="e")["_source"]["text"] == "café \U0001f600"
    mapping = os_client.indices.get_mapping(index=target)[target]["mappings"]["properties"]
    assert mapping["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == "rank_feature"
    assert os_client.count(index=target)["count"] == 4


def test_a_lone_surrogate_in_the_id_is_that_lines_error_and_the_next_line_is_indexed(os_client, opensearch_url,
                                                                                    index_prefix, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"id":"\\ud800","text":"a"}\n{"id":"ok","text":"b"}\n')
    target = f"{index_prefix}surrogate"
    r = CliRunner().invoke(index_command, ["--url", opensearch_url, "--jsonl", str(path), "--index", target,
                                           "--id-field", "id"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert f"{path}:1: id field 'id' holds a lone surrogate (\\ud800 at character 1)" in r.stderr, r.stderr
    assert "1 created, 0 updated, 1 failed" in r.stdout
    assert os_client.get(index=target, id="ok")["_source"] == {"id": "ok", "text": "b"}


def test_number_literals_reach_the_cluster_as_written(os_client, index_prefix, tmp_path):
    path = tmp_path / "n.jsonl"
    path.write_bytes(b'{"id": 1, "price": 1.10, "n": 1E+2, "k": "v"}\n')
    target = f"{index_prefix}literal"
    summary = index_jsonl(os_client, IndexJsonlConfig(str(path), target, id_field="id"))
    assert summary.indexed == 1 and summary.created_index
    resp = os_client.transport.perform_request("GET", f"/{target}/_source/1", params={"filter_path": ""})
    assert resp == {"id": 1, "price": 1.10, "n": 100.0, "k": "v"}
    body = os_client.transport.perform_request("GET", f"/{target}/_search",
                                               params={"q": "price:1.10", "filter_path": "hits.total"})
    assert body["hits"]["total"]["value"] == 1


def test_an_existing_index_keeps_its_mappings(os_client, index_prefix, tmp_path):
    target = f"{index_prefix}mine"
    os_client.indices.create(index=target, body={"mappings": {"dynamic": "strict",
                                                              "properties": {"text": {"type": "text"}}}})
    path = tmp_path / "e.jsonl"
    path.write_text('{"text": "ok"}\n{"text": "ok", "extra": 1}\n', encoding="utf-8")
    failed = []
    summary = index_jsonl(os_client, IndexJsonlConfig(str(path), target),
                          on_error=lambda line, reason: failed.append((line, reason)))
    assert not summary.created_index and summary.indexed == 1 and summary.failed == 1
    assert failed[0][0] == 2 and "strict_dynamic_mapping_exception" in failed[0][1]
    assert "bloomspan" not in os_client.indices.get_mapping(index=target)[target]["mappings"]["properties"]


class FailsFirstBulks:
    """The real client, except that its first ``n`` bulk calls answer 503 (a node restarting)."""

    def __init__(self, client, n: int):
        self._client, self.left, self.calls = client, n, 0

    def __getattr__(self, name):
        return getattr(self._client, name)

    def bulk(self, *args, **kwargs):
        self.calls += 1
        if self.left:
            self.left -= 1
            raise TransportError(503, "unavailable", {})
        return self._client.bulk(*args, **kwargs)


def test_a_503_is_retried_and_a_dead_cluster_stops_with_a_clear_error(os_client, index_prefix, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": f"page {i}"}) + "\n" for i in range(7)), encoding="utf-8")
    target = f"{index_prefix}retry"
    flaky = FailsFirstBulks(os_client, 2)
    summary = index_jsonl(flaky, IndexJsonlConfig(str(path), target, id_field="id", batch_size=3), sleep=lambda s: None)
    assert summary.indexed == 7 and summary.failed == 0 and flaky.calls == 5
    with pytest.raises(IndexLoadError, match=r"503 after 4 tries; 0 documents were indexed before line 1"):
        index_jsonl(FailsFirstBulks(os_client, 99), IndexJsonlConfig(str(path), target), sleep=lambda s: None)


@pytest.mark.parametrize("kw, field", [({"index": "crawl-*"}, "index"), ({"index": "Crawl"}, "index"),
                                       ({"index": "_x"}, "index"), ({"batch_size": 0}, "batch_size"),
                                       ({"id_field": ""}, "id_field")])
def test_bad_settings_name_the_flag(tmp_path, kw, field):
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n")
    with pytest.raises(IndexLoadError) as e:
        IndexJsonlConfig(**{"path": str(path), "index": "ok", **kw})
    assert e.value.field == field


def test_parse_line_keeps_the_bytes():
    raw = b'{"id": 7, "x": 1.50}'
    assert parse_line(raw, "id") == (raw, "7")
    assert parse_line(raw, None) == (raw, None)
    with pytest.raises(ValueError, match="longer than 512"):
        parse_line(json.dumps({"id": "x" * 513}).encode(), "id")


def test_a_gzip_export_is_indexed_like_the_plain_one_and_a_truncated_one_keeps_its_lines(
        os_client, opensearch_url, index_prefix, tmp_path):
    import gzip

    docs = b"".join(json.dumps({"id": f"g{i}", "text": f"page number {i} " * 40}).encode() + b"\n"
                    for i in range(2000))
    whole = tmp_path / "export.jsonl.gz"
    whole.write_bytes(gzip.compress(docs))
    target = f"{index_prefix}gz"
    r = CliRunner().invoke(index_command, ["--url", opensearch_url, "--jsonl", str(whole), "--index", target,
                                           "--id-field", "id", "--batch-size", "300"])
    assert r.exit_code == 0, r.output
    assert "indexed 2,000 of 2,000 documents" in r.stdout and "MB decompressed" in r.stderr
    assert os_client.get(index=target, id="g1999")["_source"]["text"].startswith("page number 1999 ")

    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    kept = 0
    try:
        with gzip.open(cut, "rb") as f:
            for _ in f:
                kept += 1
    except EOFError:
        pass
    assert 0 < kept < 2000
    target = f"{index_prefix}gzcut"
    r = CliRunner().invoke(index_command, ["--url", opensearch_url, "--jsonl", str(cut), "--index", target,
                                           "--id-field", "id", "--batch-size", "300"])
    assert r.exit_code == 1
    last = r.output.strip().splitlines()[-1]
    assert last.startswith(f"Error: {cut}:{kept + 1}: compressed data ends early") and f"indexed into {target}" in last
    assert os_client.count(index=target)["count"] == kept
