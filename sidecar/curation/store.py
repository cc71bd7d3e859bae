"""The curation index ``<template-index>-curation``: allow/deny entries and per-pattern modes.

It lives beside the template index and is found from the template index's name alone, so
every path that reads a phrase set from the cluster (``serve``, ``clean --template-index``,
``pipeline --template-index``, ``mine``, ``explain``) reads the same lists without a flag
of its own to forget. Its name matches ``<template-index>-*``, so the proxy refuses writes
to it like to the template indices, and retention never touches it (it only deletes
``<template-index>-<run id>``).

Documents (plain index/get/search calls, nothing engine-specific):

* ``kind: entry``, ``_id`` = :func:`~bloomspan.ingest.records.curation.entry_id`: ``action``
  (deny/allow), ``text``/``tokens`` or ``phrase_id``, ``scope``, ``who``, ``why``,
  ``created_at``, ``updated_at``, ``status`` (active/removed; a removed entry keeps
  ``removed_at``/``removed_by``/``removed_why``: the lists keep their history).
* ``kind: mode``, ``_id = mode:<pattern>``: ``pattern`` (a ``--clean-index`` pattern of
  ``serve``) and ``mode`` (strip, mark, downweight or shadow): ``serve`` reloads it with the
  phrase set, so a pattern moves from shadow to strip without a restart.

A missing curation index means no entries. Any other failure to read it is raised: a cleaner
is never built without the deny list it should have.
"""
from __future__ import annotations

import getpass
import logging
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bloomspan.ingest.records.curation import CurationEntry
from bloomspan.sidecar.errors import BloomspanSidecarError

log = logging.getLogger(__name__)

CURATION_SUFFIX = "-curation"
MODES = ("strip", "mark", "downweight", "shadow")
MAX_DOCUMENTS = 10_000  # one search reads the lists (index.max_result_window)
_KEYWORD = {"type": "keyword"}
MAPPING = {
    # Shared names have the types of the template index's mapping, which an index template
    # for <template-index>-* (installed by `setup`) merges into this one.
    "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "1s"},
    "mappings": {"dynamic": "strict", "properties": {
        "kind": _KEYWORD, "entry_id": _KEYWORD, "action": _KEYWORD, "phrase_id": _KEYWORD, "scope": _KEYWORD,
        "text": {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 8191}}},
        "tokens": _KEYWORD, "status": _KEYWORD, "who": _KEYWORD, "why": {"type": "text"},
        "created_at": {"type": "date"}, "updated_at": {"type": "date"}, "removed_at": {"type": "date"},
        "removed_by": _KEYWORD, "removed_why": {"type": "text"}, "pattern": _KEYWORD, "mode": _KEYWORD}},
}


class CurationStoreError(BloomspanSidecarError):
    """A curation change that cannot be made (the message says why and what to do)."""


def curation_index(template_index: str) -> str:
    """Name of the curation index of template alias ``template_index``."""
    return f"{template_index}{CURATION_SUFFIX}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_who() -> str:
    """Who makes a change when ``--who`` is not given: the login name."""
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in a container
        return os.environ.get("USER") or "unknown"


@dataclass(frozen=True)
class Curation:
    """The active entries and modes of one template index. ``version`` changes with every
    change of the lists (serve reloads on it); ``documents`` are the raw active documents."""

    entries: tuple[CurationEntry, ...] = ()
    modes: dict = field(default_factory=dict)
    version: str = "none"
    documents: tuple = ()

    @property
    def denied(self) -> int:
        return sum(e.action == "deny" for e in self.entries)

    @property
    def allowed(self) -> int:
        return sum(e.action == "allow" for e in self.entries)

    def summary(self) -> dict:
        return {"version": self.version, "denied": self.denied, "allowed": self.allowed,
                "modes": dict(self.modes)}


def _ensure_index(client, template_index: str) -> str:
    from opensearchpy.exceptions import RequestError

    name = curation_index(template_index)
    if not client.indices.exists(index=name):
        try:
            client.indices.create(index=name, body=MAPPING)
            log.info("curation index created index=%s", name)
        except RequestError as exc:
            if "resource_already_exists_exception" not in str(exc):
                raise
    return name


def read_documents(client, template_index: str) -> list[dict]:
    """Every document of the curation index (active and removed), newest change first."""
    resp = client.search(index=curation_index(template_index), ignore=[404], body={
        "size": MAX_DOCUMENTS, "query": {"match_all": {}}, "sort": [{"updated_at": {"order": "desc",
                                                                                     "unmapped_type": "date"}}]})
    if resp.get("status") == 404 or "hits" not in resp:
        return []
    total = resp["hits"]["total"]
    total = total["value"] if isinstance(total, dict) else total
    if total > MAX_DOCUMENTS:
        raise CurationStoreError(f"{curation_index(template_index)} holds {total:,} documents, more than the "
                                 f"{MAX_DOCUMENTS:,} one read takes; remove entries that are no longer needed",
                                 index=curation_index(template_index))
    return [{**hit["_source"], "_id": hit["_id"]} for hit in resp["hits"]["hits"]]


def load_curation(client, template_index: str) -> Curation:
    """The active entries and modes of ``template_index`` (empty when there is no curation index)."""
    docs = read_documents(client, template_index)
    active = [d for d in docs if d.get("status", "active") == "active"]
    entries = tuple(CurationEntry.from_dict(d) for d in active if d.get("kind") == "entry")
    modes = {d["pattern"]: d["mode"] for d in active if d.get("kind") == "mode"}
    latest = max((d.get("updated_at") or "" for d in docs), default="")
    version = f"{len(docs)}:{latest}" if docs else "none"
    return Curation(entries=entries, modes=modes, version=version, documents=tuple(active))


def add_entry(client, template_index: str, entry: CurationEntry) -> dict:
    """Store ``entry`` (active). Refused when the same phrase and scope already has an active
    entry of the other action: remove that one first, so no change is silent."""
    name = _ensure_index(client, template_index)
    other = CurationEntry(action="allow" if entry.action == "deny" else "deny", tokens=entry.tokens,
                          phrase_id=entry.phrase_id, scope=entry.scope) if entry.tokens else None
    if other is not None:
        found = client.get(index=name, id=other.id, ignore=[404])
        if found.get("found") and found["_source"].get("status") == "active":
            raise CurationStoreError(
                f"{entry.text!r}{' on ' + entry.scope if entry.scope else ''} is {other.action}ed (entry {other.id}, "
                f"by {found['_source'].get('who')}); `bloomspan curate remove {other.id}` first", index=name,
                item=other.id)
    stamp = now_iso()
    doc = {"kind": "entry", **entry.to_dict(), "status": "active", "created_at": entry.created_at or stamp,
           "updated_at": stamp}
    client.index(index=name, id=entry.id, body=doc, refresh=True)
    log.info("curation entry stored index=%s entry=%s action=%s scope=%s", name, entry.id, entry.action,
             entry.scope or "*")
    return doc


def remove_entry(client, template_index: str, entry_id: str, who: str, why: str | None = None) -> dict:
    """Mark an entry removed (kept for the history); a missing or removed id is an error."""
    name = curation_index(template_index)
    found = client.get(index=name, id=entry_id, ignore=[404])
    if not found.get("found") or found["_source"].get("status") != "active":
        raise CurationStoreError(f"no active curation entry {entry_id!r} in {name}; `bloomspan curate list` shows "
                                 "the ids", index=name, item=entry_id)
    stamp = now_iso()
    doc = {**found["_source"], "status": "removed", "removed_at": stamp, "removed_by": who, "updated_at": stamp}
    if why:
        doc["removed_why"] = why
    client.index(index=name, id=entry_id, body=doc, refresh=True)
    log.info("curation entry removed index=%s entry=%s", name, entry_id)
    return doc


def set_mode(client, template_index: str, pattern: str, mode: str, who: str, why: str | None = None) -> dict:
    """Store the cleaning mode of ``serve``'s ``--clean-index`` pattern ``pattern``."""
    if mode not in MODES:
        raise CurationStoreError(f"mode {mode!r}: must be one of {', '.join(MODES)}", item=mode)
    if not pattern:
        raise CurationStoreError("the pattern is empty: give the --clean-index pattern of serve, e.g. 'crawl-*'")
    name = _ensure_index(client, template_index)
    stamp = now_iso()
    doc = {"kind": "mode", "pattern": pattern, "mode": mode, "status": "active", "who": who,
           "created_at": stamp, "updated_at": stamp}
    if why:
        doc["why"] = why
    client.index(index=name, id=f"mode:{pattern}", body=doc, refresh=True)
    log.info("curation mode stored index=%s pattern=%s mode=%s", name, pattern, mode)
    return doc
