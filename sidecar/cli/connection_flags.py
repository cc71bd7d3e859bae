"""The one set of connection flags of every ``bloomspan`` command that talks to a cluster, and
the one way such a command gets its client.

``@connection_options`` adds ``--url``, ``--username``, ``--password``, ``--api-key``,
``--ca-certs``, ``--verify-certs/--no-verify-certs`` and ``--timeout``; each is also read
from ``BLOOMSPAN_<COMMAND>_<FLAG>`` (``BLOOMSPAN_CLEAN_PASSWORD``, ``BLOOMSPAN_MINE_CA_CERTS``)
through the group's ``auto_envvar_prefix``. :func:`cluster_config` turns the flags into a
validated :class:`~bloomspan.sidecar.cluster.connection.ClusterConfig` (a bad value is a usage error
naming the flag) and :func:`cluster_client` into a client whose cluster has answered.
"""
from __future__ import annotations

import click

CONNECTION_PARAMS = ("url", "username", "password", "api_key", "ca_certs", "verify_certs", "timeout")
DEFAULT_URL = "http://127.0.0.1:9200"


def connection_options(f):
    """--url, --username, --password, --api-key, --ca-certs, --verify-certs, --timeout."""
    options = [
        click.option("--url", default=DEFAULT_URL, show_default=True, help="Cluster URL."),
        click.option("--username", default=None, help="Basic-auth user."),
        click.option("--password", default=None,
                     help="Basic-auth password (better BLOOMSPAN_<COMMAND>_PASSWORD than a flag)."),
        click.option("--api-key", default=None, help="API key, sent as 'Authorization: ApiKey ...'."),
        click.option("--ca-certs", type=click.Path(dir_okay=False), default=None,
                     help="PEM bundle of the CA that signed the cluster's certificate (https)."),
        click.option("--verify-certs/--no-verify-certs", default=True, show_default=True,
                     help="Check the server certificate (https)."),
        click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per request."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def pop_connection(params: dict) -> dict:
    """Remove the connection flags from a command's keyword arguments and return them."""
    return {name: params.pop(name) for name in CONNECTION_PARAMS}


def cluster_config(*, url, username, password, api_key, ca_certs, verify_certs, timeout):
    """The flags as a :class:`ClusterConfig`; an invalid one is a usage error naming the flag."""
    from bloomspan.sidecar.cluster.connection import ClusterConfig
    from bloomspan.sidecar.errors import ClusterConfigError

    try:
        config = ClusterConfig(url=url, username=username, password=password, api_key=api_key, ca_certs=ca_certs,
                               verify_certs=verify_certs, timeout=timeout)
    except ClusterConfigError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{(exc.field or 'url').replace('_', '-')}") from None
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # lets the group name the cluster when a request fails mid-command
        ctx.meta["bloomspan.cluster_url"] = config.safe_url
    return config


def cluster_client(**conn):
    """A client for the flags' cluster, which has answered ``GET /`` (see :func:`checked_client`)."""
    return checked_client(cluster_config(**conn))


def checked_client(config):
    """A client for ``config`` whose cluster has answered; a cluster that does not answer is
    one line (``cannot reach URL (connection refused): ...``), exit status 1."""
    from bloomspan.sidecar.errors import ClusterUnavailableError

    try:
        return config.checked_client()
    except ClusterUnavailableError as exc:
        raise click.ClickException(str(exc)) from None
