"""Mappings where cleaned documents land: setup / serve install a composable template for the
clean-index patterns, existing indices get the fields, nothing goes to _all, and the README's
queries work on an index the proxy itself created."""
from __future__ import annotations

import json

import pytest
from opensearchpy import OpenSearch, helpers

from bloomspan.sidecar.publish.clean_index_template import install_clean_templates, install_for_serve, template_name
from bloomspan.sidecar.serve.service import create_app
from bloomspan.sidecar.serve.state import ServeConfig
from tests.support.service_thread import serve_in_thread

COOKIE = "we use cookies to improve your experience on our website"
FOOTER = "all rights reserved by acme corporation"
NAV = "home products support contact us"


@pytest.fixture
def clean_templates(os_client, index_prefix):
    """Deletes the clean-index templates (index and component) made for this test's patterns."""
    yield
    for name in (f"bloomspan-clean-{index_prefix}*", f"{index_prefix}*"):  # the users' ones compose ours
        for template in os_client.indices.get_index_template(name=name, ignore=[404]).get("index_templates", []):
            os_client.indices.delete_index_template(name=template["name"])
    for template in os_client.cluster.get_component_template(name=f"bloomspan-clean-{index_prefix}*",
                                                             ignore=[404]).get("component_templates", []):
        os_client.cluster.delete_component_template(name=template["name"])


def _bloomspan_props(os_client, index):
    return os_client.indices.get_mapping(index=index)[index]["mappings"].get("properties", {})


def test_a_pattern_without_indices_installs_the_template_and_touches_no_index(os_client, index_prefix,
                                                                              clean_templates):
    bystander = f"{index_prefix}other"
    os_client.indices.create(index=bystander, body={"mappings": {"properties": {"text": {"type": "text"}}}})
    pattern = f"{index_prefix}crawl-*"
    report = install_clean_templates(os_client, [pattern], ["text"])
    assert report.problems == []
    assert f"no index matches {pattern} yet: new ones get the fields from the template" in report.lines
    assert "bloomspan" not in _bloomspan_props(os_client, bystander)  # no PUT /_all/_mapping
    body = os_client.indices.get_index_template(name=template_name(pattern))["index_templates"][0]["index_template"]
    assert body["index_patterns"] == [pattern] and body["composed_of"] == [template_name(pattern)]
    assert body["priority"] == 0
    os_client.indices.create(index=f"{index_prefix}crawl-1")
    props = _bloomspan_props(os_client, f"{index_prefix}crawl-1")
    assert props["bloomspan"]["properties"]["boilerplate_ratio"] == {"type": "rank_feature",
                                                                     "positive_score_impact": False}
    assert props["bloomspan"]["properties"]["fingerprint"]["type"] == "binary"
    assert props["text_clean"]["type"] == "text"


def test_existing_indices_get_the_fields_with_the_source_analyzer(os_client, index_prefix, clean_templates):
    index = f"{index_prefix}crawl-old"
    os_client.indices.create(index=index, body={"mappings": {"properties": {
        "text": {"type": "text", "analyzer": "english"}}}})
    report = install_clean_templates(os_client, [f"{index_prefix}crawl-*"], ["text"])
    assert f"bloomspan fields -> {index}" in report.lines and report.problems == []
    props = _bloomspan_props(os_client, index)
    assert props["text_clean"] == {"type": "text", "analyzer": "english"}
    assert props["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == "rank_feature"


def test_a_users_overlapping_template_is_left_alone_and_a_conflict_is_reported(os_client, index_prefix,
                                                                               clean_templates):
    theirs = f"{index_prefix}theirs"
    os_client.indices.put_index_template(name=theirs, body={"index_patterns": [f"{index_prefix}crawl-2024-*"],
                                                            "priority": 5,
                                                            "template": {"settings": {"number_of_shards": 3}}})
    dynamic = f"{index_prefix}crawl-dyn"
    os_client.index(index=dynamic, body={"bloomspan": {"boilerplate_ratio": 0.5}}, refresh=True)  # a float now
    pattern = f"{index_prefix}crawl-*"
    report = install_clean_templates(os_client, [pattern], ["text"])
    assert any(p.startswith(f"index template for {pattern} NOT installed: your index template(s) {theirs}")
               and f'"composed_of": ["{template_name(pattern)}"]' in p for p in report.problems), report.problems
    assert any(p.startswith(f"bloomspan fields NOT added to {dynamic}:") for p in report.problems)
    assert not os_client.indices.exists_index_template(name=template_name(pattern))
    # composing the component into their template, as the message says, merges the fields in
    os_client.indices.put_index_template(name=theirs, body={"index_patterns": [f"{index_prefix}crawl-2024-*"],
                                                            "priority": 5, "composed_of": [template_name(pattern)],
                                                            "template": {"settings": {"number_of_shards": 3}}})
    os_client.indices.create(index=f"{index_prefix}crawl-2024-01")
    settings = os_client.indices.get_settings(index=f"{index_prefix}crawl-2024-01")
    assert settings[f"{index_prefix}crawl-2024-01"]["settings"]["index"]["number_of_shards"] == "3"
    props = _bloomspan_props(os_client, f"{index_prefix}crawl-2024-01")
    assert props["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == "rank_feature"


def test_setup_cli_reports_and_exits_non_zero_when_something_is_not_installed(os_client, index_prefix,
                                                                              opensearch_url, clean_templates):
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.cluster import cluster_cli

    os_client.index(index=f"{index_prefix}crawl-dyn", body={"bloomspan": {"fingerprint": "not binary"}}, refresh=True)
    args = ["setup", "--url", opensearch_url, "--template-index", f"{index_prefix}tpl", "--lease-index",
            f"{index_prefix}lease", "--clean-index", f"{index_prefix}crawl-*"]
    result = CliRunner().invoke(cluster_cli, args)
    assert result.exit_code == 1
    assert f"not installed: bloomspan fields NOT added to {index_prefix}crawl-dyn" in result.output
    assert f"installed index template {template_name(f'{index_prefix}crawl-*')}" in result.output


def _pages():
    body = "Wireless headphones with great sound and a long battery life."
    return [
        ("clutter-high", f"{NAV}.\n\n{COOKIE}.\n\n{body}\n\n{FOOTER}. {COOKIE}."),
        ("clean", body),
        ("clutter-low", f"{body}\n\n{FOOTER}."),
    ]


def test_pages_written_through_the_proxy_into_a_new_index_answer_the_readme_queries(
        opensearch_url, os_client, index_prefix, tmp_path, clean_templates):
    phrases = tmp_path / "phrases.jsonl"
    phrases.write_text("".join(json.dumps({"text": p, "tokens": p.split(), "length": len(p.split()), "df": 50}) + "\n"
                               for p in (COOKIE, FOOTER, NAV)))
    pattern = f"{index_prefix}crawl-*"
    index = f"{index_prefix}crawl-2025"
    config = ServeConfig(upstream_url=opensearch_url, clean_indices=(pattern,), phrases_path=str(phrases),
                         mode="downweight", fields=("text",))
    install_for_serve(config)  # what `bloomspan serve` does at startup
    with serve_in_thread(create_app(config)) as (url, _loop):
        client = OpenSearch(hosts=[url], timeout=60)
        ok, errors = helpers.bulk(client, ({"_index": index, "_id": i, "_source": {"text": t}} for i, t in _pages()),
                                  refresh=True)
        assert ok == 3 and not errors
    clean = os_client.get(index=index, id="clean")["_source"]
    assert clean["bloomspan"]["boilerplate_ratio"] == 1e-4 and clean["text_clean"] == clean["text"]
    props = _bloomspan_props(os_client, index)
    assert props["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == "rank_feature"
    feature = {"rank_feature": {"field": "bloomspan.boilerplate_ratio", "saturation": {"pivot": 0.1}}}
    alone = os_client.search(index=index, body={"query": feature})["hits"]["hits"]
    assert [h["_id"] for h in alone] == ["clean", "clutter-low", "clutter-high"]
    readme = {"query": {"bool": {"must": {"match": {"text_clean": "wireless headphones"}}, "should": feature}}}
    hits = os_client.search(index=index, body=readme)["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["clean", "clutter-low", "clutter-high"]
