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
