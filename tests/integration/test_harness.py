"""Proves the harness is real: a template from mappings/, helpers.bulk, PIT + search_after."""
from __future__ import annotations

from opensearchpy import helpers

from bloomspan.mappings import index_template


def test_node_answers_with_a_version(os_client):
    info = os_client.info()
    assert info["version"]["number"].split(".")[0] in {"2", "3"}
    assert os_client.cluster.health(wait_for_status="yellow")["status"] in {"yellow", "green"}


def test_template_bulk_and_pit_search_after(os_client, index_prefix):
    os_client.indices.put_index_template(
        name=f"{index_prefix}docs", body=index_template("documents", [f"{index_prefix}docs*"]))
    index = f"{index_prefix}docs"
    docs = [{"_index": index, "_id": f"d{i}", "_source": {"text": f"page {i} © 2024 Acme", "n": i,
             "bloomspan": {"boilerplate_ratio": 0.1 + i / 1000}}} for i in range(250)]
    ok, errors = helpers.bulk(os_client, docs, refresh=True)
    assert ok == 250 and not errors
    mapping = os_client.indices.get_mapping(index=index)[index]["mappings"]["properties"]
    assert mapping["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == "rank_feature"

    pit = os_client.create_pit(index=index, keep_alive="1m")["pit_id"]
    seen: list[int] = []
    try:
        after = None
        while True:
            body = {"size": 40, "pit": {"id": pit, "keep_alive": "1m"}, "sort": [{"n": "asc"}],
                    "_source": ["n"]}
            if after is not None:
                body["search_after"] = after
            hits = os_client.search(body=body)["hits"]["hits"]
            if not hits:
                break
            seen.extend(h["_source"]["n"] for h in hits)
            after = hits[-1]["sort"]
    finally:
        os_client.delete_pit(body={"pit_id": [pit]})
    assert seen == list(range(250))

    # rank_feature down-weights cluttered pages: the least cluttered document ranks first.
    res = os_client.search(index=index, body={"query": {"bool": {
        "must": {"match": {"text": "acme"}},
        "should": {"rank_feature": {"field": "bloomspan.boilerplate_ratio"}}}}, "size": 1})
    assert res["hits"]["hits"][0]["_id"] == "d0"
    os_client.indices.delete(index=index)
    assert not os_client.indices.exists(index=index)
