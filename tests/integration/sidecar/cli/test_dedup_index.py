"""Paragraph dedup over a live index on the real node: into a new index, or marking the source
documents (--annotate), compared with a set-based oracle; version guards; the CLI."""
from __future__ import annotations

import random

import pytest
from click.testing import CliRunner
from opensearchpy import helpers

from bloomspan.ingest.companions.paragraph_dedup import paragraph_spans, paragraphs
from bloomspan.sidecar.cli.companion import COMMANDS
from bloomspan.sidecar.cli.dedup_index import DedupIndexError, dedup_index
from bloomspan.sidecar.cli.failures import BloomspanGroup

# the CLI's own group class: a library error is one line, as the installed command prints it
cli = BloomspanGroup("bloomspan", commands={c.name: c for c in COMMANDS})


def corpus(seed: int, n: int = 120) -> list[dict]:
    rng = random.Random(seed)
    pool = [f"Shared paragraph {i}: {' '.join(rng.choice('klmnop') for _ in range(4))}." for i in range(30)]
    docs = []
    for i in range(n):
        paras = [rng.choice(pool) if rng.random() < 0.45 else f"Own words {i}.{j}." for j in range(rng.randint(1, 5))]
        docs.append({"seq": i, "text": rng.choice(["\n\n", "\n \n"]).join(paras), "site": f"s{i % 3}"})
    return docs


def oracle(docs: list[dict]) -> dict[str, list[int] | None]:
    """id -> indices of the removed paragraphs (None: the document is dropped)."""
    seen: set[str] = set()
    out = {}
    for d in docs:
        paras = paragraphs(d["text"])
        removed = [j for j, p in enumerate(paras) if p in seen or seen.add(p)]
        out[str(d["seq"])] = None if paras and len(removed) == len(paras) else removed
    return out


@pytest.fixture
def source(os_client, index_prefix):
    index = f"{index_prefix}src"
    os_client.indices.create(index=index, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0},
                                                "mappings": {"properties": {"seq": {"type": "integer"},
                                                                            "text": {"type": "text"},
                                                                            "site": {"type": "keyword"}}}})
    docs = corpus(7)
    helpers.bulk(os_client, ({"_index": index, "_id": str(d["seq"]), "_source": d} for d in docs), refresh=True)
    return index, docs


def all_docs(client, index) -> dict[str, dict]:
    return {h["_id"]: h["_source"] for h in helpers.scan(client, index=index, query={"query": {"match_all": {}}})}


@pytest.mark.parametrize("b", [0.1, 10.0])
def test_into_a_new_index_equals_the_oracle(os_client, index_prefix, source, b):
    index, docs = source
    dest = f"{index_prefix}dst"
    summary = dedup_index(os_client, index, "text", b, dest_index=dest, sort="seq", batch_size=37)
    want = oracle(docs)
    got = all_docs(os_client, dest)
    assert set(got) == {i for i, r in want.items() if r is not None}
    for d in docs:
        i = str(d["seq"])
        if want[i] is None:
            continue
        if not want[i]:
            assert got[i] == d  # untouched, every field as it was
        else:
            kept = [p for j, p in enumerate(paragraphs(d["text"])) if j not in want[i]]
            assert got[i]["text"] == "\n\n".join(kept) and got[i]["site"] == d["site"]
    assert summary.written == len(got) and summary.failed == 0
    assert summary.stats.documents_dropped == sum(r is None for r in want.values())
    mapping = os_client.indices.get_mapping(index=dest)[dest]["mappings"]["properties"]
    assert mapping["seq"] == {"type": "integer"} and mapping["site"] == {"type": "keyword"}
    if b == 0.1:
        assert summary.stats.false_positives > 0
    with pytest.raises(DedupIndexError, match="already exists"):
        dedup_index(os_client, index, "text", b, dest_index=dest)


def test_annotate_marks_duplicate_paragraphs_and_resets_stale_marks(os_client, source):
    index, docs = source
    summary = dedup_index(os_client, index, "text", 1.0, annotate=True, sort="seq")
    want = oracle(docs)
    got = all_docs(os_client, index)
    marked = 0
    for d in docs:
        i = str(d["seq"])
        removed = list(range(len(paragraphs(d["text"])))) if want[i] is None else want[i]
        meta = got[i].get("bloomspan")
        if not removed:
            assert meta is None
            continue
        marked += 1
        spans = paragraph_spans(d["text"])
        assert meta == {"duplicate_paragraphs": len(removed), "duplicate_spans": [list(spans[j]) for j in removed]}
        assert got[i]["text"] == d["text"]  # the source text is never changed
    assert summary.updated == marked > 0 and summary.reset == 0 and summary.conflicts == 0
    # Delete every earlier copy of document 1's paragraphs: a second run resets marks that went stale.
    first_dup = next(d for d in docs if want[str(d["seq"])])
    dup_paras = {paragraphs(first_dup["text"])[j] for j in want[str(first_dup["seq"])] or []}
    earlier = [d for d in docs if d["seq"] < first_dup["seq"] and dup_paras & set(paragraphs(d["text"]))]
    for d in earlier:
        os_client.delete(index=index, id=str(d["seq"]), refresh=True)
    again = dedup_index(os_client, index, "text", 1.0, annotate=True, sort="seq")
    assert again.reset >= 1
    assert os_client.get(index=index, id=str(first_dup["seq"]))["_source"]["bloomspan"]["duplicate_paragraphs"] == 0


class ChangesDocBeforeFirstBulk:
    """The real client, except that a crawler rewrites one document just before our first bulk."""

    def __init__(self, client, index, doc_id):
        self._client, self._index, self._doc_id, self._done = client, index, doc_id, False

    def __getattr__(self, name):
        return getattr(self._client, name)

    def bulk(self, *args, **kwargs):
        if not self._done:
            self._done = True
            self._client.index(index=self._index, id=self._doc_id, body={"seq": -1, "text": "Rewritten."}, refresh=True)
        return self._client.bulk(*args, **kwargs)


def test_annotate_does_not_overwrite_a_document_changed_since_it_was_read(os_client, source):
    index, docs = source
    want = oracle(docs)
    victim = next(i for i, r in want.items() if r)
    summary = dedup_index(ChangesDocBeforeFirstBulk(os_client, index, victim), index, "text", 10.0, annotate=True,
                          sort="seq")
    assert summary.conflicts == 1 and summary.failed == 0
    assert os_client.get(index=index, id=victim)["_source"] == {"seq": -1, "text": "Rewritten."}


def test_cli_index_mode(os_client, opensearch_url, index_prefix, source):
    index, docs = source
    res = CliRunner().invoke(cli, ["dedup", "--url", opensearch_url, "--index", index, "--dest-index",
                                   f"{index_prefix}cli", "--sort", "seq", "--bloom-bytes-per-item", "2"])
    assert res.exit_code == 0, res.output
    kept = sum(r is not None for r in oracle(docs).values())
    assert f"{len(docs)} documents in, {kept} out" in res.output and f"{kept} written" in res.output
    assert os_client.count(index=f"{index_prefix}cli")["count"] == kept
    res = CliRunner().invoke(cli, ["dedup", "--url", opensearch_url, "--index", f"{index_prefix}missing", "--annotate"])
    assert res.exit_code == 1 and "no such index" in res.output and "Traceback" not in res.output
