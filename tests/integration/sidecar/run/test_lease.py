"""The mining lease: one holder at a time, expiry, takeover, renewal, release."""
from __future__ import annotations

import threading
import time

import pytest

from bloomspan.sidecar.errors import LeaseHeldError, LeaseLostError
from bloomspan.sidecar.run.lease import Lease, read_lease


def test_one_holder_at_a_time_and_release(os_client, index_prefix):
    index = f"{index_prefix}lease"
    a = Lease(os_client, index, "tpl", holder="replica-a", ttl=60, run_id="r1")
    b = Lease(os_client, index, "tpl", holder="replica-b", ttl=60)
    a.acquire()
    with pytest.raises(LeaseHeldError) as info:
        b.acquire()
    assert info.value.item["holder"] == "replica-a" and info.value.item["run_id"] == "r1"
    a.renew()
    assert read_lease(os_client, index, "tpl")["holder"] == "replica-a"
    a.release()
    assert read_lease(os_client, index, "tpl") is None
    with b:
        assert b.held and read_lease(os_client, index, "tpl")["holder"] == "replica-b"
    assert read_lease(os_client, index, "tpl") is None
    other = Lease(os_client, index, "another-template", holder="replica-a", ttl=60)
    other.acquire()  # leases of different template indices are independent
    other.release()


def test_expired_lease_is_taken_over_and_the_old_holder_loses_it(os_client, index_prefix):
    index = f"{index_prefix}lease"
    old = Lease(os_client, index, "tpl", holder="crashed", ttl=0.5)
    old.acquire()
    time.sleep(0.7)
    new = Lease(os_client, index, "tpl", holder="fresh", ttl=60)
    new.acquire()
    with pytest.raises(LeaseLostError):
        old.renew()
    old.release()  # must not delete the new holder's lease
    assert read_lease(os_client, index, "tpl")["holder"] == "fresh"
    new.release()


def test_same_holder_takes_its_lease_back_after_a_restart(os_client, index_prefix):
    index = f"{index_prefix}lease"
    Lease(os_client, index, "tpl", holder="host:1:abc", ttl=60).acquire()  # then kill -9
    again = Lease(os_client, index, "tpl", holder="host:1:abc", ttl=60)
    again.acquire()
    again.release()


def test_racing_replicas_for_an_expired_lease_one_wins(os_client, index_prefix):
    index = f"{index_prefix}lease"
    Lease(os_client, index, "tpl", holder="dead", ttl=0.2).acquire()
    time.sleep(0.4)
    results = {}
    barrier = threading.Barrier(6)

    def contend(k):
        lease = Lease(os_client, index, "tpl", holder=f"r{k}", ttl=60)
        barrier.wait()
        try:
            lease.acquire()
            results[k] = "won"
        except LeaseHeldError:
            results[k] = "lost"

    threads = [threading.Thread(target=contend, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()).count("won") == 1


def test_keep_alive_renews_in_the_background(os_client, index_prefix):
    index = f"{index_prefix}lease"
    lease = Lease(os_client, index, "tpl", holder="long-run", ttl=0.9)
    with lease:
        first = read_lease(os_client, index, "tpl")["expires_at"]
        time.sleep(1.5)  # longer than the ttl: only renewals keep it
        doc = read_lease(os_client, index, "tpl")
        assert doc["expires_at"] > first and not doc["expired"]
        with pytest.raises(LeaseHeldError):
            Lease(os_client, index, "tpl", holder="intruder", ttl=5).acquire()


def test_a_mining_run_refuses_to_start_while_another_holds_the_lease(os_client, index_prefix, opensearch_url,
                                                                      tmp_path):
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    index, tpl = f"{index_prefix}lease", f"{index_prefix}tpl"
    os_client.index(index=f"{index_prefix}src", id="a", body={"text": "x y z"}, refresh=True)
    other = Lease(os_client, index, tpl, holder="other-replica", ttl=60)
    other.acquire()
    with pytest.raises(LeaseHeldError, match="other-replica"):
        run_mining(MineConfig.from_flags(index=f"{index_prefix}src", url=opensearch_url, template_index=tpl,
                              work_dir=str(tmp_path), lease_index=index), client=os_client)
    assert not os_client.indices.exists_alias(name=tpl)
    other.release()


def test_a_run_turned_away_by_the_lease_publishes_later_under_a_fresh_id(os_client, index_prefix, opensearch_url,
                                                                         tmp_path):
    """A run skipped by the lease used to keep the id it was given before the lease, so when it
    ran later it published under an id older than runs published meanwhile: `runs` and
    `rollback` put it in the wrong place."""
    from bloomspan.sidecar.publish.template_index import list_runs, rollback
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    lease_index, tpl, src = f"{index_prefix}lease", f"{index_prefix}tpl", f"{index_prefix}src"
    for i in range(8):
        os_client.index(index=src, id=str(i), body={"text": f"page {i} all rights reserved by the acme corporation"})
    os_client.indices.refresh(index=src)

    def config(work):
        return MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path / work),
                          lease_index=lease_index, sigma=3, min_length=3, engine="fhk")

    other = Lease(os_client, lease_index, tpl, holder="other-replica", ttl=60)
    other.acquire()
    with pytest.raises(LeaseHeldError):
        run_mining(config("a"), client=os_client)  # turned away: leaves nothing to resume
    other.release()
    time.sleep(0.01)
    first = run_mining(config("b"), client=os_client)  # another replica publishes meanwhile
    time.sleep(0.01)
    later = run_mining(config("a"), client=os_client)  # the turned-away one, run again
    assert later.run_id > first.run_id and not later.resumed
    runs = list_runs(os_client, tpl)
    assert [r["run_id"] for r in runs] == [later.run_id, first.run_id] and runs[0]["current"]
    assert rollback(os_client, tpl)["run_id"] == first.run_id


def test_a_run_that_lost_the_lease_before_the_swap_publishes_its_complete_index_when_nothing_was_published_since(
        os_client, index_prefix, opensearch_url, tmp_path):
    """The lease expired and another replica took it right before the swap, and published
    nothing: the resumed run's index is complete and no run is newer, so the alias moves to it as
    it is (nothing written again); had the other replica published, the run would mint a new id
    (:meth:`_Run._mint_publication_id`, the turned-away test above)."""
    from bloomspan.sidecar.publish.template_index import aliased_indices, list_runs, physical_indices
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    lease_index, tpl, src = f"{index_prefix}lease", f"{index_prefix}tpl", f"{index_prefix}src"
    for i in range(8):
        os_client.index(index=src, id=str(i), body={"text": f"page {i} all rights reserved by the acme corporation"})
    os_client.indices.refresh(index=src)
    config = MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path), sigma=3,
                        min_length=3, engine="fhk", lease_index=lease_index, lease_ttl=0.5)

    real_check = Lease.check
    stolen = {}

    def steal_then_check(lease):  # the lease expires and another replica takes it right before the swap
        if not stolen:
            lease._stop_thread()  # renewals stall (a long GC pause, a partition) ...
            time.sleep(0.6)  # ... past the ttl
            thief = Lease(os_client, lease_index, tpl, holder="thief", ttl=60)
            thief.acquire()
            stolen["id"] = lease.run_id
            thief.release()
        return real_check(lease)

    Lease.check = steal_then_check
    try:
        with pytest.raises(LeaseLostError):
            run_mining(config, client=os_client)
    finally:
        Lease.check = real_check
    assert not os_client.indices.exists_alias(name=tpl)
    assert [r["status"] for r in list_runs(os_client, tpl)] == ["interrupted"]
    summary = run_mining(config, client=os_client)  # resumed at the publish phase
    assert summary.resumed and summary.run_id == stolen["id"]
    assert aliased_indices(os_client, tpl) == [summary.physical_index]
    assert [(r["run_id"], r["status"]) for r in list_runs(os_client, tpl)] == [(summary.run_id, "complete")]
    assert list(physical_indices(os_client, tpl)) == [summary.physical_index]


def test_a_run_that_lost_the_lease_while_another_published_publishes_under_a_newer_id(os_client, index_prefix,
                                                                                       opensearch_url, tmp_path):
    """The other side of the rule above: the lease expired right before the swap and another
    replica published a run meanwhile. The resumed run's complete index is older than that run,
    so it is not aliased as it is: the run mints a newer id, and the stale index goes."""
    from bloomspan.sidecar.publish.template_index import aliased_indices, list_runs, physical_indices, physical_name
    from bloomspan.sidecar.run.mining_run import MineConfig, run_mining

    lease_index, tpl, src = f"{index_prefix}lease", f"{index_prefix}tpl", f"{index_prefix}src"
    for i in range(8):
        os_client.index(index=src, id=str(i), body={"text": f"page {i} all rights reserved by the acme corporation"})
    os_client.indices.refresh(index=src)

    def config(work, ttl=120.0):
        return MineConfig.from_flags(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path / work), sigma=3,
                          min_length=3, engine="fhk", lease_index=lease_index, lease_ttl=ttl)

    real_check = Lease.check
    stolen = {}

    def lose_then_check(lease):
        if not stolen:
            lease._stop_thread()
            time.sleep(0.6)  # past the ttl: the other replica takes the lease
            thief = Lease(os_client, lease_index, tpl, holder="other-replica", ttl=60)
            thief.acquire()
            stolen["id"] = lease.run_id
            thief.release()
        return real_check(lease)

    Lease.check = lose_then_check
    try:
        with pytest.raises(LeaseLostError):
            run_mining(config("a", ttl=0.5), client=os_client)
    finally:
        Lease.check = real_check
    other = run_mining(config("b"), client=os_client)  # another replica publishes meanwhile
    summary = run_mining(config("a", ttl=0.5), client=os_client)
    assert summary.resumed and summary.run_id > other.run_id > stolen["id"]
    assert aliased_indices(os_client, tpl) == [summary.physical_index]
    assert physical_name(tpl, stolen["id"]) not in physical_indices(os_client, tpl)
    assert [r["run_id"] for r in list_runs(os_client, tpl)] == [summary.run_id, other.run_id]
