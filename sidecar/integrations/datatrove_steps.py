"""datatrove: two pipeline steps, so an existing pipeline gains bloomspan in one line.

* :class:`BloomspanCleaner` strips (or marks) the boilerplate of a finished run in each
  ``Document.text``, and with ``max_ratio`` drops the documents that are mostly boilerplate:

      pipeline=[JsonlReader("crawl/"), BloomspanCleaner.from_run("out"), JsonlWriter("clean/")]

* :class:`BloomspanMiner` mines the documents a reader yields and writes what ``bloomspan mine
  --out DIR`` writes (``phrases.jsonl``, ``report.json``), which ``from_run`` then reads:

      pipeline=[JsonlReader("crawl/"), BloomspanMiner("out", sigma=20, min_length=10)]

  The phrases are those of the whole corpus only when one task sees it all, so the miner
  refuses to run in a task of several (``tasks=1``); it is the last step (it yields nothing).

The cleaner is built when the step is made, so a bad run fails there and not in a worker; an
executor that pickles the pipeline into worker processes ships the run's path (and client), and
each worker builds the cleaner again on first use.
"""
from __future__ import annotations

import os
from typing import Any

try:
    from datatrove.data import DocumentsPipeline
    from datatrove.pipeline.base import PipelineStep
except ImportError as exc:
    raise ImportError(f"{__name__} needs datatrove ({exc}): pip install 'bloomspan[datatrove]'") from exc

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.run.jsonl_mining import mine_documents

from .text_cleaning import METADATA_KEY, clean_texts, step_cleaner

BATCH_DOCS = 512  # documents cleaned per call: the cleaner's batches amortise its per-call setup


class BloomspanCleaner(PipelineStep):
    """Clean each document's text with a run (module docstring); its metadata gains ``bloomspan``
    (``boilerplate_ratio`` and ``spans``, :mod:`.text_cleaning`). ``max_ratio``: drop a document
    whose boilerplate_ratio exceeds it (counted as ``dropped`` in the step's stats)."""

    name = "🧹 bloomspan"
    type = "✂️ - FORMAT"

    def __init__(self, run: str | os.PathLike, client=None, mode: str = "strip", batch_size: int = BATCH_DOCS,
                 **config_fields: Any):
        super().__init__()
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r}: must be an integer >= 1 (documents per cleaning call)")
        self.run_source, self.client, self.mode, self.batch_size = run, client, mode, batch_size
        self.config_fields = config_fields
        self._cleaner = step_cleaner(run, client, mode, **config_fields)  # errors now, not in a worker

    @classmethod
    def from_run(cls, run: str | os.PathLike, client=None, mode: str = "strip", **config_fields) -> BloomspanCleaner:
        """Over a ``mine --out`` directory, or a template index given an opensearch-py ``client``;
        other keywords are :class:`bloomspan.CleanerConfig` fields (``max_ratio=0.8``, ...)."""
        return cls(run, client, mode, **config_fields)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cleaner"] = None  # rebuilt from the run in the process that runs the step
        return state

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if self._cleaner is None:
            self._cleaner = step_cleaner(self.run_source, self.client, self.mode, **self.config_fields)
        batch = []
        for doc in data:
            batch.append(doc)
            if len(batch) >= self.batch_size:
                yield from self._clean(batch)
                batch = []
        yield from self._clean(batch)

    def _clean(self, batch: list):
        with self.track_time("batch"):
            cleaned = clean_texts(self._cleaner, [d.text for d in batch])
        for doc, c in zip(batch, cleaned):
            self.stat_update("total")
            if c.dropped:
                self.stat_update("dropped")
                continue
            if c.changed:
                self.stat_update("changed")
            doc.text = c.text
            doc.metadata[METADATA_KEY] = c.metadata
            yield doc


class BloomspanMiner(PipelineStep):
    """Mine every document the pipeline yields into ``out_dir`` (module docstring); ``sigma``,
    ``min_length`` and ``engine`` as for ``bloomspan mine``."""

    name = "⛏ bloomspan mine"
    type = "📊 - STATS"

    def __init__(self, out_dir: str | os.PathLike, sigma: int = 20, min_length: int = 10, engine: str = "bloomspan"):
        super().__init__()
        self.out_dir = os.fspath(out_dir)
        self.config = MiningConfig(sigma=sigma, min_length=min_length, engine=engine)  # ConfigError names the field

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if world_size != 1:
            raise ValueError(f"BloomspanMiner: the pipeline runs in {world_size} tasks, each seeing a part of the "
                             "corpus; mine in one (tasks=1) so the phrases are the whole corpus's")
        documents = ((str(doc.id), doc.text, ()) for doc in self._counted(data))
        summary = mine_documents(documents, "datatrove pipeline", "text", self.config, self.out_dir)
        self.stat_update("phrases", value=summary.phrases)
        yield from ()  # a generator, as every step is: the documents end here

    def _counted(self, data: DocumentsPipeline):
        for doc in data:
            self.stat_update("total")
            yield doc
