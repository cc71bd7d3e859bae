"""Incremental reads on Dask: each index slice's last read kept on disk, and a re-read that
fetches only the slice's new and changed documents.

A read task (:func:`read_slice_incrementally`) lists its slice in the driver's point in time
(keys and versions, no ``_source``), compares the listing with the shard it kept from its
last read (:func:`bloomspan.sidecar.cluster.change_detection.unchanged_rows`, the single
process's rule: timestamp field, else ``_seq_no``/``_primary_term``), fetches the texts of
the new and changed documents by id (as the single process does,
:func:`bloomspan.sidecar.cluster.scroll.fetch_by_ids`), drops the deleted ones, and returns the
same :class:`~.shards.ShardCorpus` a full read of the slice returns: the kept documents'
tokens, line starts, character offsets and template fields come from the kept shard, the
fetched ones' from their text. Documents are numbered canonically by the driver whatever
their order in a shard, and a shard's local vocabulary is renumbered in order of first
occurrence, so what is mined from it is what a full read gives.

Where the state lives: one file per slice (``<folder>/<index>.<slice>-of-<n>.<fingerprint>.pkl``)
in a folder the driver names (the run's work directory), written atomically after every read
(a retried or duplicated task writes the same file). The state is a cache checked document
by document: a worker that does not find it (another host without a shared folder, a slice
count that changed, another field, timestamp field, template fields, offsets or index UUID)
reads its slice in full, and stale state from an older run only means more documents fetched.
The annotate task of a shard records the versions its writes gave the documents
(:func:`record_own_writes`), as the single process does, so they are not fetched again.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bloomspan.engine.distributed.windows import PackedStrings
from bloomspan.sidecar.cluster.change_detection import change_counts, unchanged_rows
from bloomspan.sidecar.cluster.document_status import STORED
from bloomspan.sidecar.cluster.scroll import ScanUnit, SourceScan, fetch_by_ids

from .in_worker import worker_progress
from .shards import IndexSlice, ShardCorpus, _FieldRecorder, _Tokenizer, read_index_slice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SliceState:
    """Where the slices' last reads are kept (``folder``, a path every worker can write), the
    timestamp field of the change detection, and ``fresh``: read every slice in full (a
    ``--full`` run, or the first one) and keep it for the next run."""

    folder: str
    ts_field: str | None = None
    fresh: bool = False


def read_slice_incrementally(cluster, part: IndexSlice, field_path: str, multi_index: bool, batch_size: int,
                             keep_alive: str, shard: int, template_fields: tuple[str, ...], with_offsets: bool,
                             state: SliceState) -> ShardCorpus:
    """The slice as :func:`~.shards.read_index_slice` reads it, from its kept last read and
    the documents that changed since (see the module docstring), with what was reused
    (:attr:`~.shards.ShardCorpus.incremental`)."""
    template_fields = tuple(template_fields)
    client = cluster.client()
    try:
        index_uuid = client.indices.get_settings(index=part.index, name="index.uuid")[part.index]["settings"][
            "index"]["uuid"]
    finally:
        client.close()
    path = _state_path(state.folder, part, {"field": field_path, "ts_field": state.ts_field,
                                            "template_fields": list(template_fields), "offsets": with_offsets,
                                            "multi_index": multi_index, "uuid": index_uuid})
    prev = None if state.fresh else _load(path)
    if prev is None:
        corpus = read_index_slice(cluster, part, field_path, multi_index, batch_size, keep_alive, shard,
                                  template_fields, with_offsets, ts_field=state.ts_field)
        n = len(corpus.keys)  # every listed document is new to a full read
        read = change_counts(np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool), 0)
    else:
        corpus, read = _reread(cluster, part, prev, field_path, multi_index, batch_size, keep_alive, shard,
                               template_fields, with_offsets, state.ts_field)
    corpus.incremental = corpus.state_file = None
    _save(path, corpus)
    corpus.incremental, corpus.state_file = read, str(path)
    return corpus


def record_own_writes(state_file: str, keys: list[str], written: list[tuple[int, tuple[int, int] | None]]) -> None:
    """Keep the versions our annotation writes gave the documents (``written``: (row of the
    shard, (seq_no, primary_term) or None when the write failed or went unreported)) in the
    slice's kept read, as the single process records its own writes, so the next run does
    not fetch them again. The file is left alone when it no longer holds this read."""
    path = Path(state_file)
    kept = _load(path)
    if kept is None or kept.keys != keys:
        return
    for row, version in written:
        if version is not None:
            kept.meta[row, 0], kept.meta[row, 1] = version
    _save(path, kept)


def _state_path(folder: str, part: IndexSlice, fingerprint: dict) -> Path:
    digest = hashlib.sha1(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
    return Path(folder) / f"{part.index}.{part.slice_id}-of-{part.n_slices}.{digest}.pkl"


def _load(path: Path) -> ShardCorpus | None:
    try:
        with open(path, "rb") as f:
            return pickle.load(f)  # our own file, written by _save
    except FileNotFoundError:
        return None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        log.warning("slice state %s unusable (%s): reading the slice in full", path, exc)
        return None


def _save(path: Path, corpus: ShardCorpus) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(corpus, f, protocol=5)
    os.replace(tmp, path)


def _reread(cluster, part: IndexSlice, prev: ShardCorpus, field_path: str, multi_index: bool, batch_size: int,
            keep_alive: str, shard: int, template_fields: tuple[str, ...], with_offsets: bool,
            ts_field: str | None) -> tuple[ShardCorpus, dict]:
    client = cluster.client()
    try:
        keys, meta = _list_slice(client, part, multi_index, batch_size, keep_alive, ts_field, shard)
        prev_row_of = {k: r for r, k in enumerate(prev.keys)}
        prev_row = np.fromiter((prev_row_of.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        unchanged = unchanged_rows(meta, prev_row, prev.meta, ts_field is not None)
        todo = [keys[i] for i in np.flatnonzero(~unchanged).tolist()]
        fetched = _fetch(client, part.index, todo, field_path, multi_index, batch_size, ts_field, template_fields,
                         with_offsets)
    finally:
        client.close()
    read = change_counts(prev_row, unchanged, len(prev.keys))
    return _merge(prev, keys, meta, prev_row, unchanged, fetched, template_fields), read


def _list_slice(client, part: IndexSlice, multi_index: bool, batch_size: int, keep_alive: str,
                ts_field: str | None, shard: int) -> tuple[list[str], np.ndarray]:
    """Keys and listing rows of every document of the slice, in the driver's point in time."""
    unit = ScanUnit(part.index, part.slice_id, part.n_slices)
    mode = "pit" if part.pit_id else "scroll"
    # As in read_index_slice: the driver owns the point in time, the scan only reads pages.
    scan = SourceScan(client, [unit], field=None, multi_index=multi_index, ts_field=ts_field, batch_size=batch_size,
                      workers=1, keep_alive=keep_alive, mode=mode,
                      pit_ids={part.index: part.pit_id} if part.pit_id else {})
    reader = scan._read_pit if mode == "pit" else scan._read_scroll
    keys: list[str] = []
    metas: list[np.ndarray] = []
    for page in reader(unit):
        keys.extend(page.keys)
        metas.append(page.meta)
        worker_progress("read", shard, len(keys))
    return keys, np.concatenate(metas) if metas else np.zeros((0, 5), dtype=np.int64)


def _fetch(client, index: str, keys: list[str], field_path: str, multi_index: bool, batch_size: int,
           ts_field: str | None, template_fields: tuple[str, ...], with_offsets: bool
           ) -> tuple[dict[str, int], ShardCorpus]:
    """The current version of ``keys`` (absent ones: deleted since the listing, left out), as a
    shard of their own in fetch order, and the row of each fetched key in it."""
    recorder = _FieldRecorder(client, template_fields, multi_index) if template_fields else None
    tok = _Tokenizer(with_lines=bool(template_fields), with_offsets=with_offsets)
    got: list[str] = []
    metas: list[np.ndarray] = []
    values: list[tuple] = []
    for b0 in range(0, len(keys), batch_size):
        ids = [k.partition(":")[2] if multi_index else k for k in keys[b0:b0 + batch_size]]  # see doc_key
        page_keys, texts, meta = fetch_by_ids(recorder or client, index, ids, field_path, ts_field, multi_index,
                                              template_fields)
        got.extend(page_keys)
        metas.append(meta)
        stored = np.flatnonzero(meta[:, 3] == STORED)
        tok.add([texts[i] for i in stored])
        if recorder is not None:
            values.extend(recorder.take(page_keys, stored.tolist()))
    meta = np.concatenate(metas) if metas else np.zeros((0, 5), dtype=np.int64)
    fields = {name: [v[k] for v in values] for k, name in enumerate(template_fields)} if template_fields else None
    return {k: r for r, k in enumerate(got)}, tok.corpus(keys=got, meta=meta, fields=fields)


def _doc_of_row(meta: np.ndarray) -> np.ndarray:
    """int64 (N,): the stored-document number of each row (rows of skipped documents: -1)."""
    stored = meta[:, 3] == STORED
    return np.where(stored, np.cumsum(stored) - 1, -1)


def _token_positions(offsets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """int64: the token positions of documents ``docs`` (in that order) of ``offsets``."""
    lengths = offsets[docs + 1] - offsets[docs]
    if lengths.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    starts_out = np.cumsum(lengths) - lengths
    return np.repeat(offsets[docs] - starts_out, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def _merge(prev: ShardCorpus, keys: list[str], meta: np.ndarray, prev_row: np.ndarray, unchanged: np.ndarray,
           fetched: tuple[dict[str, int], ShardCorpus], template_fields: tuple[str, ...]) -> ShardCorpus:
    """The slice's shard in listing order: unchanged documents from ``prev`` (their status as
    read then, their versions as listed now), new and changed ones from the fetch."""
    fetch_row_of, new = fetched
    out_keys: list[str] = []
    out_meta: list[np.ndarray] = []
    docs: list[int] = []  # joint document number: prev's stored documents, then the fetch's
    prev_doc, new_doc = _doc_of_row(prev.meta), _doc_of_row(new.meta)
    for i, key in enumerate(keys):
        if unchanged[i]:
            row = meta[i].copy()
            row[3] = prev.meta[prev_row[i], 3]
            d = int(prev_doc[prev_row[i]])
        else:
            r = fetch_row_of.get(key)
            if r is None:
                continue  # deleted between the listing and the fetch
            row = new.meta[r].copy()
            d = int(new_doc[r]) + prev.n_docs if new_doc[r] >= 0 else -1
        row[4] = -1
        out_keys.append(key)
        out_meta.append(row)
        if d >= 0:
            docs.append(d)
    joint_docs = np.asarray(docs, dtype=np.int64)
    joint_offsets = np.concatenate([prev.doc_offsets, new.doc_offsets[1:] + prev.doc_offsets[-1]])
    pos = _token_positions(joint_offsets, joint_docs)
    extra: dict = {}
    for name in ("line_starts", "char_starts", "char_ends"):
        if getattr(prev, name) is not None:
            extra[name] = np.concatenate([getattr(prev, name), getattr(new, name)])[pos]
    if template_fields:
        extra["fields"] = {f: [(prev.fields[f][d] if d < prev.n_docs else new.fields[f][d - prev.n_docs])
                               for d in docs] for f in template_fields}
    ids, strings = _joint_vocabulary(prev, new, pos)
    lengths = joint_offsets[joint_docs + 1] - joint_offsets[joint_docs]
    offsets = np.zeros(joint_docs.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ShardCorpus(ids=ids, doc_offsets=offsets, strings=strings, token_hash=strings.hashes(), keys=out_keys,
                       meta=np.asarray(out_meta, dtype=np.int64).reshape(-1, 5), **extra)


def _joint_vocabulary(prev: ShardCorpus, new: ShardCorpus, pos: np.ndarray) -> tuple[np.ndarray, PackedStrings]:
    """Local ids of the joint tokens at ``pos`` (prev's tokens, then the fetch's), renumbered
    in order of first occurrence, as a full read numbers them, and their strings."""
    n_prev = len(prev.strings)
    prev_strings = prev.strings.take(range(n_prev)) if n_prev else []
    prev_id = {s: i for i, s in enumerate(prev_strings)}
    new_strings = new.strings.take(range(len(new.strings))) if len(new.strings) else []
    joint_of_new = np.fromiter((prev_id.get(s, n_prev + j) for j, s in enumerate(new_strings)), dtype=np.int64,
                               count=len(new_strings))
    joint = np.concatenate([prev.ids.astype(np.int64), joint_of_new[new.ids] if new.ids.size else
                            np.zeros(0, dtype=np.int64)])[pos]
    if joint.size == 0:
        return np.zeros(0, dtype=np.uint32), PackedStrings.of([])
    uniq, first = np.unique(joint, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    renumber = np.zeros(int(uniq[-1]) + 1, dtype=np.uint32)
    renumber[order] = np.arange(order.shape[0], dtype=np.uint32)
    strings = [prev_strings[u] if u < n_prev else new_strings[u - n_prev] for u in order.tolist()]
    return renumber[joint], PackedStrings.of(strings)
