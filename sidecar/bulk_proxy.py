"""Rewrite the bodies of `_bulk` and single-document index requests through a Cleaner.

Pure functions over bytes, so the proxy's rules are testable without a network:

* Only ``index`` and ``create`` items bound for a configured index pattern are cleaned;
  ``update`` and ``delete`` items, other indices and every line we cannot parse are forwarded
  byte for byte (the cluster, not the proxy, answers for invalid input, so its per-item
  errors reach the client unchanged).
* A document the cleaner reports as bad (non-string field, nested value, too large, ...) is
  forwarded unchanged and counted; nothing is ever dropped. A document over ``max_ratio`` is
  routed to ``route_index`` when one is configured, else kept (and counted).
"""
from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field

BULK_ACTIONS = ("index", "create", "update", "delete")
CLEANED_ACTIONS = ("index", "create")


@dataclass
class ProxyStats:
    """Per-request outcome counts (also summed into the service's metrics)."""

    items: int = 0
    cleaned: int = 0
    unchanged: int = 0
    passed_through: int = 0
    errors: int = 0
    routed: int = 0
    over_ratio_kept: int = 0
    covered_tokens: int = 0
    tokens: int = 0
    error_reasons: list[str] = field(default_factory=list)

    def add(self, other: "ProxyStats") -> None:
        for name in ("items", "cleaned", "unchanged", "passed_through", "errors", "routed",
                     "over_ratio_kept", "covered_tokens", "tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error_reasons.extend(other.error_reasons)


@dataclass(frozen=True)
class IndexPatterns:
    """Which target indices get cleaned (fnmatch patterns, e.g. ``crawl-*``)."""

    patterns: tuple[str, ...]

    def matches(self, index: str | None) -> bool:
        if not index or index.startswith("."):
            return False
        return any(fnmatch.fnmatchcase(index, p) for p in self.patterns)


def _dumps(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _parse_source(source: bytes, stats: ProxyStats):
    """The document of a source line, or None (forwarded byte for byte) when it is not JSON."""
    stats.items += 1
    try:
        return json.loads(source)
    except (ValueError, UnicodeDecodeError):
        stats.passed_through += 1
        return None


def _apply(result, source: bytes, stats: ProxyStats) -> tuple[bytes, bool]:
    """``(bytes to forward, over_ratio)`` for one cleaned document."""
    if not result.ok:
        stats.errors += 1
        stats.error_reasons.append(result.reason or "error")
        return source, False
    stats.tokens += result.n_tokens
    stats.covered_tokens += result.covered_tokens
    if not result.changed:
        stats.unchanged += 1
        return source, False
    stats.cleaned += 1
    return _dumps(result.doc), result.dropped


def rewrite_bulk(body: bytes, cleaner, patterns: IndexPatterns, default_index: str | None = None,
                 route_index: str | None = None) -> tuple[bytes, ProxyStats]:
    """Clean the ``index``/``create`` sources of an NDJSON bulk body bound for ``patterns``.

    The documents of one request are cleaned together with ``Cleaner.clean_batch`` (one
    tokenizer and matcher pass for the whole request).
    """
    stats = ProxyStats()
    lines = body.split(b"\n")
    out: list[bytes] = []
    pending: list[tuple[int, str, dict, str | None]] = []  # (position in out, verb, meta, index)
    docs: list = []
    ids: list = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            out.append(line)
            i += 1
            continue
        try:
            action = json.loads(line)
            (verb, meta), = action.items()
        except (ValueError, UnicodeDecodeError, AttributeError):
            # Not an action line we understand: forward the rest verbatim, the cluster answers.
            out.extend(lines[i:])
            stats.passed_through += 1
            break
        has_source = verb in ("index", "create", "update")
        if verb not in BULK_ACTIONS or not isinstance(meta, dict):
            out.extend(lines[i:])
            stats.passed_through += 1
            break
        source = lines[i + 1] if has_source and i + 1 < n else None
        index = meta.get("_index", default_index)
        out.append(line)
        if source is not None:
            out.append(source)
            if verb in CLEANED_ACTIONS and patterns.matches(index):
                doc = _parse_source(source, stats)
                if doc is not None:
                    pending.append((len(out) - 2, verb, meta, index))
                    docs.append(doc)
                    ids.append(meta.get("_id"))
        i += 2 if has_source else 1
    if docs:
        for (pos, verb, meta, index), result in zip(pending, cleaner.clean_batch(docs, ids)):
            new_source, over = _apply(result, out[pos + 1], stats)
            out[pos + 1] = new_source
            if over and route_index:
                out[pos] = _dumps({verb: dict(meta, _index=route_index.replace("{index}", index))})
                stats.routed += 1
            elif over:
                stats.over_ratio_kept += 1
    return b"\n".join(out), stats


def rewrite_single(body: bytes, cleaner, index: str, patterns: IndexPatterns,
                   doc_id: str | None = None) -> tuple[bytes, ProxyStats, bool]:
    """Clean a single-document index/create body. Returns ``(body, stats, over_ratio)``."""
    stats = ProxyStats()
    if not patterns.matches(index):
        return body, stats, False
    doc = _parse_source(body, stats)
    if doc is None:
        return body, stats, False
    new_body, over = _apply(cleaner.clean(doc, doc_id=doc_id), body, stats)
    return new_body, stats, over
