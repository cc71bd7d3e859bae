"""One serialization per member set: the canonical portable Roaring bytes of a bitmap.

The portable Roaring format (RoaringFormatSpec) stores a bitmap as containers of 2**16
members, each written as an array (``card`` uint16 values, when card <= 4096), a bitset
(8192 bytes, when card > 4096) or a run container (uint16 n_runs, then (start, length - 1)
pairs). Arrays and bitsets are told apart by the cardinality; whether a container is a run
container is the writer's choice, and pyroaring's ``run_optimize()`` keeps whatever a
container already is when both forms cost the same bytes (a container of ``2r + 1`` members
in ``r`` runs: 2 + 4r bytes either way). The same members then serialize differently
depending on how the bitmap was built (an OR of shard bitmaps, an ``update`` from positions).

:func:`canonical_serialization` rewrites a portable serialization so that every container
takes the form that is a function of its members alone:

    run container  iff  2 + 4 * n_runs  <  (2 * card if card <= 4096 else 8192)

i.e. runs only where they are strictly smaller; ties go to the array. Containers already in
their canonical form are copied byte for byte, so a bitmap that went through
``run_optimize()`` costs one pass over its headers and its small arrays (no member list is
ever built: a container is at most 2**16 members). Decoding is unchanged: the output is
plain portable Roaring, which ``BitMap.deserialize`` reads and writes back identically.
"""
from __future__ import annotations

import struct

import numpy as np

COOKIE_NO_RUNS = 12346  # uint32 cookie, uint32 container count, offsets always present
COOKIE_RUNS = 12347  # uint16 cookie, uint16 (count - 1), run-flag bitset; offsets from 4 containers
NO_OFFSET_THRESHOLD = 4
ARRAY_MAX_CARD = 4096
BITSET_BYTES = 8192
CONTAINER_SPAN = 1 << 16

ARRAY, BITSET, RUN = "array", "bitset", "run"


class RoaringFormatError(ValueError):
    """Bytes that are not a portable Roaring serialization."""


def canonical_serialization(data: bytes) -> bytes:
    """The canonical portable Roaring bytes of the members serialized in ``data``."""
    keys, cards, containers = _read(data)
    kinds, payloads = [], []
    for card, (kind, payload) in zip(cards.tolist(), containers):
        kind, payload = _canonical_container(kind, payload, card)
        kinds.append(kind)
        payloads.append(payload)
    return _write(keys, cards, kinds, payloads)


def canonical_kind(card: int, n_runs: int) -> str:
    """The form a container of ``card`` members in ``n_runs`` runs takes."""
    plain = 2 * card if card <= ARRAY_MAX_CARD else BITSET_BYTES
    if 2 + 4 * n_runs < plain:
        return RUN
    return ARRAY if card <= ARRAY_MAX_CARD else BITSET


def _read(data: bytes) -> tuple[np.ndarray, np.ndarray, list[tuple[str, memoryview]]]:
    """(keys uint16 (n,), cards int64 (n,), [(kind, payload)]) of a portable serialization."""
    view = memoryview(data)
    if len(view) < 4:
        raise RoaringFormatError(f"{len(view)} bytes: too short for a Roaring cookie")
    (cookie,) = struct.unpack_from("<I", view, 0)
    if cookie & 0xFFFF == COOKIE_RUNS:
        size = (cookie >> 16) + 1
        flag_bytes = (size + 7) // 8
        run_flags = np.unpackbits(np.frombuffer(view, np.uint8, flag_bytes, 4), bitorder="little")[:size]
        pos = 4 + flag_bytes
        has_offsets = size >= NO_OFFSET_THRESHOLD
    elif cookie == COOKIE_NO_RUNS:
        if len(view) < 8:
            raise RoaringFormatError(f"{len(view)} bytes: too short for a Roaring header")
        (size,) = struct.unpack_from("<I", view, 4)
        run_flags = np.zeros(size, dtype=np.uint8)
        pos = 8
        has_offsets = True
    else:
        raise RoaringFormatError(f"cookie {cookie & 0xFFFF}: not a portable Roaring serialization")
    try:
        header = np.frombuffer(view, "<u2", 2 * size, pos)
    except ValueError:
        raise RoaringFormatError(f"{len(view)} bytes: too short for {size} container headers") from None
    keys, cards = header[0::2].copy(), header[1::2].astype(np.int64) + 1
    pos += 4 * size + (4 * size if has_offsets else 0)
    containers = []
    for i, (flag, card) in enumerate(zip(run_flags.tolist(), cards.tolist())):
        if flag:
            n_runs = struct.unpack_from("<H", view, pos)[0] if pos + 2 <= len(view) else 0
            kind, length = RUN, 2 + 4 * n_runs
        elif card <= ARRAY_MAX_CARD:
            kind, length = ARRAY, 2 * card
        else:
            kind, length = BITSET, BITSET_BYTES
        if pos + length > len(view):
            raise RoaringFormatError(f"{len(view)} bytes: container {i} ({kind}) runs past the end")
        containers.append((kind, view[pos:pos + length]))
        pos += length
    return keys, cards, containers


def _write(keys: np.ndarray, cards: np.ndarray, kinds: list[str], payloads: list) -> bytes:
    """Portable Roaring bytes laid out as CRoaring's writer lays them out."""
    size = len(kinds)
    is_run = np.array([k == RUN for k in kinds], dtype=np.uint8)
    if is_run.any():
        flags = np.packbits(is_run, bitorder="little").tobytes()
        head = [struct.pack("<I", COOKIE_RUNS | ((size - 1) << 16)), flags]
        with_offsets = size >= NO_OFFSET_THRESHOLD
    else:
        head = [struct.pack("<II", COOKIE_NO_RUNS, size)]
        with_offsets = True
    header = np.empty(2 * size, dtype="<u2")
    header[0::2] = keys
    header[1::2] = cards - 1
    head.append(header.tobytes())
    if with_offsets:
        start = sum(len(h) for h in head) + 4 * size
        sizes = np.array([len(p) for p in payloads], dtype=np.int64)
        offsets = start + np.concatenate([[0], np.cumsum(sizes)[:-1]]) if size else sizes
        head.append(offsets.astype("<u4").tobytes())
    return b"".join([*head, *payloads])


def _canonical_container(kind: str, payload: memoryview, card: int) -> tuple[str, bytes | memoryview]:
    if kind == RUN:
        (n_runs,) = struct.unpack_from("<H", payload, 0)
        target = canonical_kind(card, n_runs)
        if target == RUN:
            return kind, payload
        starts, ends = _run_bounds(payload, n_runs)
    else:
        starts, ends = _array_runs(payload) if kind == ARRAY else _bitset_runs(payload)
        target = canonical_kind(card, starts.size)
        if target == kind:
            return kind, payload
    return target, _encode(target, starts, ends)


def _run_bounds(payload, n_runs: int) -> tuple[np.ndarray, np.ndarray]:
    """int64 (n_runs,) first and last member of each run of a run container."""
    pairs = np.frombuffer(payload, "<u2", 2 * n_runs, 2).astype(np.int64)
    return pairs[0::2], pairs[0::2] + pairs[1::2]


def _array_runs(payload) -> tuple[np.ndarray, np.ndarray]:
    values = np.frombuffer(payload, "<u2").astype(np.int64)
    breaks = np.flatnonzero(np.diff(values) != 1)
    return values[np.concatenate([[0], breaks + 1])], values[np.concatenate([breaks, [values.size - 1]])]


def _bitset_runs(payload) -> tuple[np.ndarray, np.ndarray]:
    bits = np.unpackbits(np.frombuffer(payload, np.uint8), bitorder="little").astype(np.int8)
    edges = np.diff(np.concatenate([[0], bits, [0]]))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1


def _encode(kind: str, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """The payload of a container of members ``starts[i]..ends[i]`` (inclusive) in form ``kind``."""
    if kind == RUN:
        out = np.empty(1 + 2 * starts.size, dtype="<u2")
        out[0] = starts.size
        out[1::2] = starts
        out[2::2] = ends - starts
        return out.tobytes()
    step = np.zeros(CONTAINER_SPAN + 1, dtype=np.int32)
    np.add.at(step, starts, 1)
    np.add.at(step, ends + 1, -1)
    bits = np.cumsum(step[:-1]) > 0
    if kind == ARRAY:
        return np.flatnonzero(bits).astype("<u2").tobytes()
    return np.packbits(bits, bitorder="little").tobytes()
