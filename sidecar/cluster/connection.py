"""Connection settings for one OpenSearch or Elasticsearch cluster, validated, and the client
built from them.

:class:`ClusterConfig` holds the URL, basic auth *or* an API key, TLS settings and the
request timeout. Secrets stay inside it: ``repr``/``str`` show ``***``, the URL it
exposes (:attr:`ClusterConfig.safe_url`) has no user-info part, and credentials reach the
client only as ``http_auth`` or an ``Authorization`` header, which opensearch-py logs
neither at INFO (method, URL, status) nor at DEBUG (bodies). A URL with embedded
credentials (``https://user:pass@host``) is accepted: they are moved into
``username``/``password`` and removed from the URL, so they never reach a log line.
"""
from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from bloomspan.sidecar.errors import ClusterConfigError, ClusterUnavailableError
from bloomspan.sidecar.knobs import knob

log = logging.getLogger(__name__)

SECRET_FIELDS = ("password", "api_key")


@dataclass(frozen=True)
class ClusterConfig:
    """Where the cluster is and how to authenticate.

    url:          ``http://`` or ``https://`` URL of a node (or a load balancer).
    username:     basic-auth user; needs ``password``.
    password:     basic-auth password (secret).
    api_key:      an API key sent as ``Authorization: ApiKey <key>`` (secret); give either
                  this or username/password.
    ca_certs:     PEM bundle that signs the cluster's certificate (https only).
    verify_certs: check the server certificate (https); switch off only for local tests.
    timeout:      seconds per request (> 0).
    """

    url: str = knob("http://127.0.0.1:9200", "Cluster URL.", show_default=True)
    username: str | None = knob(None, "Basic-auth user.")
    password: str | None = knob(None, "Basic-auth password (better BLOOMSPAN_<COMMAND>_PASSWORD than a flag).")
    api_key: str | None = knob(None, "API key, sent as 'Authorization: ApiKey ...'.")
    ca_certs: str | None = knob(None, "PEM bundle of the CA that signed the cluster's certificate (https).",
                                kind="file")
    verify_certs: bool = knob(True, "Check the server certificate (https).", decls=("--verify-certs/--no-verify-certs",),
                              show_default=True)
    timeout: float = knob(60.0, "Seconds per request.", show_default=True)

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.strip():
            raise ClusterConfigError("url", self.url, "give the cluster URL, e.g. https://localhost:9200")
        parts = urlsplit(self.url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClusterConfigError("url", _strip_userinfo(self.url),
                                     "must be http://HOST[:PORT] or https://HOST[:PORT]")
        try:
            parts.port  # noqa: B018  (raises ValueError for a bad port)
        except ValueError:
            raise ClusterConfigError("url", _strip_userinfo(self.url), "has an invalid port") from None
        if parts.username is not None or parts.password is not None:
            if self.username or self.password or self.api_key:
                raise ClusterConfigError("url", _strip_userinfo(self.url),
                                         "carries credentials and so do --username/--password/--api-key; "
                                         "give them once, preferably as options")
            object.__setattr__(self, "username", unquote(parts.username or ""))
            object.__setattr__(self, "password", unquote(parts.password or ""))
        object.__setattr__(self, "url", _strip_userinfo(self.url.strip()).rstrip("/"))
        if self.password and not self.username:
            raise ClusterConfigError("password", self.password, "a password needs --username", secret=True)
        if self.api_key is not None and not str(self.api_key).strip():
            raise ClusterConfigError("api_key", self.api_key, "is empty; give the key or leave it out", secret=True)
        if self.api_key and self.username:
            raise ClusterConfigError("api_key", self.api_key,
                                     "give either --api-key or --username/--password, not both", secret=True)
        if self.ca_certs is not None:
            if not os.path.isfile(self.ca_certs):
                raise ClusterConfigError("ca_certs", self.ca_certs, "no such file; give a PEM CA bundle")
            if parts.scheme != "https":
                raise ClusterConfigError("ca_certs", self.ca_certs, "only applies to an https:// url")
        if not isinstance(self.verify_certs, bool):
            raise ClusterConfigError("verify_certs", self.verify_certs, "must be True or False")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or not self.timeout > 0:
            raise ClusterConfigError("timeout", self.timeout, "must be a number of seconds > 0")

    # ------------------------------------------------------------------ presentation
    def __repr__(self) -> str:
        shown = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_FIELDS and value:
                value = "***"
            shown.append(f"{f.name}={value!r}")
        return f"ClusterConfig({', '.join(shown)})"

    __str__ = __repr__

    @property
    def safe_url(self) -> str:
        """The URL without user-info: safe to log and to store in the template index."""
        return self.url

    @property
    def auth_kind(self) -> str:
        """``"api_key"``, ``"basic"`` or ``"none"`` (for logs; never the secret itself)."""
        return "api_key" if self.api_key else "basic" if self.username else "none"

    # ------------------------------------------------------------------ client
    def client_kwargs(self, authorization: str | None = None) -> dict:
        """Keyword arguments for ``opensearchpy.OpenSearch`` (they hold the secrets).

        ``authorization``: an ``Authorization`` header value (a proxied client's own) sent
        instead of this config's credentials.
        """
        kwargs: dict = {"hosts": [self.url], "timeout": self.timeout, "retry_on_timeout": True,
                        "max_retries": 3, "pool_maxsize": 16}
        if self.url.startswith("https://"):
            kwargs["use_ssl"] = True
            kwargs["verify_certs"] = self.verify_certs
            kwargs["ssl_show_warn"] = self.verify_certs
            if self.ca_certs:
                kwargs["ca_certs"] = self.ca_certs
        if authorization is not None:
            kwargs["headers"] = {"Authorization": authorization}
        elif self.api_key:
            kwargs["headers"] = {"Authorization": f"ApiKey {self.api_key}"}
        elif self.username:
            kwargs["http_auth"] = (self.username, self.password or "")
        return kwargs

    def client(self, authorization: str | None = None):
        """A new client for this cluster, OpenSearch or Elasticsearch (an
        :class:`~bloomspan.sidecar.cluster.engine.EngineAwareClient`): the one place a
        bloomspan client is built. ``authorization`` see :meth:`client_kwargs`."""
        log.debug("client url=%s auth=%s verify_certs=%s", self.url,
                  "forwarded" if authorization is not None else self.auth_kind, self.verify_certs)
        return _engine().EngineAwareClient(**self.client_kwargs(authorization))

    def checked_client(self):
        """A client whose cluster told which engine it is (``GET /``, ``GET /_nodes/_local``);
        otherwise :class:`ClusterUnavailableError`. The engine is remembered with the client.

        The error names the URL and the kind of failure, never a credential.
        """
        from opensearchpy.exceptions import (
            AuthenticationException,
            AuthorizationException,
            ConnectionError,
            TransportError,
        )

        client = self.client()
        # The probe does not retry: an unreachable node answers in one timeout, not four.
        engines = _engine()
        probe = engines.EngineAwareClient(**{**self.client_kwargs(), "max_retries": 0})
        try:
            engine = engines.detect_engine(probe)
        except (AuthenticationException, AuthorizationException) as exc:
            raise ClusterUnavailableError(
                f"{self.url}: authentication failed (status {exc.status_code}); check --username/--password "
                "or --api-key", field="username" if self.username else "api_key") from None
        except ConnectionError as exc:
            raise ClusterUnavailableError(describe_unreachable(self.url, exc), field="url") from None
        except TransportError as exc:
            raise ClusterUnavailableError(f"{self.url} answered GET / with status {exc.status_code} "
                                          f"({_short(exc.error)}); check --url", field="url") from None
        except ValueError as exc:  # answered, but not as OpenSearch or Elasticsearch do
            raise ClusterUnavailableError(f"{self.url} is not an OpenSearch or Elasticsearch node ({exc}); "
                                          "check --url", field="url") from None
        engines.remember(client, engine)
        return client


START_A_NODE = "is the cluster up? start one with deploy/local/opensearch.sh start"


def _engine():
    """:mod:`.engine` (opensearch-py), loaded when a client is first built."""
    # local: every command's connection flags come from ClusterConfig's fields, so `bloomspan --help` imports this module and must not load opensearch-py
    from . import engine

    return engine


def describe_unreachable(url: str, exc: BaseException) -> str:
    """One line for a cluster that cannot be reached: ``cannot reach URL (why): what to do``.

    ``exc`` is an opensearch-py ``ConnectionError`` (or anything wrapping the socket error);
    ``url`` must be the credential-free one (:attr:`ClusterConfig.safe_url`).
    """
    import socket
    import ssl

    chain = _causes(exc)
    if any(isinstance(e, ssl.SSLCertVerificationError) for e in chain):
        detail = next(e for e in chain if isinstance(e, ssl.SSLCertVerificationError))
        why = f"TLS certificate not trusted: {getattr(detail, 'verify_message', None) or 'verify failed'}"
        fix = ("give --ca-certs with the PEM bundle of the CA that signed the cluster's certificate "
               "(--no-verify-certs only for a throw-away node)")
    elif any(isinstance(e, ssl.SSLError) for e in chain):
        detail = next(e for e in chain if isinstance(e, ssl.SSLError))
        why = f"TLS handshake failed: {getattr(detail, 'reason', None) or detail}"
        fix = ("a plain-http node needs an http:// --url" if "WRONG_VERSION_NUMBER" in str(detail)
               else "check --url and --ca-certs")
    elif any(isinstance(e, ConnectionRefusedError) for e in chain):
        why, fix = "connection refused", START_A_NODE
    elif any(isinstance(e, socket.gaierror) for e in chain):
        why, fix = "host name not found", "check the host in --url"
    elif any(isinstance(e, (TimeoutError, socket.timeout)) or type(e).__name__ in ("ConnectionTimeout",
             "ConnectTimeoutError", "ReadTimeoutError") for e in chain):
        why, fix = "timed out", START_A_NODE + " (or raise --timeout)"
    elif any(isinstance(e, ConnectionResetError) for e in chain):
        why, fix = "connection reset", START_A_NODE
    else:
        innermost = chain[-1]
        why, fix = f"{type(innermost).__name__}: {_short(str(innermost))}", START_A_NODE
    return f"cannot reach {url} ({why}): {fix}"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``, the exception opensearch-py wraps (``.info``), and their causes, outermost first."""
    chain: list[BaseException] = []
    todo: list = [exc]
    while todo:
        e = todo.pop(0)
        if not isinstance(e, BaseException) or any(e is seen for seen in chain) or len(chain) > 20:
            continue
        chain.append(e)
        todo.extend([getattr(e, "info", None), e.__cause__, e.__context__, getattr(e, "reason", None)])
    return chain


def _strip_userinfo(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
