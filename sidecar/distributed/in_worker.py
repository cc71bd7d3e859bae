"""What a Dask task calls inside its worker: progress events on :data:`PROGRESS_TOPIC`
(relayed to the driver by :class:`.cluster.ProgressRelay`) and handing freed memory back to the
OS. The tasks (shards, tasks, site_templates) import this, and the driver's side (cluster)
only the topic, so the tasks never import the client setup that warms them."""
from __future__ import annotations

import time

PROGRESS_TOPIC = "bloomspan-progress"


def release_freed_memory() -> None:
    """Hand the memory freed so far back to the OS (glibc's ``malloc_trim``; a no-op elsewhere).

    A task that builds and drops many small objects (a shard's tokenizer vocabulary, the JSON
    of its documents) leaves the heap full of free holes that glibc keeps: after reading a
    shard a worker held 10-16 bytes per token of it instead of the shard's 5. Dask's own remedy
    (``MALLOC_TRIM_THRESHOLD_`` in a spawned worker's environment) does not reach workers
    forked from the driver, whose allocator was set up before the variable could matter.
    Called at the end of the tasks that leave the most behind (a read, a growth shard), not
    as fixed glibc thresholds: those mmap every array above 128 KiB afresh, and the page
    faults cost ~35 ns of system CPU per token of a worker's share."""
    global _LIBC
    if _LIBC is None:
        import ctypes
        import ctypes.util

        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC.malloc_trim  # noqa: B018 - probe: musl and macOS have none
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC = None


def worker_progress(stage: str, shard: int, done: int, total: int | None = None) -> None:
    """Report a task's progress from inside a worker (a no-op outside one)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return
    worker.log_event(PROGRESS_TOPIC, {"stage": stage, "shard": shard, "done": int(done),
                                      "total": None if total is None else int(total), "worker": worker.address})


class ThrottledProgress:
    """A task's progress events for one stage and shard, at most one per ``interval`` seconds
    (the first and :meth:`finish` always go).

    Every event is a message to the scheduler (and on to the driver when it listens): a read
    task that reported after every tokenizer batch sent ~400 of them for a 26.5 M-token file,
    ~0.1 CPU s of the worker's and the scheduler's event loops for progress a person reads
    a few times a second. ``emit`` and ``clock`` are :func:`worker_progress` and
    ``time.monotonic`` (a test passes its own)."""

    def __init__(self, stage: str, shard: int, interval: float = 0.25, emit=None, clock=time.monotonic):
        self.stage, self.shard, self.interval = stage, shard, interval
        self._emit = worker_progress if emit is None else emit
        self._clock = clock
        self._last: float | None = None

    def step(self, done: int) -> None:
        now = self._clock()
        if self._last is None or now - self._last >= self.interval:
            self._last = now
            self._emit(self.stage, self.shard, done)

    def finish(self, done: int) -> None:
        self._last = self._clock()
        self._emit(self.stage, self.shard, done)
