"""Which settings a service run (schedule, POST /runs, emerging boilerplate) takes from serve's
flags and which from the run it follows."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.run.mining_run import MineConfig
from bloomspan.sidecar.serve.mining_runs import mine_config_for
from bloomspan.sidecar.serve.state import ServeConfig, ServeConfigError


def test_a_service_run_keeps_the_sigma_and_min_length_of_the_run_it_follows():
    serve = ServeConfig(mine_index="crawl", template_index="tpl")  # no --sigma / --min-length given
    followed = mine_config_for(serve, {"sigma": 5, "min_length": 4, "engine": "fhk"})
    assert (followed.mining.sigma, followed.mining.min_length, followed.mining.engine) == (5, 4, "fhk")


def test_serves_own_sigma_and_min_length_win_when_given():
    serve = ServeConfig(mine_index="crawl", template_index="tpl", sigma=30, min_length=12)
    config = mine_config_for(serve, {"sigma": 5, "min_length": 4})
    assert (config.mining.sigma, config.mining.min_length) == (30, 12)


def test_with_no_run_to_follow_a_service_run_mines_with_mines_defaults():
    config = mine_config_for(ServeConfig(mine_index="crawl", template_index="tpl"))
    defaults = MineConfig.from_flags(index="crawl")
    assert (config.mining.sigma, config.mining.min_length) == (defaults.mining.sigma, defaults.mining.min_length)


def test_a_service_run_uses_serves_upstream_timeout():
    config = mine_config_for(ServeConfig(mine_index="crawl", template_index="tpl", upstream_timeout=300.0))
    assert config.cluster.timeout == 300.0


@pytest.mark.parametrize("field,value", [("sigma", 1), ("min_length", 0), ("upstream_timeout", 0.0)])
def test_serve_refuses_out_of_range_mining_settings_naming_the_field(field, value):
    with pytest.raises(ServeConfigError) as err:
        ServeConfig(**{field: value})
    assert field in str(err.value)
