"""Change a few values of a JSON object text and leave every other character as it was.

A proxy that re-serialises a document rewrites what it does not own: ``1.10`` becomes ``1.1``,
``1E+2`` becomes ``100.0``, ``"\\u00e9"`` becomes ``"é"``, duplicate keys merge, whitespace
goes. Here the original text is kept and only the values that changed are cut out and
replaced, so the bytes between them reach the cluster exactly as the client sent them.

Two steps:

* :func:`parse_object` reads a JSON object text into ``(value, ObjectSpans)``: the Python
  value (what ``json.loads`` returns) plus, for the objects a :data:`Plan` names, where each
  member's value starts and ends. The stdlib scanner does the reading (``scanstring`` for
  keys, the C scanner behind ``JSONDecoder.raw_decode`` for every value the plan does not
  walk into); only the object levels on the plan are walked here, and a duplicate key on
  them is refused. :func:`read_value` is the scanner alone, for texts that need no spans.
* :func:`splice` compares the old value with a new one along the plan and returns the text
  with the changed values replaced and the new keys appended at the end of their object. Keys
  the new value lacks are kept (never deleted); keys off the plan are never touched.
  :func:`splice_bytes` makes the same change on the UTF-8 bytes the text came from (the
  proxy's path): the same bytes as ``splice(...).encode("utf-8")``, the new strings spelled by
  orjson, so a page of new text is never escaped by the stdlib nor decoded back into a text.

A plan is a trie of keys: :data:`REPLACE` means "this member's value may be replaced or added
whole", a nested dict means "walk into this object and apply the inner plan", and the key
:data:`ANY_KEY` stands for every key of that object. For example
``{"text": REPLACE, "bloomspan": {ANY_KEY: REPLACE}}`` lets ``text`` change and merges the
``bloomspan`` object key by key, keeping the user's own keys in it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

REPLACE = "replace"
"""Plan leaf: the member's value is replaced (or added) whole."""

ANY_KEY = object()
"""Plan key that matches every key of an object."""

Plan = dict  # {key or ANY_KEY: REPLACE | Plan}
PlanRule = str | dict

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's four whitespace characters, nothing else
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_AFTER_VALUE = re.compile(r"[ \t\n\r]*(?:(,)[ \t\n\r]*|(\}))")


class SpliceError(ValueError):
    """A text this module will not splice; ``reason`` is a stable snake_case word."""

    reason = "invalid_json"

    def __init__(self, message: str, position: int | None = None):
        self.position = position
        super().__init__(message if position is None else f"{message} at character {position}")


class InvalidJsonError(SpliceError):
    reason = "invalid_json"


class NotAnObjectError(SpliceError):
    reason = "not_an_object"


class DuplicateKeyError(SpliceError):
    reason = "duplicate_keys"


class TooDeepError(SpliceError):
    reason = "too_deep"


class ConflictError(SpliceError):
    """The new value needs an object where the original holds something else."""

    reason = "field_conflict"


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; OpenSearch rejects them, so refuse rather than splice.
    raise ValueError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_scan_value = _DECODER.scan_once  # (text, index) -> (value, end); StopIteration when no value starts there
_scanstring = json.decoder.scanstring


@dataclass
class ObjectSpans:
    """Where the members of one JSON object lie in its text (character offsets).

    open:     offset of ``{``;  close: offset of ``}``.
    members:  key -> ``(value_start, value_end)``, value text is ``text[start:end]``.
    last_end: end of the last member's value (``open + 1`` for an empty object): new members
              are inserted here, before any whitespace that precedes ``}``.
    children: key -> ObjectSpans for the member objects the plan walked into.
    """

    open: int
    close: int = -1
    last_end: int = -1
    members: dict[str, tuple[int, int]] = field(default_factory=dict)
    children: dict[str, ObjectSpans] = field(default_factory=dict)


def _rule(plan: Plan, key: str) -> PlanRule | None:
    rule = plan.get(key)
    return plan.get(ANY_KEY) if rule is None else rule


def _skip_ws(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()


def _decode_value(text: str, i: int) -> tuple[Any, int]:
    try:
        return _scan_value(text, i)
    except StopIteration:
        raise InvalidJsonError("expected a JSON value", i) from None
    except RecursionError:
        raise TooDeepError("nesting deeper than the JSON reader's limit", i) from None
    except ValueError as e:  # JSONDecodeError, or NaN/Infinity
        raise InvalidJsonError(str(e), i) from None


def _walk_object(text: str, i: int, plan: Plan) -> tuple[dict, ObjectSpans]:
    """Read the object whose ``{`` is at ``text[i]``; walk into the members the plan names.
    One pass per member: key (``scanstring``), ``:``, value (the C scanner), then ``,`` or ``}``,
    each with the whitespace around it in one regex match (this loop is the proxy's hot path)."""
    spans = ObjectSpans(open=i, last_end=i + 1)
    members = spans.members
    value: dict[str, Any] = {}
    any_rule = plan.get(ANY_KEY)
    i = _WHITESPACE.match(text, i + 1).end()
    if text.startswith("}", i):
        spans.close = i
        return value, spans
    while True:
        if not text.startswith('"', i):
            raise InvalidJsonError("expected a key in double quotes", i)
        try:
            key, i = _scanstring(text, i + 1, True)
        except ValueError as e:
            raise InvalidJsonError(str(e), i) from None
        if key in value:
            raise DuplicateKeyError(f"duplicate key {key!r}", i)
        colon = _COLON.match(text, i)
        if colon is None:
            raise InvalidJsonError("expected ':' after a key", i)
        start = colon.end()
        rule = plan.get(key, any_rule)
        if rule is not None and rule != REPLACE and text.startswith("{", start):
            member, child = _walk_object(text, start, rule)
            spans.children[key] = child
            end = child.close + 1
        else:
            member, end = _decode_value(text, start)
        value[key] = member
        members[key] = (start, end)
        after = _AFTER_VALUE.match(text, end)
        if after is None:
            raise InvalidJsonError("expected ',' or '}' after a value", end)
        if after.lastindex == 2:  # "}"
            spans.last_end = end
            spans.close = after.end() - 1
            return value, spans
        i = after.end()


def parse_object(text: str, plan: Plan, start: int = 0, *, trailing_data: bool = False) -> tuple[dict, ObjectSpans, int]:
    """``(value, spans, end)`` of the JSON object in ``text`` from ``start``.

    Leading whitespace is skipped. After the object only whitespace may follow, unless
    ``trailing_data`` (then ``end`` is just past ``}`` and the caller decides).
    Raises a :class:`SpliceError` subclass: invalid JSON, not an object, a duplicate key on
    the plan's levels, or nesting too deep for the reader.
    """
    i = _skip_ws(text, start)
    if not text.startswith("{", i):
        _decode_value(text, i)  # raises InvalidJsonError when it is no JSON value at all
        raise NotAnObjectError("a JSON value that is not an object", i)
    try:
        value, spans = _walk_object(text, i, plan)
    except RecursionError:  # only a plan as deep as the recursion limit could get here
        raise TooDeepError("nesting deeper than the JSON reader's limit", i) from None
    end = spans.close + 1
    if not trailing_data and _skip_ws(text, end) != len(text):
        raise InvalidJsonError("data after the object", _skip_ws(text, end))
    return value, spans, end


def read_value(text: str, start: int = 0) -> tuple[Any, int]:
    """``(value, end)`` of the JSON value at ``start`` (after whitespace), read by the C scanner
    alone: no spans, no duplicate-key check (the last duplicate wins). Raises SpliceError."""
    return _decode_value(text, _skip_ws(text, start))


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps_value(value: Any) -> str:
    """Compact JSON text of a new value (no NaN: it is not JSON)."""
    return _encode(value)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: ``1 == 1.0 == True`` in Python, but not in a document."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


def _edits(old: dict, new: dict, spans: ObjectSpans, plan: Plan, out: list[tuple[int, int, Any]]) -> None:
    """The changes of ``new`` against ``old`` as ``(start, end, what)``: ``what`` is the new
    value of a member replaced whole, or an :class:`_Inserted` for the new keys of an object."""
    inserted: list[tuple[str, Any]] = []
    for key, new_value in new.items():
        rule = _rule(plan, key)
        if rule is None:
            continue  # not ours: whatever the new value says, the original stays
        if key not in old:
            inserted.append((key, new_value))
            continue
        old_value = old[key]
        if same_json(old_value, new_value):
            continue
        if rule == REPLACE or (old_value is None and isinstance(new_value, dict)):
            start, end = spans.members[key]
            out.append((start, end, new_value))
        elif key in spans.children and isinstance(new_value, dict):
            _edits(old_value, new_value, spans.children[key], rule, out)
        else:
            raise ConflictError(f"key {key!r} holds {type(old_value).__name__}, not an object", spans.members[key][0])
    if inserted:
        out.append((spans.last_end, spans.last_end, _Inserted(bool(spans.members), inserted)))


@dataclass(frozen=True, slots=True)
class _Inserted:
    """New members appended to an object (``lead``: after members already there, so a comma first)."""

    lead: bool
    members: list[tuple[str, Any]]


def _text_of(what: Any) -> str:
    if isinstance(what, _Inserted):
        return ("," if what.lead else "") + ",".join(dumps_value(k) + ":" + dumps_value(v) for k, v in what.members)
    return dumps_value(what)


def _bytes_of_value(value: Any) -> bytes:
    """UTF-8 JSON of a new value; a string by orjson (the same characters as :func:`dumps_value`,
    7x faster on a page of text), anything else by :func:`dumps_value` (orjson spells some
    floats differently). A string orjson refuses (a lone surrogate) fails as it did before."""
    if type(value) is str:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
    return dumps_value(value).encode("utf-8")


def _bytes_of(what: Any) -> bytes:
    if isinstance(what, _Inserted):
        return (b"," if what.lead else b"") + b",".join(_bytes_of_value(k) + b":" + _bytes_of_value(v)
                                                         for k, v in what.members)
    return _bytes_of_value(what)


def _sorted_edits(old: dict, new: dict, spans: ObjectSpans, plan: Plan) -> list[tuple[int, int, Any]]:
    edits: list[tuple[int, int, Any]] = []
    _edits(old, new, spans, plan, edits)
    edits.sort(key=lambda e: (e[0], e[1]))
    return edits


def splice(text: str, spans: ObjectSpans, old: dict, new: dict, plan: Plan) -> str:
    """``text`` (whose object :func:`parse_object` read into ``old`` and ``spans`` with the
    same ``plan``) with the plan's members changed as in ``new``: a changed value is replaced,
    a new key is appended at the end of its object, an object the plan merges replaces a
    ``null`` whole, everything else is kept character for character. Returns ``text`` itself
    when nothing changed. Raises :class:`ConflictError` when ``new`` puts an object where the
    original holds another kind of value."""
    edits = _sorted_edits(old, new, spans, plan)
    if not edits:
        return text
    pieces: list[str] = []
    done = 0
    for start, end, what in edits:
        pieces.append(text[done:start])
        pieces.append(_text_of(what))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def splice_bytes(raw: bytes, text: str, spans: ObjectSpans, old: dict, new: dict, plan: Plan) -> bytes:
    """:func:`splice` on the UTF-8 bytes the text was decoded from: ``raw`` with the same
    changes, the same bytes as ``splice(...).encode("utf-8")``, without decoding the new values
    into a text and encoding it back (the proxy's path: it forwards bytes). Returns ``raw``
    itself when nothing changed."""
    edits = _sorted_edits(old, new, spans, plan)
    if not edits:
        return raw
    ascii_only = len(raw) == len(text)  # character offsets are byte offsets
    pieces: list[bytes] = []
    done_char = done_byte = 0
    for start, end, what in edits:
        start_byte = start if ascii_only else done_byte + len(text[done_char:start].encode("utf-8"))
        pieces.append(raw[done_byte:start_byte])
        pieces.append(_bytes_of(what))
        done_byte = end if ascii_only else start_byte + len(text[start:end].encode("utf-8"))
        done_char = end
    pieces.append(raw[done_byte:])
    return b"".join(pieces)
