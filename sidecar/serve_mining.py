"""Mining runs started by `bloomspan serve` (schedule, POST /runs, emerging boilerplate)."""
from __future__ import annotations

import logging

from bloomspan.sidecar.service_state import ServeConfig

log = logging.getLogger(__name__)


def mine_config_for(config: ServeConfig):
    """The cluster mining configuration a service run uses (the sidecar's own credentials)."""
    from bloomspan.sidecar.mining_run import MineConfig

    return MineConfig(index=config.mine_index, url=config.upstream_url, field=config.mine_field, sigma=config.sigma,
                      min_length=config.min_length, template_index=config.template_index or "bloomspan-templates",
                      work_dir=config.work_dir, username=config.username, password=config.password,
                      api_key=config.api_key, ca_certs=config.ca_certs, verify_certs=config.verify_certs,
                      lease_index=config.lease_index)


def mine_for_service(config: ServeConfig) -> dict:
    """One cluster mining run. Another replica holding the lease is not a failure: the
    summary says ``skipped`` and names the holder."""
    from bloomspan.sidecar.errors import LeaseHeldError
    from bloomspan.sidecar.mining_run import run_mining

    if not config.mine_index:
        raise ValueError("mine_index is not set: start serve with --mine-index to mine on demand")
    try:
        summary = run_mining(mine_config_for(config))
    except LeaseHeldError as exc:
        log.info("mining skipped: lease held elsewhere (%s)", exc)
        return {"skipped": True, "reason": str(exc)}
    return summary.as_dict()
