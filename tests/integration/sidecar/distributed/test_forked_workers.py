"""``local:N`` workers are forked from the command, with the local cluster's Dask settings for
the run only. A process that runs a second Dask run after its first moved a message over Dask's
offload threshold (10 MiB) must still move large messages. Before the fix the forked workers
inherited the driver's ``Dask-Offload`` executor, whose one thread does not exist in a child, and
every message over the threshold waited for it forever (found as a hung 16,000-page template
stage in the driver memory bench)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import distributed.utils
    from bloomspan.sidecar.distributed.cluster import DaskConfig, dask_client

    def big():
        return b"x" * (12 << 20)  # over distributed.comm.offload (10 MiB): (de)serialised offloaded

    distributed.utils._offload_executor.submit(int).result()  # this process' offload thread runs
    with dask_client(DaskConfig("local:1", dashboard_address=None)) as client:
        assert len(client.submit(big, pure=False).result(timeout=60)) == 12 << 20
    print("ok")
""")


def test_a_forked_worker_moves_a_message_over_the_offload_threshold():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


SETTINGS_SCRIPT = textwrap.dedent("""
    import dask
    from bloomspan.sidecar.distributed.cluster import DaskConfig, dask_client

    def tick_ms(dask_worker=None, dask_scheduler=None):
        return (dask_worker or dask_scheduler).periodic_callbacks["tick"].callback_time

    with dask_client(DaskConfig("local:1", dashboard_address=None)) as client:
        assert set(client.run(tick_ms).values()) == {1000}, client.run(tick_ms)
        assert client.run_on_scheduler(tick_ms) == 1000
        assert not any(client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values())
    assert dask.config.get("distributed.admin.tick.interval") == "20ms"  # only for the client's lifetime
    print("ok")
""")


def test_the_local_cluster_settings_reach_the_scheduler_and_the_workers_for_the_run_only():
    out = subprocess.run([sys.executable, "-c", SETTINGS_SCRIPT], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
