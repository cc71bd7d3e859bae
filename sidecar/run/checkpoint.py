"""Resumable state of a mining run: an atomic checkpoint file and an append-only doc log.

A run may be killed at any moment (``kill -9`` included) and started again with the same
work directory; it then continues from its last checkpoint. Three things live on disk:

* the engine's corpus store (``bloomspan.engine.text.corpus_store``): texts of the documents
  read so far, tokenized; it commits itself atomically (its manifest) on ``flush``;
* a :class:`DocLog`: one record per document read (key, ``_seq_no``, ``_primary_term``,
  timestamp fingerprint, status and the store document it went to), in files written at
  the offsets the record count gives;
* the :class:`Checkpoint` file (JSON, replaced atomically: tmp + fsync + ``os.replace``)
  with the scan position of every unit, the doc-log counts and the store counts.

Commit order per checkpoint: flush the store, flush the log, then replace the checkpoint.
On resume the log is truncated back to the checkpoint's counts; the store is opened as it
is. The store can only be *ahead* of the checkpoint (its flush came first): those extra
documents are orphans that no log record references, and they are never read (the corpus
is assembled from log records, see :mod:`.snapshot`). So a resumed run sees exactly the
documents of its checkpoint, then re-reads the rest of the scan from the saved positions.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bloomspan.engine.text.durable_writes import fsync_dir, pwrite_all
from bloomspan.sidecar.cluster.document_keys import keys_array  # noqa: F401 (the run room reads it here)

# The document status codes the doc log and the snapshots store (the scan decides them).
from bloomspan.sidecar.cluster.document_status import (  # noqa: F401 (the run room reads them here)
    EMPTY,
    LISTED,
    MISSING,
    NOT_TEXT,
    SKIP_REASONS,
    STORED,
)
from bloomspan.sidecar.errors import CheckpointError

log = logging.getLogger(__name__)

META_COLUMNS = ("seq_no", "primary_term", "ts_hash", "status", "store_doc")


def write_json_atomic(path: Path, data: dict, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` as JSON so a reader sees the old or the new file whole."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
        if fsync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if fsync:
        fsync_dir(path.parent)


class Checkpoint:
    """The checkpoint file of one run: a JSON dict replaced atomically on every save."""

    def __init__(self, path: str | os.PathLike, fsync: bool = True):
        self.path = Path(path)
        self.fsync = fsync

    def load(self) -> dict | None:
        """The saved state, or None if there is none yet."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            state = json.loads(text)
        except ValueError as exc:  # cannot happen with os.replace, unless edited by hand
            raise CheckpointError(f"{self.path}: not valid JSON ({exc}); delete the work directory's "
                                  "run folder to start the run over", item=str(self.path)) from None
        if not isinstance(state, dict):
            raise CheckpointError(f"{self.path}: expected a JSON object", item=str(self.path))
        return state

    def save(self, state: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, state, fsync=self.fsync)


class DocLog:
    """Append-only records, one per document read, in three files named ``<stem>.*``.

    ``<stem>.keys``    UTF-8 document keys, concatenated
    ``<stem>.keyoff``  int64 (n+1,) byte offsets: key i is keys[off[i]:off[i+1]]
    ``<stem>.meta``    int64 (n, 5): seq_no, primary_term, ts_hash, status, store_doc

    ``counts`` (``{"n": n, "key_bytes": b}``) say how much is valid; opening truncates the
    files to them, dropping records written after the last checkpoint.
    """

    def __init__(self, folder: str | os.PathLike, stem: str, counts: dict | None = None, fsync: bool = True):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.stem = stem
        self.fsync = fsync
        counts = counts or {"n": 0, "key_bytes": 0}
        self.n = int(counts["n"])
        self.key_bytes = int(counts["key_bytes"])
        self._fds: dict[str, int] = {}
        sizes = {"keys": self.key_bytes, "keyoff": 8 * (self.n + 1), "meta": 8 * len(META_COLUMNS) * self.n}
        for name, size in sizes.items():
            path = self._path(name)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            have = os.fstat(fd).st_size
            if have < size and self.n > 0:
                os.close(fd)
                self.close()
                raise CheckpointError(f"{path} has {have} bytes but the checkpoint needs {size}: the work "
                                      "directory was damaged; delete its run folder to start over", item=str(path))
            os.ftruncate(fd, size)
            self._fds[name] = fd
        if self.n == 0:
            pwrite_all(self._fds["keyoff"], np.zeros(1, dtype="<i8"), 0)

    def _path(self, name: str) -> Path:
        return self.folder / f"{self.stem}.{name}"

    @property
    def counts(self) -> dict:
        return {"n": self.n, "key_bytes": self.key_bytes}

    def append(self, keys: Sequence[str], meta: np.ndarray) -> None:
        """Append records: ``keys`` (str) and ``meta`` int64 (len(keys), 5)."""
        meta = np.ascontiguousarray(meta, dtype="<i8")
        if meta.shape != (len(keys), len(META_COLUMNS)):
            raise ValueError(f"meta has shape {meta.shape}, expected ({len(keys)}, {len(META_COLUMNS)})")
        if not keys:
            return
        encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        offsets = self.key_bytes + np.cumsum(lengths)
        pwrite_all(self._fds["keys"], b"".join(encoded), self.key_bytes)
        pwrite_all(self._fds["keyoff"], offsets.astype("<i8"), 8 * (self.n + 1))
        pwrite_all(self._fds["meta"], meta, 8 * len(META_COLUMNS) * self.n)
        self.n += len(keys)
        self.key_bytes = int(offsets[-1])

    def flush(self) -> None:
        if self.fsync:
            for fd in self._fds.values():
                os.fsync(fd)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> DocLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ reading
    def meta(self) -> np.ndarray:
        """int64 (n, 5) copy of the valid records' meta columns."""
        return np.fromfile(self._path("meta"), dtype="<i8", count=self.n * len(META_COLUMNS)).reshape(
            self.n, len(META_COLUMNS))

    def keys(self) -> np.ndarray:
        """The valid keys as a numpy bytes array (dtype ``S<max>``), in log order."""
        blob = np.fromfile(self._path("keys"), dtype=np.uint8, count=self.key_bytes).tobytes()
        off = np.fromfile(self._path("keyoff"), dtype="<i8", count=self.n + 1).tolist()
        return keys_array([blob[off[i]:off[i + 1]] for i in range(self.n)])
