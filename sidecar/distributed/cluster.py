"""Connecting to Dask: ``local:N`` (a LocalCluster of N worker processes) or a scheduler address.

:class:`DaskConfig` is validated on construction; :func:`dask_client` opens the client (and
the local cluster) and closes both on exit. Workers report progress as Dask events on
:data:`.in_worker.PROGRESS_TOPIC`; :class:`ProgressRelay` turns them into the
driver's ``progress(stage, done, total)`` calls, summed over shards.
"""
from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from bloomspan.sidecar.errors import ClusterConfigError

from .in_worker import PROGRESS_TOPIC
from .tasks import warm_kernels

log = logging.getLogger(__name__)

_LOCAL = re.compile(r"local:(\d+)")
_REMOTE = re.compile(r"(tcp|tls|ucx|ws|wss|inproc)://\S+")

Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True)
class DaskConfig:
    """Where the work runs.

    address:           ``local:N`` or a scheduler address such as ``tcp://scheduler:8786``
    memory_limit:      per worker of a local cluster (Dask's syntax: "2GiB", "auto", 0 = none);
                       an existing cluster keeps the limits its workers were started with
    threads_per_worker: threads of each local worker (1: the kernels are single-threaded)
    dashboard_address: local cluster dashboard (":0" picks a free port, None turns it off)
    """

    address: str
    memory_limit: str = "2GiB"
    threads_per_worker: int = 1
    dashboard_address: str | None = ":0"

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not (_LOCAL.fullmatch(self.address) or _REMOTE.fullmatch(self.address)):
            raise ClusterConfigError("dask", self.address,
                                     "give local:N (N worker processes on this machine) or a scheduler address "
                                     "such as tcp://scheduler:8786")
        if self.local_workers is not None and self.local_workers < 1:
            raise ClusterConfigError("dask", self.address, "local:N needs N >= 1 workers")
        if isinstance(self.threads_per_worker, bool) or not isinstance(self.threads_per_worker, int) \
                or self.threads_per_worker < 1:
            raise ClusterConfigError("dask_threads_per_worker", self.threads_per_worker, "must be an integer >= 1")
        if not isinstance(self.memory_limit, (str, int)):
            raise ClusterConfigError("dask_memory_limit", self.memory_limit, 'give a size such as "2GiB", or "auto"')

    @property
    def local_workers(self) -> int | None:
        m = _LOCAL.fullmatch(self.address)
        return int(m.group(1)) if m else None


@contextmanager
def dask_client(config: DaskConfig) -> Iterator:
    """A ``distributed.Client`` for ``config``; the local cluster (if any) closes with it."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the extra is part of the test install
        raise ClusterConfigError("dask", config.address,
                                 "needs Dask: pip install -e '.[dask]' in the checkout (make test installs it)") from None
    # Dask sets its own loggers to INFO; follow the command's --log-level instead.
    logging.getLogger("distributed").setLevel(logging.getLogger().getEffectiveLevel())
    if config.local_workers is not None:
        warm_kernels()  # the local workers fork from this process with every kernel loaded (_client)
    with _local_worker_settings(config), worker_loss_lines():
        yield from _client(config, Client, LocalCluster)


# Dask's settings for the processes of a local cluster (the scheduler and nannies in this one, the
# workers forked from it), for the client's lifetime:
LOCAL_CLUSTER_SETTINGS = {
    # no statistical profiler: it samples every worker thread 100 times a second (half a
    # worker's idle CPU); a bloomspan run has its own per-stage timings
    "distributed.worker.profile.enabled": False,
    # every server (scheduler, nanny, worker) wakes each tick to measure its event loop's delay;
    # at Dask's 20 ms that was half of an idle local:2 cluster's CPU (0.22 of the driver's and
    # 0.1 of each worker's CPU seconds in 8 s; 0.07 and 0.02 with 1 s and the system monitor's
    # 2 s). The warning it is for (a loop blocked for `tick.limit`, 3 s) still comes.
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def _local_worker_settings(config: DaskConfig):
    """For the client's lifetime: :data:`LOCAL_CLUSTER_SETTINGS`. They must last the run: a
    worker restarted mid-run reads them from this process's configuration then."""
    if config.local_workers is None:
        return nullcontext()
    import dask

    return dask.config.set(LOCAL_CLUSTER_SETTINGS)


def _forked_start():
    """While the first local workers start: fork them from this process, which holds every
    kernel they run, so they start without importing numpy, numba, Dask and bloomspan again
    (about a CPU second each) and without loading or compiling the kernels again. Only those:
    the method is read when a process starts, so a worker a nanny restarts mid-run (one was
    killed) is spawned — forking a driver whose scheduler and client threads are busy can copy
    a lock one of them holds (a forked restart hung the run in a kill test). A forked child
    gets its own offload executor (:func:`_fresh_offload_executor`)."""
    import dask

    global _AT_FORK_REGISTERED
    if not _AT_FORK_REGISTERED:
        os.register_at_fork(after_in_child=_fresh_offload_executor)
        _AT_FORK_REGISTERED = True
    return dask.config.set({"distributed.worker.multiprocessing-method": "fork"})


_AT_FORK_REGISTERED = False


def _fresh_offload_executor() -> None:
    """In a child forked from this process: a new ``Dask-Offload`` executor. Dask
    (de)serialises messages over ``distributed.comm.offload`` (10 MiB) on that one-thread
    executor, made once per process; a child inherits the parent's, whose thread does not exist
    in the child but still counts as its one thread, so every large message would wait forever
    (a second ``local:N`` run in one process hung moving 11.7 MB of site pages)."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    utils = sys.modules.get("distributed.utils")
    if utils is not None and hasattr(utils, "_offload_executor"):
        utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")


class _WorkerLossLines(logging.Filter):
    """Dask's own records of a lost worker, as one line each.

    When a worker dies mid-run (killed, out of memory) Dask logs that the scheduler removed
    it, that the nanny restarts it, that some keys could not be gathered and are
    rescheduled, and, from workers and comms closing, tracebacks. The run recovers (lost tasks
    re-run from their inputs) and its result does not change, so a person needs one line:
    which worker was lost and that its tasks are re-run. Other records pass unchanged.
    """

    LOST = re.compile(r"Removing worker '?([^' ]+)'? caused the cluster to lose")
    RECOVERY = ("Restarting worker", "Couldn't gather", "rescheduling", "Failed to communicate with scheduler",
                "Worker process still alive after", "Nanny asking worker to close", "Connection to the scheduler lost")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        lost = self.LOST.search(message)
        if lost:
            record.msg, record.args = "dask worker %s lost; its tasks are re-run from their inputs", (lost.group(1),)
            record.exc_info = record.exc_text = record.stack_info = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            return True
        return not any(part in message for part in self.RECOVERY)


_DASK_LOGGERS = ("distributed.scheduler", "distributed.nanny", "distributed.client", "distributed.worker",
                 "distributed.core", "distributed.comm", "distributed.comm.tcp", "distributed.batched",
                 "distributed.utils_perf", "distributed.deploy.spec")


@contextmanager
def worker_loss_lines():
    """:class:`_WorkerLossLines` on Dask's loggers in this process for the duration."""
    f = _WorkerLossLines()
    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS]
    for lg in loggers:
        lg.addFilter(f)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeFilter(f)


def _client(config: DaskConfig, Client, LocalCluster) -> Iterator:
    cluster = None
    try:
        if config.local_workers is not None:
            with _forked_start():
                cluster = LocalCluster(n_workers=config.local_workers, threads_per_worker=config.threads_per_worker,
                                       processes=True, memory_limit=config.memory_limit,
                                       dashboard_address=config.dashboard_address,
                                       # the worker processes' own logging: their recovery chatter
                                       # (heartbeats to a closing scheduler) is not the user's
                                       silence_logs=logging.CRITICAL)
            client = Client(cluster)
        else:
            try:
                client = Client(config.address, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise ClusterConfigError("dask", config.address,
                                         f"no Dask scheduler answers there ({exc}); start one with "
                                         "`dask scheduler` or use local:N") from None
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def dashboard_link(client) -> str | None:
    """The dashboard URL, or None when the scheduler serves none (bokeh not installed)."""
    try:
        link = client.dashboard_link
    except Exception:  # noqa: BLE001 - no dashboard service: nothing to show
        return None
    return link or None


class ProgressRelay:
    """Workers' progress events -> ``progress(stage, done summed over shards, total)``.

    ``totals[stage]`` (set by the driver, e.g. the file size for "read") wins over the
    totals the events carry. Also usable for the driver's own steps through :meth:`step`.
    """

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.totals: dict[str, int | None] = {}
        self._done: dict[str, dict[int, int]] = {}
        self._lock = threading.Lock()

    def attach(self, client) -> None:
        if self.progress is not None:
            client.subscribe_topic(PROGRESS_TOPIC, self._on_event)

    def detach(self, client) -> None:
        if self.progress is not None:
            try:
                client.unsubscribe_topic(PROGRESS_TOPIC)
            except Exception:  # noqa: BLE001 - the client is closing anyway
                pass

    # Stages the driver reports itself, as tasks finished out of all (see :meth:`step`):
    # the workers' events for them only mark where a task ran (tests kill that worker).
    DRIVER_STAGES = frozenset({"count", "cut", "grow"})

    def _on_event(self, event) -> None:
        _, msg = event
        if msg["stage"] in self.DRIVER_STAGES:
            return
        with self._lock:
            per_shard = self._done.setdefault(msg["stage"], {})
            per_shard[msg["shard"]] = msg["done"]
            done = sum(per_shard.values())
            total = self.totals.get(msg["stage"], msg.get("total"))
        self.progress(msg["stage"], done, total)

    def step(self, stage: str, done: int, total: int | None) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)
