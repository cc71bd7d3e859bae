"""Exact paragraph dedup: SHA-256 per paragraph, Bloom screen, sort-merge confirm.

Rules
-----
* A paragraph is a piece of a text field between blank lines; a blank line is empty or
  holds only spaces and tabs (a trailing ``\\r`` of a ``\\r\\n`` line ending is allowed). A
  single line break stays inside a paragraph. Each piece is stripped (``str.strip``) and
  empty pieces are skipped (:func:`paragraph_spans`, :func:`paragraphs`).
* Paragraphs are compared by ``sha256(p.encode("utf-8", "surrogatepass")).digest()``.
* The first occurrence of a paragraph in input order is kept; every later occurrence, in a
  later document or later in the same one, is removed.
* A document that loses every paragraph is dropped. A document that loses none comes back
  unchanged (the same keys and values, its text byte-identical). A document whose field is
  missing, None or has no paragraph passes through unchanged.
* A document that loses some paragraphs keeps the others, each stripped, in order, joined by
  ``"\\n\\n"`` (:data:`PARAGRAPH_JOINER`): ``"A\\n \\t\\nB\\n\\nC"`` minus ``B`` is ``"A\\n\\nC"``.
  Leading and trailing white space and the original separators of a modified text go with
  it; :func:`paragraphs` of the result is exactly the surviving paragraphs.
* Output order is input order.

Passes
------
1. spool: every document is pickled to a temporary file and the digests of its paragraphs
   appended to a binary file; nothing of the documents stays in memory;
2. screen: a :class:`~bloomspan.engine.sketches.bloom_filter.BloomFilter` sized for ``N`` paragraphs
   (or ``expected_items``) at ``bloom_bytes_per_item`` flags "maybe seen" digests: the
   candidates, a superset of the repeated digests;
3. confirm: the occurrences (digest, global paragraph position) of candidate digests are
   sorted; in each run of equal digests the first position is kept and the others are
   removed; runs of length 1 are the filter's false positives;
4. emit: documents are read back from the spool in input order and rewritten.

The spool lives in a ``tempfile.TemporaryDirectory`` (under ``spool_dir`` when given) that
is removed when the generator finishes, raises, or is closed early. The spool is a pickle
written and read only by this process, inside a private (mode 0700) directory.
"""
from __future__ import annotations

import hashlib
import logging
import math
import os
import pickle
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bloomspan.engine.sketches.bloom_filter import BloomFilter, bloom_bits, bloom_hashes

from ..base.errors import FieldTypeError, IngestConfigError, InvalidDocumentError

log = logging.getLogger(__name__)

DIGEST_BYTES = 32
_BLOCK = 1 << 16  # digests per block in the screen and confirm passes
_FLUSH_BYTES = 1 << 20

# A blank line: only spaces/tabs (and an optional \r before the \n) between two line breaks.
_BLANK_LINE = re.compile(r"^[ \t]*\r?$", re.MULTILINE)
# What the surviving paragraphs of a partly duplicated document are joined with.
PARAGRAPH_JOINER = "\n\n"

STATS_KEYS = (
    "documents_in",
    "documents_out",
    "documents_modified",
    "documents_dropped",
    "paragraphs",
    "filter_bits",
    "filter_hashes",
    "candidates",
    "false_positives",
    "duplicate_paragraphs",
)


# --------------------------------------------------------------------------- paragraphs


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the stripped, non-empty paragraphs of ``text``."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _BLANK_LINE.finditer(text):
        _add_piece(text, pos, m.start(), spans)
        pos = m.end()
    _add_piece(text, pos, len(text), spans)
    return spans


def _add_piece(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    piece = text[start:end]
    left = piece.lstrip()
    if not left:
        return
    start += len(piece) - len(left)
    end -= len(left) - len(left.rstrip())
    spans.append((start, end))


def paragraphs(text: str) -> list[str]:
    """The stripped, non-empty paragraphs of ``text`` in order."""
    return [text[s:e] for s, e in paragraph_spans(text)]


def paragraph_hash(p: str) -> bytes:
    """SHA-256 digest (32 bytes) of a paragraph's UTF-8 encoding (lone surrogates passed through)."""
    return hashlib.sha256(p.encode("utf-8", "surrogatepass")).digest()


def rebuild_text(text: str, spans: list[tuple[int, int]], keep: list[bool]) -> str:
    """The paragraphs of ``text`` (at ``spans``) where ``keep`` is True, joined by :data:`PARAGRAPH_JOINER`."""
    return PARAGRAPH_JOINER.join(text[s:e] for (s, e), k in zip(spans, keep, strict=True) if k)


# --------------------------------------------------------------------------- config & stats


@dataclass(frozen=True)
class DedupConfig:
    """``field``: the text field; ``bloom_bytes_per_item``: filter bytes per paragraph (B > 0);
    ``expected_items``: paragraphs to size the filter for (None: the counted N);
    ``spool_dir``: parent of the spool directory (None: the system temp dir)."""

    field: str
    bloom_bytes_per_item: float = 10.0
    expected_items: int | None = None
    spool_dir: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.field, str) or not self.field:
            raise IngestConfigError("field", self.field, "must be a non-empty string naming the text field")
        b = self.bloom_bytes_per_item
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
            raise IngestConfigError("bloom_bytes_per_item", b, "must be a finite number > 0 (10 is the usual budget)")
        e = self.expected_items
        if e is not None and (isinstance(e, bool) or not isinstance(e, int) or e < 1):
            raise IngestConfigError("expected_items", e, "must be a positive integer, or None to size by the counted paragraphs")
        if self.spool_dir is not None and not os.path.isdir(self.spool_dir):
            raise IngestConfigError("spool_dir", self.spool_dir, "must be an existing directory, or None for the system temp dir")


@dataclass
class DedupStats:
    """Counters of one run, complete once the output is exhausted (keys: ``STATS_KEYS``)."""

    documents_in: int = 0
    documents_out: int = 0
    documents_modified: int = 0
    documents_dropped: int = 0
    paragraphs: int = 0
    filter_bits: int = 0
    filter_hashes: int = 0
    candidates: int = 0  # distinct digests the screen flagged
    false_positives: int = 0  # candidates that occur once
    duplicate_paragraphs: int = 0  # occurrences removed
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        d = asdict(self)
        d.pop("extra")
        return d


# --------------------------------------------------------------------------- stage


class ParagraphDeduper:
    """Exact paragraph dedup of a document stream; ``run(docs)`` yields the kept documents.

    ``stats`` (:class:`DedupStats`) is reset at the start of each run and complete once the
    generator is exhausted.
    """

    def __init__(self, config: DedupConfig):
        self.config = config
        self.stats = DedupStats()

    def run(self, docs: Iterable[dict], stats: DedupStats | None = None) -> Iterator[dict]:
        """Generator of the kept documents; counters go to ``stats`` (reset first) or a new
        :class:`DedupStats`, available as ``self.stats``."""
        if stats is None:
            stats = DedupStats()
        else:
            stats.__dict__.update(DedupStats().__dict__)
        self.stats = stats
        spool = tempfile.TemporaryDirectory(prefix="bloomspan-dedup-", dir=self.config.spool_dir)
        try:
            docs_path = os.path.join(spool.name, "docs.pickle")
            digests_path = os.path.join(spool.name, "digests.bin")
            self._spool(docs, docs_path, digests_path, stats)
            candidates = self._screen(digests_path, stats)
            removed = self._confirm(digests_path, candidates, stats)
            yield from self._emit(docs_path, removed, stats)
            log.debug("paragraph dedup: %s", stats.as_dict())
        finally:
            spool.cleanup()

    # pass 1 -----------------------------------------------------------------
    def _spool(self, docs: Iterable[dict], docs_path: str, digests_path: str, stats: DedupStats) -> None:
        fld = self.config.field
        with open(docs_path, "wb") as fdocs, open(digests_path, "wb") as fdig:
            buf = bytearray()
            for i, doc in enumerate(docs):
                text = _field_text(doc, fld, i)
                spans = paragraph_spans(text) if text else []
                for s, e in spans:
                    buf += paragraph_hash(text[s:e])
                if len(buf) >= _FLUSH_BYTES:
                    fdig.write(buf)
                    buf.clear()
                pickle.dump((len(spans), doc), fdocs, protocol=pickle.HIGHEST_PROTOCOL)
                stats.documents_in += 1
                stats.paragraphs += len(spans)
            fdig.write(buf)

    # pass 2 -----------------------------------------------------------------
    def _screen(self, digests_path: str, stats: DedupStats) -> set[bytes]:
        n = self.config.expected_items or stats.paragraphs
        b = self.config.bloom_bytes_per_item
        bloom = BloomFilter(bloom_bits(n, b), bloom_hashes(b))
        stats.filter_bits, stats.filter_hashes = bloom.num_bits, bloom.num_hashes
        candidates: set[bytes] = set()
        for block in _digest_blocks(digests_path):
            flags = bloom.screen(block)
            for row in block[flags]:
                candidates.add(row.tobytes())
        stats.candidates = len(candidates)
        stats.extra["filter_fill_ratio"] = bloom.fill_ratio
        return candidates

    # pass 3 -----------------------------------------------------------------
    def _confirm(self, digests_path: str, candidates: set[bytes], stats: DedupStats) -> np.ndarray:
        """Sorted int64 array of the global paragraph positions to remove."""
        if not candidates:
            return np.empty(0, dtype=np.int64)
        cand_prefix = np.unique(np.frombuffer(b"".join(candidates), dtype="<u8").reshape(-1, 4)[:, 0])
        occ_digests: list[bytes] = []
        occ_pos: list[np.ndarray] = []
        base = 0
        for block in _digest_blocks(digests_path):
            prefix = np.ascontiguousarray(block[:, :8]).view("<u8")[:, 0]
            rows = np.flatnonzero(np.isin(prefix, cand_prefix))
            hit = [r for r in rows if block[r].tobytes() in candidates]
            occ_digests.extend(block[r].tobytes() for r in hit)
            occ_pos.append(np.asarray(hit, dtype=np.int64) + base)
            base += block.shape[0]
        positions = np.concatenate(occ_pos)
        removed, false_positives = sort_merge(np.frombuffer(b"".join(occ_digests), dtype=np.uint8).reshape(-1, DIGEST_BYTES), positions)
        stats.false_positives = false_positives
        stats.duplicate_paragraphs = int(removed.shape[0])
        return removed

    # pass 4 -----------------------------------------------------------------
    def _emit(self, docs_path: str, removed: np.ndarray, stats: DedupStats) -> Iterator[dict]:
        fld = self.config.field
        base = 0
        r = 0
        n_removed = removed.shape[0]
        with open(docs_path, "rb") as fdocs:
            for _ in range(stats.documents_in):
                count, doc = pickle.load(fdocs)
                lost = []
                while r < n_removed and removed[r] < base + count:
                    lost.append(int(removed[r]) - base)
                    r += 1
                base += count
                if not lost:
                    stats.documents_out += 1
                    yield doc
                    continue
                if len(lost) == count:
                    stats.documents_dropped += 1
                    continue
                text = doc[fld]
                spans = paragraph_spans(text)
                keep = [True] * count
                for j in lost:
                    keep[j] = False
                out = dict(doc)
                out[fld] = rebuild_text(text, spans, keep)
                stats.documents_modified += 1
                stats.documents_out += 1
                yield out


def sort_merge(digests: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, int]:
    """Confirm candidate occurrences by sorting.

    ``digests``: uint8 (c, 32), ``positions``: int64 (c,) global paragraph positions (input
    order). Occurrences are sorted by digest (bytewise), then position; within each run of
    equal digests every occurrence after the first is a repeat. Returns ``(removed, fp)``:
    removed positions sorted ascending (int64), and the number of runs of length 1.
    """
    c = positions.shape[0]
    if c == 0:
        return np.empty(0, dtype=np.int64), 0
    words = np.ascontiguousarray(digests).view(">u8")  # (c, 4); big-endian words sort like the bytes
    order = np.lexsort((positions, words[:, 3], words[:, 2], words[:, 1], words[:, 0]))
    w = words[order]
    pos = positions[order]
    same = np.all(w[1:] == w[:-1], axis=1)  # same[i]: row i+1 repeats row i
    removed = np.sort(pos[1:][same])
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    run_lengths = np.diff(np.append(starts, c))
    return removed, int(np.count_nonzero(run_lengths == 1))


def _digest_blocks(path: str) -> Iterator[np.ndarray]:
    """uint8 blocks of shape (<= _BLOCK, 32) read from the digest spool."""
    with open(path, "rb") as f:
        while True:
            raw = f.read(_BLOCK * DIGEST_BYTES)
            if not raw:
                return
            yield np.frombuffer(raw, dtype=np.uint8).reshape(-1, DIGEST_BYTES)


def _field_text(doc: Any, fld: str, index: int) -> str:
    if not isinstance(doc, dict):
        raise InvalidDocumentError(f"input document #{index} is a {type(doc).__name__}, not a dict", doc_id=index)
    text = doc.get(fld)
    if text is None:
        return ""
    if not isinstance(text, str):
        raise FieldTypeError(
            f"input document #{index}: expected a string, got {type(text).__name__}", doc_id=doc.get("_id", index), field=fld
        )
    return text


def dedup_documents(
    docs: Iterable[dict],
    field: str,
    bloom_bytes_per_item: float = 10.0,
    expected_items: int | None = None,
    spool_dir: str | os.PathLike | None = None,
    *,
    stats: DedupStats | None = None,
) -> Iterator[dict]:
    """Iterator of the deduplicated documents (rules: module docstring).

    The configuration is validated now (:class:`IngestConfigError`); the work starts at the
    first ``next()``. Pass a :class:`DedupStats` as ``stats`` to read the counters once the
    output is exhausted.
    """
    deduper = ParagraphDeduper(DedupConfig(field, bloom_bytes_per_item, expected_items, spool_dir))
    return deduper.run(docs, stats)
