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

One reading of the body: the items come from :func:`~.bulk_items.parse_bulk` (the service
parses once and hands the same list to the access rules, this rewrite and the emerging hook),
and the cleaner is chosen per item (``cleaner_for``), so a body whose items go to indices
cleaned in different modes is rewritten in one pass and each item is counted once.

Memory: sources are parsed and cleaned in rounds of about :data:`ROUND_BYTES`; the output
(:class:`BulkOutput`) is the untouched body slices (memoryviews, no copies) and the rewritten
lines, streamed to the cluster in pieces, never joined into a second copy of the body.
"""
from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bloomspan.sidecar.serve.bulk_items import BulkBody, BulkItem, parse_bulk
from bloomspan.sidecar.serve.json_splice import (
    ANY_KEY,
    REPLACE,
    ObjectSpans,
    Plan,
    SpliceError,
    parse_object,
    splice,
    splice_bytes,
)

log = logging.getLogger(__name__)

BULK_ACTIONS = ("index", "create", "update", "delete")
CLEANED_ACTIONS = ("index", "create")
DEFAULT_MAX_ITEM_BYTES = 16 * 1024 * 1024
"""A source longer than this is forwarded uncleaned (reason ``too_large``)."""
ROUND_BYTES = 1 << 20
"""Source bytes parsed and cleaned together: bounds the parsed documents held at once."""
CHUNK_BYTES = 1 << 20
"""Pieces :meth:`BulkOutput.chunks` cuts the forwarded body into."""
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


class BulkOutput:
    """The forwarded body: untouched slices of the input (memoryviews, no copies) and the
    replaced lines, in order. ``size`` is its length; :meth:`chunks` yields it in pieces of
    about :data:`CHUNK_BYTES` (for a sized upload: no second copy of the body); :meth:`take`
    hands out the part that is final so far (for a streamed one); :meth:`joined` is the whole
    as bytes."""

    def __init__(self, body: bytes):
        self.body = body
        self.view = memoryview(body)
        self.pieces: list = []
        self.done = 0  # input offset up to which the output is in pieces (or was taken)
        self.changed = False

    def replace(self, start: int, end: int, data: bytes) -> None:
        if start > self.done:
            self.pieces.append(self.view[self.done:start])
        self.pieces.append(data)
        self.done = end
        self.changed = True

    def take(self, upto: int) -> bytes:
        """The output up to input offset ``upto`` (past every replaced span so far), as one
        piece; later calls and :meth:`chunks` continue from there."""
        if upto > self.done:
            self.pieces.append(self.view[self.done:upto])
            self.done = upto
        piece = b"".join(self.pieces)
        self.pieces = []
        return piece

    def _close(self) -> None:
        if self.done < len(self.body):
            self.pieces.append(self.view[self.done:])
            self.done = len(self.body)

    @property
    def size(self) -> int:
        self._close()
        return sum(len(p) for p in self.pieces)

    def chunks(self) -> Iterator:
        """The rest of the body in order, as memoryviews and bytes of at most :data:`CHUNK_BYTES`."""
        self._close()
        for piece in self.pieces:
            for start in range(0, len(piece), CHUNK_BYTES):
                yield piece[start:start + CHUNK_BYTES]

    def joined(self) -> bytes:
        """The whole output (the input itself when nothing was replaced and it is bytes)."""
        if not self.changed and isinstance(self.body, bytes):
            return self.body
        self._close()
        return b"".join(self.pieces)


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


def _cleaned_source(result, raw: bytes, item_text: str, spans: ObjectSpans, doc: dict, plan: Plan,
                    meta_field: str | None) -> tuple[bytes | None, bool]:
    """``(new source bytes, over_ratio)`` for one clean result (``raw``: the source as sent,
    ``item_text`` its decoding); None when nothing changed. Raises :class:`_Uncleaned` when
    the item must go through as sent."""
    if isinstance(result, BaseException):
        raise _Uncleaned("cleaner_error")
    if not result.ok:
        raise _Uncleaned(_cleaner_reason(result, meta_field), result.reason or "error")
    if not result.changed:
        return None, result.dropped
    try:
        new_source = splice_bytes(raw, item_text, spans, doc, result.doc, plan)
    except SpliceError as e:
        raise _Uncleaned(e.reason) from None
    return (None if new_source is raw else new_source), result.dropped


def _count_cleaned(stats: ProxyStats, result, changed: bool) -> None:
    stats.tokens += result.n_tokens
    stats.covered_tokens += result.covered_tokens
    if changed:
        stats.cleaned += 1
    else:
        stats.unchanged += 1


def _routed_action(body: bytes, item: BulkItem, route_index: str) -> bytes:
    """The item's action line with ``_index`` spliced to the route. The line is read again
    here, with spans: routing is rare, and the walk refuses an action line with duplicate keys."""
    text, start = _decode(bytes(body[item.action_span[0]:item.action_span[1]]))
    old, spans, _ = parse_object(text, _ACTION_PLAN, start, trailing_data=True)
    ((verb, meta),) = old.items()
    routed = route_index.replace("{index}", item.index)
    return splice(text, spans, old, {verb: dict(meta, _index=routed)}, _ACTION_PLAN).encode("utf-8")


def _internal_error(stats: ProxyStats, where: str, e: BaseException) -> None:
    if "internal_error" not in stats.uncleaned_by_reason:  # one traceback per request, then counts
        log.error("proxy %s: item forwarded unchanged after %s: %s", where, type(e).__name__, e, exc_info=e)
    stats.uncleaned("internal_error")


@dataclass
class _Pending:
    """One index/create item waiting for its round: what was read of its source, and the
    cleaner chosen for it."""

    item: BulkItem
    cleaner: Any
    text: str
    doc: dict
    spans: ObjectSpans
    plan: Plan


class _BulkRewriter:
    """State of one rewrite: the output, the round being filled, the stats."""

    def __init__(self, bulk: BulkBody, cleaner_for: Callable[[str], Any], route_index: str | None,
                 accepts_new_fields, max_item_bytes: int, on_document: Callable[[BulkItem, dict], None] | None):
        self.body = bulk.body
        self.cleaner_for = cleaner_for
        self.route_index = route_index
        self.accepts_new_fields = accepts_new_fields
        self.max_item_bytes = max_item_bytes
        self.on_document = on_document
        self.plans: dict[tuple[int, bool], Plan] = {}  # (id of the cleaner, accepts new fields) -> plan
        self.accepts: dict[str, bool] = {}
        self.out = BulkOutput(bulk.body)
        self.stats = ProxyStats()
        self.round: list[_Pending] = []
        self.round_bytes = 0

    def _accepts(self, index: str) -> bool:
        if self.accepts_new_fields is None:
            return True
        if index not in self.accepts:
            self.accepts[index] = bool(self.accepts_new_fields(index))
        return self.accepts[index]

    def _plan(self, cleaner, accepts: bool) -> Plan:
        key = (id(cleaner), accepts)
        if key not in self.plans:
            self.plans[key] = source_plan(cleaner.config, accepts)
        return self.plans[key]

    def add(self, item: BulkItem) -> None:
        """Read one index/create item for a cleaned index into the round (or count why not)."""
        self.stats.items += 1
        if item.doc_id is not None and not isinstance(item.doc_id, str):
            raise _Uncleaned("non_string_id")
        cleaner = self.cleaner_for(item.index)
        accepts = self._accepts(item.index)
        if not accepts and cleaner.config.mode != "strip":
            raise _Uncleaned("strict_mapping")
        plan = self._plan(cleaner, accepts)
        start, end = item.source_span
        text, doc, spans = _parse_source(self.body[start:end], plan, self.max_item_bytes)
        self.round.append(_Pending(item, cleaner, text, doc, spans, plan))
        self.round_bytes += end - start

    def flush(self) -> None:
        """Clean the round's documents together (one batch per cleaner) and splice the results
        into the output in the body's order."""
        if not self.round:
            return
        pending, self.round, self.round_bytes = self.round, [], 0
        by_cleaner: dict[int, list[int]] = {}
        for n, p in enumerate(pending):
            by_cleaner.setdefault(id(p.cleaner), []).append(n)
        results: list = [None] * len(pending)
        for positions in by_cleaner.values():
            cleaner = pending[positions[0]].cleaner
            got = _clean_all(cleaner, [pending[n].doc for n in positions], [pending[n].item.doc_id for n in positions])
            for n, result in zip(positions, got):
                results[n] = result
        for p, result in zip(pending, results):
            try:
                forwarded = self._write(p, result)
            except _Uncleaned as e:
                e.count(self.stats)
                forwarded = p.doc
            except Exception as e:
                _internal_error(self.stats, "bulk", e)
                forwarded = p.doc
            if self.on_document is not None:
                self.on_document(p.item, forwarded)

    def _write(self, p: _Pending, result) -> dict:
        """Splice one result into the output; returns the document as forwarded."""
        start, end = p.item.source_span
        new_source, over = _cleaned_source(result, self.body[start:end], p.text, p.spans, p.doc, p.plan,
                                           p.cleaner.config.meta_field)
        new_action = _routed_action(self.body, p.item, self.route_index) if over and self.route_index else None
        # Everything is computed before anything is written or counted: an item is rewritten
        # whole or forwarded as sent.
        _count_cleaned(self.stats, result, new_source is not None)
        if new_action is not None:
            self.out.replace(*p.item.action_span, new_action)
            self.stats.routed += 1
        elif over:
            self.stats.over_ratio_kept += 1
        if new_source is not None:
            self.out.replace(*p.item.source_span, new_source)
            return result.doc
        return p.doc


class BulkRewrite:
    """One rewrite of a bulk body, run whole (:meth:`output`) or round by round while the
    body is sent (:meth:`chunks`). Arguments as :func:`rewrite_bulk`, and:

    ``bulk``: the body's :func:`~.bulk_items.parse_bulk` when the caller has it already.
    ``cleaner_for(index) -> cleaner``: the cleaner of each item's index (default: ``cleaner``
    for every item), so a body whose items go to indices of different modes is rewritten in
    one pass and counted once. ``on_document(item, doc)``: called with the document as
    forwarded (cleaned or not) of every item whose source was read (the emerging hook reads
    these instead of parsing the body again). ``stats`` is complete once the rewrite ran.
    """

    def __init__(self, body: bytes, cleaner, patterns: IndexPatterns, default_index: str | None = None,
                 route_index: str | None = None, *, accepts_new_fields: Callable[[str], bool] | None = None,
                 max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES, bulk: BulkBody | None = None,
                 cleaner_for: Callable[[str], Any] | None = None,
                 on_document: Callable[[BulkItem, dict], None] | None = None):
        self.bulk = parse_bulk(body, default_index) if bulk is None else bulk
        self.patterns = patterns
        self._rewriter = _BulkRewriter(self.bulk, cleaner_for or (lambda index: cleaner), route_index,
                                       accepts_new_fields, max_item_bytes, on_document)
        self.stats = self._rewriter.stats

    def _rounds(self) -> Iterator[int]:
        """Run the rewrite; after each round, yield the input offset up to which the output is final."""
        rewriter, stats = self._rewriter, self.stats
        matched: dict[str | None, bool] = {}  # index -> bound for cleaning (a request names few indices)
        for item in self.bulk.rewrite_items():
            if item.verb not in CLEANED_ACTIONS or item.source_span is None:
                continue
            index = item.index
            try:
                if index is not None and not isinstance(index, str):
                    stats.items += 1
                    raise _Uncleaned("non_string_index")
                cleaned = matched.get(index)
                if cleaned is None:
                    cleaned = matched[index] = self.patterns.matches(index)
                if cleaned:
                    rewriter.add(item)
            except _Uncleaned as e:
                e.count(stats)
            except Exception as e:
                _internal_error(stats, "bulk item", e)
            if rewriter.round_bytes >= ROUND_BYTES:
                self._flush()
                yield item.source_span[1]
        if self.bulk.stop_reason is not None:
            stats.uncleaned(self.bulk.stop_reason)  # the rest of the body goes through as sent
        self._flush()

    def _flush(self) -> None:
        try:
            self._rewriter.flush()
        except Exception as e:  # flush handles each item; this is a last guard for the request
            _internal_error(self.stats, "bulk round", e)

    def output(self) -> BulkOutput:
        """Run the whole rewrite; the forwarded body, not joined."""
        for _ in self._rounds():
            pass
        return self._rewriter.out

    def chunks(self) -> Iterator[bytes]:
        """Run the rewrite round by round, yielding the forwarded body in order as it becomes
        final: at most a round of rewritten lines is held besides the input."""
        out = self._rewriter.out
        for upto in self._rounds():
            piece = out.take(upto)
            if piece:
                yield piece
        yield from out.chunks()


def rewrite_bulk_output(body: bytes, cleaner, patterns: IndexPatterns, default_index: str | None = None,
                        route_index: str | None = None, **options) -> tuple[BulkOutput, ProxyStats]:
    """:func:`rewrite_bulk`, with the forwarded body as a :class:`BulkOutput` (not joined);
    ``options`` as :class:`BulkRewrite`'s."""
    rewrite = BulkRewrite(body, cleaner, patterns, default_index, route_index, **options)
    return rewrite.output(), rewrite.stats


def rewrite_bulk(body: bytes, cleaner, patterns: IndexPatterns, default_index: str | None = None,
                 route_index: str | None = None, *,
                 accepts_new_fields: Callable[[str], bool] | None = None,
                 max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES, bulk: BulkBody | None = None,
                 cleaner_for: Callable[[str], Any] | None = None) -> tuple[bytes, ProxyStats]:
    """Clean the ``index``/``create`` sources of an NDJSON bulk body bound for ``patterns``.

    ``default_index``: the index of the URL path (``/crawl/_bulk``). ``route_index``: where an
    over-``max_ratio`` document goes (``{index}`` is replaced by its index). ``accepts_new_fields``:
    ``index -> bool``; False means the index takes no new fields (``dynamic: strict`` without a
    ``bloomspan`` mapping): strip mode rewrites the text fields in place and adds nothing,
    mark/downweight forward the item unchanged (reason ``strict_mapping``). ``bulk`` and
    ``cleaner_for``: see :class:`BulkRewrite`.
    Never raises for anything in ``body``; returns ``(forwarded body, stats)``.
    """
    out, stats = rewrite_bulk_output(body, cleaner, patterns, default_index, route_index,
                                     accepts_new_fields=accepts_new_fields, max_item_bytes=max_item_bytes,
                                     bulk=bulk, cleaner_for=cleaner_for)
    return out.joined(), stats


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
        new_body, over = _cleaned_source(result, body, text, spans, doc, plan, cleaner.config.meta_field)
    except _Uncleaned as e:
        e.count(stats)
        return body, stats, False
    except Exception as e:
        _internal_error(stats, "single", e)
        return body, stats, False
    _count_cleaned(stats, result, new_body is not None)
    return (body if new_body is None else new_body), stats, over
