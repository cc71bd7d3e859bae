"""MineConfig: every field validated with its name, secrets hidden; run ids and names."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.publish.template_index import new_run_id, physical_name, run_id_of
from bloomspan.sidecar.run.mining_run import MineConfig, RunSummary


@pytest.mark.parametrize("kwargs, field", [
    ({"index": ""}, "scan.index"),
    ({"sigma": 1}, "mining.sigma"),
    ({"min_length": 1}, "mining.min_length"),
    ({"engine": "magic"}, "mining.engine"),
    ({"filter_bytes": 0}, "mining.filter_bytes"),
    ({"batch_size": 0}, "scan.batch_size"),
    ({"batch_size": 10_001}, "scan.batch_size"),
    ({"slices": 0}, "scan.slices"),
    ({"keep_runs": 0}, "publish.keep_runs"),
    ({"template_index": "Upper"}, "publish.template_index"),
    ({"template_index": "a*b"}, "publish.template_index"),
    ({"template_index": "-x"}, "publish.template_index"),
    ({"scan_mode": "fast"}, "scan.scan_mode"),
    ({"lease_ttl": 0}, "publish.lease_ttl"),
    ({"url": "nope"}, "cluster.url"),
    ({"password": "pw"}, "cluster.password"),
    ({"allow_empty": "yes"}, "publish.allow_empty"),
])
def test_invalid_fields_are_named(kwargs, field):
    with pytest.raises(ClusterConfigError) as info:
        MineConfig.from_flags(**{"index": "src", **kwargs})
    assert info.value.field == field


def test_repr_and_params_hide_secrets():
    c = MineConfig.from_flags(index="src", url="https://node:9200", username="u", password="hunter2-secret")
    assert "hunter2-secret" not in repr(c)
    assert "hunter2-secret" not in str(c.params()) and c.params()["auth"] == "basic"
    k = MineConfig.from_flags(index="src", url="https://node:9200", api_key="KEY-SECRET-123")
    assert "KEY-SECRET-123" not in repr(k) and "KEY-SECRET-123" not in str(k.source_fingerprint())


def test_run_ids_sort_by_time_and_name_physical_indices():
    a, b = new_run_id(1_700_000_000.0), new_run_id(1_700_000_000.5)
    assert a < b and a.startswith("20231114t221320000-")
    assert run_id_of("tpl", physical_name("tpl", a)) == a
    assert run_id_of("tpl", "tpl-lease") is None and run_id_of("tpl", f"tpl-x-{a}") is None


def test_run_summary_as_dict_has_the_metrics_keys():
    s = RunSummary(run_id="r", physical_index="t-r", template_index="t", kind="full", resumed=False, docs_seen=5,
                   docs_mined=4, docs_skipped=1, skipped_by_reason={"missing": 1}, tokens_mined=10, covered_tokens=3,
                   covered_share=0.3, phrases=2)
    d = s.as_dict()
    assert (d["docs_mined"], d["tokens_mined"], d["phrases"], d["covered_share"]) == (4, 10, 2, 0.3)


def test_a_service_run_keeps_serves_flags_and_follows_the_previous_run_for_the_rest():
    from bloomspan.sidecar.serve.mining_runs import mine_config_for
    from bloomspan.sidecar.serve.state import ServeConfig

    serve = ServeConfig(mine_index="crawl", mine_field="body", sigma=7, min_length=4, template_index="tpl",
                        work_dir="/tmp/w")
    previous = {"templates": True, "site_field": "site", "url_field": "url", "engine": "fhk", "keep_runs": 5,
                "template_config": {"skeleton": {"site_echo_length": 6}}}
    config = mine_config_for(serve, previous)
    assert (config.scan.index, config.scan.field, config.mining.sigma, config.mining.min_length,
            config.publish.template_index) == \
        ("crawl", "body", 7, 4, "tpl")
    assert (config.templates.enabled, config.templates.site_field, config.templates.url_field, config.mining.engine,
            config.publish.keep_runs) == \
        (True, "site", "url", "fhk", 5)
    assert config.templates.detector_config().skeleton.site_echo_length == 6
    bare = mine_config_for(serve)
    assert (bare.templates.enabled, bare.templates.site_field, bare.templates.url_field) == (False, None, None)


def test_the_detector_runs_by_default_whenever_a_site_or_url_field_is_given():
    assert MineConfig.from_flags(index="src").templates.enabled is False
    assert MineConfig.from_flags(index="src", site_field="site").templates.enabled is True
    assert MineConfig.from_flags(index="src", url_field="url").templates.enabled is True
    assert MineConfig.from_flags(index="src", site_field="site", templates=False).templates.enabled is False
    assert MineConfig.from_flags(index="src", site_field="site").params()["templates"] is True  # recorded: serve follows it


def test_a_first_service_run_takes_site_and_url_from_serves_cleaning_fields():
    from bloomspan.sidecar.serve.mining_runs import mine_config_for
    from bloomspan.sidecar.serve.state import ServeConfig

    serve = ServeConfig(mine_index="crawl", template_index="tpl", scope_field="site", url_field="url")
    first = mine_config_for(serve)
    assert (first.templates.enabled, first.templates.site_field, first.templates.url_field) == (True, "site", "url")
    # a run to follow wins, even one mined without the detector
    follows = mine_config_for(serve, {"engine": "fhk", "templates": False})
    assert (follows.templates.enabled, follows.templates.site_field, follows.mining.engine) == (False, None, "fhk")
