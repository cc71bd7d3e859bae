"""Mining runs started by `bloomspan serve` (schedule, POST /runs, emerging boilerplate).

A service run follows the run it replaces: the settings ``serve`` has flags for come from
``serve`` (source index and field, connection, work directory, lease; ``--sigma`` and
``--min-length`` when given, else the run's own values); every other setting of ``bloomspan mine`` (``--templates``,
``--site-field``, ``--url-field``, ``--template-config``, ``--timestamp-field``,
``--annotate``, engine, retention, paging) comes from the parameters recorded in the run
document the template alias points at, when that run was mined from the same index and
field. So a scheduled re-mine of a ``mine --templates --site-field site`` run publishes
templates again instead of dropping them.

A run the guards of :mod:`bloomspan.sidecar.run.mining_run` refuse (no usable document, ``--sigma`` above the
documents read, 0 phrases where the alias holds some) is logged in one line and reported as
skipped; the alias keeps the current run.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bloomspan.sidecar.errors import BloomspanSidecarError, ClusterConfigError, LeaseHeldError
from bloomspan.sidecar.publish.template_index import current_run_doc
from bloomspan.sidecar.run.mining_run import MineConfig, RunRefusedError, run_mining

if TYPE_CHECKING:  # state.py starts these runs: a runtime import would be a cycle
    from bloomspan.sidecar.serve.state import ServeConfig

log = logging.getLogger(__name__)

# Run parameters (the run document's ``params``) a service run takes over from the run it follows.
FOLLOWED_PARAMS = ("sigma", "min_length", "engine", "filter_bytes", "timestamp_field", "annotate", "batch_size",
                   "slices", "keep_runs", "site_field", "templates", "url_field", "template_config")


def previous_params(config: ServeConfig, client=None) -> dict:
    """The parameters of the run behind the template alias that a service run follows, or
    {} (no alias yet, another source or field, cluster unreadable)."""
    template_index = config.template_index or "bloomspan-templates"
    try:
        if client is None:
            client = config.opensearch_client()
        doc = current_run_doc(client, template_index)
    except BloomspanSidecarError:
        return {}
    except Exception as exc:  # the run itself reports an unreachable cluster; here it only loses the hints
        log.warning("reading the current run's parameters failed (%s); mining with serve's flags only",
                    type(exc).__name__)
        return {}
    if doc.get("source_index") != config.mine_index or doc.get("field") != config.mine_field:
        log.info("current run %s was mined from %s/%s, not %s/%s: its parameters are not followed",
                 doc.get("run_id"), doc.get("source_index"), doc.get("field"), config.mine_index, config.mine_field)
        return {}
    params = doc.get("params") or {}
    followed = {k: params[k] for k in FOLLOWED_PARAMS if params.get(k) is not None}
    if followed.get("template_config") is not None and not followed.get("templates"):
        del followed["template_config"]
    return followed


def mine_config_for(config: ServeConfig, previous: dict | None = None):
    """The cluster mining configuration a service run uses (the sidecar's own credentials):
    serve's flags, plus ``previous`` (:func:`previous_params`) for the rest. With no run to
    follow, serve's ``--site-field`` and ``--url-field`` (the fields of the documents it
    cleans) name the site and URL fields, so the first run detects templates as ``mine`` would."""
    if not previous:
        previous = {k: v for k, v in (("site_field", config.scope_field), ("url_field", config.url_field)) if v}
    # serve's --sigma / --min-length, when given, win over the followed run's.
    given = {k: getattr(config, k) for k in ("sigma", "min_length") if getattr(config, k) is not None}
    previous = {**(previous or {}), **given}

    if "template_config" in previous:  # the run document's params name the knob by field, the flag by its file
        previous = {("template_config_path" if k == "template_config" else k): v for k, v in previous.items()}
    return MineConfig.from_flags(
        index=config.mine_index, url=config.upstream_url, field=config.mine_field,
        template_index=config.template_index or "bloomspan-templates",
        work_dir=config.work_dir, username=config.username, password=config.password,
        api_key=config.api_key, ca_certs=config.ca_certs, verify_certs=config.verify_certs,
        lease_index=config.lease_index, timeout=config.upstream_timeout,
        # --review: the run waits for `bloomspan promote`, so nothing of it reaches the documents yet.
        **{**previous, **({"dry_run": True, "annotate": False} if config.review else {})})


def mine_for_service(config: ServeConfig) -> dict:
    """One cluster mining run. Another replica holding the lease, or a run the guards
    refuse, is not a failure: the summary says ``skipped`` and why."""
    if not config.mine_index:
        raise ValueError("mine_index is not set: start serve with --mine-index to mine on demand")
    previous = previous_params(config)
    try:
        mine_config = mine_config_for(config, previous)
    except ClusterConfigError as exc:  # a recorded parameter this version no longer accepts
        log.warning("the current run's parameters are not valid here (%s); mining with serve's flags only", exc)
        mine_config = mine_config_for(config)
    try:
        summary = run_mining(mine_config)
    except LeaseHeldError as exc:
        log.info("mining skipped: lease held elsewhere (%s)", exc)
        return {"skipped": True, "reason": str(exc)}
    except RunRefusedError as exc:
        log.warning("mining refused, the current run stays: %s", exc)
        return {"skipped": True, "refused": True, "reason": str(exc)}
    return summary.as_dict()
