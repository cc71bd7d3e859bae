"""Mining a list of texts in Python (``bloomspan.mine``): the phrases ``mine --jsonl`` would
write for the same texts, as records, without files of your own.

The texts are tokenized into a corpus store in a temporary directory (removed at the end),
mined with the selected engine, and returned as the records of ``phrases.jsonl``: ``text``,
``tokens``, ``length``, ``df``, ``occurrences``, ``psi``, ``id`` and the run's ``min_length``,
in the same order (Ψ descending).
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.engines import mine
from bloomspan.engine.text.corpus_store import CorpusStore
from bloomspan.sidecar.publish.phrase_records import phrase_records

BATCH_DOCS = 5000


def mine_texts(texts: Iterable[str], config: MiningConfig) -> list[dict]:
    """Phrase records of ``texts`` (module docstring); TypeError naming the first text that is
    not a string, ValueError for texts without any token."""
    work = tempfile.mkdtemp(prefix="bloomspan-mine-")
    try:
        store = CorpusStore.create(f"{work}/store", with_offsets=False, fsync=False)
        ids: list[str] = []
        batch: list[str] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, not a string")
            ids.append(str(i + 1))  # the line number `mine --jsonl` would give it
            batch.append(text)
            if len(batch) >= BATCH_DOCS:
                store.append(ids, batch, flush=False)
                ids, batch = [], []
        if batch:
            store.append(ids, batch, flush=False)
        store.flush()
        if store.n_tokens == 0:
            raise ValueError("empty corpus: no text has any token" if store.n_docs else "empty corpus: no text given")
        result = mine(store.tokens, store.doc_offsets, config)
        records = list(phrase_records(result.phrases, store.vocabulary))
        for record in records:
            record["min_length"] = int(config.min_length)
        return records
    finally:
        shutil.rmtree(work, ignore_errors=True)
