"""``bloomspan.cleaner_from_run`` / ``bloomspan.Cleaner.from_run`` over a ``mine --out`` directory:
the same cleaner ``clean --phrases`` builds, config as a CleanerConfig or its fields, and one
error naming the run for what is not a run (the template-index half runs on the real node:
tests/integration/test_run_cleaner_index.py)."""
from __future__ import annotations

import pytest

import bloomspan
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import Cleaner as IngestCleaner
from tests.support.boilerplate_pages import FOOTER, HEADER, mined_run, pages
from tests.support.readme_snippets import run_block


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    docs = pages(30)
    return docs, mined_run(tmp_path_factory.mktemp("run"), docs)


def test_a_run_directory_strips_what_was_mined(crawl):
    docs, run = crawl
    cleaner = bloomspan.cleaner_from_run(run)
    results = cleaner.clean_batch({"text": d["text"]} for d in docs)
    assert [r.doc["text"] for r in results] == ["\n\n".join(d["paragraphs"]) for d in docs]


def test_cleaner_from_run_is_cleaner_from_run_of_the_namespace(crawl):
    docs, run = crawl
    by_class = bloomspan.Cleaner.from_run(run / "phrases.jsonl", mode="mark")
    by_function = bloomspan.cleaner_from_run(run, config=bloomspan.CleanerConfig(fields=("text",), mode="mark",
                                                                                 id_field=None))
    assert issubclass(bloomspan.Cleaner, IngestCleaner) and isinstance(by_class, bloomspan.Cleaner)
    one, two = by_class.clean({"text": docs[0]["text"]}), by_function.clean({"text": docs[0]["text"]})
    assert one.doc == two.doc and one.doc["text"] == docs[0]["text"]
    spans = one.doc["bloomspan"]["spans"]
    assert [docs[0]["text"][s["start"]:s["end"]] for s in spans] == [HEADER, FOOTER.rstrip(".")]


def test_what_is_not_a_run_is_one_error_naming_it(crawl, tmp_path):
    _, run = crawl
    with pytest.raises(IngestConfigError, match=r"run='.*nowhere': no such directory or file"):
        bloomspan.cleaner_from_run(tmp_path / "nowhere")
    with pytest.raises(IngestConfigError, match=r"run='.*': the directory has no phrases.jsonl"):
        bloomspan.cleaner_from_run(tmp_path)
    with pytest.raises(IngestConfigError, match=r"config=.*not both"):
        bloomspan.cleaner_from_run(run, config=bloomspan.CleanerConfig(fields=("text",)), mode="mark")
    with pytest.raises(IngestConfigError, match=r"client=.*opensearch-py"):
        bloomspan.cleaner_from_run("tpl", bloomspan.CleanerConfig(fields=("text",)))
    with pytest.raises(IngestConfigError, match=r"mode='cut'"):
        bloomspan.cleaner_from_run(run, mode="cut")


def test_the_readme_snippet_runs(tmp_path, monkeypatch):
    docs = pages(30)
    mined_run(tmp_path, docs, "out")
    monkeypatch.chdir(tmp_path)
    scope = run_block("### A cleaner from a finished run", {"text": docs[0]["text"]})
    assert scope["page"] == "\n\n".join(docs[0]["paragraphs"])
    assert scope["marker"].config.mode == "mark"
