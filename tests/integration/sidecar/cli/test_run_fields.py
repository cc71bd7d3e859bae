"""`pipeline --template-index` and `clean --template-index` with a --site-field/--url-field other
than the run was mined with: one note naming the flag, the given and the mined field, on the
real node (a typo there left every site-scoped record applying to nothing, without a word)."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.corpora import generate_web, write_jsonl
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.cli.run_fields import field_mismatch_notes
from tests.support.sidecar_helpers import make_source


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_scope_field_other_than_the_mined_one_is_named(opensearch_url, os_client, index_prefix, tmp_path):
    docs = list(generate_web(120, 2))
    make_source(os_client, f"{index_prefix}crawl", docs, shards=1)
    tpl = f"{index_prefix}tpl"
    res = _run("mine", "--url", opensearch_url, "--index", f"{index_prefix}crawl", "--field", "text",
               "--template-index", tpl, "--lease-index", f"{index_prefix}lease", "--work-dir", tmp_path / "w",
               "--site-field", "site", "--url-field", "url", "--sigma", 5, "--progress", "none")
    assert res.exit_code == 0, res.output

    res = _run("pipeline", "--template-index", tpl, "--url", opensearch_url, "--field", "text",
               "--site-field", "sitex", "--url-field", "url", "--print")
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note: --")]
    assert notes == ["note: --site-field sitex: the run was mined with --site-field site; documents without a "
                     "field 'sitex' get no site-scoped record: check the name"]

    res = _run("pipeline", "--template-index", tpl, "--url", opensearch_url, "--field", "text",
               "--site-field", "site", "--url-field", "url", "--print")
    assert res.exit_code == 0 and "the run was mined with" not in res.output, res.output
    json.loads(res.output[res.output.index("\n{") + 1:])  # the pipeline JSON follows the notes

    new = tmp_path / "new.jsonl"
    write_jsonl(docs[:20], new)
    res = _run("clean", "--template-index", tpl, "--url", opensearch_url, "--in", new, "--out", tmp_path / "c.jsonl",
               "--site-field", "site", "--url-field", "link")
    assert res.exit_code == 0, res.output
    assert "note: --url-field link: the run was mined with --url-field url" in res.output


def test_no_note_without_the_flag_or_without_a_mined_field():
    mined = {"site_field": "site", "url_field": None}
    assert field_mismatch_notes(mined, None, "url") == []
    assert field_mismatch_notes(mined, "site", "link") == []
    assert field_mismatch_notes(mined, "host", None)[0].startswith("note: --site-field host:")
