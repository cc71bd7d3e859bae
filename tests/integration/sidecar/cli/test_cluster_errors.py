"""Cluster commands against the real node with the mistakes a user makes: an index pattern that
matches nothing, a mistyped field, a field that is not text, https to a plain-http node. Each
is one line naming the flag, exit status 1, no traceback, nothing published."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from bloomspan.sidecar.cli.main import cli
from tests.support.sidecar_helpers import make_source, web_docs


def _run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def _one_line_error(res, *needles):
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    lines = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, res.output
    for needle in needles:
        assert needle in lines[0], res.output
    return lines[0]


@pytest.fixture
def source(os_client, index_prefix):
    index = f"{index_prefix}crawl"
    docs = [{**d, "n": i} for i, d in enumerate(web_docs(60))]
    make_source(os_client, index, docs, shards=1,
                mappings={"properties": {"text": {"type": "text"}, "site": {"type": "keyword"},
                                         "n": {"type": "long"}}})
    return index


def test_mine_an_index_pattern_that_matches_nothing(opensearch_url, index_prefix, os_client, tmp_path):
    # one index of this test's own, so the message has something to list whatever else the node holds
    os_client.indices.create(index=f"{index_prefix}other")
    line = _one_line_error(_run("mine", "--url", opensearch_url, "--index", f"{index_prefix}nothing-*",
                                "--template-index", f"{index_prefix}tpl", "--lease-index", f"{index_prefix}lease",
                                "--work-dir", tmp_path),
                           f"--index {index_prefix}nothing-*: no such index on {opensearch_url}")
    assert "indices there:" in line
    assert not os_client.indices.exists_alias(name=f"{index_prefix}tpl")


@pytest.mark.parametrize("field, message", [
    ("body", "--field body: no index matching"),
    ("n", "--field n: mapped as long"),
])
def test_mine_a_field_that_is_missing_or_not_text(opensearch_url, index_prefix, os_client, source, tmp_path,
                                                  field, message):
    line = _one_line_error(_run("mine", "--url", opensearch_url, "--index", source, "--field", field,
                                "--template-index", f"{index_prefix}tpl", "--lease-index", f"{index_prefix}lease",
                                "--work-dir", tmp_path), message)
    assert "string fields there: site, text" in line
    assert not os_client.indices.exists_alias(name=f"{index_prefix}tpl")


@pytest.mark.parametrize("flag", ["--site-field", "--url-field"])
def test_mine_a_site_or_url_field_no_document_holds(opensearch_url, index_prefix, os_client, source, tmp_path, flag):
    line = _one_line_error(_run("mine", "--url", opensearch_url, "--index", source, flag, "sitex",
                                "--template-index", f"{index_prefix}tpl", "--lease-index", f"{index_prefix}lease",
                                "--work-dir", tmp_path),
                           f"{flag} sitex: no index matching {source} has this field", "fields seen: ")
    seen = line.split("fields seen: ", 1)[1]
    assert {"site", "text", "n"} <= {name.strip() for name in seen.split(")")[0].split(",")}, line
    assert not os_client.indices.exists_alias(name=f"{index_prefix}tpl")


def test_mine_a_site_field_held_by_unmapped_documents_passes_the_check(os_client, index_prefix):
    from bloomspan.sidecar.cluster.source_checks import check_fields_present

    index = f"{index_prefix}unmapped"
    os_client.indices.create(index=index, body={"mappings": {"dynamic": False, "properties": {"text": {"type": "text"}}}})
    os_client.index(index=index, id="1", body={"text": "x", "host": "a.example"}, refresh=True)
    check_fields_present(os_client, index, {"--site-field": "host", "--url-field": None})


def test_dedup_and_collapse_check_the_field_too(opensearch_url, index_prefix, source):
    _one_line_error(_run("dedup", "--url", opensearch_url, "--index", source, "--field", "txet",
                         "--dest-index", f"{index_prefix}dedup"), "--field txet: no index matching")
    _one_line_error(_run("collapse", "--url", opensearch_url, "--index", f"{index_prefix}none",
                         "--query", "x"), f"--index {index_prefix}none: no such index")


def test_an_unmapped_field_present_in_source_passes(os_client, index_prefix):
    from bloomspan.sidecar.cluster.source_checks import check_source

    index = f"{index_prefix}loose"
    make_source(os_client, index, [{"id": "1", "body": "some text", "text": "x"}], shards=1,
                mappings={"dynamic": False, "properties": {"text": {"type": "text"}}})
    assert check_source(os_client, index, "body") == {index: None}
    assert check_source(os_client, index, "text") == {index: "text"}


def test_https_to_a_plain_http_node_says_so(opensearch_url, tmp_path):
    url = opensearch_url.replace("http://", "https://")
    for args in (["report", "--url", url], ["runs", "--url", url],
                 ["clean", "--template-index", "t", "--url", url, "--in", __file__, "--out", tmp_path / "o"],
                 ["pipeline", "--template-index", "t", "--url", url]):
        _one_line_error(_run(*args), f"cannot reach {url} (TLS handshake failed", "a plain-http node needs an http://")


def test_connection_flags_come_from_the_environment(opensearch_url, index_prefix, tmp_path):
    """BLOOMSPAN_<COMMAND>_<FLAG> for every connection flag, on the commands that had their own."""
    res = _run("clean", "--template-index", f"{index_prefix}tpl", "--in", __file__, "--out", tmp_path / "o",
               env={"BLOOMSPAN_CLEAN_URL": opensearch_url})
    _one_line_error(res, f"--template-index {index_prefix}tpl: no such alias on {opensearch_url}")
    res = _run("pipeline", "--template-index", f"{index_prefix}tpl",
               env={"BLOOMSPAN_PIPELINE_URL": opensearch_url.replace("http://", "https://"),
                    "BLOOMSPAN_PIPELINE_CA_CERTS": str(tmp_path / "missing.pem")})
    assert res.exit_code == 2 and "--ca-certs" in res.output and "no such file" in res.output


def test_clean_and_pipeline_without_a_published_run_say_the_same_and_what_to_do(opensearch_url, index_prefix,
                                                                                tmp_path):
    """One reader of the published run (run_fields.published_run_index): both commands name the flag and the fix."""
    needle = f"--template-index {index_prefix}tpl: no such alias on {opensearch_url}; run `bloomspan mine` first"
    _one_line_error(_run("clean", "--template-index", f"{index_prefix}tpl", "--url", opensearch_url,
                         "--in", __file__, "--out", tmp_path / "o"), needle)
    _one_line_error(_run("pipeline", "--template-index", f"{index_prefix}tpl", "--url", opensearch_url), needle)


def test_runs_without_a_published_run_says_so(opensearch_url, index_prefix):
    res = _run("runs", "--url", opensearch_url, "--template-index", f"{index_prefix}tpl")
    assert res.exit_code == 0 and f"no published run behind {index_prefix}tpl" in res.output, res.output
