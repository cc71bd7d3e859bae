"""Reading one shard of the input on a worker: a byte range of a JSON Lines file, the documents
of another reader (a compressed file, a Parquet row group), or one slice of one shard of an index
in the driver's point in time.

A shard is tokenized with a vocabulary of its own (:class:`ShardCorpus`): local ids in
order of first occurrence in the shard, and a 64-bit hash per local token string, so no
vocabulary is shared between workers. Both readers are pure functions of their arguments
(the file's bytes; the point in time): a retried task returns the same shard.
"""
from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import orjson

from bloomspan.engine.distributed.windows import PackedStrings
from bloomspan.engine.text.scan_buffers import release_scan_buffers
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import Vocabulary
from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.cluster.field_paths import lookup_field
from bloomspan.sidecar.cluster.scroll import ScanUnit, SourceScan, doc_key

from .in_worker import ThrottledProgress, release_freed_memory, worker_progress

log = logging.getLogger(__name__)

# Documents per tokenizer call: its scratch is sized for the worst case (~3x the tokens), and a
# reader's heap keeps what the largest call used (500 documents: ~5 B per token of a 6.6 M-token shard).
TOKENIZE_DOCS = 100


@dataclass
class ShardCorpus:
    """One shard, tokenized.

    ids:          uint32 (W,) local token ids; doc_offsets int64 (D+1,)
    strings:      the local vocabulary, local id order (a PackedStrings: one UTF-8 buffer, not
                  a Python object per string)
    token_hash:   uint64 (V,) hash of each local string (:func:`string_hashes`)
    external_ids: JSON Lines with an id field: the id of each document, else None
    line_numbers: JSON Lines: int64 (D,) 1-based line of each document within the range
    n_lines:      JSON Lines: lines starting in the range (blank ones included)
    keys, meta:   index: key and int64 (5,) meta row (see scroll.Page) of every hit read,
                  stored documents (status STORED) being the shard's documents in order
    error:        the first bad line of a JSON Lines range as (line in the file, reason),
                  raised by the driver as a JsonlInputError in file order (exceptions with
                  their own constructor arguments do not survive pickling between processes)
    line_starts:  read for templates: uint8 (W,) 1 where a token starts a line of its text
                  (:func:`bloomspan.engine.templates.blocks.line_start_flags`), else None
    fields:       read for templates: field name -> each document's string value (None when
                  absent, empty or not a string, as the single-node readers take them)
    char_starts, char_ends: read for annotation: int64 (W,) each token's start and exclusive
                  end in its document's text (as the single process's corpus store keeps them)
    incremental:  index slices read incrementally: what the read reused, fetched and dropped
                  (:func:`bloomspan.sidecar.cluster.change_detection.change_counts`)
                  and the file that keeps the read (``state_file``), where the annotate task
                  records the versions its writes gave the documents
    """

    ids: np.ndarray
    doc_offsets: np.ndarray
    strings: Sequence[str]
    token_hash: np.ndarray
    external_ids: list[str] | None = None
    line_numbers: np.ndarray | None = None
    n_lines: int = 0
    keys: list[str] | None = None
    meta: np.ndarray | None = None
    error: tuple[int, str] | None = None
    line_starts: np.ndarray | None = None
    fields: dict[str, list] | None = None
    char_starts: np.ndarray | None = None
    char_ends: np.ndarray | None = None
    incremental: dict | None = None
    state_file: str | None = None

    @property
    def n_docs(self) -> int:
        return int(self.doc_offsets.shape[0] - 1)

    @property
    def n_tokens(self) -> int:
        return int(self.ids.shape[0])


class _Tokenizer:
    """Batches of texts -> one shard's local ids (first-occurrence order)."""

    def __init__(self, with_lines: bool = False, with_offsets: bool = False):
        self.vocabulary = Vocabulary()
        self._ids = np.zeros(1 << 16, dtype=np.uint32)  # every batch's ids, grown in place (_append)
        self._n_ids = 0
        self.lengths: list[np.ndarray] = []
        self.lines: list[np.ndarray] | None = [] if with_lines else None
        self.chars: list[tuple[np.ndarray, np.ndarray]] | None = [] if with_offsets else None

    def add(self, texts: list[str]) -> None:
        if texts:
            ids, offsets, *more = encode_batch(texts, self.vocabulary, with_offsets=self.chars is not None,
                                               count_df=False, with_lines=self.lines is not None)
            if self.chars is not None:
                self.chars.append((more.pop(0), more.pop(0)))
            if self.lines is not None:
                self.lines.append(more.pop(0))
            self._append(ids)
            self.lengths.append(np.diff(offsets))

    def _append(self, ids: np.ndarray) -> None:
        """Add a batch's ids to the one buffer, grown in place by a quarter when full: a large
        buffer is its own memory mapping, which ``resize`` (realloc) extends without a second
        copy, so the shard's ids never exist twice (a list of batches joined at the end held
        8 bytes per token at the join). ``resize`` zero-fills what it adds, so growing by a
        quarter, not by doubling, keeps the unused tail under a quarter of the ids."""
        n = self._n_ids + ids.shape[0]
        if n > self._ids.shape[0]:
            self._ids.resize(max(n, self._ids.shape[0] * 5 // 4), refcheck=False)  # no view of it exists
        self._ids[self._n_ids:n] = ids
        self._n_ids = n

    def corpus(self, **extra) -> ShardCorpus:
        # The strings first, while only the ids are held: the vocabulary and its decoded list
        # are gone before anything else is built.
        spans = self.vocabulary.utf8_spans()
        strings = PackedStrings(*spans) if spans is not None else PackedStrings.of(self.vocabulary.tokens())
        self.vocabulary = None
        release_scan_buffers()  # this thread's tokenizing is done: its kept scan buffers go too
        release_freed_memory()  # the vocabulary's and the documents' objects are gone
        ids, self._ids = self._ids, None
        ids.resize(self._n_ids, refcheck=False)  # the unused tail goes back (realloc shrinks in place)
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, dtype=np.int64)
        offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if self.lines is not None:
            extra["line_starts"] = np.concatenate(self.lines) if self.lines else np.zeros(0, dtype=np.uint8)
            self.lines = []
        if self.chars is not None:
            empty = np.zeros(0, dtype=np.int64)
            extra["char_starts"] = np.concatenate([c[0] for c in self.chars]) if self.chars else empty
            extra["char_ends"] = np.concatenate([c[1] for c in self.chars]) if self.chars else empty
            self.chars = []
        return ShardCorpus(ids=ids, doc_offsets=offsets, strings=strings, token_hash=strings.hashes(), **extra)


# ---------------------------------------------------------------------- JSON Lines
def byte_ranges(path: str, n_ranges: int) -> list[tuple[int, int]]:
    """``n_ranges`` (at most one per byte) consecutive ``[start, end)`` ranges covering the file.
    A line belongs to the range its first byte lies in."""
    size = os.path.getsize(path)
    n = max(1, min(n_ranges, size))
    cuts = [size * k // n for k in range(n + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _lines_of_range(path: str, start: int, end: int):
    """``(byte offset, raw line)`` of every line whose first byte lies in ``[start, end)``."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line in progress belongs to the previous range
        pos = f.tell()
        while pos < end:
            raw = f.readline()
            if not raw:
                return
            yield pos, raw
            pos += len(raw)


def _line_before(path: str, offset: int) -> int:
    """Lines (universal newlines, as text-mode reading counts them) before byte ``offset``."""
    with open(path, "rb") as f:
        head = f.read(offset)
    return len(io.StringIO(head.decode("utf-8", "replace"), newline=None).readlines())


def read_jsonl_range(path: str, start: int, end: int, field: str, id_field: str | None, shard: int,
                     template_fields: tuple[str, ...] = ()) -> ShardCorpus:
    """Tokenize the documents of the lines starting in ``[start, end)`` of a JSON Lines file.

    Lines are validated as :func:`bloomspan.sidecar.run.jsonl_mining.read_documents` does; the
    first bad line is returned as ``error`` (with the file's line number), not raised, so
    the driver can report the earliest one in file order. ``template_fields`` (the site and
    URL fields of a run with templates): keep their values and the line starts too
    (:attr:`ShardCorpus.fields`, :attr:`ShardCorpus.line_starts`).
    """
    template_fields = tuple(template_fields)
    tok = _Tokenizer(with_lines=bool(template_fields))
    values: list[tuple] = []
    ext_ids: list[str] = []
    lines: list[int] = []
    texts: list[str] = []
    n_lines = 0
    error = None
    progress = ThrottledProgress("read", shard)
    for offset, raw in _lines_of_range(path, start, end):
        if b"\r" not in raw:  # one line (no lone "\r" to split it): try orjson on the bytes first
            doc = _fast_document(raw, field, id_field, template_fields)
            if doc is not None:
                n_lines += 1
                if doc is not _BLANK:
                    ext_ids.append(doc[0])
                    lines.append(n_lines)
                    texts.append(doc[1])
                    values.append(doc[2])
                if len(texts) >= TOKENIZE_DOCS:
                    tok.add(texts)
                    texts = []
                    progress.step(min(offset + len(raw), end) - start)
                continue
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = (_line_before(path, offset) + 1, f"not valid UTF-8 ({exc.reason})")
            break
        # Text-mode reading also ends lines at a lone "\r": count lines the same way.
        for line in io.StringIO(decoded, newline=None):
            n_lines += 1
            problem, doc = _parse_line(line, field, id_field, template_fields)
            if problem is not None:
                error = (_line_before(path, start) + n_lines, problem)
                break
            if doc is None:
                continue
            ext_ids.append(doc[0])
            lines.append(n_lines)
            texts.append(doc[1])
            values.append(doc[2])
        if error is not None:
            break
        if len(texts) >= TOKENIZE_DOCS:
            tok.add(texts)
            texts = []
            progress.step(min(offset + len(raw), end) - start)
    tok.add(texts)
    progress.finish(end - start)  # the range is done (a bad line ends it)
    fields = {name: [v[k] for v in values] for k, name in enumerate(template_fields)} if template_fields else None
    return tok.corpus(external_ids=ext_ids if id_field is not None else None,
                      line_numbers=np.asarray(lines, dtype=np.int64), n_lines=n_lines, error=error, fields=fields)


def tokenize_documents(documents: Iterable[tuple[str, str, tuple]], shard: int,
                       template_fields: tuple[str, ...] = ()) -> ShardCorpus:
    """Tokenize the ``(id, text, template field values)`` a reader yields (a compressed file's
    or a Parquet row group's: :mod:`bloomspan.sidecar.run.file_partitions`) into a shard that
    holds each document's id; ``template_fields`` as for :func:`read_jsonl_range`. Progress
    counts the partition as one unit: a stream has no byte offsets to report."""
    template_fields = tuple(template_fields)
    tok = _Tokenizer(with_lines=bool(template_fields))
    ids: list[str] = []
    texts: list[str] = []
    values: list[tuple] = []
    for doc_id, text, vals in documents:
        ids.append(doc_id)
        texts.append(text)
        values.append(vals)
        if len(texts) >= TOKENIZE_DOCS:
            tok.add(texts)
            texts = []
    tok.add(texts)
    worker_progress("read", shard, 1)
    fields = {name: [v[k] for v in values] for k, name in enumerate(template_fields)} if template_fields else None
    return tok.corpus(external_ids=ids, line_numbers=np.zeros(0, dtype=np.int64), n_lines=len(ids), fields=fields)


_BLANK = ("", "", ())


def _field_values(obj: dict, names: tuple[str, ...]) -> tuple:
    """Each named field's string value, None when absent, empty or not a string (as
    :func:`bloomspan.sidecar.run.jsonl_mining.read_documents_with` reads them)."""
    return tuple(v if isinstance(v := obj.get(name), str) and v else None for name in names)


def _fast_document(raw: bytes, field: str, id_field: str | None, extra: tuple[str, ...] = ()
                   ) -> tuple[str | None, str, tuple] | None:
    """``(id, text, extra values)`` of a well-formed line parsed by orjson, ``_BLANK`` for a blank one, or None
    when the line needs :func:`_parse_line` (anything orjson refuses, any problem — its message
    is the standard library's — and an id orjson read as a float, maybe an integer beyond 64
    bits that the standard library keeps exact)."""
    if raw.isspace():
        return _BLANK
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(text := obj.get(field), str):
        return None
    if id_field is None:
        return None, text, _field_values(obj, extra)
    doc_id = obj.get(id_field)
    if doc_id is None or isinstance(doc_id, float):
        return None
    return str(doc_id), text, _field_values(obj, extra)


def _parse_line(line: str, field: str, id_field: str | None, extra: tuple[str, ...] = ()
                ) -> tuple[str | None, tuple[str | None, str, tuple] | None]:
    """``(problem, (id, text, extra values))`` of one line: the rules of ``jsonl_mining.read_documents``
    (the id is None when ids are line numbers); ``(None, None)`` for a blank line."""
    if not line.strip():
        return None, None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"invalid JSON ({exc.msg} at column {exc.colno})", None
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}", None
    if field not in obj:
        return f"field {field!r} is missing (choose it with --field)", None
    text = obj[field]
    if not isinstance(text, str):
        return f"field {field!r} is {type(text).__name__}, not a string", None
    if id_field is None:
        return None, (None, text, _field_values(obj, extra))
    if id_field not in obj:
        return f"id field {id_field!r} is missing (choose it with --id-field)", None
    return None, (str(obj[id_field]), text, _field_values(obj, extra))


# ---------------------------------------------------------------------- index slices
@dataclass(frozen=True)
class IndexSlice:
    """Slice ``slice_id`` of ``n_slices`` of one concrete index, read in the point in time
    ``pit_id`` (None: a sliced scroll of its own). With ``n_slices`` equal to the number of
    shards a slice is exactly one shard; more slices split shards by a hash of ``_id``."""

    index: str
    slice_id: int
    n_slices: int
    pit_id: str | None = field(default=None, repr=False)


def read_index_slice(cluster, part: IndexSlice, field_path: str, multi_index: bool, batch_size: int,
                     keep_alive: str, shard: int, template_fields: tuple[str, ...] = (),
                     with_offsets: bool = False, ts_field: str | None = None) -> ShardCorpus:
    """Tokenize the stored documents of one slice; every hit is kept as a key and meta row
    (skipped documents included), as the single-node scan logs them. ``template_fields``
    (the site and URL fields of a run with templates): keep their values for the stored
    documents (read in the same requests, :class:`_FieldRecorder`) and the line starts.
    ``with_offsets`` (a run that annotates): keep each token's character offsets.
    ``ts_field``: the timestamp field of incremental runs, fingerprinted into the meta rows."""
    template_fields = tuple(template_fields)
    client = cluster.client()
    recorder = _FieldRecorder(client, template_fields, multi_index) if template_fields else None
    unit = ScanUnit(part.index, part.slice_id, part.n_slices)
    mode = "pit" if part.pit_id else "scroll"
    # The driver owns the point in time (one per index, for every slice): the scan is only
    # used for its one-unit page reader, never closed here, so the PIT is not deleted.
    scan = SourceScan(recorder or client, [unit], field=field_path, multi_index=multi_index, ts_field=ts_field,
                      batch_size=batch_size,
                      workers=1, keep_alive=keep_alive, mode=mode,
                      pit_ids={part.index: part.pit_id} if part.pit_id else {})
    if recorder is not None:
        recorder.widen(scan)
    reader = scan._read_pit if mode == "pit" else scan._read_scroll
    tok = _Tokenizer(with_lines=bool(template_fields), with_offsets=with_offsets)
    keys: list[str] = []
    metas: list[np.ndarray] = []
    values: list[tuple] = []
    try:
        for page in reader(unit):
            keys.extend(page.keys)
            metas.append(page.meta)
            stored = np.flatnonzero(page.meta[:, 3] == STORED)
            tok.add([page.texts[i] for i in stored])
            if recorder is not None:
                values.extend(recorder.take(page.keys, stored.tolist()))
            worker_progress("read", shard, len(keys))
    finally:
        client.close()
    meta = np.concatenate(metas) if metas else np.zeros((0, 5), dtype=np.int64)
    fields = {name: [v[k] for v in values] for k, name in enumerate(template_fields)} if template_fields else None
    return tok.corpus(keys=keys, meta=meta, fields=fields)


class _FieldRecorder:
    """The node's client for one slice read, keeping the template fields of every hit it
    returns (``search``/``scroll`` responses), so the fields come with the text in the same
    requests and the same point in time. Values as
    :func:`bloomspan.sidecar.publish.publication.read_document_fields` takes them: a non-empty
    string, else None."""

    def __init__(self, client, fields: tuple[str, ...], multi_index: bool):
        self.client, self.fields, self.multi_index = client, fields, multi_index
        self.seen: dict[str, tuple] = {}

    def widen(self, scan) -> None:
        """Ask the scan's requests for the template fields too (its ``_source`` filter)."""
        body_of = scan._body

        def body(unit):
            b = body_of(unit)
            if b.get("_source"):
                b["_source"] = list(b["_source"]) + [f for f in self.fields if f not in b["_source"]]
            return b
        scan._body = body

    def _record(self, resp) -> None:
        for hit in (resp.get("hits") or {}).get("hits", []):
            source = hit.get("_source") or {}
            self.seen[doc_key(hit["_index"], hit["_id"], self.multi_index)] = tuple(
                v if isinstance(v := lookup_field(source, f), str) and v else None for f in self.fields)

    def search(self, *args, **kwargs):
        resp = self.client.search(*args, **kwargs)
        self._record(resp)
        return resp

    def scroll(self, *args, **kwargs):
        resp = self.client.scroll(*args, **kwargs)
        self._record(resp)
        return resp

    def take(self, keys: list[str], stored: list[int]) -> list[tuple]:
        """The recorded values of ``keys[i]`` for each i in ``stored``; every key of ``keys``
        (one page's hits) is forgotten."""
        out = [self.seen[keys[i]] for i in stored]
        for k in keys:
            self.seen.pop(k, None)
        return out

    def __getattr__(self, name):
        return getattr(self.client, name)
