"""The ``bloomspan serve`` command: flags -> :class:`ServeConfig` -> the aiohttp app."""
from __future__ import annotations

import functools
import logging

import click

from .config_flags import SERVE_FLAGS
from .connection_flags import connection_options

log = logging.getLogger(__name__)


def _parse_duration(value: str | None, option: str) -> float | None:
    """``90``, ``90s``, ``15m``, ``6h``, ``1d`` -> seconds."""
    if value in (None, ""):
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    v = value.strip().lower()
    try:
        if v[-1] in units:
            return float(v[:-1]) * units[v[-1]]
        return float(v)
    except (ValueError, IndexError):
        raise click.BadParameter(f"{value!r}: use a number of seconds or 15m, 6h, 1d", param_hint=option) from None


def _admin_token(token: str | None, token_file: str | None) -> str | None:
    """The admin token from ``--admin-token`` or ``--admin-token-file`` (one of them)."""
    if token_file in (None, ""):
        return token or None
    if token:
        raise click.BadParameter("give --admin-token or --admin-token-file, not both", param_hint="--admin-token-file")
    try:
        with open(token_file, encoding="utf-8") as fh:
            value = fh.read().strip()
    except OSError as exc:
        raise click.BadParameter(f"{token_file}: {exc.strerror}; mount the secret there or unset the flag "
                                 "(BLOOMSPAN_SERVE_ADMIN_TOKEN_FILE)", param_hint="--admin-token-file") from None
    if not value:
        raise click.BadParameter(f"{token_file} is empty", param_hint="--admin-token-file")
    return value


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (loopback by default).")
@click.option("--port", type=int, default=9280, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes serving the port (SO_REUSEPORT): the proxy's Python runs on one core per worker.")
@connection_options(url_flag="--upstream-url", url_help="The cluster behind the proxy.", timeout=120.0,
                    auth_help="Sidecar's own credentials (for mining, template reads, and proxying with "
                              "--no-forward-credentials).")
@click.option("--forward-credentials/--no-forward-credentials", default=True, show_default=True,
              help="Proxy with the client's own Authorization header (default) or the sidecar's.")
@click.option("--clean-index", "clean_indices", multiple=True, envvar="BLOOMSPAN_SERVE_CLEAN_INDEX", help="Index pattern whose writes are cleaned (repeatable), e.g. 'crawl-*'.")
@click.option("--field", "fields", multiple=True, default=("text",), show_default=True, envvar="BLOOMSPAN_SERVE_FIELD")
@click.option("--mode", type=click.Choice(["strip", "mark", "downweight", "shadow"]), default="strip", show_default=True,
              help="shadow: write the spans strip would remove (bloomspan.spans) and the ratio, leave the text as "
                   "sent, and count per site what strip would remove (/metrics, GET /shadow). `bloomspan curate mode "
                   "PATTERN MODE` switches one --clean-index pattern without a restart.")
@click.option("--max-ratio", type=float, default=None)
@click.option("--route-index", default=None, help="Send documents over --max-ratio here ('{index}' is replaced).")
@click.option("--site-field", "scope_field", default=None, help="Document field naming its site, for site-scoped phrases and templates.")
@click.option("--url-field", default=None, help="Document field with its URL: site sections of template records.")
@click.option("--template-index", default=None, help="Template alias whose phrases clean the traffic (hot-reloaded).")
@click.option("--phrases", "phrases_path", default=None, envvar="BLOOMSPAN_SERVE_PHRASES", type=click.Path(dir_okay=False, exists=True))
@click.option("--reload-every", default="10s", show_default=True, help="How often to check the template alias.")
@click.option("--require-template/--no-require-template", default=False, show_default=True,
              help="Answer 503 to writes for cleaned indices until a phrase set is loaded.")
@click.option("--every", default=None, help="Mine on a schedule, e.g. 6h (needs --mine-index).")
@click.option("--review/--no-review", default=False, show_default=True,
              help="Runs started by the schedule or POST /runs publish without moving the alias; `bloomspan diff` "
                   "compares, `bloomspan promote RUN` moves it.")
@click.option("--mine-index", default=None)
@click.option("--mine-field", default="text", show_default=True)
@click.option("--sigma", type=int, default=None,
              help="Document frequency of service runs; default: that of the run they follow, else mine's 20.")
@click.option("--min-length", type=int, default=None,
              help="Phrase length of service runs; default: that of the run they follow, else mine's 10.")
@click.option("--work-dir", default="./bloomspan-work", show_default=True)
@click.option("--lease-index", default="bloomspan-lease", show_default=True, help="Lease that keeps one run at a time across replicas.")
@click.option("--emerging-shingle", type=int, default=None, help="Watch k-token shingles for emerging boilerplate (off by default).")
@click.option("--emerging-threshold", type=int, default=50, show_default=True, help="Emerging shingles that trigger a re-mine.")
@click.option("--fingerprint/--no-fingerprint", default=False, show_default=True,
              help="Add bloomspan.fingerprint (chunk Bloom filter of the cleaned text) for near-duplicate collapse.")
@click.option("--max-body-bytes", default=None,
              help="Largest request body the proxy takes (e.g. 100mb); default: the cluster's http.max_content_length.")
@click.option("--admin-token", default=None,
              help="Bearer token that POST /runs needs (>= 16 characters); better from BLOOMSPAN_SERVE_ADMIN_TOKEN.")
@click.option("--admin-token-file", default=None, type=click.Path(dir_okay=False),
              help="Read the admin token from this file (a mounted Docker or Kubernetes secret).")
@click.option("--insecure-admin", is_flag=True, default=False,
              help="Allow a non-loopback --host without an admin token (POST /runs is then open to anyone).")
def serve(**params):
    """Run the sidecar: /healthz /readyz /metrics /runs /emerging, scheduled mining, and the cleaning bulk proxy."""
    from bloomspan.sidecar.errors import ListenError
    from bloomspan.sidecar.serve.launch import serve_app
    from bloomspan.sidecar.serve.redaction import install_log_redaction

    install_log_redaction()
    config = _serve_config(params)
    # config.upstream_url has no user-info: credentials in the URL moved into the config.
    auth = "admin token" if config.admin_token else "no admin token"
    click.echo(f"bloomspan serve on http://{config.host}:{config.port} -> {config.upstream_url} ({auth}; "
               f"{'client' if config.forward_credentials else 'sidecar'} credentials)", err=True)
    # /readyz says not-ready until the kernels are loaded (from the cache the image or the
    # unit's `bloomspan warmup` filled), so no first request pays for them.
    try:
        status = serve_app(config, params["workers"],
                           warm=functools.partial(_warm_kernels, emerging=config.emerging_shingle is not None))
    except ListenError as exc:
        raise click.ClickException(str(exc)) from None
    if status:
        raise SystemExit(status)


def _serve_config(params: dict):
    """The ServeConfig of click's ``params``; a bad value is a usage error naming its flag."""
    from bloomspan.sidecar.serve.proxy_limits import parse_byte_size
    from bloomspan.sidecar.serve.state import ServeConfig, ServeConfigError

    admin_token = _admin_token(params["admin_token"], params["admin_token_file"])
    max_body_bytes = params["max_body_bytes"]
    try:
        body_limit = parse_byte_size(max_body_bytes) if max_body_bytes not in (None, "") else None
    except ValueError as exc:
        raise click.BadParameter(f"{exc}; give bytes or a size like 100mb", param_hint="--max-body-bytes") from None
    try:
        return ServeConfig(**SERVE_FLAGS.config_kwargs(params),
                           reload_seconds=_parse_duration(params["reload_every"], "--reload-every"),
                           every_seconds=_parse_duration(params["every"], "--every"),
                           max_body_bytes=body_limit, admin_token=admin_token)
    except ServeConfigError as exc:
        flag = {"upstream_timeout": "timeout"}.get(exc.field, exc.field)
        raise click.BadParameter(str(exc), param_hint="--" + flag.replace("_", "-")) from None


def _warm_kernels(emerging: bool) -> int:
    """Load (or compile) the kernels a request to `serve` can reach (``emerging``: with the
    emerging-shingle detector), the cached ones without numba's compiler
    set-up; returns how many had to compile (0 when the image's or the unit's `bloomspan warmup`
    filled the cache), which /metrics and the "kernels ready" log line carry."""
    from bloomspan.sidecar.cli.kernel_warmup import warm_serving

    from .kernel_notice import watch_compilation

    finish = watch_compilation(lambda message: log.info("%s", message.removeprefix("bloomspan: ")))
    try:
        warm_serving(emerging)
    finally:
        watch = finish()
    return watch.kernels
