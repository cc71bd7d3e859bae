"""A run's doc map (document number -> key) kept in its run folder, one file per published
chunk, for a Dask run whose driver never holds every key at once.

The workers number the documents (:mod:`bloomspan.sidecar.distributed.doc_numbering`) and send
the driver the doc map one part at a time; :class:`DocMapWriter` writes each part as the
``DOCMAP_CHUNK``-key files publication reads, and the manifest last (a folder without it is
incomplete). :class:`DocMap` reads it back as the sequence of keys :func:`publish
<bloomspan.sidecar.publish.template_index.publish>`, the phrase documents' example ids and
the report take, holding one chunk in memory at a time.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.template_index import DOCMAP_CHUNK

from .checkpoint import write_json_atomic

MANIFEST = "doc_map.json"


def _chunk_file(folder: Path, k: int) -> Path:
    return folder / f"chunk-{k:06d}.json"


class DocMapWriter:
    """Writes the doc map to ``folder`` (replaced) part by part, in number order."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.n_docs = 0
        self._pending: list[str] = []

    def add(self, keys: list[str]) -> None:
        """The keys of the next documents (any count)."""
        self._pending.extend(keys)
        while len(self._pending) >= DOCMAP_CHUNK:
            self._write(self._pending[:DOCMAP_CHUNK])
            del self._pending[:DOCMAP_CHUNK]

    def _write(self, keys: list[str]) -> None:
        write_json_atomic(_chunk_file(self.folder, self.n_docs // DOCMAP_CHUNK), {"keys": keys}, fsync=False)
        self.n_docs += len(keys)

    def close(self) -> DocMap:
        if self._pending:
            self._write(self._pending)
            self._pending = []
        write_json_atomic(self.folder / MANIFEST, {"n_docs": self.n_docs, "chunk": DOCMAP_CHUNK})
        return DocMap(self.folder)


class DocMap(Sequence):
    """The doc map in ``folder``: ``len`` documents, ``doc_map[i]`` and ``doc_map[a:b]`` keys."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        try:
            manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{self.folder}: the doc map cannot be read ({exc}); delete "
                                  f"{self.folder.parent} to start the run over", item=str(self.folder)) from None
        if manifest.get("chunk") != DOCMAP_CHUNK:
            raise CheckpointError(f"{self.folder}: doc map of {manifest.get('chunk')} keys per chunk, this bloomspan "
                                  f"writes {DOCMAP_CHUNK}; delete {self.folder.parent} to start the run over",
                                  item=str(self.folder))
        self.n_docs = int(manifest["n_docs"])
        self._cached: tuple[int, list[str]] | None = None

    def __len__(self) -> int:
        return self.n_docs

    def _chunk(self, k: int) -> list[str]:
        if self._cached is None or self._cached[0] != k:
            with open(_chunk_file(self.folder, k), encoding="utf-8") as f:
                self._cached = (k, json.load(f)["keys"])
        return self._cached[1]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n_docs))]
        if i < 0:
            i += self.n_docs
        if not 0 <= i < self.n_docs:
            raise IndexError(f"document {i} of {self.n_docs}")
        return self._chunk(i // DOCMAP_CHUNK)[i % DOCMAP_CHUNK]
