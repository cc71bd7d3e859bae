"""What ``bloomspan mine --dask ADDRESS`` calls: the two forms of ``mine`` (a JSON Lines file,
a live index) on Dask, with the dashboard link on stderr and errors as one-line click errors."""
from __future__ import annotations

import click

from bloomspan.sidecar.errors import ClusterConfigError


def _dask_config(address: str, memory_limit: str | None):
    from bloomspan.sidecar.distributed.cluster import DaskConfig

    try:
        return DaskConfig(address=address, **({"memory_limit": memory_limit} if memory_limit else {}))
    except ClusterConfigError as exc:
        hint = "--dask" if exc.field == "dask" else f"--{exc.field.replace('_', '-')}"
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _show_dashboard(link: str | None) -> None:
    if link:
        click.echo(f"dask dashboard: {link}", err=True)
    else:
        click.echo("dask dashboard: not served (install bokeh>=3.1 on the scheduler for it)", err=True)


def mine_jsonl_on_dask(path: str, field: str, config, out_dir: str, id_field: str | None, address: str,
                       memory_limit: str | None, progress, top: int, templates=None):
    """``mine --jsonl PATH --dask ADDRESS``: a JsonlMiningSummary, like ``mine_jsonl``."""
    from bloomspan.sidecar.run.dask_jsonl_mining import mine_jsonl_dask

    dask = _dask_config(address, memory_limit)
    try:
        return mine_jsonl_dask(path, field, config, out_dir, dask, id_field=id_field, progress=progress, top=top,
                               on_dashboard=_show_dashboard, templates=templates)
    except ClusterConfigError as exc:
        raise click.ClickException(str(exc)) from None


def run_on_dask(config, address: str, memory_limit: str | None, progress, client):
    """``mine --index NAME --dask ADDRESS``: the same run as without ``--dask``, mined on the workers."""
    from bloomspan.sidecar.run.mining_run import run_mining

    try:
        return run_mining(config, progress=progress, client=client, dask=_dask_config(address, memory_limit),
                          on_dashboard=_show_dashboard)
    except ClusterConfigError as exc:
        raise click.ClickException(str(exc)) from None
