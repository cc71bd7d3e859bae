"""Reading a live index: PIT + search_after per shard slice, the scroll fallback, positions that
survive a new point in time, bad documents classified, every PIT released."""
from __future__ import annotations

import pytest
from opensearchpy import helpers

from bloomspan.sidecar.cluster.scroll import SourceScan, fetch_by_ids, resolve_units
from bloomspan.sidecar.errors import ScanError, SourceIndexError
from bloomspan.sidecar.run.checkpoint import EMPTY, MISSING, NOT_TEXT, STORED

BAD = {"m1": {"title": "no text field"}, "m2": {"text": None}, "e1": {"text": ""}, "e2": {"text": "   "},
       "n1": {"text": 17}, "n2": {"text": {"nested": "object"}}, "l1": {"text": ["first value", "second"]}}


def _index(client, name, n=230, shards=3):
    client.indices.create(index=name, body={"settings": {"number_of_shards": shards, "number_of_replicas": 0},
                                            "mappings": {"properties": {"text": {"type": "text"},
                                                                        "ts": {"type": "date"}}}})
    docs = [{"_index": name, "_id": f"d{i:04d}", "_source": {"text": f"page {i} about kettles", "ts": 1_700_000_000_000 + i}}
            for i in range(n)]
    bad = []
    for k, src in BAD.items():  # an object in `text` needs a separate index: it would break the mapping
        if isinstance(src.get("text"), (dict, int)):
            continue
        bad.append({"_index": name, "_id": k, "_source": src})
    ok, errors = helpers.bulk(client, docs + bad, refresh=True)
    assert not errors
    return n + len(bad)


class Tracking:
    """The real client, recording created and deleted points in time."""

    def __init__(self, client):
        self._c, self.created, self.deleted = client, [], []

    def __getattr__(self, name):
        return getattr(self._c, name)

    def create_pit(self, *a, **kw):
        r = self._c.create_pit(*a, **kw)
        self.created.append(r["pit_id"])
        return r

    def delete_pit(self, *a, **kw):
        self.deleted.extend(kw["body"]["pit_id"])
        return self._c.delete_pit(*a, **kw)


def _read(scan):
    got = {}
    with scan:
        for page in scan.pages():
            for k, t, m in zip(page.keys, page.texts, page.meta.tolist()):
                assert k not in got, f"{k} read twice"
                got[k] = (m[3], t, m[0])
    return got


@pytest.mark.parametrize("mode", ["pit", "scroll"])
def test_every_document_once_with_reasons(os_client, index_prefix, mode):
    src = f"{index_prefix}src"
    total = _index(os_client, src)
    # a second index for the type-conflicting bad docs (text as object / number)
    other = f"{index_prefix}src-other"
    os_client.indices.create(index=other, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                                                "mappings": {"dynamic": False}})
    for k in ("n1", "n2"):
        os_client.index(index=other, id=k, body=BAD[k], refresh=True)
    indices, units = resolve_units(os_client, f"{index_prefix}src*")
    assert indices == [src, other] and len(units) == 4
    client = Tracking(os_client)
    got = _read(SourceScan(client, units, field="text", multi_index=True, batch_size=17, workers=2, mode=mode))
    assert len(got) == total + 2
    assert got[f"{src}:d0007"][:2] == (STORED, "page 7 about kettles")
    assert got[f"{src}:l1"][:2] == (STORED, "first value\nsecond")
    assert {k: got[f"{src}:{k}"][0] for k in ("m1", "m2", "e1", "e2")} == {"m1": MISSING, "m2": MISSING,
                                                                           "e1": EMPTY, "e2": EMPTY}
    assert got[f"{other}:n1"][0] == NOT_TEXT and got[f"{other}:n2"][0] == NOT_TEXT
    assert all(v[2] >= 0 for v in got.values())  # _seq_no came along
    if mode == "pit":
        assert len(client.created) == 2 and sorted(client.deleted) == sorted(client.created)
    else:
        assert client.created == []


def test_positions_resume_in_a_new_point_in_time(os_client, index_prefix):
    src = f"{index_prefix}src"
    total = _index(os_client, src, n=200, shards=2)
    _, units = resolve_units(os_client, src)
    positions, done, first = {}, [], {}
    scan = SourceScan(os_client, units, field="text", multi_index=False, batch_size=15, workers=1)
    with scan:
        for k, page in enumerate(scan.pages()):
            first.update(zip(page.keys, page.texts))
            positions[page.unit] = page.after
            if page.done:
                done.append(page.unit)
            if k == 4:
                break  # "killed" here: what was consumed is in `positions`
    assert scan.pit_ids == {}  # released on close even though we stopped early
    rest = _read(SourceScan(os_client, units, field="text", multi_index=False, batch_size=15, workers=2,
                            positions=positions, done=set(done)))
    assert not set(first) & set(rest)
    assert len(first) + len(rest) == total


def test_old_pit_is_reused_when_still_open(os_client, index_prefix):
    src = f"{index_prefix}src"
    _index(os_client, src, n=40, shards=1)
    _, units = resolve_units(os_client, src)
    pit = os_client.create_pit(index=src, keep_alive="1m")["pit_id"]
    os_client.index(index=src, id="late", body={"text": "added after the point in time"}, refresh=True)
    got = _read(SourceScan(os_client, units, field="text", multi_index=False, batch_size=10,
                           pit_ids={src: pit}))
    assert "late" not in got  # the snapshot of the saved PIT, not a new one


def test_listing_reads_versions_without_text(os_client, index_prefix):
    src = f"{index_prefix}src"
    _index(os_client, src, n=30, shards=2)
    _, units = resolve_units(os_client, src)
    got = _read(SourceScan(os_client, units, field=None, multi_index=False, ts_field="ts", batch_size=7))
    assert len(got) == 30 + 5 and all(t is None for _, t, _ in got.values())


def test_missing_index_and_failures_are_errors_with_names(os_client, index_prefix):
    with pytest.raises(SourceIndexError) as info:
        resolve_units(os_client, f"{index_prefix}absent")
    assert info.value.index == f"{index_prefix}absent" and info.value.field == "index"
    with pytest.raises(SourceIndexError):
        resolve_units(os_client, f"{index_prefix}absent*")
    src = f"{index_prefix}src"
    _index(os_client, src, n=10, shards=1)
    _, units = resolve_units(os_client, src)

    class Broken(Tracking):
        def search(self, *a, **kw):
            raise ConnectionError("node went away")

    client = Broken(os_client)
    with pytest.raises(ScanError) as info:
        _read(SourceScan(client, units, field="text", multi_index=False))
    assert info.value.item == f"{src}/0" and "node went away" in str(info.value)
    assert sorted(client.deleted) == sorted(client.created) and client.created


def test_fetch_by_ids_skips_deleted(os_client, index_prefix):
    src = f"{index_prefix}src"
    _index(os_client, src, n=10, shards=2)
    os_client.delete(index=src, id="d0003", refresh=True)
    keys, texts, meta = fetch_by_ids(os_client, src, ["d0001", "d0003", "e1"], "text", "ts", False)
    assert sorted(keys) == ["d0001", "e1"]
    assert dict(zip(keys, meta[:, 3].tolist())) == {"d0001": STORED, "e1": EMPTY}
