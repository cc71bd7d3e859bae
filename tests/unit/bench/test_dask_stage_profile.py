"""The stage profile numbers run ids as the pipeline does (ranges of the sorted used strings),
so its route stage takes the ids the Dask run's route takes (no run is timed here)."""
from __future__ import annotations

import json

import numpy as np

from bench.dask_stage_profile import _run_ids
from bloomspan.sidecar.distributed import tasks
from bloomspan.sidecar.distributed.run_ids import run_ids_reference
from bloomspan.sidecar.distributed.shards import byte_ranges, read_jsonl_range


def test_the_profiles_run_ids_are_the_ranks_in_the_sorted_union(tmp_path):
    boiler = "subscribe to our newsletter for the latest news and offers from acme today"
    lines = [json.dumps({"id": f"d{i}", "text": f"page {i} says w{i} and v{i % 7}. {boiler} é{i % 3}"})
             for i in range(40)]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shards = [read_jsonl_range(str(path), a, b, "text", "id", k) for k, (a, b) in enumerate(byte_ranges(str(path), 3))]
    members = np.unique(np.concatenate([tasks.unit_filter([s], 4, 1, k).heavy for k, s in enumerate(shards)]))
    cut = [tasks.flagged_segments(s, members, 4, k, 2) for k, s in enumerate(shards)]
    want = run_ids_reference([c.used_strings for c in cut])
    got = _run_ids(shards, cut, 2)
    assert len(got) == len(want) == 3 and sum(len(w) for w in want) > 0
    for g, w in zip(got, want):
        assert np.array_equal(np.asarray(g, dtype=np.int64), np.asarray(w, dtype=np.int64))
