"""Corpus store: a tokenized corpus on disk, appended in batches, read through memmaps.

Layout of a work directory (all integers little-endian, all files append-only):

  manifest.json            the only source of truth for counts (written atomically)
  tokens.u32               uint32 (W,)   token ids of all documents, concatenated
  doc_offsets.i64          int64 (D+1,)  document d is tokens[doc_offsets[d]:doc_offsets[d+1]]
  char_starts.i64          int64 (W,)    (with_offsets only) token start in its document's text
  char_ends.i64            int64 (W,)    (with_offsets only) exclusive end
  line_starts.u8           uint8 (W,)    (with_lines) 1 where the token is the first token of a
                                         line of its document's text, else 0 (line_start_flags)
  doc_ids.txt              UTF-8 external document ids, each followed by "\\n"
  doc_ids.i64              int64 (D+1,)  byte offsets: id d is doc_ids.txt[off[d]:off[d+1]-1]
  vocabulary.txt           one token per line, in id order (escaping as in vocabulary.py)
  vocabulary.df.<g>.i64    int64 (V,)    document frequencies as of manifest generation g

Appending writes each file at the offset the in-memory counts give (os.pwrite), so the
files grow by appends and a batch costs O(batch); :meth:`CorpusStore.flush` fsyncs them
and then replaces manifest.json (tmp + fsync + os.replace). A crash between batches
leaves bytes beyond the manifest's counts; readers ignore them and the next writer
truncates them. One writer at a time (an exclusive flock on ``.lock``); readers need no
lock. Opening costs O(1) memory: arrays are memmaps, ids are read one at a time, the
vocabulary loads on first use.

Token ids do not depend on how a corpus is cut into batches: the vocabulary gives ids in
order of first occurrence, exactly as :func:`encode_batch` over all texts at once.

Line starts keep the source text's line boundaries, so whole-line templates
(:mod:`bloomspan.engine.templates.blocks`) can be found without the texts. New stores always write
them (manifest ``"with_lines": true``). A store of an earlier version (1: line starts were
optional and their key could be absent) is refused, naming the manifest: ingest again.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .durable_writes import fsync_dir, pwrite_all
from .tokenizer import encode_batch
from .vocabulary import Vocabulary

log = logging.getLogger(__name__)

if sys.byteorder != "little":  # pragma: no cover
    raise ImportError("bloomspan.engine.text.corpus_store reads its little-endian files as native arrays")

FORMAT = "bloomspan-corpus-store"
VERSION = 2  # 2: the manifest always says whether line starts are kept ("with_lines")
MANIFEST = "manifest.json"
TOKENS = "tokens.u32"
DOC_OFFSETS = "doc_offsets.i64"
CHAR_STARTS = "char_starts.i64"
CHAR_ENDS = "char_ends.i64"
LINE_STARTS = "line_starts.u8"
DOC_IDS = "doc_ids.txt"
DOC_ID_OFFSETS = "doc_ids.i64"
VOCAB_TOKENS = "vocabulary.txt"
LOCK = ".lock"


class CorpusStoreError(Exception):
    """A store that cannot be created, opened or written; ``path`` names the file or folder."""

    def __init__(self, message: str, path: str | os.PathLike | None = None):
        super().__init__(message)
        self.path = None if path is None else str(path)


class CorpusStore:
    """A corpus in ``work_dir``: create with :meth:`create`, reopen with :meth:`open`."""

    def __init__(self, work_dir: Path, manifest: dict, fsync: bool = True):
        self.work_dir = work_dir
        self.fsync = fsync
        self._committed = manifest
        self._with_offsets = bool(manifest["with_offsets"])
        self._with_lines = bool(manifest["with_lines"])
        self._n_docs = int(manifest["n_docs"])
        self._n_tokens = int(manifest["n_tokens"])
        self._doc_ids_bytes = int(manifest["doc_ids_bytes"])
        self._vocabulary: Vocabulary | None = None
        self._fds: dict[str, int] = {}
        self._lock_fd: int | None = None
        self._views: dict[str, tuple[int, np.ndarray]] = {}
        self._ids_fd: int | None = None
        # Held from open on, so a lazy vocabulary load still finds the df of this
        # generation after a writer's flush has unlinked the file.
        self._df_fd: tuple[str, int] | None = None

    # ----------------------------------------------------------------- create / open
    @classmethod
    def create(cls, work_dir: str | os.PathLike, with_offsets: bool = False, *,
               fsync: bool = True) -> CorpusStore:
        """Make an empty store in ``work_dir`` (created if missing; must hold no store)."""
        wd = Path(work_dir)
        wd.mkdir(parents=True, exist_ok=True)
        if (wd / MANIFEST).exists():
            raise CorpusStoreError(f"{wd} already holds a corpus store; use CorpusStore.open", wd)
        manifest = {"format": FORMAT, "version": VERSION, "with_offsets": bool(with_offsets),
                    "with_lines": True, "generation": 0, "n_docs": 0, "n_tokens": 0, "doc_ids_bytes": 0,
                    "vocabulary": {"tokens_file": VOCAB_TOKENS, "size": 0, "bytes": 0,
                                   "df_file": None, "n_docs": 0}}
        store = cls(wd, manifest, fsync=fsync)
        store._start_writing(fresh=True)
        store._write_manifest(manifest)
        return store

    @classmethod
    def open(cls, work_dir: str | os.PathLike, *, fsync: bool = True) -> CorpusStore:
        """Open an existing store; it becomes writable (and locked) on the first append."""
        wd = Path(work_dir)
        path = wd / MANIFEST
        try:
            manifest = json.loads(path.read_text())
        except FileNotFoundError:
            raise CorpusStoreError(f"{path} not found: no corpus store in {wd}; "
                                   "make one with CorpusStore.create", path) from None
        except ValueError as e:
            raise CorpusStoreError(f"{path} is not valid JSON ({e})", path) from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CorpusStoreError(f"{path}: not a {FORMAT} manifest", path)
        if manifest.get("version") != VERSION:
            raise CorpusStoreError(f"{path}: version {manifest.get('version')!r}, this bloomspan reads version "
                                   f"{VERSION}; delete {wd} and ingest again into a new store", path)
        store = cls(wd, manifest, fsync=fsync)
        store._check_sizes(manifest)
        df_file = manifest["vocabulary"]["df_file"]
        if df_file is not None:
            store._df_fd = (df_file, os.open(wd / df_file, os.O_RDONLY))
        return store

    def _required_sizes(self, m: dict) -> dict[str, int]:
        v = m["vocabulary"]
        sizes = {TOKENS: 4 * m["n_tokens"], DOC_OFFSETS: 8 * (m["n_docs"] + 1),
                 DOC_IDS: m["doc_ids_bytes"], DOC_ID_OFFSETS: 8 * (m["n_docs"] + 1),
                 VOCAB_TOKENS: v["bytes"]}
        if m["with_offsets"]:
            sizes[CHAR_STARTS] = sizes[CHAR_ENDS] = 8 * m["n_tokens"]
        if m["with_lines"]:
            sizes[LINE_STARTS] = m["n_tokens"]
        if v["df_file"] is not None:
            sizes[v["df_file"]] = 8 * v["size"]
        return sizes

    def _check_sizes(self, m: dict) -> None:
        for name, need in self._required_sizes(m).items():
            path = self.work_dir / name
            have = path.stat().st_size if path.exists() else -1
            if have < need:
                raise CorpusStoreError(
                    f"{path} has {max(have, 0)} bytes, but {MANIFEST} needs {need}: the store is "
                    "damaged (files lost or truncated after the manifest was written); "
                    "restore the folder or ingest again into a new store", path)

    # ----------------------------------------------------------------- writing
    def _start_writing(self, fresh: bool = False) -> None:
        if self._lock_fd is not None:
            return
        lock_fd = os.open(self.work_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            os.close(lock_fd)
            raise CorpusStoreError(f"{self.work_dir}: another process is writing this store "
                                   f"(it holds {LOCK}); wait for it or open read-only", self.work_dir) from err
        self._lock_fd = lock_fd
        m = self._committed
        names = [TOKENS, DOC_OFFSETS, DOC_IDS, DOC_ID_OFFSETS, VOCAB_TOKENS]
        if self._with_offsets:
            names += [CHAR_STARTS, CHAR_ENDS]
        if self._with_lines:
            names.append(LINE_STARTS)
        sizes = self._required_sizes(m)
        for name in names:
            fd = os.open(self.work_dir / name, os.O_RDWR | os.O_CREAT, 0o644)
            self._fds[name] = fd
            os.ftruncate(fd, sizes[name])  # drop what a crashed batch left behind
        if fresh:
            zero = np.zeros(1, dtype="<i8")
            pwrite_all(self._fds[DOC_OFFSETS], zero, 0)
            pwrite_all(self._fds[DOC_ID_OFFSETS], zero, 0)
        for p in self.work_dir.glob("vocabulary.df.*.i64"):
            if p.name != m["vocabulary"]["df_file"]:
                p.unlink()  # written by a flush that crashed before its manifest
        if self._vocabulary is None:
            self._vocabulary = self._load_vocabulary()

    def append(self, ids: Sequence[str], texts: Sequence[str], *, flush: bool = True) -> None:
        """Tokenize a batch and append it; ``flush`` then commits it (see :meth:`flush`).

        ids: external document ids (str), one per text. If this raises, the store keeps
        what it had before the call (nothing of the batch is visible).
        """
        ids = list(ids)
        texts = list(texts)
        if len(ids) != len(texts):
            raise ValueError(f"len(ids)={len(ids)} != len(texts)={len(texts)}: one id per text")
        for i, x in enumerate(ids):
            if not isinstance(x, str):
                raise TypeError(f"ids[{i}] is {type(x).__name__}, expected str")
        if not ids:
            return
        self._start_writing()
        try:
            self._append(ids, texts)
        except BaseException:
            # The vocabulary may hold tokens of the failed batch: reload the committed one.
            self._n_docs = int(self._committed["n_docs"])
            self._n_tokens = int(self._committed["n_tokens"])
            self._doc_ids_bytes = int(self._committed["doc_ids_bytes"])
            self._vocabulary = None
            self._vocabulary = self._load_vocabulary()
            raise
        if flush:
            self.flush()

    def _append(self, ids: list[str], texts: list[str]) -> None:
        enc = encode_batch(texts, self._vocabulary, with_offsets=self._with_offsets, with_lines=self._with_lines)
        tok, offs = enc[0], enc[1]
        w0, d0 = self._n_tokens, self._n_docs
        pwrite_all(self._fds[TOKENS], tok.astype("<u4", copy=False), 4 * w0)
        pwrite_all(self._fds[DOC_OFFSETS], (offs[1:] + w0).astype("<i8", copy=False), 8 * (d0 + 1))
        if self._with_offsets:
            pwrite_all(self._fds[CHAR_STARTS], enc[2].astype("<i8", copy=False), 8 * w0)
            pwrite_all(self._fds[CHAR_ENDS], enc[3].astype("<i8", copy=False), 8 * w0)
        if self._with_lines:
            pwrite_all(self._fds[LINE_STARTS], enc[-1], w0)
        joined = "\n".join(ids) + "\n"
        data = joined.encode("utf-8", "surrogatepass")
        if joined.isascii():
            lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids)) + 1
        else:
            lengths = np.fromiter((len(x.encode("utf-8", "surrogatepass")) + 1 for x in ids),
                                  dtype=np.int64, count=len(ids))
        id_offsets = self._doc_ids_bytes + np.cumsum(lengths)
        pwrite_all(self._fds[DOC_IDS], data, self._doc_ids_bytes)
        pwrite_all(self._fds[DOC_ID_OFFSETS], id_offsets.astype("<i8", copy=False), 8 * (d0 + 1))
        self._n_tokens = w0 + tok.size
        self._n_docs = d0 + len(ids)
        self._doc_ids_bytes += len(data)

    def flush(self) -> None:
        """Commit what was appended: fsync the data, then replace manifest.json atomically."""
        m = self._committed
        if self._lock_fd is None or self._n_docs == m["n_docs"]:
            return
        vocab = self._vocabulary
        v_old = m["vocabulary"]
        text = vocab.to_text(v_old["size"], len(vocab), with_df=False)
        pwrite_all(self._fds[VOCAB_TOKENS], text, v_old["bytes"])
        generation = m["generation"] + 1
        df_file = f"vocabulary.df.{generation}.i64"
        with open(self.work_dir / df_file, "wb") as f:
            f.write(vocab.df.astype("<i8", copy=False).tobytes())
            if self.fsync:
                f.flush()
                os.fsync(f.fileno())
        if self.fsync:
            for fd in self._fds.values():
                os.fsync(fd)
        new = dict(m, generation=generation, n_docs=self._n_docs, n_tokens=self._n_tokens,
                   doc_ids_bytes=self._doc_ids_bytes,
                   vocabulary={"tokens_file": VOCAB_TOKENS, "size": len(vocab),
                               "bytes": v_old["bytes"] + len(text), "df_file": df_file,
                               "n_docs": vocab.n_docs})
        self._write_manifest(new)
        if v_old["df_file"] is not None:
            (self.work_dir / v_old["df_file"]).unlink(missing_ok=True)
        self._committed = new
        log.debug("committed generation %d: %d docs, %d tokens, vocabulary %d",
                  generation, self._n_docs, self._n_tokens, len(vocab))

    def _write_manifest(self, manifest: dict) -> None:
        tmp = self.work_dir / (MANIFEST + ".tmp")
        with open(tmp, "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
            if self.fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, self.work_dir / MANIFEST)
        if self.fsync:
            fsync_dir(self.work_dir)

    def close(self) -> None:
        """Flush pending appends and release files and the writer lock."""
        try:
            self.flush()
        finally:
            self._release()

    def _release(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._ids_fd is not None:
            os.close(self._ids_fd)
            self._ids_fd = None
        if self._df_fd is not None:
            os.close(self._df_fd[1])
            self._df_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def __enter__(self) -> CorpusStore:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # keep the last committed state; do not commit a batch cut short
            self._release()

    # ----------------------------------------------------------------- reading
    @property
    def with_offsets(self) -> bool:
        return self._with_offsets

    @property
    def with_lines(self) -> bool:
        """Whether the store keeps line starts (every store :meth:`create` makes does)."""
        return self._with_lines

    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def n_tokens(self) -> int:
        return self._n_tokens

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary (loaded on first use: O(V) memory)."""
        if self._vocabulary is None:
            self._vocabulary = self._load_vocabulary()
        return self._vocabulary

    def _load_vocabulary(self) -> Vocabulary:
        v = self._committed["vocabulary"]
        if v["size"] == 0:  # documents without a token yet: they still count in n_docs
            vocab = Vocabulary()
            vocab.add_document_counts([] for _ in range(int(v["n_docs"])))
            return vocab
        with open(self.work_dir / v["tokens_file"], "rb") as f:
            data = f.read(v["bytes"])
        if self._df_fd is not None and self._df_fd[0] == v["df_file"]:
            raw = os.pread(self._df_fd[1], 8 * v["size"], 0)
        else:
            raw = (self.work_dir / v["df_file"]).read_bytes()[:8 * v["size"]]
        if len(raw) != 8 * v["size"]:
            raise CorpusStoreError(f"{v['df_file']} is shorter than {MANIFEST} says",
                                   self.work_dir / v["df_file"])
        df = np.frombuffer(raw, dtype="<i8")
        return Vocabulary.from_text(data, v["size"], with_df=False, n_docs=v["n_docs"], df=df,
                                    source=str(self.work_dir / v["tokens_file"]))

    def _view(self, name: str, dtype: str, n: int) -> np.ndarray:
        """Read-only memmap (as a plain ndarray) of the first n items of a file."""
        cached = self._views.get(name)
        if cached is not None and cached[0] == n:
            return cached[1]
        if n == 0:
            arr = np.zeros(0, dtype=dtype)
        else:
            arr = np.asarray(np.memmap(self.work_dir / name, dtype=dtype, mode="r", shape=(n,)))
        self._views[name] = (n, arr)
        return arr

    @property
    def tokens(self) -> np.ndarray:
        """uint32 (n_tokens,) read-only memmap of all token ids."""
        return self._view(TOKENS, "<u4", self._n_tokens)

    @property
    def doc_offsets(self) -> np.ndarray:
        """int64 (n_docs+1,) read-only memmap: document d is tokens[off[d]:off[d+1]]."""
        return self._view(DOC_OFFSETS, "<i8", self._n_docs + 1)

    @property
    def line_starts(self) -> np.ndarray | None:
        """uint8 (n_tokens,) read-only memmap: 1 where a token is the first token of a line of
        its document's text (token 0 of every non-empty document included), else 0; None
        when the store has no line starts (``with_lines`` False)."""
        if not self._with_lines:
            return None
        return self._view(LINE_STARTS, "u1", self._n_tokens)

    def _check_doc(self, i: int) -> int:
        i = int(i)
        if not 0 <= i < self._n_docs:
            raise IndexError(f"document {i} out of range for a store of {self._n_docs}")
        return i

    def doc_tokens(self, i: int) -> np.ndarray:
        """uint32 token ids of document i."""
        i = self._check_doc(i)
        off = self.doc_offsets
        return self.tokens[off[i]:off[i + 1]]

    def char_spans(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) int64 character offsets of document i's tokens in its text."""
        if not self._with_offsets:
            raise CorpusStoreError(f"{self.work_dir} was created without offsets; "
                                   "create the store with with_offsets=True", self.work_dir)
        i = self._check_doc(i)
        off = self.doc_offsets
        a, b = off[i], off[i + 1]
        return (self._view(CHAR_STARTS, "<i8", self._n_tokens)[a:b],
                self._view(CHAR_ENDS, "<i8", self._n_tokens)[a:b])

    def _read_ids(self, a: int, b: int) -> bytes:
        if self._ids_fd is None:
            self._ids_fd = os.open(self.work_dir / DOC_IDS, os.O_RDONLY)
        return os.pread(self._ids_fd, b - a, a)

    def external_id(self, i: int) -> str:
        """External id of document i."""
        i = self._check_doc(i)
        off = self._view(DOC_ID_OFFSETS, "<i8", self._n_docs + 1)
        return self._read_ids(int(off[i]), int(off[i + 1]) - 1).decode("utf-8", "surrogatepass")

    def external_ids(self, start: int = 0, stop: int | None = None) -> list[str]:
        """External ids of documents start..stop-1 (one read)."""
        stop = self._n_docs if stop is None else stop
        if not 0 <= start <= stop <= self._n_docs:
            raise IndexError(f"start={start}, stop={stop}: need 0 <= start <= stop <= {self._n_docs}")
        if start == stop:
            return []
        off = self._view(DOC_ID_OFFSETS, "<i8", self._n_docs + 1)
        base = int(off[start])
        data = self._read_ids(base, int(off[stop]))
        bounds = (off[start:stop + 1] - base).tolist()
        return [data[bounds[k]:bounds[k + 1] - 1].decode("utf-8", "surrogatepass")
                for k in range(stop - start)]
