"""``bloomspan.mine(texts, sigma=…, min_length=…)``: the records `mine --jsonl` writes for the
same texts, exactly; the cleaner from the same namespace cleans with them; bad input is one
error naming the text; importing bloomspan loads nothing heavy."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import bloomspan
from bloomspan.corpora import corpus_by_name, write_jsonl
from bloomspan.sidecar.cli.main import cli


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    docs = list(corpus_by_name("web", 150, 4))
    write_jsonl(docs, folder / "web.jsonl")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(folder / "web.jsonl"), "--sigma", "8", "--min-length", "8",
                                   "--out", str(folder / "out"), "--progress", "none"])
    assert res.exit_code == 0, res.output
    return docs, [json.loads(line) for line in (folder / "out" / "phrases.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("engine", ["bloomspan", "fhk"])
def test_mine_returns_the_records_mine_jsonl_writes(crawl, engine):
    docs, written = crawl
    got = bloomspan.mine([d["text"] for d in docs], sigma=8, min_length=8, engine=engine)
    assert got == written and len(got) > 5
    assert all(r["df"] >= 8 and r["length"] >= 8 and r["min_length"] == 8 for r in got)


def test_the_mined_records_clean_with_the_cleaner_of_the_same_namespace(crawl):
    docs, _ = crawl
    phrases = bloomspan.PhraseSet.from_records(bloomspan.mine((d["text"] for d in docs), sigma=8, min_length=8))
    cleaner = bloomspan.Cleaner(phrases, bloomspan.CleanerConfig(fields=("text",), mode="strip", id_field=None))
    results = cleaner.clean_batch(docs[:20])
    assert all(r.ok for r in results) and sum(r.changed for r in results) > 10
    assert all(len(r.doc["text"]) < len(d["text"]) for r, d in zip(results, docs) if r.changed)


def test_bad_texts_are_one_error_naming_the_text():
    with pytest.raises(TypeError, match=r"texts\[1\] is int, not a string"):
        bloomspan.mine(["a page", 7], sigma=2, min_length=2)
    with pytest.raises(ValueError, match="no text has any token"):
        bloomspan.mine(["", "  "], sigma=2, min_length=2)
    from bloomspan.engine.mining.config import ConfigError

    with pytest.raises(ConfigError, match="sigma"):
        bloomspan.mine(["a b c"], sigma=1, min_length=2)


def test_importing_bloomspan_loads_no_subpackage():
    code = "import sys, bloomspan; print(sorted(m for m in sys.modules if m.startswith(('bloomspan.', 'numba'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_readme_snippet_runs(crawl):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("### Mining in Python\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    docs, written = crawl
    scope = {"docs": docs}
    exec(compile(snippet, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
    assert scope["phrases"] and scope["phrases"][0]["df"] >= 20
    assert any(r.changed for r in scope["cleaned"])
