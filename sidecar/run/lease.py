"""A lease document in the cluster: one mining run at a time across replicas.

The lease for a template index ``NAME`` is the document ``_id = NAME`` of the lease index
(mapping ``mappings/lease.json``): ``{holder, acquired_at, expires_at, run_id}``. Every
change is a compare-and-set:

* acquire: ``op_type=create`` (fails with 409 if a lease exists); if the existing lease
  has expired — or is held by the same ``holder`` (a run restarted after ``kill -9``
  keeps its holder id in its checkpoint) — it is replaced with ``if_seq_no`` /
  ``if_primary_term`` of the version just read, so of two replicas racing for an expired
  lease exactly one wins;
* renew: rewrite with a later ``expires_at`` under ``if_seq_no``/``if_primary_term``;
  a 409 means somebody took the lease over: :class:`LeaseLostError`;
* release: delete under ``if_seq_no``/``if_primary_term`` (a lease taken over is left alone).

Expiry compares wall clocks of the replicas; keep ``ttl`` well above their clock skew.
:meth:`Lease.keep_alive` renews from a background thread every ``ttl/3`` seconds.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime

from opensearchpy.exceptions import ConflictError, NotFoundError, RequestError

from bloomspan.mappings import load
from bloomspan.sidecar.errors import LeaseHeldError, LeaseLostError

log = logging.getLogger(__name__)

DEFAULT_TTL = 120.0


def new_holder() -> str:
    """A holder id unique to this process: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds")


def _parse(s: str) -> float:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def ensure_lease_index(client, index: str) -> None:
    """Create the lease index with the lease mapping if it does not exist."""
    if client.indices.exists(index=index):
        return
    try:
        client.indices.create(index=index, body=load("lease")["template"])
    except RequestError as exc:
        if exc.error != "resource_already_exists_exception":  # created by a racing replica
            raise


class Lease:
    """The mining lease ``name`` in ``index``, for ``holder``."""

    def __init__(self, client, index: str, name: str, holder: str | None = None, ttl: float = DEFAULT_TTL,
                 run_id: str | None = None, clock=time.time):
        if ttl <= 0:
            raise ValueError(f"ttl={ttl}: must be > 0 seconds")
        self.client = client
        self.index = index
        self.name = name
        self.holder = holder or new_holder()
        self.ttl = float(ttl)
        self.run_id = run_id
        self.clock = clock
        self._seq: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost: BaseException | None = None

    @property
    def held(self) -> bool:
        return self._seq is not None and self.lost is None

    def _body(self, acquired_at: float | None = None) -> dict:
        now = self.clock()
        return {"holder": self.holder, "acquired_at": _iso(acquired_at if acquired_at is not None else now),
                "expires_at": _iso(now + self.ttl), "run_id": self.run_id}

    def acquire(self) -> None:
        """Take the lease or raise :class:`LeaseHeldError` naming the current holder."""
        ensure_lease_index(self.client, self.index)
        with self._lock:
            try:
                r = self.client.index(index=self.index, id=self.name, body=self._body(), op_type="create")
                self._seq = (r["_seq_no"], r["_primary_term"])
                self._acquired_at = self.clock()
                log.info("lease %s/%s acquired by %s", self.index, self.name, self.holder)
                return
            except ConflictError:
                pass
            try:
                cur = self.client.get(index=self.index, id=self.name)
            except NotFoundError:  # released between our create and get: try once more
                return self._retry_create()
            src = cur["_source"]
            expired = _parse(src["expires_at"]) <= self.clock()
            if not expired and src.get("holder") != self.holder:
                raise LeaseHeldError(
                    f"lease {self.name!r} is held by {src.get('holder')} until {src['expires_at']} "
                    f"(run {src.get('run_id')}); another mining run is in progress", index=self.index,
                    item={"holder": src.get("holder"), "expires_at": src["expires_at"], "run_id": src.get("run_id")})
            try:
                r = self.client.index(index=self.index, id=self.name, body=self._body(),
                                      if_seq_no=cur["_seq_no"], if_primary_term=cur["_primary_term"])
            except ConflictError:
                raise LeaseHeldError(f"lease {self.name!r} was taken by another replica just now",
                                     index=self.index, item={"holder": None}) from None
            self._seq = (r["_seq_no"], r["_primary_term"])
            self._acquired_at = self.clock()
            log.info("lease %s/%s taken over by %s (%s)", self.index, self.name, self.holder,
                     "expired" if expired else "same holder")

    def _retry_create(self) -> None:
        try:
            r = self.client.index(index=self.index, id=self.name, body=self._body(), op_type="create")
        except ConflictError:
            raise LeaseHeldError(f"lease {self.name!r} was taken by another replica just now",
                                 index=self.index, item={"holder": None}) from None
        self._seq = (r["_seq_no"], r["_primary_term"])
        self._acquired_at = self.clock()

    def renew(self) -> None:
        """Push ``expires_at`` to now + ttl; :class:`LeaseLostError` if it is no longer ours."""
        with self._lock:
            if self.lost is not None:
                raise self.lost
            if self._seq is None:
                raise LeaseLostError(f"lease {self.name!r} is not held", index=self.index)
            try:
                r = self.client.index(index=self.index, id=self.name, body=self._body(self._acquired_at),
                                      if_seq_no=self._seq[0], if_primary_term=self._seq[1])
            except (ConflictError, NotFoundError):
                self.lost = LeaseLostError(f"lease {self.name!r} was taken over or deleted while {self.holder} "
                                           "held it (expired? raise the lease ttl)", index=self.index)
                self._seq = None
                raise self.lost from None
            self._seq = (r["_seq_no"], r["_primary_term"])

    def check(self) -> None:
        """Renew now; raises if the lease was lost (call before irreversible steps)."""
        self.renew()

    def release(self) -> None:
        """Delete the lease if still ours (never raises for a lease already gone)."""
        self._stop_thread()
        with self._lock:
            if self._seq is None:
                return
            try:
                self.client.delete(index=self.index, id=self.name, if_seq_no=self._seq[0],
                                   if_primary_term=self._seq[1])
                log.info("lease %s/%s released by %s", self.index, self.name, self.holder)
            except (ConflictError, NotFoundError):
                log.warning("lease %s/%s was no longer ours at release", self.index, self.name)
            except Exception as exc:  # expiry frees it anyway
                log.warning("releasing lease %s/%s failed (%s); it expires in %.0fs", self.index, self.name,
                            type(exc).__name__, self.ttl)
            self._seq = None

    # -- background renewal
    def keep_alive(self) -> None:
        """Renew every ttl/3 seconds in a daemon thread until :meth:`release`."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(self.ttl / 3):
                try:
                    self.renew()
                except LeaseLostError:
                    log.error("lease %s/%s lost; the run will stop before publishing", self.index, self.name)
                    return
                except Exception as exc:  # transient: try again next tick, expiry is ttl away
                    log.warning("renewing lease %s/%s failed: %s", self.index, self.name, exc)

        self._thread = threading.Thread(target=loop, name="bloomspan-lease", daemon=True)
        self._thread.start()

    def _stop_thread(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Lease:
        self.acquire()
        self.keep_alive()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def read_lease(client, index: str, name: str) -> dict | None:
    """The lease document (``_source`` plus ``expired``) or None; for ``serve``'s /runs."""
    try:
        doc = client.get(index=index, id=name)
    except NotFoundError:
        return None
    src = dict(doc["_source"])
    src["expired"] = _parse(src["expires_at"]) <= time.time()
    return src
