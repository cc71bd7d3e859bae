"""Does a target index take the fields the cleaner adds? Read from its mapping, cached briefly.

The cleaner adds the ``bloomspan`` object (and ``<field>_clean`` in downweight mode). An
index whose mapping says ``"dynamic": "strict"`` (or ``false``, or
``strict_allow_templates``) at the top level rejects or drops fields it does not map, so a
cleaned document would fail there; the rewriter then leaves those fields out
(``accepts_new_fields(index) -> False``). An index with its own mapping of every added
field, or dynamic mapping, accepts them; so does an index that does not exist yet (the
index template for the clean-index patterns maps the fields when the write creates it).

The service fetches the mappings a request needs (``GET /<index>/_mapping``) before the
rewrite, asynchronously, with the credentials the request is forwarded with (falling back
to the sidecar's own when those may not read mappings), and hands the rewriter a plain
lookup into this cache. A mapping that cannot be read counts as not accepting: cleaning
without new fields can never make the cluster reject a document.
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from urllib.parse import quote

from aiohttp import ClientSession, ClientTimeout

log = logging.getLogger(__name__)

CLOSED_DYNAMIC = {"strict", "false", "strict_allow_templates"}


def _mapped(properties: dict, path: str) -> bool:
    """Is the dotted ``path`` mapped in ``properties`` (objects descended by their properties)?"""
    node: dict | None = {"properties": properties}
    for part in path.split("."):
        node = (node or {}).get("properties", {}).get(part)
        if node is None:
            return False
    return True


def accepts_fields(mappings: dict, added_fields: tuple[str, ...]) -> bool:
    """Does one index's ``mappings`` object take documents with ``added_fields`` added?"""
    dynamic = str(mappings.get("dynamic", "true")).lower()
    if dynamic not in CLOSED_DYNAMIC:
        return True
    return all(_mapped(mappings.get("properties") or {}, f) for f in added_fields)


def added_fields(fields: tuple[str, ...], mode: str) -> tuple[str, ...]:
    """The top-level fields the cleaner adds to a document in ``mode``."""
    return ("bloomspan",) + (tuple(f"{f}_clean" for f in fields) if mode == "downweight" else ())


class NewFieldsProbe:
    """Per-index answers to "does it take the added fields?", each kept ``ttl`` seconds."""

    def __init__(self, added: tuple[str, ...], ttl: float = 10.0, max_entries: int = 1024):
        self.added = added
        self.ttl = ttl
        self.max_entries = max_entries
        self._cache: OrderedDict[str, tuple[bool, float]] = OrderedDict()

    def accepts(self, index: str | None) -> bool:
        """The cached answer for ``index`` (True for one never fetched: nothing is known against it)."""
        if not isinstance(index, str):
            return True
        entry = self._cache.get(index)
        return True if entry is None else entry[0]

    def _fresh(self, index: str) -> bool:
        entry = self._cache.get(index)
        return entry is not None and entry[1] > time.monotonic()

    def _store(self, index: str, accepts: bool) -> None:
        self._cache[index] = (accepts, time.monotonic() + self.ttl)
        self._cache.move_to_end(index)
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)

    async def prefetch(self, session: ClientSession, upstream_url: str, indices, headers: dict,
                       fallback_headers: dict | None = None) -> None:
        """Fetch the mappings of ``indices`` that are not cached (or are stale)."""
        for index in {i for i in indices if isinstance(i, str) and i}:
            if not self._fresh(index):
                self._store(index, await self._fetch(session, upstream_url, index, headers, fallback_headers))

    async def _fetch(self, session, upstream_url, index, headers, fallback_headers) -> bool:
        url = f"{upstream_url}/{quote(index, safe='')}/_mapping"
        attempts = [headers] + ([fallback_headers] if fallback_headers and fallback_headers != headers else [])
        status = None
        for attempt in attempts:
            try:
                async with session.get(url, headers=attempt, timeout=ClientTimeout(total=10)) as resp:
                    status = resp.status
                    if status == 404:
                        return True
                    if status == 200:
                        body = await resp.json(content_type=None)
                        return all(accepts_fields((m or {}).get("mappings") or {}, self.added)
                                   for m in body.values())
            except Exception as exc:  # the cluster is down or slow: decide conservatively
                log.warning("mapping probe index=%s failed error=%s; cleaned documents get no new fields",
                            index, type(exc).__name__)
                return False
        log.warning("mapping probe index=%s status=%s; cleaned documents get no new fields", index, status)
        return False
