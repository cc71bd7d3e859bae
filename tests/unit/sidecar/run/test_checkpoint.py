"""Checkpoint file and doc log: atomic saves, truncation back to the checkpoint on reopen."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.run.checkpoint import Checkpoint, DocLog, keys_array, write_json_atomic


def _meta(n, start=0):
    m = np.zeros((n, 5), dtype=np.int64)
    m[:, 0] = np.arange(start, start + n)
    m[:, 4] = np.arange(start, start + n)
    return m


def test_checkpoint_round_trip_and_atomic_replace(tmp_path):
    ck = Checkpoint(tmp_path / "run" / "checkpoint.json")
    assert ck.load() is None
    ck.save({"phase": "scan", "positions": {"i/0": 12}})
    ck.save({"phase": "publish"})
    assert ck.load() == {"phase": "publish"}
    assert not (tmp_path / "run" / "checkpoint.json.tmp").exists()


def test_checkpoint_rejects_garbage(tmp_path):
    (tmp_path / "c.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        Checkpoint(tmp_path / "c.json").load()


def test_write_json_atomic_keeps_old_file_when_tmp_is_left(tmp_path):
    p = tmp_path / "x.json"
    write_json_atomic(p, {"a": 1})
    (tmp_path / "x.json.tmp").write_text("half a fi")  # a crash while writing the next one
    assert json.loads(p.read_text()) == {"a": 1}


def test_doclog_appends_and_reads_back(tmp_path):
    log = DocLog(tmp_path, "scan")
    keys = ["b", "a", "ключ", "a:b/c"]
    log.append(keys, _meta(4))
    log.flush()
    assert log.counts == {"n": 4, "key_bytes": sum(len(k.encode()) for k in keys)}
    assert [k.decode() for k in log.keys().tolist()] == keys
    assert np.array_equal(log.meta(), _meta(4))
    log.close()


def test_doclog_reopen_truncates_to_checkpoint_counts(tmp_path):
    log = DocLog(tmp_path, "scan")
    log.append(["d0", "d1"], _meta(2))
    counts = log.counts  # the checkpoint was written here
    log.append(["d2-after-checkpoint"], _meta(1, 2))  # then the process was killed
    log.close()
    again = DocLog(tmp_path, "scan", counts)
    assert again.n == 2 and [k.decode() for k in again.keys().tolist()] == ["d0", "d1"]
    again.append(["d2"], _meta(1, 2))
    assert [k.decode() for k in again.keys().tolist()] == ["d0", "d1", "d2"]
    assert again.meta()[:, 0].tolist() == [0, 1, 2]
    again.close()


def test_doclog_detects_files_shorter_than_the_checkpoint(tmp_path):
    log = DocLog(tmp_path, "scan")
    log.append(["d0"], _meta(1))
    log.close()
    with pytest.raises(CheckpointError, match="damaged"):
        DocLog(tmp_path, "scan", {"n": 5, "key_bytes": 10})


def test_doclog_rejects_bad_meta_shape(tmp_path):
    with DocLog(tmp_path, "x") as log:
        with pytest.raises(ValueError, match="shape"):
            log.append(["a"], np.zeros((1, 3), dtype=np.int64))


def test_keys_array_orders_by_code_point():
    words = ["b", "a", "ä", "z", "A", "ab"]
    arr = keys_array([w.encode() for w in words])
    assert [k.decode() for k in np.sort(arr).tolist()] == sorted(words)
