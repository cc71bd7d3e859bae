"""One reading of a ``_bulk`` body: its items, where their lines lie and what their action lines say.

:func:`parse_bulk` walks the body once and returns a :class:`BulkBody`, the list the whole
proxy reads: the access rules (:mod:`.proxy_access`), the choice of target indices and mode
(:mod:`.service`), the rewrite (:mod:`.bulk_proxy`) and the emerging hook
(:mod:`.emerging_hook`). Each action line is decoded and parsed once; sources are not parsed
here (only the rewrite and the hook read them, each only the sources it needs).

Two readings of the same lines are kept, because the node and the proxy's two jobs read them
differently at the edges, and both must stay exactly as they were:

* **The rewrite's reading** (``BulkItem.verb``, ``doc_id``, ``index``): strict JSON, past a
  UTF-8 BOM, the first value on the line (the node ignores what follows it), exactly one
  action key (the last of duplicates wins, as in ``json.loads``), one of
  index/create/update/delete, an object as its metadata. It stops at the first action line
  that fails these (``BulkBody.stop_reason``): the node rejects the whole request for it, and
  guessing where later items end could pair the wrong lines. Items from there on have
  ``verb`` None and are forwarded as sent.
* **The access rules' reading** (``verbs``, ``indices``, ``parsed``, ``number``): duplicate
  keys are all kept (each ``_index`` a line names is checked), ``/* */`` and ``//`` comments
  are allowed (the node accepts them) and, after a line it cannot read, every later line that
  parses as an action is reported too (it no longer knows which lines are sources).

Both readings agree on every ordinary line, so one parse serves both; only a line one of
them refuses (a BOM, a comment, Unicode whitespace before the JSON, NaN) is read a second
time, the lenient way, for the access rules alone. An item that only one reading sees as an
item has ``access`` False (the access rules skip it) or ``verb`` None (the rewrite skips it).

Memory: the items are a table of columns (offsets as machine integers, the id, shared names
and tuples), about 140 bytes an item; no line of the body is copied.
"""
from __future__ import annotations

import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

BULK_VERBS = ("index", "create", "update", "delete")
VERBS_WITH_SOURCE = frozenset({"index", "create", "update"})
CLEANED_VERBS = frozenset({"index", "create"})
_BOM = "\ufeff"
_JSON_WHITESPACE = " \t\n\r"


class Pairs(list):
    """A JSON object as its list of (key, value) pairs: duplicate keys are all kept."""


class _ConstantSeen(ValueError):
    """NaN or Infinity: not JSON for the rewrite, a number for the lenient reading."""


def _refuse_constant(name: str):
    raise _ConstantSeen(name)


_STRICT_SCAN = json.JSONDecoder(object_pairs_hook=Pairs, parse_constant=_refuse_constant).scan_once
_LENIENT = json.JSONDecoder(object_pairs_hook=Pairs)


def as_plain(value: Any) -> Any:
    """``value`` with every :class:`Pairs` turned into a dict (the last duplicate wins, as in
    ``json.loads``)."""
    if isinstance(value, Pairs):
        return {k: as_plain(v) for k, v in value}
    if isinstance(value, list):
        return [as_plain(v) for v in value]
    return value


def strip_comments(text: str) -> str:
    """``text`` without JSON comments (``/* ... */`` and ``// ...``), strings left alone."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            out.append(" ")
            continue
        elif text.startswith("//", i):
            close = text.find("\n", i)
            i = n if close < 0 else close
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def load_lenient(text: bytes | bytearray | str):
    """The first JSON value in ``text`` the way the access rules read the node's input: what
    follows it is ignored, comments are allowed, objects become :class:`Pairs`. ValueError
    (or UnicodeDecodeError) when there is none."""
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    try:
        try:
            return _LENIENT.raw_decode(text, len(text) - len(text.lstrip()))[0]
        except ValueError:
            if "/" not in text:
                raise
            text = strip_comments(text)
            return _LENIENT.raw_decode(text, len(text) - len(text.lstrip()))[0]
    except RecursionError:
        raise ValueError("nested too deeply to check") from None


_UNREAD = object()  # the lenient reading found no JSON value


@dataclass(frozen=True, slots=True)
class _ActionLine:
    """One line read as an action: ``strict`` is the value of the rewrite's reading (None
    with ``strict_reason`` when it refuses the line); ``lenient`` the access rules' value
    (:data:`_UNREAD` when it finds none)."""

    strict: Any
    strict_reason: str | None
    lenient: Any


def _read_action_line(raw: bytes) -> _ActionLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _ActionLine(None, "invalid_utf8", _UNREAD)
    bom = text.startswith(_BOM)
    start = 1 if bom else 0
    json_start = len(text) - len(text[start:].lstrip(_JSON_WHITESPACE))
    try:
        value = _STRICT_SCAN(text, json_start)[0]
        reason = None
    except (StopIteration, ValueError, RecursionError):
        value, reason = None, "invalid_action"
    if reason is None and not bom and json_start == len(text) - len(text.lstrip()):
        return _ActionLine(value, None, value)  # the ordinary line: one parse for both readings
    try:
        lenient = load_lenient(text)
    except ValueError:
        lenient = _UNREAD
    return _ActionLine(value, reason, lenient)


@dataclass(frozen=True, slots=True)
class BulkItem:
    """One item of a bulk body (a view of one row of :class:`BulkBody`'s table).

    ``line``: the 1-based line of its action line; ``action_span``/``source_span``: byte
    offsets of the action line and of its source line (without ``\\n``; ``source_span`` None
    when the item has none). The rewrite's reading: ``verb`` (None when the rewrite does not
    read this item), ``doc_id`` and ``index`` (the metadata's ``_id``, and its ``_index`` or
    the path's index; any JSON type). The access rules' reading: ``access`` (whether they see
    an item here), ``number`` (their 1-based count), ``verbs`` (every action key), ``indices``
    (every ``_index`` value, or the path's index) and ``parsed`` (False for a line they cannot
    read)."""

    line: int
    action_span: tuple[int, int]
    source_span: tuple[int, int] | None
    verb: str | None
    doc_id: Any
    index: Any
    access: bool
    number: int
    verbs: tuple
    indices: tuple
    parsed: bool


_ACCESS, _PARSED = 1, 2  # flag bits of a row


class _Table:
    """The items as columns (machine integers and shared objects: about 140 bytes an item,
    where an object per item would take about 500)."""

    def __init__(self):
        self.line, self.action_start, self.action_end = array("q"), array("q"), array("q")
        self.source_end, self.number = array("q"), array("q")  # source_end -1: no source
        self.flags = bytearray()
        self.verb: list = []
        self.doc_id: list = []
        self.index: list = []
        self.verbs: list = []
        self.indices: list = []

    def __len__(self) -> int:
        return len(self.line)

    def append(self, line: int, span: tuple[int, int]) -> int:
        for column, value in ((self.line, line), (self.action_start, span[0]), (self.action_end, span[1]),
                              (self.source_end, -1), (self.number, 0)):
            column.append(value)
        self.flags.append(0)
        for column in (self.verb, self.doc_id, self.index):
            column.append(None)
        self.verbs.append(())
        self.indices.append(())
        return len(self.line) - 1

    def item(self, row: int) -> BulkItem:
        end = self.action_end[row]
        source_end = self.source_end[row]
        flags = self.flags[row]
        return BulkItem(self.line[row], (self.action_start[row], end), (end + 1, source_end) if source_end >= 0 else None,
                        self.verb[row], self.doc_id[row], self.index[row], bool(flags & _ACCESS), self.number[row],
                        self.verbs[row], self.indices[row], bool(flags & _PARSED))


@dataclass
class BulkBody:
    """A bulk body and its items (module doc): iterate it for every item in order.
    ``stop_reason``: why the rewrite's reading stopped early (``invalid_action``,
    ``unsupported_action``, ``invalid_utf8``), or None."""

    body: bytes
    default_index: str | None
    table: _Table
    stop_reason: str | None = None

    def __len__(self) -> int:
        return len(self.table)

    def __iter__(self) -> Iterator[BulkItem]:
        return (self.table.item(row) for row in range(len(self.table)))

    def raw(self, span: tuple[int, int]) -> bytes:
        return bytes(self.body[span[0]:span[1]])

    def access_items(self) -> Iterator[BulkItem]:
        """The items the access rules check, in order."""
        flags = self.table.flags
        return (self.table.item(row) for row in range(len(self.table)) if flags[row] & _ACCESS)

    def rewrite_items(self) -> Iterator[BulkItem]:
        """The items the rewrite reads (a verb), in order."""
        verb = self.table.verb
        return (self.table.item(row) for row in range(len(self.table)) if verb[row] is not None)

    def first_index(self) -> str | None:
        """The first item's target index when it is a string (the rewrite's reading)."""
        if len(self.table) and self.table.verb[0] is not None:
            index = self.table.index[0]
            return index if isinstance(index, str) else None
        return None


def _lines(body: bytes) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line without its ``\\n``."""
    pos, n = 0, len(body)
    while pos < n:
        nl = body.find(b"\n", pos)
        end = n if nl < 0 else nl
        yield pos, end
        pos = end + 1


_VERB = {verb: verb for verb in BULK_VERBS}  # one str object per verb, whatever the line held


class _Walk:
    """The two readings' state while :func:`parse_bulk` walks the lines."""

    def __init__(self, default_index: str | None):
        self.default_index = default_index
        self.default = (default_index,) if default_index else ()
        self.table = _Table()
        self.shared: dict = {}  # interned index names, verbs and indices tuples
        # the rewrite's reading
        self.stop_reason: str | None = None
        self.strict_source: int | None = None  # the row whose source the next line is
        # the access rules' reading
        self.number = 0
        self.access_source = False
        self.lost = False

    def intern(self, value):
        try:
            return self.shared.setdefault(value, value)
        except TypeError:  # unhashable: a list or object where a name should be
            return value

    def row_at(self, line: int, span: tuple[int, int]) -> int:
        table = self.table
        if len(table) and table.line[-1] == line:
            return len(table) - 1
        return table.append(line, span)

    def strict(self, line: int, span: tuple[int, int], read: _ActionLine) -> None:
        if read.strict_reason is not None:
            self.stop_reason = read.strict_reason
            return
        action = read.strict
        if not isinstance(action, Pairs):
            self.stop_reason = "invalid_action"
            return
        plain = dict(action)
        if len(plain) != 1:
            self.stop_reason = "invalid_action"
            return
        ((verb, meta),) = plain.items()
        if verb not in BULK_VERBS:
            self.stop_reason = "unsupported_action"
            return
        if not isinstance(meta, Pairs):
            self.stop_reason = "invalid_action"
            return
        meta = dict(meta)  # top-level keys only: _id and _index are all the proxy reads
        row = self.row_at(line, span)
        table = self.table
        table.verb[row] = _VERB[verb]
        table.doc_id[row] = as_plain(meta.get("_id"))
        table.index[row] = self.intern(as_plain(meta.get("_index", self.default_index)))
        if verb in VERBS_WITH_SOURCE:
            self.strict_source = row

    def access(self, line: int, span: tuple[int, int], read: _ActionLine) -> None:
        action = read.lenient
        table = self.table
        if action is _UNREAD or not isinstance(action, Pairs) or not action \
                or not all(isinstance(m, Pairs) for _, m in action):
            if not self.lost or action is _UNREAD or action is None:  # "null" is no action either
                if not self.lost:
                    self.number += 1
                self.lost = True
                row = self.row_at(line, span)
                table.flags[row] |= _ACCESS
                table.number[row] = self.number
            return
        verbs = tuple(v for v, _ in action)
        if self.lost and not set(verbs) <= set(BULK_VERBS):
            return  # most likely a source line
        indices = tuple(value for _, meta in action for key, value in meta if key == "_index")
        self.number += 1
        row = self.row_at(line, span)
        table.flags[row] |= _ACCESS | _PARSED
        table.number[row] = self.number
        table.verbs[row] = self.intern(verbs)
        table.indices[row] = self.intern(indices) if indices else self.default
        if table.indices[row] is indices and any(isinstance(i, (Pairs, list)) for i in indices):
            table.indices[row] = tuple(as_plain(i) for i in indices)
        self.access_source = not self.lost and verbs[0] in VERBS_WITH_SOURCE


def parse_bulk(body: bytes, default_index: str | None = None) -> BulkBody:
    """Read ``body`` (an NDJSON bulk body; ``default_index``: the index of the URL path) once
    into its :class:`BulkBody`. Never raises for anything in ``body``."""
    walk = _Walk(default_index)
    for line, span in enumerate(_lines(body), start=1):
        raw = None
        # The rewrite's reading: stopped, this line a source, blank, or an action.
        strict_wants = False
        if walk.stop_reason is None:
            if walk.strict_source is not None:
                walk.table.source_end[walk.strict_source] = span[1]
                walk.strict_source = None
            else:
                raw = body[span[0]:span[1]]
                strict_wants = bool(raw.strip(b" \t\r"))  # the node skips a line with no JSON token
        # The access rules' reading: this line a source, blank, or an action.
        access_wants = False
        if walk.access_source:
            walk.access_source = False
        else:
            raw = body[span[0]:span[1]] if raw is None else raw
            access_wants = bool(raw.strip())
        if not (strict_wants or access_wants):
            continue
        read = _read_action_line(raw)
        if strict_wants:
            walk.strict(line, span, read)
        if access_wants:
            walk.access(line, span, read)
    return BulkBody(body, default_index, walk.table, walk.stop_reason)
