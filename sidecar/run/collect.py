"""Resumable reading of the source into the corpus store and the doc log, with checkpoints.

:func:`collect_scan` consumes :class:`bloomspan.sidecar.cluster.scroll.SourceScan` pages — a full read (texts into
the corpus store) or an incremental listing (keys and versions only) — and
:func:`collect_fetch` reads the texts of a list of keys (the incremental run's new and
changed documents). Both commit in the order of :mod:`.checkpoint` (store, log,
checkpoint) every ``checkpoint_seconds`` and at the end, and both continue from the
saved state: unit positions for the scan, the number of keys done for the fetch.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from bloomspan.sidecar.cluster.scroll import SourceScan, fetch_by_ids, split_key

from .checkpoint import STORED, DocLog

log = logging.getLogger(__name__)

Progress = Callable[[str, int, "int | None"], None]


def _append(store, doclog: DocLog, keys: list[str], texts: list, meta: np.ndarray) -> None:
    """Texts of STORED documents go to the store; every record goes to the log with the
    store document number it got (-1 for skipped ones)."""
    if store is not None:
        stored = np.flatnonzero(meta[:, 3] == STORED)
        if stored.size:
            base = store.n_docs
            store.append([keys[i] for i in stored], [texts[i] for i in stored], flush=False)
            meta[stored, 4] = base + np.arange(stored.size)
    doclog.append(keys, meta)


def collect_scan(scan: SourceScan, store, doclog: DocLog, state: dict, save: Callable[[], None], *,
                 checkpoint_seconds: float = 5.0, progress: Progress | None = None, total: int | None = None,
                 stage: str = "scan") -> dict:
    """Read every unfinished unit of ``scan``; ``state`` is the checkpoint's section for this
    pass (``positions``, ``done``, ``pit_ids``, ``doclog``), updated in place; ``save()``
    writes the whole checkpoint. Returns ``{"docs": read now, "seconds": ...}``."""
    positions = state.setdefault("positions", {})
    done = state.setdefault("done", [])
    t0 = time.perf_counter()
    seen = doclog.n
    read = 0
    last = time.monotonic()

    def commit() -> None:
        if store is not None:
            store.flush()
            # informational: the store may be ahead of the log after a crash (see checkpoint.py)
            state["store"] = {"n_docs": store.n_docs, "n_tokens": store.n_tokens}
        doclog.flush()
        state["doclog"] = doclog.counts
        state["pit_ids"] = dict(scan.pit_ids)
        save()

    with scan:
        for page in scan.pages():
            _append(store, doclog, page.keys, page.texts, page.meta)
            if page.after is not None:
                positions[page.unit] = page.after
            if page.done and page.unit not in done:
                done.append(page.unit)
            read += len(page.keys)
            seen += len(page.keys)
            if progress:
                progress(stage, seen, total)
            if time.monotonic() - last >= checkpoint_seconds:
                commit()
                last = time.monotonic()
        commit()
    seconds = time.perf_counter() - t0
    log.info("%s: %d documents in %.1fs (%.0f docs/s)", stage, read, seconds, read / seconds if seconds else 0)
    return {"docs": read, "seconds": seconds}


def collect_fetch(client, keys: list[str], indices: list[str], field: str, ts_field: str | None, store,
                  doclog: DocLog, state: dict, save: Callable[[], None], *, batch_size: int = 1000,
                  checkpoint_seconds: float = 5.0, progress: Progress | None = None) -> dict:
    """Read the current text of ``keys`` (canonical order) from ``state["done"]`` on.

    Keys the source no longer holds are simply absent from the log (deleted documents).
    """
    multi = len(indices) > 1
    start = int(state.setdefault("done", 0))
    t0 = time.perf_counter()
    last = time.monotonic()

    def commit(done: int) -> None:
        store.flush()
        state["store"] = {"n_docs": store.n_docs, "n_tokens": store.n_tokens}
        doclog.flush()
        state["done"] = done
        state["doclog"] = doclog.counts
        save()

    for b0 in range(start, len(keys), batch_size):
        batch = keys[b0:b0 + batch_size]
        by_index: dict[str, list[str]] = {}
        for key in batch:
            index, doc_id = split_key(key, indices)
            by_index.setdefault(index, []).append(doc_id)
        for index in sorted(by_index):
            got_keys, texts, meta = fetch_by_ids(client, index, by_index[index], field, ts_field, multi)
            _append(store, doclog, got_keys, texts, meta)
        done = b0 + len(batch)
        if progress:
            progress("fetch", done, len(keys))
        if time.monotonic() - last >= checkpoint_seconds:
            commit(done)
            last = time.monotonic()
    commit(len(keys))
    seconds = time.perf_counter() - t0
    return {"docs": len(keys) - start, "seconds": seconds}
