"""Rewrite the bodies of `_bulk` and single-document index requests through a Cleaner.

Pure functions over bytes, so the proxy's rules are testable without a network:

* Only ``index`` and ``create`` items bound for a configured index pattern are cleaned;
  ``update`` and ``delete`` items and other indices are forwarded byte for byte.
* The proxy owns the cleaned text fields, the fields the cleaner adds (``<field>_clean``,
  ``<field>_chunks``) and the keys the cleaner writes inside its metadata object
  (``bloomspan``); nothing else. The new values are spliced into the original bytes
  (:mod:`.json_splice`): number spellings, key order, escapes, whitespace and the user's own
  keys under ``bloomspan`` reach the cluster as the client sent them, and a value that did not
  change is not rewritten.
* Anything doubtful is forwarded unchanged and the cluster decides: an unparseable or
  non-object source, invalid UTF-8, duplicate keys on a level the proxy would change, nesting
  too deep to read, a non-string ``_index``/``_id``, an item over ``max_item_bytes``, a document
  the cleaner reports as bad, an index that accepts no new fields (mark/downweight), or any
  exception while handling one item. Each is counted in ``ProxyStats.uncleaned_by_reason``;
  it never affects the other items and never escapes. Nothing is ever dropped.
* The NDJSON framing is never touched: line endings (LF or CRLF), blank lines, a missing
  final newline and a UTF-8 BOM at the start of a line (OpenSearch reads past it) stay as sent.
  An action line that cannot be read, or an unknown action, forwards the rest of the body
  verbatim: OpenSearch rejects the whole request for it, and guessing where its items end
  could pair the wrong lines.
* A document over ``max_ratio`` is routed to ``route_index`` when one is configured (the
  action line's ``_index`` spliced), else kept (and counted).

Memory: the body is walked line by line without splitting it; sources are parsed and cleaned
in rounds of about :data:`ROUND_BYTES`, and the output is one join of the untouched body
slices (memoryviews, no copies) and the rewritten lines.
"""
from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bloomspan.sidecar.serve.json_splice import (
    ANY_KEY,
    REPLACE,
    ObjectSpans,
    Plan,
    SpliceError,
    parse_object,
    read_value,
    splice,
)

log = logging.getLogger(__name__)

BULK_ACTIONS = ("index", "create", "update", "delete")
CLEANED_ACTIONS = ("index", "create")
DEFAULT_MAX_ITEM_BYTES = 16 * 1024 * 1024
"""A source longer than this is forwarded uncleaned (reason ``too_large``)."""
ROUND_BYTES = 1 << 22
"""Source bytes parsed and cleaned together: bounds the parsed documents held at once."""
MAX_ERROR_REASONS = 20
"""``ProxyStats.error_reasons`` keeps the first this many messages (a log sample, not a count)."""

_BOM = "\ufeff"
_ACTION_PLAN: Plan = {verb: {"_index": REPLACE} for verb in BULK_ACTIONS}
_CLEANER_ERROR_REASONS = {"too_large": "too_large", "invalid_text": "invalid_text", "field_type": "field_not_text"}


@dataclass
class ProxyStats:
    """Per-request outcome counts (also summed into the service's metrics).

    items:          index/create items bound for a cleaned index (candidates).
    cleaned:        forwarded with at least one value spliced.
    unchanged:      cleaned without a change to forward.
    passed_through: forwarded uncleaned by the proxy's own decision (not JSON, duplicate keys, ...).
    errors:         forwarded uncleaned because the cleaner reported the document as bad.
    uncleaned_by_reason: every uncleaned item (passed_through + errors) by reason.
    error_reasons:  the cleaner's first messages, for the log.
    """

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
    uncleaned_by_reason: dict[str, int] = field(default_factory=dict)

    def add(self, other: ProxyStats) -> None:
        for name in ("items", "cleaned", "unchanged", "passed_through", "errors", "routed",
                     "over_ratio_kept", "covered_tokens", "tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.error_reasons.extend(other.error_reasons[: max(0, MAX_ERROR_REASONS - len(self.error_reasons))])
        for reason, n in other.uncleaned_by_reason.items():
            self.uncleaned_by_reason[reason] = self.uncleaned_by_reason.get(reason, 0) + n

    def uncleaned(self, reason: str, *, cleaner_error: str | None = None) -> None:
        """Count one item forwarded uncleaned for ``reason``."""
        self.uncleaned_by_reason[reason] = self.uncleaned_by_reason.get(reason, 0) + 1
        if cleaner_error is None:
            self.passed_through += 1
        else:
            self.errors += 1
            if len(self.error_reasons) < MAX_ERROR_REASONS:
                self.error_reasons.append(cleaner_error)


@dataclass(frozen=True)
class IndexPatterns:
    """Which target indices get cleaned (fnmatch patterns, e.g. ``crawl-*``)."""

    patterns: tuple[str, ...]

    def matches(self, index: str | None) -> bool:
        if not index or index.startswith("."):
            return False
        return any(fnmatch.fnmatchcase(index, p) for p in self.patterns)


class _Uncleaned(Exception):
    """This item goes through as sent, for ``reason`` (``cleaner_message``: the cleaner's own
    description when it reported the document as bad)."""

    def __init__(self, reason: str, cleaner_message: str | None = None):
        self.reason = reason
        self.cleaner_message = cleaner_message
        super().__init__(reason)

    def count(self, stats: ProxyStats) -> None:
        stats.uncleaned(self.reason, cleaner_error=self.cleaner_message)


def _add_path(plan: Plan, path: list[str]) -> None:
    node = plan
    for key in path[:-1]:
        child = node.setdefault(key, {})
        if child == REPLACE:
            return  # the whole value is ours already
        node = child
    node[path[-1]] = REPLACE


def source_plan(config, accepts_new_fields: bool = True) -> Plan:
    """What the proxy may change in a source for a cleaner ``config``: the text fields (flat
    key or dotted path), the derived fields and the metadata object's keys; with
    ``accepts_new_fields`` False only the text fields (strip mode rewrites them in place)."""
    names = list(config.fields)
    if accepts_new_fields:
        names += [f + config.clean_suffix for f in config.fields] + [f + config.chunks_suffix for f in config.fields]
    plan: Plan = {}
    for name in names:
        _add_path(plan, [name])
        parts = name.split(".")
        if len(parts) > 1 and all(parts):
            _add_path(plan, parts)
    if accepts_new_fields and config.meta_field is not None:
        plan[config.meta_field] = {ANY_KEY: REPLACE}
    return plan


def _decode(raw: bytes) -> tuple[str, int]:
    """``(text, start)``: the line as text and where its JSON starts (after a BOM)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Uncleaned("invalid_utf8") from None
    return text, 1 if text.startswith(_BOM) else 0


def _parse_source(raw: bytes, plan: Plan, max_item_bytes: int) -> tuple[str, dict, ObjectSpans]:
    if len(raw) > max_item_bytes:
        raise _Uncleaned("too_large")
    text, start = _decode(raw)
    try:
        doc, spans, _ = parse_object(text, plan, start)
    except SpliceError as e:
        raise _Uncleaned(e.reason) from None
    return text, doc, spans


@dataclass
class _Item:
    """One index/create item waiting for its round: where its lines are and what was read."""

    action_span: tuple[int, int]
    source_span: tuple[int, int]
    action: tuple[str, dict, str, int]  # verb, meta, line text, where its JSON starts
    index: str
    text: str
    doc: dict
    spans: ObjectSpans
    plan: Plan


class _Output:
    """The forwarded body: untouched slices of the input (memoryviews) and replaced lines."""

    def __init__(self, body: bytes):
        self.body = body
        self.view = memoryview(body)
        self.pieces: list = []
        self.done = 0

    def replace(self, start: int, end: int, data: bytes) -> None:
        if start > self.done:
            self.pieces.append(self.view[self.done:start])
        self.pieces.append(data)
        self.done = end

    def result(self) -> bytes:
        if not self.pieces:
            return self.body
        self.pieces.append(self.view[self.done:])
        return b"".join(self.pieces)


def _lines(body: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line without its ``\\n``."""
    pos, n = 0, len(body)
    while pos < n:
        nl = body.find(b"\n", pos)
        end = n if nl < 0 else nl
        yield pos, end
        pos = end + 1


def _is_blank(raw: bytes) -> bool:
    # OpenSearch skips a line with no JSON token where it expects an action.
    return not raw.strip(b" \t\r")


def _read_action(raw: bytes) -> tuple[str, dict, str, int]:
    """``(verb, meta, line text, where its JSON starts)`` of an action line. Read like OpenSearch
    reads it: past a BOM, ignoring what follows the action object on the line."""
    text, start = _decode(raw)
    try:
        action, _ = read_value(text, start)
    except SpliceError:
        raise _Uncleaned("invalid_action") from None
    if not isinstance(action, dict) or len(action) != 1:
        raise _Uncleaned("invalid_action")
    ((verb, meta),) = action.items()
    if verb not in BULK_ACTIONS:
        raise _Uncleaned("unsupported_action")
    if not isinstance(meta, dict):
        raise _Uncleaned("invalid_action")
    return verb, meta, text, start


def _cleaner_reason(result, meta_field: str | None) -> str:
    error = result.error
    if meta_field is not None and getattr(error, "field", None) == meta_field:
        return "field_conflict"  # the document's own value where the metadata object goes
    return _CLEANER_ERROR_REASONS.get(getattr(error, "kind", None), "cleaner_error")


def _clean_all(cleaner, docs: list, ids: list) -> list:
    """``clean_batch`` results; if the batch call itself raises, one document at a time, and a
    document whose call raises gets the exception instead of a result."""
    try:
        return cleaner.clean_batch(docs, ids)
    except Exception:
        log.exception("proxy clean_batch failed; cleaning %d documents one by one", len(docs))
    results: list = []
    for doc, doc_id in zip(docs, ids):
        try:
            results.append(cleaner.clean(doc, doc_id))
        except Exception as e:
            results.append(e)
    return results


def _cleaned_source(result, item_text: str, spans: ObjectSpans, doc: dict, plan: Plan,
                    meta_field: str | None) -> tuple[bytes | None, bool]:
    """``(new source bytes, over_ratio)`` for one clean result; None when nothing changed.
    Raises :class:`_Uncleaned` when the item must go through as sent."""
    if isinstance(result, BaseException):
        raise _Uncleaned("cleaner_error")
    if not result.ok:
        raise _Uncleaned(_cleaner_reason(result, meta_field), result.reason or "error")
    if not result.changed:
        return None, result.dropped
    try:
        new_text = splice(item_text, spans, doc, result.doc, plan)
    except SpliceError as e:
        raise _Uncleaned(e.reason) from None
    return (None if new_text is item_text else new_text.encode("utf-8")), result.dropped


def _count_cleaned(stats: ProxyStats, result, changed: bool) -> None:
    stats.tokens += result.n_tokens
    stats.covered_tokens += result.covered_tokens
    if changed:
        stats.cleaned += 1
    else:
        stats.unchanged += 1


def _routed_action(item: _Item, route_index: str) -> bytes:
    """The item's action line with ``_index`` spliced to the route (spans are read only here:
    routing is rare, and the walk refuses an action line with duplicate keys)."""
    verb, meta, text, start = item.action
    old, spans, _ = parse_object(text, _ACTION_PLAN, start, trailing_data=True)
    routed = route_index.replace("{index}", item.index)
    return splice(text, spans, old, {verb: dict(meta, _index=routed)}, _ACTION_PLAN).encode("utf-8")


def _internal_error(stats: ProxyStats, where: str, e: BaseException) -> None:
    if "internal_error" not in stats.uncleaned_by_reason:  # one traceback per request, then counts
        log.error("proxy %s: item forwarded unchanged after %s: %s", where, type(e).__name__, e, exc_info=e)
    stats.uncleaned("internal_error")


class _BulkRewriter:
    """State of one ``rewrite_bulk`` call: the output, the round being filled, the stats."""

    def __init__(self, body: bytes, cleaner, route_index: str | None, accepts_new_fields, max_item_bytes: int):
        self.body = body
        self.cleaner = cleaner
        self.route_index = route_index
        self.accepts_new_fields = accepts_new_fields
        self.max_item_bytes = max_item_bytes
        self.mode = cleaner.config.mode
        self.plans = {True: source_plan(cleaner.config, True), False: source_plan(cleaner.config, False)}
        self.accepts: dict[str, bool] = {}
        self.out = _Output(body)
        self.stats = ProxyStats()
        self.round: list[tuple[_Item, Any]] = []
        self.round_bytes = 0

    def _accepts(self, index: str) -> bool:
        if self.accepts_new_fields is None:
            return True
        if index not in self.accepts:
            self.accepts[index] = bool(self.accepts_new_fields(index))
        return self.accepts[index]

    def add(self, action_span, source_span, action, index: str) -> None:
        """Read one index/create item for a cleaned index into the round (or count why not)."""
        verb, meta, _, _ = action
        self.stats.items += 1
        doc_id = meta.get("_id")
        if doc_id is not None and not isinstance(doc_id, str):
            raise _Uncleaned("non_string_id")
        accepts = self._accepts(index)
        if not accepts and self.mode != "strip":
            raise _Uncleaned("strict_mapping")
        plan = self.plans[accepts]
        text, doc, spans = _parse_source(self.body[source_span[0]:source_span[1]], plan, self.max_item_bytes)
        self.round.append((_Item(action_span, source_span, action, index, text, doc, spans, plan), doc_id))
        self.round_bytes += source_span[1] - source_span[0]
        if self.round_bytes >= ROUND_BYTES:
            self.flush()

    def flush(self) -> None:
        """Clean the round's documents together and splice the results into the output."""
        if not self.round:
            return
        items = [item for item, _ in self.round]
        results = _clean_all(self.cleaner, [item.doc for item in items], [doc_id for _, doc_id in self.round])
        self.round, self.round_bytes = [], 0
        for item, result in zip(items, results):
            try:
                self._write(item, result)
            except _Uncleaned as e:
                e.count(self.stats)
            except Exception as e:
                _internal_error(self.stats, "bulk", e)

    def _write(self, item: _Item, result) -> None:
        new_source, over = _cleaned_source(result, item.text, item.spans, item.doc, item.plan,
                                             self.cleaner.config.meta_field)
        new_action = _routed_action(item, self.route_index) if over and self.route_index else None
        # Everything is computed before anything is written or counted: an item is rewritten
        # whole or forwarded as sent.
        _count_cleaned(self.stats, result, new_source is not None)
        if new_action is not None:
            self.out.replace(*item.action_span, new_action)
            self.stats.routed += 1
        elif over:
            self.stats.over_ratio_kept += 1
        if new_source is not None:
            self.out.replace(*item.source_span, new_source)


def rewrite_bulk(body: bytes, cleaner, patterns: IndexPatterns, default_index: str | None = None,
                 route_index: str | None = None, *,
                 accepts_new_fields: Callable[[str], bool] | None = None,
                 max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> tuple[bytes, ProxyStats]:
    """Clean the ``index``/``create`` sources of an NDJSON bulk body bound for ``patterns``.

    ``default_index``: the index of the URL path (``/crawl/_bulk``). ``route_index``: where an
    over-``max_ratio`` document goes (``{index}`` is replaced by its index). ``accepts_new_fields``:
    ``index -> bool``; False means the index takes no new fields (``dynamic: strict`` without a
    ``bloomspan`` mapping): strip mode rewrites the text fields in place and adds nothing,
    mark/downweight forward the item unchanged (reason ``strict_mapping``).
    Never raises for anything in ``body``; returns ``(forwarded body, stats)``.
    """
    rewriter = _BulkRewriter(body, cleaner, route_index, accepts_new_fields, max_item_bytes)
    stats = rewriter.stats
    matched: dict[str | None, bool] = {}  # index -> bound for cleaning (a request names few indices)
    lines = _lines(body)
    for action_span in lines:
        raw = body[action_span[0]:action_span[1]]
        if _is_blank(raw):
            continue
        try:
            action = _read_action(raw)
        except _Uncleaned as e:
            e.count(stats)  # the rest of the body goes through as sent
            break
        except Exception as e:
            _internal_error(stats, "bulk action", e)
            break
        verb, meta, _, _ = action
        if verb == "delete":
            continue
        source_span = next(lines, None)
        if source_span is None or verb not in CLEANED_ACTIONS:
            continue
        index = meta.get("_index", default_index)
        try:
            if index is not None and not isinstance(index, str):
                stats.items += 1
                raise _Uncleaned("non_string_index")
            cleaned = matched.get(index)
            if cleaned is None:
                cleaned = matched[index] = patterns.matches(index)
            if cleaned:
                rewriter.add(action_span, source_span, action, index)
        except _Uncleaned as e:
            e.count(stats)
        except Exception as e:
            _internal_error(stats, "bulk item", e)
    try:
        rewriter.flush()
    except Exception as e:  # flush handles each item; this is a last guard for the request
        _internal_error(stats, "bulk round", e)
    return rewriter.out.result(), stats


def rewrite_single(body: bytes, cleaner, index: str, patterns: IndexPatterns, doc_id: str | None = None, *,
                   accepts_new_fields: Callable[[str], bool] | None = None,
                   max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> tuple[bytes, ProxyStats, bool]:
    """Clean a single-document index/create body. Returns ``(body, stats, over_ratio)``; the
    same rules as :func:`rewrite_bulk` (the service routes an over-ratio document by path)."""
    stats = ProxyStats()
    if not patterns.matches(index):
        return body, stats, False
    stats.items += 1
    try:
        accepts = True if accepts_new_fields is None else bool(accepts_new_fields(index))
        if not accepts and cleaner.config.mode != "strip":
            raise _Uncleaned("strict_mapping")
        plan = source_plan(cleaner.config, accepts)
        text, doc, spans = _parse_source(body, plan, max_item_bytes)
        (result,) = _clean_all(cleaner, [doc], [doc_id])
        new_body, over = _cleaned_source(result, text, spans, doc, plan, cleaner.config.meta_field)
    except _Uncleaned as e:
        e.count(stats)
        return body, stats, False
    except Exception as e:
        _internal_error(stats, "single", e)
        return body, stats, False
    _count_cleaned(stats, result, new_body is not None)
    return (body if new_body is None else new_body), stats, over
