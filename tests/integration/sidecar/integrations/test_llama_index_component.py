"""LlamaIndex: Documents through a real IngestionPipeline, BloomspanTransform from a mined run first,
then SentenceSplitter (counting words, so small chunks are a known size): no node holds the
header or footer, every paragraph reaches a node, the spans stay out of the text
embeddings see; nodes (not only documents) are transformed too."""
from __future__ import annotations

from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode, TextNode

from bloomspan.sidecar.integrations.llama_index_component import BloomspanTransform
from tests.support.boilerplate_pages import FOOTER, HEADER, mined_run, pages


def test_transform_before_a_splitter_leaves_the_content_and_no_boilerplate(tmp_path):
    docs = pages(30)
    run = mined_run(tmp_path, docs)
    loaded = [Document(text=d["text"], id_=d["id"], metadata={"source": d["url"]}) for d in docs]
    splitter = SentenceSplitter(chunk_size=120, chunk_overlap=0, tokenizer=str.split)
    nodes = IngestionPipeline(transformations=[BloomspanTransform.from_run(run), splitter]).run(documents=loaded)

    texts = [n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
    assert all(HEADER[:40] not in t and FOOTER[:40] not in t for t in texts)
    joined = "\n".join(texts)
    assert all(p in joined for d in docs for p in d["paragraphs"])
    by_doc = {n.ref_doc_id for n in nodes}
    assert by_doc == {d["id"] for d in docs}
    node = nodes[0]
    assert node.metadata["source"] and node.metadata["bloomspan"]["spans"]
    assert "bloomspan" not in node.get_content(metadata_mode=MetadataMode.EMBED)
    assert loaded[0].text == docs[0]["text"] and "bloomspan" not in loaded[0].metadata


def test_nodes_are_transformed_as_documents_are(tmp_path):
    docs = pages(10)
    run = mined_run(tmp_path, docs)
    out = BloomspanTransform.from_run(run)([TextNode(text=docs[2]["text"], id_="n2")])
    assert out[0].text == "\n\n".join(docs[2]["paragraphs"]) and out[0].id_ == "n2"
