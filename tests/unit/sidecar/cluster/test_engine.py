"""Engine detection from the answers each engine really gives, and the mapping fallback.

The answers below are the shapes recorded from OpenSearch 2.19.6, Elasticsearch 8.17.0 (its
integ-test zip: ``GET /`` is 405, no mapper-extras) and Elasticsearch 7.17.9.
"""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, strategies as st

from bloomspan.mappings import load
from bloomspan.sidecar.cluster.engine import (
    ELASTICSEARCH,
    OPENSEARCH,
    RANK_FEATURE_FALLBACK,
    ClusterEngine,
    engine_from_answers,
    parse_version,
)

OS_ROOT = {"name": "n", "cluster_name": "c", "version": {"distribution": "opensearch", "number": "2.19.6"},
           "tagline": "The OpenSearch Project: https://opensearch.org/"}
ES7_ROOT = {"name": "n", "version": {"number": "7.17.9", "build_flavor": "default"}, "tagline": "You Know, for Search"}


def nodes(version: str, *modules: str, processors: tuple[str, ...] | None = None) -> dict:
    node: dict = {"version": version, "modules": [{"name": m} for m in modules]}
    if processors is not None:
        node["ingest"] = {"processors": [{"type": p} for p in processors]}
    return {"nodes": {"abc": node}}


def test_opensearch_is_told_by_its_distribution_field():
    engine = engine_from_answers(OS_ROOT, {"content-type": "application/json"},
                                 nodes("2.19.6", "mapper-extras", "lang-painless", processors=("gsub", "script")))
    assert (engine.product, engine.version, engine.name) == (OPENSEARCH, (2, 19, 6), "OpenSearch 2.19.6")
    assert engine.has_pit and engine.has_rank_feature
    assert engine.missing_processors(["gsub", "script"]) == []


def test_elasticsearch_without_a_root_handler_is_told_by_its_product_header_and_nodes_info():
    engine = engine_from_answers(None, {"X-elastic-product": "Elasticsearch"},
                                 nodes("8.17.0", "transport-netty4", "x-pack-core", processors=("set_security_user",)))
    assert (engine.product, engine.version) == (ELASTICSEARCH, (8, 17, 0))
    assert engine.is_elasticsearch and engine.has_pit
    assert not engine.has_rank_feature
    assert engine.missing_processors(["gsub", "script"]) == ["gsub", "script"]


def test_elasticsearch_7_answers_the_root_without_a_distribution():
    engine = engine_from_answers(ES7_ROOT, {"X-elastic-product": "Elasticsearch"}, nodes("7.17.9", "mapper-extras"))
    assert (engine.product, engine.version, engine.has_rank_feature) == (ELASTICSEARCH, (7, 17, 9), True)


def test_unknown_modules_assume_every_capability():
    engine = engine_from_answers(OS_ROOT, {}, None)
    assert engine.modules is None and engine.has_rank_feature and engine.missing_processors(["gsub"]) == []


def test_point_in_time_needs_opensearch_2_4_or_elasticsearch_7_10():
    assert not ClusterEngine(OPENSEARCH, (2, 3, 0)).has_pit
    assert ClusterEngine(OPENSEARCH, (2, 4, 0)).has_pit
    assert not ClusterEngine(ELASTICSEARCH, (7, 9, 3)).has_pit
    assert ClusterEngine(ELASTICSEARCH, (7, 10, 0)).has_pit


def test_an_answer_without_any_version_is_refused():
    with pytest.raises(ValueError, match="version"):
        engine_from_answers(None, {}, {"nodes": {}})


def test_an_unknown_product_is_refused():
    with pytest.raises(ValueError, match="product"):
        ClusterEngine("solr", (9, 0, 0))


@pytest.mark.parametrize("text, expected", [("8.17.0", (8, 17, 0)), ("3.0.0-beta1", (3, 0, 0)),
                                            ("7.17.9-SNAPSHOT", (7, 17, 9)), ("2.19", (2, 19, 0))])
def test_parse_version(text, expected):
    assert parse_version(text) == expected


def test_documents_mapping_falls_back_to_float_without_mapper_extras_and_is_untouched_with_it():
    mappings = load("documents")["template"]["mappings"]
    before = copy.deepcopy(mappings)
    without = ClusterEngine(ELASTICSEARCH, (8, 17, 0), frozenset({"x-pack-core"})).adapt_mappings(mappings)
    assert mappings == before  # the input is not changed
    ratio = without["properties"]["bloomspan"]["properties"]
    assert ratio["boilerplate_ratio"] == {"type": RANK_FEATURE_FALLBACK}
    assert ratio["clean_ratio"] == {"type": RANK_FEATURE_FALLBACK}
    assert ratio["fingerprint"] == before["properties"]["bloomspan"]["properties"]["fingerprint"]
    with_module = ClusterEngine(ELASTICSEARCH, (7, 17, 9), frozenset({"mapper-extras"})).adapt_mappings(mappings)
    assert with_module == before


def _field_types(node) -> list[str]:
    out = []
    for spec in (node.get("properties") or {}).values():
        if "type" in spec:
            out.append(spec["type"])
        out.extend(_field_types(spec))
    return out


mapping_trees = st.recursive(
    st.sampled_from([{"type": "rank_feature"}, {"type": "rank_feature", "positive_score_impact": False},
                     {"type": "text"}, {"type": "keyword"}, {"type": "float"}]),
    lambda children: st.dictionaries(st.sampled_from("abcde"), children, min_size=1, max_size=3).map(
        lambda props: {"properties": props}),
    max_leaves=12)


@given(mapping_trees)
def test_fallback_replaces_exactly_the_rank_features(tree):
    tree = {"properties": {"root": tree}}
    out = ClusterEngine(ELASTICSEARCH, (8, 17, 0), frozenset()).adapt_mappings(tree)
    before, after = _field_types(tree), _field_types(out)
    assert "rank_feature" not in after
    assert len(before) == len(after)
    assert after == [RANK_FEATURE_FALLBACK if t == "rank_feature" else t for t in before]
