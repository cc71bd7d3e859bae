"""DaskConfig: addresses and limits are validated, errors name the flag and the fix."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.distributed.cluster import DaskConfig, ProgressRelay
from bloomspan.sidecar.errors import ClusterConfigError


def test_addresses():
    assert DaskConfig("local:3").local_workers == 3
    assert DaskConfig("tcp://scheduler:8786").local_workers is None
    assert DaskConfig("tls://10.0.0.1:8786").local_workers is None


@pytest.mark.parametrize("address", ["local", "local:0", "local:-1", "scheduler:8786", "http://x:8786", ""])
def test_bad_addresses_name_the_flag(address):
    with pytest.raises(ClusterConfigError) as exc:
        DaskConfig(address)
    assert exc.value.field == "dask" and "local:N" in str(exc.value)


def test_bad_threads():
    with pytest.raises(ClusterConfigError, match="dask_threads_per_worker"):
        DaskConfig("local:1", threads_per_worker=0)


def test_relay_sums_shards_and_keeps_the_latest_value_of_a_retried_shard():
    seen = []
    relay = ProgressRelay(lambda *a: seen.append(a))
    relay.totals["read"] = 100
    for shard, done in ((0, 10), (1, 20), (0, 30), (0, 5)):  # shard 0 retried: starts over
        relay._on_event((0.0, {"stage": "read", "shard": shard, "done": done, "total": None}))
    relay._on_event((0.0, {"stage": "count", "shard": 0, "done": 1, "total": None}))  # the driver reports count
    assert seen == [("read", 10, 100), ("read", 30, 100), ("read", 50, 100), ("read", 25, 100)]


def test_a_lost_worker_is_one_line_and_dask_recovery_chatter_is_dropped(caplog):
    """Issue 30 row 12: a worker killed mid-run printed Dask's warnings and tracebacks (exit 0,
    result right); now one line names the worker, recovery records are dropped, others pass."""
    import logging

    from bloomspan.sidecar.distributed.cluster import worker_loss_lines

    with caplog.at_level(logging.INFO), worker_loss_lines():
        logging.getLogger("distributed.scheduler").warning(
            "Removing worker %r caused the cluster to lose already computed task(s), which will be recomputed "
            "elsewhere: %s (stimulus_id=%r)", "tcp://127.0.0.1:46509", {"bloomspan-read-x-0"}, "handle-1")
        logging.getLogger("distributed.nanny").warning("Restarting worker (status=Status.running)")
        logging.getLogger("distributed.client").warning("Couldn't gather 1 keys, rescheduling ('k',)")
        try:
            raise OSError("Stream is closed")
        except OSError:
            logging.getLogger("distributed.worker").exception("Failed to communicate with scheduler during heartbeat.")
        logging.getLogger("distributed.scheduler").warning("Worker tcp://x exceeded 95% memory budget")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["dask worker tcp://127.0.0.1:46509 lost; its tasks are re-run from their inputs",
                     "Worker tcp://x exceeded 95% memory budget"]
    assert all(r.exc_info is None for r in caplog.records)
    logging.getLogger("distributed.nanny").warning("Restarting worker")  # outside the run: unchanged
    assert caplog.records[-1].getMessage() == "Restarting worker"
