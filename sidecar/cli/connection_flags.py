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

from bloomspan.sidecar.cluster.connection import ClusterConfig

from .config_flags import remember_cluster, section_options

CONNECTION_PARAMS = ("url", "username", "password", "api_key", "ca_certs", "verify_certs", "timeout")


def connection_options(f=None, *, url_flag: str = "--url", url_help: str | None = None,
                       auth_help: str | None = None, timeout: float | None = None):
    """--url, --username, --password, --api-key, --ca-certs, --verify-certs, --timeout: the
    knobs of :class:`ClusterConfig`, with its defaults and help.

    ``serve`` names its cluster ``--upstream-url`` (``url_flag``; the parameter is then
    ``upstream_url``) and waits longer for it (``timeout``); every other command takes them as
    they are. Usable bare (``@connection_options``) or with arguments.
    """
    url_param = url_flag.lstrip("-").replace("-", "_")
    decorate = section_options(
        ClusterConfig, params={"url": url_param} if url_param != "url" else None,
        help={k: v for k, v in (("url", url_help), ("username", auth_help)) if v},
        defaults={"timeout": timeout} if timeout is not None else None)
    return decorate(f) if f is not None else decorate


def cluster_config(*, url, username, password, api_key, ca_certs, verify_certs, timeout):
    """The flags as a :class:`ClusterConfig`; an invalid one is a usage error naming the flag."""
    from bloomspan.sidecar.errors import ClusterConfigError

    try:
        config = ClusterConfig(url=url, username=username, password=password, api_key=api_key, ca_certs=ca_certs,
                               verify_certs=verify_certs, timeout=timeout)
    except ClusterConfigError as exc:
        raise click.BadParameter(str(exc), param_hint=f"--{(exc.field or 'url').replace('_', '-')}") from None
    remember_cluster(config)
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
