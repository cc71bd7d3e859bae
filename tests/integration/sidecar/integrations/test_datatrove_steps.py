"""datatrove: real pipelines on a LocalPipelineExecutor. BloomspanMiner after a JsonlReader writes a
run that from_run reads (the phrases `mine --jsonl` finds for the same pages); BloomspanCleaner,
one line added between the reader and the writer, leaves the paragraphs and no header or footer."""
from __future__ import annotations

import gzip
import json
import pickle

import pytest
from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

from bloomspan.sidecar.integrations.datatrove_steps import BloomspanCleaner, BloomspanMiner
from tests.support.boilerplate_pages import MIN_LENGTH, SIGMA, mined_run, pages


def _crawl(folder, docs):
    folder.mkdir()
    with gzip.open(folder / "crawl.jsonl.gz", "wt", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": d["id"], "text": d["text"], "metadata": {"url": d["url"]}}) + "\n")


def _phrases(run):
    return [json.loads(line) for line in (run / "phrases.jsonl").read_text().splitlines()]


def test_mine_then_clean_in_datatrove_pipelines(tmp_path):
    docs = pages(30)
    _crawl(tmp_path / "crawl", docs)
    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "crawl")),
                                    BloomspanMiner(tmp_path / "run", sigma=SIGMA, min_length=MIN_LENGTH)],
                          tasks=1, logging_dir=str(tmp_path / "logs-mine")).run()
    assert _phrases(tmp_path / "run") == _phrases(mined_run(tmp_path / "cli", docs))

    LocalPipelineExecutor(pipeline=[JsonlReader(str(tmp_path / "crawl")),
                                    BloomspanCleaner.from_run(tmp_path / "run"),
                                    JsonlWriter(str(tmp_path / "clean"), compression=None)],
                          tasks=1, logging_dir=str(tmp_path / "logs-clean")).run()
    written = [json.loads(line) for f in sorted((tmp_path / "clean").glob("*.jsonl"))
               for line in f.read_text().splitlines()]
    assert {w["id"]: w["text"] for w in written} == {d["id"]: "\n\n".join(d["paragraphs"]) for d in docs}
    assert all(w["metadata"]["url"] and w["metadata"]["bloomspan"]["spans"] for w in written)


def test_max_ratio_drops_and_the_miner_refuses_a_split_corpus(tmp_path):
    docs = pages(10)
    run = mined_run(tmp_path, docs)
    mostly = Document(text=docs[0]["text"].split("\n\n")[0] + "\n\nshort tail", id="x")
    step = pickle.loads(pickle.dumps(BloomspanCleaner.from_run(run, max_ratio=0.5)))  # as workers>1 ship it
    assert list(step.run(iter([mostly]), 0, 1)) == []
    with pytest.raises(ValueError, match="runs in 2 tasks"):
        list(BloomspanMiner(tmp_path / "out").run(iter([]), 0, 2))
