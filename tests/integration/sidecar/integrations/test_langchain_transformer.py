"""LangChain: pages loaded as Documents, BloomspanTransformer from a mined run, then a real
langchain-text-splitters splitter: no chunk holds the header or footer, every paragraph
reaches a chunk whole, and each document keeps its id and metadata, gaining the spans."""
from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.sidecar.integrations.langchain_transformer import BloomspanTransformer
from tests.support.boilerplate_pages import FOOTER, HEADER, mined_run, pages


def test_transformer_before_a_splitter_leaves_the_content_and_no_boilerplate(tmp_path):
    docs = pages(30)
    run = mined_run(tmp_path, docs)
    loaded = [Document(page_content=d["text"], id=d["id"], metadata={"source": d["url"]}) for d in docs]
    cleaned = BloomspanTransformer.from_run(run).transform_documents(loaded)
    chunks = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=0).split_documents(cleaned)

    assert [c.page_content for c in cleaned] == ["\n\n".join(d["paragraphs"]) for d in docs]
    assert all(HEADER[:40] not in c.page_content and FOOTER[:40] not in c.page_content for c in chunks)
    for d in docs:
        mine = [c.page_content for c in chunks if c.metadata["source"] == d["url"]]
        assert all(any(p in c for c in mine) for p in d["paragraphs"] if len(p) <= 300)
    first = cleaned[0]
    assert first.id == docs[0]["id"] and first.metadata["source"] == docs[0]["url"]
    assert [docs[0]["text"][s["start"]:s["end"]] for s in first.metadata["bloomspan"]["spans"]] == \
        [HEADER, FOOTER.rstrip(".")]
    assert loaded[0].page_content == docs[0]["text"] and "bloomspan" not in loaded[0].metadata


def test_mark_mode_keeps_the_text_and_a_bad_mode_names_the_field(tmp_path):
    docs = pages(10)
    run = mined_run(tmp_path, docs)
    marked = BloomspanTransformer.from_run(run, mode="mark").transform_documents([Document(page_content=docs[1]["text"])])
    assert marked[0].page_content == docs[1]["text"] and len(marked[0].metadata["bloomspan"]["spans"]) == 2
    with pytest.raises(IngestConfigError, match="mode='downweight'.*pipeline step"):
        BloomspanTransformer.from_run(run, mode="downweight")
