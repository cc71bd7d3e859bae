"""How ``mine --jsonl FILE --dask`` cuts a file into partitions, and how a worker reads one.

* plain JSON Lines: byte ranges (:func:`~bloomspan.sidecar.distributed.shards.byte_ranges`,
  read by :func:`~bloomspan.sidecar.distributed.shards.read_jsonl_range`);
* a ``.gz`` or ``.zst`` file, and a WARC/WET archive: **one partition** (a compressed stream
  cannot be entered in the middle, so one worker reads it; split a big crawl into several files);
* Parquet: one partition per row group.

The last two are read by :func:`read_file_partition` with the single-process reader
(:func:`~.jsonl_mining.read_documents_with`), so the documents, their ids (line or row numbers
unless ``--id-field``) and the first error's message are the single process's, and so are the
phrases.
"""
from __future__ import annotations

from dataclasses import dataclass

from bloomspan.sidecar.distributed.shards import ShardCorpus, tokenize_documents
from bloomspan.sidecar.inputs import Compression, detect_compression
from bloomspan.sidecar.inputs.parquet import is_parquet, open_parquet
from bloomspan.sidecar.inputs.warc import is_warc

from .jsonl_mining import JsonlInputError, read_documents_with

BYTE_RANGES, WHOLE_FILE, ROW_GROUPS = "byte ranges", "whole file", "row groups"


@dataclass(frozen=True)
class FilePartitions:
    """kind: one of :data:`BYTE_RANGES`, :data:`WHOLE_FILE`, :data:`ROW_GROUPS`; parts: the byte
    ranges ``(start, end)``, ``[None]`` for the whole file, or each partition's row groups."""

    kind: str
    parts: list

    @property
    def ids_in_shards(self) -> bool:
        """Each shard holds its documents' ids (else they are line numbers within a byte range)."""
        return self.kind != BYTE_RANGES


def file_partitions(path: str, byte_ranges_of) -> FilePartitions:
    """The partitions of ``path`` (module docstring); ``byte_ranges_of(path)`` gives a plain
    file's ranges (how many is the caller's choice)."""
    if is_parquet(path):
        return FilePartitions(ROW_GROUPS, [[k] for k in range(open_parquet(path).metadata.num_row_groups)])
    if detect_compression(path) is not Compression.PLAIN or is_warc(path):
        return FilePartitions(WHOLE_FILE, [None])
    return FilePartitions(BYTE_RANGES, byte_ranges_of(path))


def read_file_partition(path: str, groups: list[int] | None, field: str, id_field: str | None, shard: int,
                        template_fields: tuple[str, ...] = ()) -> ShardCorpus:
    """Tokenize one partition of :data:`WHOLE_FILE` or :data:`ROW_GROUPS` kind (``groups``: its
    row groups, None for the whole file) into a shard that holds each document's id; the
    first bad document ends it, returned as ``error`` for the driver to raise in file order."""
    found: list[tuple[int | None, str]] = []

    def documents():
        try:
            yield from read_documents_with(path, field, id_field, tuple(template_fields), groups)
        except JsonlInputError as exc:
            found.append((exc.line, exc.reason))

    corpus = tokenize_documents(documents(), shard, template_fields)
    corpus.error = found[0] if found else None
    return corpus
