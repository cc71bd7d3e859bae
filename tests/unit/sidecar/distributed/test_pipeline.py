"""Count units of a distributed run: the shards one worker holds are counted together."""
from __future__ import annotations

from bloomspan.sidecar.distributed.pipeline import count_units


def test_count_units_group_shards_by_their_worker_in_shard_order():
    a = {"workers": ["tcp://a"], "allow_other_workers": True}
    b = {"workers": ["tcp://b"], "allow_other_workers": True}
    assert count_units([a, b, a, {}, b, a]) == [[0, 2, 5], [1, 4], [3]]


def test_count_units_are_one_per_worker_at_any_number_of_shards():
    """The pigeonhole threshold follows the workers, not the corpus: 40 shards on 2 workers are 2 units."""
    homes = [{"workers": [f"tcp://w{k % 2}"]} for k in range(40)]
    assert [len(u) for u in count_units(homes)] == [20, 20]
