"""The run's state machine: the transition table, and checkpoints of this version read back
(any other version is refused with the fix)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.run.run_state import (
    FIRST_PHASE,
    TRANSITIONS,
    VERSION,
    Phase,
    RunState,
    check_transition,
    first_phase,
)

PATH = Path("/work/run/checkpoint.json")

# A checkpoint taken mid-fetch of an incremental run.
SAVED = {
    "format": "bloomspan-run", "version": VERSION, "source": {"url": "http://127.0.0.1:9200", "index": "crawl", "field": "text",
                                          "timestamp_field": None},
    "template_index": "bloomspan-templates", "annotate": False, "run_id": "20261201t100000000-abcd",
    "holder": "host-1-abc", "started_at": "2026-12-01T10:00:00.000+00:00", "kind": "incremental",
    "base": "snapshots/20261130t100000000-dcba", "phase": "fetch", "indices": ["crawl"],
    "units": [["crawl", 0, 2], ["crawl", 1, 2]], "scan_mode": "pit", "seconds": {"list": 1.5},
    "counts": {"incremental": {"new": 3}},
    "list": {"doclog": {"n": 10, "key_bytes": 120}, "positions": {}, "done": ["crawl/0", "crawl/1"]},
    "fetch": {"doclog": {"n": 2, "key_bytes": 24}}, "executor": "local",
}


def reachable(start: Phase) -> set[Phase]:
    seen, todo = set(), [start]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(TRANSITIONS[p])
    return seen


def test_every_phase_is_in_the_table_and_both_kinds_end_done():
    assert set(TRANSITIONS) == set(Phase)
    assert reachable(FIRST_PHASE["full"]) | reachable(FIRST_PHASE["incremental"]) == set(Phase)
    # a Dask run starts at the mine phase (its workers read) and skips the reading phases
    assert first_phase("full", "dask") is Phase.MINE and first_phase("full", "local") is Phase.SCAN
    assert not {Phase.SCAN, Phase.LIST, Phase.FETCH, Phase.ASSEMBLE} & reachable(Phase.MINE)
    assert Phase.FETCH not in reachable(Phase.SCAN) and Phase.SCAN not in reachable(Phase.LIST)
    assert TRANSITIONS[Phase.DONE] == frozenset()
    for p in Phase:
        assert Phase.DONE in reachable(p)


def test_a_move_outside_the_table_is_refused():
    assert check_transition(Phase.PUBLISH, Phase.ANNOTATE) is Phase.ANNOTATE
    with pytest.raises(ValueError, match="phase scan cannot be followed by publish"):
        check_transition(Phase.SCAN, Phase.PUBLISH)
    state = RunState.from_checkpoint(dict(SAVED), PATH)
    with pytest.raises(ValueError, match="fetch cannot be followed by done"):
        state.advance(Phase.DONE)
    state.advance(Phase.ASSEMBLE)
    assert state.phase is Phase.ASSEMBLE


def test_a_checkpoint_resumes_with_the_same_content():
    state = RunState.from_checkpoint(json.loads(json.dumps(SAVED)), PATH)
    assert state.phase is Phase.FETCH and state.listing["doclog"] == {"n": 10, "key_bytes": 120}
    assert state.section("list") is state.listing and state.scan is None
    assert state.to_checkpoint() == SAVED


def test_sections_start_empty_and_are_saved_once_used():
    state = RunState.from_checkpoint({**SAVED, "phase": "list", "fetch": None}, PATH)
    assert "fetch" not in state.to_checkpoint()
    state.section("fetch")["doclog"] = {"n": 1, "key_bytes": 3}
    assert state.to_checkpoint()["fetch"] == {"doclog": {"n": 1, "key_bytes": 3}}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.sampled_from(list(Phase)), st.sampled_from(["full", "incremental"]),
       st.none() | st.text(min_size=1, max_size=8), st.booleans())
def test_checkpoint_round_trip(phase, kind, swap, annotate):
    data = {**SAVED, "phase": str(phase), "kind": kind, "annotate": annotate, "version": VERSION}
    if swap is not None:
        data["swap_started"] = swap
    back = RunState.from_checkpoint(json.loads(json.dumps(data)), PATH).to_checkpoint()
    assert back == data and json.loads(json.dumps(back)) == data


@pytest.mark.parametrize("change, message", [
    ({"version": VERSION + 1}, f"checkpoint version {VERSION + 1}, this bloomspan reads {VERSION}"),
    ({"version": VERSION - 1}, f"checkpoint version {VERSION - 1}, this bloomspan reads {VERSION}"),
    ({"version": "3"}, "checkpoint version '3'"),
    ({"format": "something-else"}, "not a bloomspan run checkpoint"),
    ({"phase": "grow"}, "unknown phase 'grow'"),
    ({"kind": "partial"}, "kind='partial'"),
    ({"executor": "spark"}, "executor='spark'"),
])
def test_checkpoints_this_version_cannot_resume_are_refused_with_the_fix(change, message):
    data = {**SAVED, **change}
    with pytest.raises(CheckpointError) as info:
        RunState.from_checkpoint(data, PATH)
    text = str(info.value)
    assert message in text and str(PATH) in text and f"delete {PATH.parent}" in text and "\n" not in text


def test_a_checkpoint_missing_a_field_names_it():
    data = {k: v for k, v in SAVED.items() if k not in ("units", "scan_mode")}
    with pytest.raises(CheckpointError, match="lacks units, scan_mode"):
        RunState.from_checkpoint(data, PATH)
