"""What the names a write targets stand for: aliases and data streams, asked of the cluster.

The access rules (:mod:`.proxy_access`) decide by index name, but a name can be an alias or a
data stream whose indices are other ones: an alias that matches ``--clean-index`` may point at
the lease index. Before a write is checked, the proxy asks the cluster
(``GET /_resolve/index/<names>``, OpenSearch and Elasticsearch 7.9+) what each concrete name
it targets is, with the credentials the write itself would use; the rules then check the
indices behind each alias and data stream too.

A name is resolved only when it is concrete (no wildcard, date math or comma): those are
checked as patterns already. Between the answer and the write an alias could still move; the
check narrows what a mistake or a client can reach, it does not lock the cluster's aliases.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from aiohttp import ClientSession

log = logging.getLogger(__name__)

RESOLVE_PATH = "/_resolve/index/"
_NOT_CONCRETE = set("*?,<>{}")


def is_concrete(name: object) -> bool:
    """A name the cluster can resolve on its own: a string with no wildcard, list or date math."""
    return isinstance(name, str) and bool(name) and not (set(name) & _NOT_CONCRETE) and not name.startswith(("-", "+"))


@dataclass(frozen=True)
class Resolution:
    """``aliases``/``data_streams``: name -> the indices behind it (the backing indices of a data
    stream). A name in neither is a concrete index or does not exist. ``failed``: why the cluster
    could not say (then nothing is known beyond the names)."""

    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    data_streams: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    failed: str | None = None

    def behind(self, name: str) -> tuple[str, ...]:
        """The indices behind ``name`` when it is an alias or a data stream, else ()."""
        return tuple(self.aliases.get(name, ())) + tuple(self.data_streams.get(name, ()))


NOTHING_RESOLVED = Resolution()


def resolution_from_answer(answer: Mapping) -> Resolution:
    """A :class:`Resolution` from the JSON of ``GET /_resolve/index``."""
    aliases = {a["name"]: tuple(a.get("indices") or ()) for a in answer.get("aliases") or () if "name" in a}
    streams = {d["name"]: tuple(d.get("backing_indices") or ()) for d in answer.get("data_streams") or ()
               if "name" in d}
    return Resolution(aliases, streams)


async def resolve_targets(session: ClientSession, upstream_url: str, names: Iterable[str],
                          headers: Mapping[str, str]) -> Resolution:
    """Ask the cluster what ``names`` are. Connection failures raise (the service answers them
    as 502/503/504, as it would the write); an error answer gives ``Resolution(failed=...)``."""
    names = sorted({n for n in names if is_concrete(n)})
    if not names:
        return NOTHING_RESOLVED
    url = upstream_url + RESOLVE_PATH + ",".join(quote(n, safe="") for n in names) + "?expand_wildcards=all"
    async with session.get(url, headers=dict(headers)) as resp:
        if resp.status != 200:
            text = (await resp.text(errors="replace"))[:200]
            log.warning("proxy resolve_failed status=%d names=%d", resp.status, len(names))
            return Resolution(failed=f"the cluster answered {resp.status} to {RESOLVE_PATH}: {text}")
        return resolution_from_answer(await resp.json(content_type=None))
