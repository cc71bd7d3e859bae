"""The README's LangChain, LlamaIndex and datatrove examples, run as written on generated pages in
a folder holding the run (`out/`) or the crawl (`crawl/`) they name: the header and footer are gone
from what each produces and every paragraph is there."""
from __future__ import annotations

import gzip
import json

from llama_index.core.schema import MetadataMode

from tests.support.boilerplate_pages import FOOTER, HEADER, mined_run, pages
from tests.support.readme_snippets import run_block


def _clean_of(texts, docs):
    joined = "\n".join(texts)
    assert HEADER[:40] not in joined and FOOTER[:40] not in joined
    assert all(p in joined for d in docs for p in d["paragraphs"])


def test_the_langchain_and_llama_index_snippets_run(tmp_path, monkeypatch):
    docs = pages(30)
    mined_run(tmp_path, docs, "out")
    monkeypatch.chdir(tmp_path)
    chunks = run_block("### LangChain: a document transformer before the splitter", {"pages": docs})["chunks"]
    _clean_of([c.page_content for c in chunks], docs)
    nodes = run_block("### LlamaIndex: a transformation for documents and nodes", {"pages": docs})["nodes"]
    _clean_of([n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes], docs)


def test_the_datatrove_snippet_runs(tmp_path, monkeypatch):
    docs = pages(30)
    (tmp_path / "crawl").mkdir()
    with gzip.open(tmp_path / "crawl" / "pages.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs)
    monkeypatch.chdir(tmp_path)
    run_block("### datatrove: one line in an existing pipeline", {})
    written = [json.loads(line) for p in sorted((tmp_path / "clean").glob("*.jsonl.gz"))
               for line in gzip.decompress(p.read_bytes()).decode().splitlines()]
    assert len(written) == len(docs)
    _clean_of([w["text"] for w in written], docs)
