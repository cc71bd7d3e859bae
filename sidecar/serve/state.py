"""State of `bloomspan serve`: its validated config, the cleaner now serving, and mining runs."""
from __future__ import annotations

import asyncio
import base64
import fnmatch
import ipaddress
import logging
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import TCPConnector

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.clean.curated_cleaner import curated_cleaner
from bloomspan.ingest.match.loading import load_run_phrases
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.curation.store import load_curation
from bloomspan.sidecar.publish.template_reader import cleaning_records, current_run
from bloomspan.sidecar.serve.mining_runs import mine_for_service
from bloomspan.sidecar.serve.redaction import redact, split_userinfo
from bloomspan.sidecar.serve.shadow import ShadowCleaner, ShadowMeter

log = logging.getLogger(__name__)


SECRET_FIELDS = ("password", "api_key", "admin_token")
# shadow: mark's spans and ratio from strip's phrase set, the text left as sent (.shadow).
SERVE_MODES = ("strip", "mark", "downweight", "shadow")
MIN_ADMIN_TOKEN_LENGTH = 16


class ServeConfigError(ValueError):
    """An invalid `serve` setting: ``field`` names it; secrets and URL user-info are never shown."""

    def __init__(self, field_name: str, value, fix: str):
        self.field = field_name
        shown = "***" if field_name in SECRET_FIELDS else redact(repr(value))
        super().__init__(f"{field_name}={shown}: {fix}")


def is_loopback(host: str) -> bool:
    """Does binding ``host`` keep the service on this machine?"""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


@dataclass(frozen=True)
class ServeConfig:
    """Every `bloomspan serve` flag, 1:1. Secrets never appear in repr or logs."""

    upstream_url: str = "http://127.0.0.1:9200"
    host: str = "127.0.0.1"
    port: int = 9280
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    ca_certs: str | None = None
    verify_certs: bool = True
    forward_credentials: bool = True
    clean_indices: tuple[str, ...] = ()
    fields: tuple[str, ...] = ("text",)
    mode: str = "strip"
    max_ratio: float | None = None
    route_index: str | None = None
    scope_field: str | None = None
    url_field: str | None = None
    template_index: str | None = None
    phrases_path: str | None = None
    reload_seconds: float = 10.0
    require_template: bool = False
    every_seconds: float | None = None
    upstream_timeout: float = 120.0
    # None: the cluster's http.max_content_length, read at startup (100mb when unreadable).
    max_body_bytes: int | None = None
    # State-changing sidecar endpoints (POST /runs) need `Authorization: Bearer <token>`.
    admin_token: str | None = field(default=None, repr=False)
    # Allow a non-loopback host without an admin token (the endpoints are then open).
    insecure_admin: bool = False
    # Mining runs started by the schedule, POST /runs or emerging boilerplate.
    mine_index: str | None = None
    mine_field: str = "text"
    # None: the value of the run a service run follows (the run behind the template alias,
    # mined from the same index and field), else `bloomspan mine`'s default.
    sigma: int | None = None
    min_length: int | None = None
    work_dir: str = "./bloomspan-work"
    lease_index: str = "bloomspan-lease"
    # Emerging boilerplate (forgetful Bloom filter over k-token shingles); None: off.
    emerging_shingle: int | None = None
    emerging_threshold: int = 50
    # Chunk fingerprint of the cleaned text in bloomspan.fingerprint (near-duplicate collapse).
    fingerprint: bool = False
    # Scheduled and requested mining runs publish without moving the alias (`bloomspan promote`).
    review: bool = False

    def __post_init__(self) -> None:
        if not self.upstream_url.startswith(("http://", "https://")):
            raise ServeConfigError("upstream_url", self.upstream_url, "must start with http:// or https://")
        url, user, password = split_userinfo(self.upstream_url)
        if user is not None or password is not None:
            # Credentials in the URL move into the config, so the URL can be printed and logged.
            if self.username or self.password or self.api_key:
                raise ServeConfigError("upstream_url", url, "carries credentials and so do --username/--password/"
                                       "--api-key; give them once, preferably as --username/--password")
            object.__setattr__(self, "username", user)
            object.__setattr__(self, "password", password)
        object.__setattr__(self, "upstream_url", url.rstrip("/"))
        if self.max_body_bytes is not None and self.max_body_bytes < 1:
            raise ServeConfigError("max_body_bytes", self.max_body_bytes,
                                   "must be >= 1 (or unset to follow the cluster's http.max_content_length)")
        if self.admin_token is not None and len(self.admin_token.strip()) < MIN_ADMIN_TOKEN_LENGTH:
            raise ServeConfigError("admin_token", self.admin_token,
                                   f"must be at least {MIN_ADMIN_TOKEN_LENGTH} characters "
                                   "(e.g. the output of `openssl rand -hex 32`)")
        if not is_loopback(self.host) and not self.admin_token and not self.insecure_admin:
            raise ServeConfigError("host", self.host, "binding beyond loopback needs --admin-token (or "
                                   "BLOOMSPAN_SERVE_ADMIN_TOKEN / --admin-token-file), or --insecure-admin to "
                                   "leave POST /runs open")
        if not 0 < self.port < 65536:
            raise ServeConfigError("port", self.port, "must be 1..65535")
        if self.mode not in SERVE_MODES:
            raise ServeConfigError("mode", self.mode, f"must be one of {', '.join(SERVE_MODES)}")
        if self.clean_indices and not (self.template_index or self.phrases_path):
            raise ServeConfigError("clean_indices", self.clean_indices,
                                   "cleaning needs a phrase set: give --template-index or --phrases")
        if self.reload_seconds <= 0:
            raise ServeConfigError("reload_seconds", self.reload_seconds, "must be > 0")
        if self.every_seconds is not None and self.every_seconds <= 0:
            raise ServeConfigError("every_seconds", self.every_seconds, "must be > 0 (or unset for no schedule)")
        if self.every_seconds is not None and not self.mine_index:
            raise ServeConfigError("mine_index", self.mine_index, "a schedule needs --mine-index (the index to mine)")
        if self.api_key and self.username:
            raise ServeConfigError("api_key", self.api_key, "give either --api-key or --username/--password, not both")
        for name in ("sigma", "min_length"):
            if getattr(self, name) is not None and getattr(self, name) < 2:
                raise ServeConfigError(name, getattr(self, name), "must be >= 2 (or unset to follow the current run)")
        if self.upstream_timeout <= 0:
            raise ServeConfigError("upstream_timeout", self.upstream_timeout, "must be > 0 seconds")
        if self.emerging_shingle is not None and self.emerging_shingle < 2:
            raise ServeConfigError("emerging_shingle", self.emerging_shingle, "must be >= 2 tokens")

    def upstream_headers(self) -> dict:
        """Credentials the sidecar holds itself (used when not forwarding the client's)."""
        if self.api_key:
            return {"Authorization": f"ApiKey {self.api_key}"}
        if self.username:
            raw = f"{self.username}:{self.password or ''}".encode()
            return {"Authorization": "Basic " + base64.b64encode(raw).decode()}
        return {}

    def connector(self):
        if not self.upstream_url.startswith("https://"):
            return TCPConnector(limit=64)
        ctx = ssl.create_default_context(cafile=self.ca_certs) if self.ca_certs else ssl.create_default_context()
        if not self.verify_certs:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return TCPConnector(limit=64, ssl=ctx)

    def opensearch_client(self):
        """The sidecar's own client (same TLS and auth handling as `bloomspan mine`)."""
        return ClusterConfig(url=self.upstream_url, username=self.username, password=self.password,
                             api_key=self.api_key, ca_certs=self.ca_certs, verify_certs=self.verify_certs,
                             timeout=self.upstream_timeout).client()


class CleanerHolder:
    """The cleaners now serving, one per mode in use. ``refresh()`` (run in a thread) rebuilds
    them when the template alias points at a new physical index or the curation of the
    template index changed (entries, or the mode of a ``--clean-index`` pattern); the swap
    is a single reference assignment, so a request that already took a cleaner finishes
    with it. ``current`` is the cleaner of the configured ``mode``."""

    def __init__(self, config: ServeConfig):
        self.config = config
        self.current = None
        self.phrase_set = None
        self.run_id: str | None = None
        self.n_phrases = 0
        self.curation_version: str | None = None
        self.curation_summary: dict = {}
        self.shadow_meter = None  # a ShadowMeter; create_app sets the one /metrics exports
        self._serving: tuple[dict, dict] = ({}, {})  # (cleaner by mode, mode by pattern), swapped together
        self._client = None
        self._lock = threading.Lock()

    def client(self):
        """The sidecar's own cluster client (template reads, run history)."""
        if self._client is None:
            self._client = self.config.opensearch_client()
        return self._client

    def cleaner_config(self, mode: str):
        """The CleanerConfig of ``mode`` (shadow cleans in mark mode, see .shadow)."""
        return CleanerConfig(fields=tuple(self.config.fields), mode="mark" if mode == "shadow" else mode,
                             max_ratio=self.config.max_ratio, skip_missing=True, id_field=None,
                             scope_field=self.config.scope_field, url_field=self.config.url_field,
                             fingerprint=self.config.fingerprint)

    def _wrap(self, cleaner, mode: str):
        if mode != "shadow":
            return cleaner
        if self.shadow_meter is None:
            self.shadow_meter = ShadowMeter()
        return ShadowCleaner(cleaner, self.shadow_meter)

    def _build(self, phrase_set, templates=None, mode: str | None = None) -> Any:
        mode = mode or self.config.mode
        return self._wrap(Cleaner(phrase_set, self.cleaner_config(mode), templates=templates), mode)

    def _swap(self, cleaners: dict, modes: dict, phrase_set, run_id: str) -> None:
        self._serving = (cleaners, modes)
        self.phrase_set, self.run_id, self.n_phrases = phrase_set, run_id, len(phrase_set)
        self.current = cleaners[self.config.mode]

    def install(self, phrase_set, run_id: str, templates=None) -> None:
        """Serve ``phrase_set`` (and the template detector's records, a TemplateMatcher, if any)."""
        self._swap({self.config.mode: self._build(phrase_set, templates)}, {}, phrase_set, run_id)
        log.info("cleaner installed run=%s phrases=%d templates=%s", run_id, len(phrase_set),
                 "no" if templates is None else f"{len(templates.skeletons)} skeletons")

    def mode_of(self, index: str | None) -> str:
        """The mode writes to ``index`` are cleaned in: that of the first ``--clean-index``
        pattern it matches which has a mode in the curation index, else ``mode``."""
        modes = self._serving[1]
        if modes and index:
            for pattern in self.config.clean_indices:
                if fnmatch.fnmatchcase(index, pattern):
                    return modes.get(pattern, self.config.mode)
        return self.config.mode

    def mode_of_pattern(self, pattern: str) -> str:
        """The mode of ``--clean-index`` pattern ``pattern`` now."""
        return self._serving[1].get(pattern, self.config.mode)

    def cleaner_for(self, mode: str):
        """The cleaner serving ``mode`` (None before the first load)."""
        cleaners = self._serving[0]
        return cleaners.get(mode, cleaners.get(self.config.mode))

    def refresh(self) -> bool:
        """Load the phrase set if its source or its curation changed. Returns True when new
        cleaners are serving."""
        with self._lock:
            if self.config.phrases_path:
                if self.current is not None:
                    return False
                # As `clean --phrases` reads it: the run's templates.jsonl beside it joins the phrases,
                # and a min_length missing from the phrases comes from its report.json.
                loaded = load_run_phrases(self.config.phrases_path)
                for note in loaded.notes:
                    log.info("phrases file note: %s", note)
                self.install(loaded.phrase_set, run_id=f"file:{self.config.phrases_path}", templates=loaded.templates)
                return True
            if not self.config.template_index:
                return False
            physical = current_run(self.client(), self.config.template_index)
            if physical is None:
                return False
            # Read on every check: a deny entry or a mode switch takes effect without a new run.
            curation = load_curation(self._client, self.config.template_index)
            if physical == self.run_id and curation.version == self.curation_version:
                return False
            modes = {p: m for p, m in curation.modes.items() if p in self.config.clean_indices}
            records, with_templates = cleaning_records(self._client, physical)
            cleaners, outcome = {}, []
            for mode in sorted({self.config.mode, *modes.values()}):
                cleaner = curated_cleaner(records, self.cleaner_config(mode), curation.entries,
                                          with_templates=with_templates, source=physical,
                                          on_curated=outcome.append)
                cleaners[mode] = self._wrap(cleaner, mode)
            self._swap(cleaners, modes, cleaners[self.config.mode].phrase_set, physical)
            self.curation_version = curation.version
            self.curation_summary = {**curation.summary(), **outcome[0].summary()}
            log.info("cleaner installed run=%s phrases=%d curation=%s filtered=%d added=%d modes=%s", physical,
                     self.n_phrases, curation.version, len(outcome[0].filtered), len(outcome[0].added),
                     modes or "default")
            return True


@dataclass
class RunRecord:
    run: str
    reason: str
    status: str = "running"
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    summary: dict | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


class RunRegistry:
    """Mining runs started by this process: at most one at a time here; across replicas
    the mining run itself takes the cluster lease."""

    def __init__(self, config: ServeConfig, mine_fn: Callable[[ServeConfig], dict] | None, metrics: dict):
        self.config = config
        self.mine_fn = mine_fn or mine_for_service
        self.metrics = metrics
        self._records: list[RunRecord] = []
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def active(self) -> dict | None:
        return self._records[-1].as_dict() if self.busy else None

    def history(self) -> list[dict]:
        return [r.as_dict() for r in reversed(self._records)]

    def start_background(self, app, reason: str) -> dict:
        self._loop = asyncio.get_running_loop()
        record = RunRecord(run=uuid.uuid4().hex[:12], reason=reason)
        self._records.append(record)
        del self._records[:-100]
        self._task = asyncio.create_task(self._run(record))
        return record.as_dict()

    def cannot_start(self) -> str | None:
        """Why no run can start here at all (a missing flag), or None. A run function given by
        the caller brings its own source; the sidecar's needs ``--mine-index``."""
        if self.mine_fn is mine_for_service and not self.config.mine_index:
            return ("this serve mines nothing: start it with --mine-index INDEX (the index to mine) "
                    "to run mining on demand")
        return None

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Remember the service's event loop so worker threads can start runs on it."""
        self._loop = loop

    def start_from_thread(self, app, reason: str) -> None:
        """Trigger from a worker thread (e.g. the emerging-boilerplate detector)."""
        if self._loop is None:
            log.warning("run trigger reason=%s ignored: service loop not started", reason)
            return
        missing = self.cannot_start()
        if missing is not None:
            log.warning("run trigger reason=%s ignored: %s", reason, missing)
            return

        def _start():
            if not self.busy:
                self.start_background(app, reason)

        self._loop.call_soon_threadsafe(_start)

    async def _run(self, record: RunRecord) -> None:
        t0 = time.perf_counter()
        log.info("mining run=%s reason=%s started", record.run, record.reason)
        try:
            summary = await asyncio.to_thread(self.mine_fn, self.config)
        except Exception as exc:
            record.status, record.error = "failed", f"{type(exc).__name__}: {exc}"
            self.metrics["runs"].labels(status="failed").inc()
            log.exception("mining run=%s failed", record.run)
        else:
            status = "skipped" if isinstance(summary, dict) and summary.get("skipped") else "succeeded"
            record.status, record.summary = status, summary
            self.metrics["runs"].labels(status=status).inc()
            for key in ("docs_mined", "tokens_mined", "phrases", "covered_share"):
                if isinstance(summary, dict) and key in summary:
                    self.metrics[key].set(summary[key])
            log.info("mining run=%s succeeded", record.run)
        finally:
            record.finished_at = time.time()
            self.metrics["run_seconds"].set(time.perf_counter() - t0)

    async def wait_idle(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
