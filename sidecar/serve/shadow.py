"""Shadow mode: documents keep their text as sent and get the spans strip would remove.

``serve --mode shadow`` (or a pattern switched to shadow in the curation index) cleans with
the same phrase set and matcher as strip, in mark mode: ``bloomspan.spans`` (character
offsets of what strip would remove, with the phrase ids) and ``bloomspan.boilerplate_ratio``
are written, the text fields are not touched. :class:`ShadowMeter` counts, per site, what
strip would have removed; ``/metrics`` exports it and ``GET /shadow`` lists it, so an
operator sees the effect of strip on real traffic before switching a pattern to it.

Sites come from the cleaner's ``scope_field`` (a URL counts as its host); without one every
document counts under ``_all``. At most :data:`MAX_SITES` sites get their own label, later
ones count under ``_other``, so a crawl of many sites cannot blow up the metrics.
"""
from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from bloomspan.sidecar.publish.publication import site_name

MAX_SITES = 200
ALL_SITES = "_all"
OTHER_SITES = "_other"


class ShadowMeter:
    """Per-site totals of shadow-mode documents (thread-safe; the proxy cleans in threads)."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, int]] = {}
        self._documents = self._tokens = self._characters = None
        if registry is not None:
            self._documents = Counter("bloomspan_shadow_documents", "Documents cleaned in shadow mode, by site",
                                      ["site"], registry=registry)
            self._tokens = Counter("bloomspan_shadow_tokens", "Tokens of shadow-mode documents (all) and those "
                                   "strip would have removed (would_strip), by site", ["site", "part"],
                                   registry=registry)
            self._characters = Counter("bloomspan_shadow_characters", "Characters of shadow-mode text fields (all) "
                                       "and inside the spans strip would have removed (would_strip), by site",
                                       ["site", "part"], registry=registry)

    def _site_label(self, site: str | None) -> str:
        label = site or ALL_SITES
        if label not in self._rows and len(self._rows) >= MAX_SITES:
            return OTHER_SITES
        return label

    def observe(self, site: str | None, tokens: int, strip_tokens: int, characters: int, strip_characters: int) -> None:
        with self._lock:
            label = self._site_label(site)
            row = self._rows.setdefault(label, {"documents": 0, "tokens": 0, "would_strip_tokens": 0,
                                                "characters": 0, "would_strip_characters": 0})
            row["documents"] += 1
            row["tokens"] += tokens
            row["would_strip_tokens"] += strip_tokens
            row["characters"] += characters
            row["would_strip_characters"] += strip_characters
        if self._documents is not None:
            self._documents.labels(site=label).inc()
            self._tokens.labels(site=label, part="all").inc(tokens)
            self._tokens.labels(site=label, part="would_strip").inc(strip_tokens)
            self._characters.labels(site=label, part="all").inc(characters)
            self._characters.labels(site=label, part="would_strip").inc(strip_characters)

    def rows(self) -> list[dict]:
        """Per-site totals, the sites strip would change most first."""
        with self._lock:
            rows = [{"site": site, **row, "would_strip_share": row["would_strip_tokens"] / row["tokens"]
                     if row["tokens"] else 0.0} for site, row in self._rows.items()]
        rows.sort(key=lambda r: (-r["would_strip_tokens"], r["site"]))
        return rows


def _site_of(doc: Any, scope_field: str | None) -> str | None:
    if scope_field is None or not isinstance(doc, dict):
        return None
    value = doc.get(scope_field)
    return site_name(value) if isinstance(value, str) and value else None


class ShadowCleaner:
    """A mark-mode cleaner whose results are counted in a :class:`ShadowMeter`. Has the
    surface the proxy uses (``config``, ``clean_batch``, ``clean``, ``phrase_set``)."""

    def __init__(self, cleaner, meter: ShadowMeter):
        if cleaner.config.mode != "mark":
            raise ValueError(f"shadow mode wraps a mark-mode cleaner, got mode {cleaner.config.mode!r}")
        self.inner = cleaner
        self.meter = meter
        self.config = cleaner.config

    @property
    def phrase_set(self):
        return self.inner.phrase_set

    @property
    def templates(self):
        return getattr(self.inner, "templates", None)

    def clean_batch(self, docs, doc_ids=None) -> list:
        docs = list(docs)
        results = self.inner.clean_batch(docs, doc_ids)
        for doc, result in zip(docs, results):
            if not result.ok:
                continue
            characters = sum(len(doc[name]) for name in result.fields if isinstance(doc.get(name), str))
            strip_characters = sum(end - start for report in result.fields.values()
                                   for start, end, _ in report.spans)
            self.meter.observe(_site_of(doc, self.config.scope_field), result.n_tokens, result.covered_tokens,
                               characters, strip_characters)
        return results

    def clean(self, doc, doc_id=None):
        return self.clean_batch([doc], [doc_id])[0]
