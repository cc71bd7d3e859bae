"""Canonical corpus snapshot: every document of a run, in key order, ready to mine and publish.

Why a snapshot
--------------
The corpus store is filled in arrival order, which depends on threads, slices and
restarts. Published results must not: a re-run, a resumed run and an incremental run over
the same documents must publish identical bitmaps, example ids and coverage. So after
reading, the documents are put in *canonical order* — ascending by key bytes (UTF-8, i.e.
code point order of the ``_id``) — and a document's internal number is its rank among the
stored documents in that order. The snapshot is also what the next incremental run reuses
(:mod:`.incremental`): tokens of unchanged documents are copied from it, not re-read.

Layout of a snapshot folder (little-endian, written to ``<dir>.tmp`` and renamed):

  snapshot.json     manifest: counts, source, version mode, whether char offsets and line
                    starts are kept
  keys.bin          UTF-8 keys of ALL documents seen (stored and skipped), ascending
  keys.off          int64 (N+1,) byte offsets into keys.bin
  docs.meta         int64 (N, 4): seq_no, primary_term, ts_hash, status (see checkpoint.py)
  tokens.u32        uint32 (W,)  token ids of the D stored documents, canonical order
  doc_offsets.i64   int64 (D+1,) stored document d is tokens[off[d]:off[d+1]]
  char_starts.i64   int64 (W,)   (with offsets) token start in its document's text
  char_ends.i64     int64 (W,)   (with offsets) exclusive end
  line_starts.u8    uint8 (W,)   (with lines) 1 where a token is the first of a line of its
                                 document's text, else 0 (as in the corpus store)
  vocabulary.txt    the vocabulary (bloomspan.engine.text.vocabulary format)

Line starts are kept (manifest ``"with_lines": true``) when every source that contributes
documents has them, and the manifest always says which (``"with_lines"``); a snapshot of an
earlier version (1: the key could be absent) is refused, naming it: run once with ``--full``.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from bloomspan.engine.templates.blocks import block_offsets_from_flags
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.errors import CheckpointError

from .checkpoint import SKIP_REASONS, STORED, fsync_dir, keys_array, write_json_atomic

log = logging.getLogger(__name__)

FORMAT = "bloomspan-snapshot"
VERSION = 2  # 2: the manifest always says whether line starts are kept ("with_lines")
MANIFEST = "snapshot.json"


# ---------------------------------------------------------------------- ordering
def canonical_rows(keys: np.ndarray) -> np.ndarray:
    """Rows of ``keys`` (``S`` array, log order) in canonical order, one per distinct key.

    When a key occurs several times (a document re-read after a restart), its LAST record
    wins: it is the most recent read. Returns int64 (K,) row indices, keys ascending.
    """
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    last = np.ones(s.shape[0], dtype=bool)
    if s.shape[0] > 1:
        last[:-1] = s[:-1] != s[1:]
    return order[last].astype(np.int64)


# ---------------------------------------------------------------------- gather kernel
@njit(cache=True, nogil=True)
def gather_runs(src, src_start, length, dst_start, dst, remap, use_remap):
    """Copy run k = src[src_start[k]:+length[k]] to dst[dst_start[k]:], through ``remap``.

    src/dst: 1-D arrays of one dtype; src_start/length/dst_start int64 (K,); remap: array
    indexed by src values (used only when ``use_remap``).
    """
    for k in range(src_start.shape[0]):
        s = src_start[k]
        d = dst_start[k]
        for j in range(length[k]):
            v = src[s + j]
            if use_remap:
                dst[d + j] = remap[v]
            else:
                dst[d + j] = v


def gather_runs_reference(src, src_start, length, dst_start, dst, remap, use_remap) -> None:
    """Numpy twin of :func:`gather_runs`."""
    for s, n, d in zip(src_start.tolist(), length.tolist(), dst_start.tolist()):
        part = src[s:s + n]
        dst[d:d + n] = remap[part] if use_remap else part


# ---------------------------------------------------------------------- writing
@dataclass
class TokenSource:
    """Where stored documents' tokens come from: a corpus store or an older snapshot.

    tokens uint32 (W,), doc_offsets int64 (D+1,), char_starts/char_ends int64 (W,) or None,
    remap uint32 (V_src,) or None: token id in the source -> id in the new vocabulary,
    line_starts uint8 (W,) or None: 1 where a token starts a line of its document's text.
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    char_starts: np.ndarray | None = None
    char_ends: np.ndarray | None = None
    remap: np.ndarray | None = None
    line_starts: np.ndarray | None = None


def _memmap(path: Path, dtype, n: int, mode: str = "w+") -> np.ndarray:
    if n == 0:
        path.touch()
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode=mode, shape=(n,))


def write_snapshot(out_dir: str | os.PathLike, keys: np.ndarray, meta: np.ndarray, src_id: np.ndarray,
                   src_doc: np.ndarray, sources: list[TokenSource], vocabulary, info: dict,
                   with_offsets: bool) -> Snapshot:
    """Write a snapshot of N documents given in canonical order.

    keys:    ``S`` array (N,), strictly ascending.
    meta:    int64 (N, 4): seq_no, primary_term, ts_hash, status.
    src_id:  int64 (N,): which of ``sources`` holds a stored document (ignored otherwise).
    src_doc: int64 (N,): the document number inside that source.
    info:    extra manifest fields (source index, field, version mode, ...).

    Line starts are written when every source that contributes a stored document has
    ``line_starts`` (see :attr:`Snapshot.with_lines`); offsets are required of every such
    source when ``with_offsets``.
    """
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    n_all = int(keys.shape[0])
    if n_all > 1 and not np.all(keys[:-1] < keys[1:]):
        raise ValueError("keys must be strictly ascending (canonical order, one record per key)")
    stored = np.flatnonzero(meta[:, 3] == STORED)
    n_docs = int(stored.size)
    lengths = np.zeros(n_docs, dtype=np.int64)
    starts = np.zeros(n_docs, dtype=np.int64)
    for s, source in enumerate(sources):
        mine = np.flatnonzero(src_id[stored] == s)
        d = src_doc[stored[mine]]
        off = np.asarray(source.doc_offsets)
        starts[mine] = off[d]
        lengths[mine] = off[d + 1] - off[d]
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=doc_offsets[1:])
    n_tokens = int(doc_offsets[-1])
    contributing = np.unique(src_id[stored])
    with_lines = all(sources[s].line_starts is not None for s in contributing.tolist())
    outs = {"tokens.u32": ("<u4", "tokens", True)}
    if with_offsets:
        outs["char_starts.i64"] = ("<i8", "char_starts", False)
        outs["char_ends.i64"] = ("<i8", "char_ends", False)
    if with_lines:
        outs["line_starts.u8"] = ("u1", "line_starts", False)
    for fname, (dtype, attr, remapped) in outs.items():
        dst = _memmap(tmp / fname, dtype, n_tokens)
        for s, source in enumerate(sources):
            mine = np.flatnonzero(src_id[stored] == s)
            if mine.size == 0:
                continue
            src = getattr(source, attr)
            if src is None:
                raise ValueError(f"source {s} has no {attr}: cannot write a snapshot with offsets")
            use_remap = remapped and source.remap is not None
            remap = source.remap if use_remap else np.zeros(1, dtype=np.uint32)
            gather_runs(np.asarray(src, dtype=dtype), starts[mine], lengths[mine], doc_offsets[:-1][mine],
                        np.asarray(dst), remap, use_remap)
        if isinstance(dst, np.memmap):
            dst.flush()
            del dst
    doc_offsets.astype("<i8").tofile(tmp / "doc_offsets.i64")
    encoded = keys.tolist()
    key_off = np.zeros(n_all + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=n_all), out=key_off[1:])
    (tmp / "keys.bin").write_bytes(b"".join(encoded))
    key_off.tofile(tmp / "keys.off")
    np.ascontiguousarray(meta, dtype="<i8").tofile(tmp / "docs.meta")
    vocabulary.save(tmp / "vocabulary.txt")
    manifest = {"format": FORMAT, "version": VERSION, "n_all": n_all, "n_docs": n_docs, "n_tokens": n_tokens,
                "with_offsets": bool(with_offsets), "with_lines": with_lines, **info}
    for f in tmp.iterdir():
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    write_json_atomic(tmp / MANIFEST, manifest)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.rename(tmp, out_dir)
    fsync_dir(out_dir.parent)
    log.info("snapshot %s: %d documents (%d stored), %d tokens%s", out_dir, n_all, n_docs, n_tokens,
             "" if with_lines else ", without line starts")
    return Snapshot(out_dir)


# ---------------------------------------------------------------------- reading
class Snapshot:
    """A snapshot folder opened for reading (arrays are memmaps; ``docs.meta`` is writable so
    annotation can record the versions its updates produced)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        try:
            self.manifest = json.loads((self.folder / MANIFEST).read_text())
        except (FileNotFoundError, ValueError) as exc:
            raise CheckpointError(f"{self.folder}: not a complete snapshot ({exc})", item=str(self.folder)) from None
        fix = "run once with --full to read the documents again"
        if self.manifest.get("format") != FORMAT:
            raise CheckpointError(f"{self.folder}: not a bloomspan snapshot (format {self.manifest.get('format')!r}); "
                                  f"{fix}", item=str(self.folder))
        if self.manifest.get("version") != VERSION:
            raise CheckpointError(f"{self.folder}: snapshot version {self.manifest.get('version')!r}, this bloomspan "
                                  f"reads {VERSION}; {fix}", item=str(self.folder))
        self.n_all = int(self.manifest["n_all"])
        self.n_docs = int(self.manifest["n_docs"])
        self.n_tokens = int(self.manifest["n_tokens"])
        self.with_offsets = bool(self.manifest["with_offsets"])
        self.with_lines = bool(self.manifest["with_lines"])
        self._vocabulary = None
        self._keys = None

    def _array(self, name: str, dtype, n: int, mode: str = "r") -> np.ndarray:
        if n == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(self.folder / name, dtype=dtype, mode=mode, shape=(n,))

    @property
    def tokens(self) -> np.ndarray:
        return np.asarray(self._array("tokens.u32", "<u4", self.n_tokens))

    @property
    def doc_offsets(self) -> np.ndarray:
        return np.fromfile(self.folder / "doc_offsets.i64", dtype="<i8", count=self.n_docs + 1)

    @property
    def char_starts(self) -> np.ndarray | None:
        return np.asarray(self._array("char_starts.i64", "<i8", self.n_tokens)) if self.with_offsets else None

    @property
    def char_ends(self) -> np.ndarray | None:
        return np.asarray(self._array("char_ends.i64", "<i8", self.n_tokens)) if self.with_offsets else None

    @property
    def line_starts(self) -> np.ndarray | None:
        """uint8 (W,): 1 where a token is the first of a line of its document's text; None
        without lines (``with_lines`` False)."""
        return np.asarray(self._array("line_starts.u8", "u1", self.n_tokens)) if self.with_lines else None

    def block_offsets(self) -> np.ndarray | None:
        """int64 (B+1,) block (line) boundaries over :attr:`tokens`, strictly increasing from 0
        to W, every boundary of a non-empty document among them (the ``block_offsets`` of
        :mod:`bloomspan.engine.templates.blocks`); None without lines."""
        if not self.with_lines:
            return None
        return block_offsets_from_flags(self.line_starts.view(np.bool_), self.doc_offsets)

    def meta(self, writable: bool = False) -> np.ndarray:
        """int64 (N, 4): seq_no, primary_term, ts_hash, status (a memmap)."""
        if self.n_all == 0:
            return np.zeros((0, 4), dtype=np.int64)
        return np.memmap(self.folder / "docs.meta", dtype="<i8", mode="r+" if writable else "r",
                         shape=(self.n_all, 4))

    def keys(self) -> np.ndarray:
        """``S`` array (N,) of all keys, ascending."""
        if self._keys is None:
            blob = (self.folder / "keys.bin").read_bytes()
            off = np.fromfile(self.folder / "keys.off", dtype="<i8", count=self.n_all + 1).tolist()
            self._keys = keys_array([blob[off[i]:off[i + 1]] for i in range(self.n_all)])
        return self._keys

    def stored_rows(self) -> np.ndarray:
        """int64 (D,): row (in the all-documents arrays) of each stored document."""
        return np.flatnonzero(np.asarray(self.meta()[:, 3]) == STORED)

    def stored_keys(self) -> list[str]:
        """Keys of the stored documents: document number -> key (the doc map)."""
        keys = self.keys()
        return [k.decode("utf-8", "surrogatepass") for k in keys[self.stored_rows()].tolist()]

    @property
    def vocabulary(self):
        if self._vocabulary is None:
            self._vocabulary = Vocabulary.load(self.folder / "vocabulary.txt")
        return self._vocabulary

    def skipped_by_reason(self) -> dict[str, int]:
        status = np.asarray(self.meta()[:, 3])
        return {name: int(np.count_nonzero(status == code)) for code, name in SKIP_REASONS.items()}

    def token_source(self) -> TokenSource:
        return TokenSource(self.tokens, self.doc_offsets, self.char_starts, self.char_ends, None,
                           line_starts=self.line_starts)
