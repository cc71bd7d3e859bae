"""``serve --phrases FILE`` reads a run's files as ``clean --phrases FILE`` does: the template
detector's ``templates.jsonl`` beside ``phrases.jsonl`` joins the phrases (it used to serve the
exact phrases alone, so page skeletons applied in ``clean`` but not through the proxy)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from bloomspan.corpora import corpus_by_name, write_jsonl
from bloomspan.ingest.match.loading import load_run_phrases
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.serve.state import CleanerHolder, ServeConfig


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve-run")
    write_jsonl(list(corpus_by_name("web", 300, 4)), folder / "web.jsonl")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(folder / "web.jsonl"), "--sigma", "8", "--min-length", "8",
                                   "--site-field", "site", "--url-field", "url", "--out", str(folder / "out"),
                                   "--progress", "none"])
    assert res.exit_code == 0, res.output
    assert (folder / "out" / "templates.jsonl").is_file()
    return folder / "out"


def _holder(phrases_path) -> CleanerHolder:
    holder = CleanerHolder(ServeConfig(upstream_url="http://127.0.0.1:9", phrases_path=str(phrases_path)))
    assert holder.refresh()
    return holder


def test_serve_applies_the_template_records_beside_the_phrases(run_dir):
    holder = _holder(run_dir / "phrases.jsonl")
    expected = load_run_phrases(run_dir / "phrases.jsonl")
    assert expected.templates is not None
    assert holder.current.templates is not None
    assert len(holder.current.templates.skeletons) == len(expected.templates.skeletons)
    assert len(holder.phrase_set) == len(expected.phrase_set) > 0

