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
# The defaults are ClusterConfig's (tests/unit/sidecar/cli/test_config_flags.py checks them);
# `serve` keeps a longer timeout for the large _bulk bodies it relays.
DEFAULT_URL = "http://127.0.0.1:9200"
DEFAULT_TIMEOUT = 60.0


def connection_options(f=None, *, url_flag: str = "--url", url_help: str = "Cluster URL.",
                       auth_help: str = "Basic-auth user.", timeout: float = DEFAULT_TIMEOUT):
    """--url, --username, --password, --api-key, --ca-certs, --verify-certs, --timeout.

    ``serve`` names its cluster ``--upstream-url`` (``url_flag``; the parameter is then
    ``upstream_url``) and waits longer for it (``timeout``); every other command takes them as
    they are. Usable bare (``@connection_options``) or with arguments.
    """
    url_param = url_flag.lstrip("-").replace("-", "_")

    def decorate(g):
        options = [
            click.option(url_flag, url_param, default=DEFAULT_URL, show_default=True, help=url_help),
            click.option("--username", default=None, help=auth_help),
            click.option("--password", default=None,
                         help="Basic-auth password (better BLOOMSPAN_<COMMAND>_PASSWORD than a flag)."),
            click.option("--api-key", default=None, help="API key, sent as 'Authorization: ApiKey ...'."),
            click.option("--ca-certs", type=click.Path(dir_okay=False), default=None,
                         help="PEM bundle of the CA that signed the cluster's certificate (https)."),
            click.option("--verify-certs/--no-verify-certs", default=True, show_default=True,
                         help="Check the server certificate (https)."),
            click.option("--timeout", type=float, default=timeout, show_default=True, help="Seconds per request."),
        ]
        for option in reversed(options):
            g = option(g)
        return g

    return decorate(f) if f is not None else decorate


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
