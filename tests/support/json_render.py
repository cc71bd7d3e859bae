"""Hypothesis strategies for JSON texts with random formatting, and where their values lie.

The proxy must leave every character of a source it does not own as the client wrote it, so
the property tests need texts written the way clients really write them: spaces, tabs and CRs
between tokens, numbers spelled ``1.10``, ``1E+2``, ``-0``, strings and keys with ``\\u00e9``,
``\\/`` and short escapes, any key order. The spans are computed here while rendering, not by
the code under test.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

# JSON whitespace without "\n": a source is one NDJSON line.
WHITESPACE = st.sampled_from(["", "", " ", "  ", "\t", "\r", " \t\r "])
NUMBER_LITERALS = ["0", "-0", "1", "-17", "1.10", "1E+2", "1e-2", "-12.500", "0.1E1", "2E0", "1.0",
                   "123456789012345678901234567890", "6.02214076e23", "-0.0"]
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass
class Rendered:
    """A JSON text and its value; for an object, where its members' values lie.

    members:  key -> (start, end) of the value text inside ``text``.
    last_end: where a new member would be appended (end of the last value, or after ``{``).
    children: key -> Rendered for member objects rendered with tracked spans (offsets are
              already shifted into this text).
    """

    text: str
    value: object
    members: dict[str, tuple[int, int]] = field(default_factory=dict)
    last_end: int = 0
    children: dict[str, Rendered] = field(default_factory=dict)

    def shifted(self, delta: int) -> Rendered:
        return Rendered(self.text, self.value, {k: (a + delta, b + delta) for k, (a, b) in self.members.items()},
                        self.last_end + delta, {k: c.shifted(delta) for k, c in self.children.items()})


def _escape_char(ch: str, style: str) -> str:
    if style in ("u", "U") or (ch not in _SHORT_ESCAPES and ord(ch) < 0x20):
        code = f"{ord(ch):04x}"
        return "\\u" + (code.upper() if style == "U" else code)
    if ch in _SHORT_ESCAPES and (style == "short" or ch in '"\\' or ord(ch) < 0x20):
        return _SHORT_ESCAPES[ch]
    return ch


@st.composite
def json_string(draw, text: str | None = None, alphabet: str = "abcé /\"\\\t€-.") -> Rendered:
    """A JSON string literal of ``text`` (or a random one), each character written raw, as a
    ``\\uXXXX`` escape (either case) or as a short escape where JSON has one."""
    if text is None:
        text = draw(st.text(alphabet=alphabet, max_size=10))
    styles = draw(st.lists(st.sampled_from(["raw", "raw", "u", "U", "short"]), min_size=len(text), max_size=len(text)))
    literal = '"' + "".join(_escape_char(ch, s) for ch, s in zip(text, styles)) + '"'
    assert json.loads(literal) == text
    return Rendered(literal, text)


@st.composite
def json_number(draw) -> Rendered:
    literal = draw(st.sampled_from(NUMBER_LITERALS))
    return Rendered(literal, json.loads(literal))


SCALARS = st.one_of(json_number(), json_string(), st.sampled_from([Rendered("true", True), Rendered("false", False),
                                                                   Rendered("null", None)]))


@st.composite
def json_array(draw, items) -> Rendered:
    values = draw(st.lists(items, max_size=3))
    parts = ["[" + draw(WHITESPACE)]
    for k, v in enumerate(values):
        if k:
            parts.append(draw(WHITESPACE) + "," + draw(WHITESPACE))
        parts.append(v.text)
    parts.append(draw(WHITESPACE) + "]")
    return Rendered("".join(parts), [v.value for v in values])


@st.composite
def json_object(draw, members) -> Rendered:
    """An object of ``members`` (a strategy of lists of ``(key, Rendered)`` with distinct
    keys), keys written with random escapes, spans of every member's value tracked."""
    pairs = draw(members)
    text = "{" + draw(WHITESPACE)
    spans: dict[str, tuple[int, int]] = {}
    children: dict[str, Rendered] = {}
    last_end = 1
    for k, (key, value) in enumerate(pairs):
        if k:
            text += draw(WHITESPACE) + "," + draw(WHITESPACE)
        text += draw(json_string(key)).text + draw(WHITESPACE) + ":" + draw(WHITESPACE)
        start = len(text)
        text += value.text
        spans[key] = (start, len(text))
        last_end = len(text)
        if isinstance(value.value, dict):
            children[key] = value.shifted(start)
    text += draw(WHITESPACE) + "}"
    return Rendered(text, {key: value.value for key, value in pairs}, spans, last_end, children)


def member_lists(keys, values):
    return st.lists(st.tuples(keys, values), max_size=4, unique_by=lambda kv: kv[0])


JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    json_array(inner), json_object(member_lists(st.sampled_from(["a", "b", "é", "a/b", "_x"]), inner))), max_leaves=8)


def only_changed_between(original: str, forwarded: str, replaced: list[tuple[int, int]], inserted: list[int]) -> list[str] | None:
    """The texts that stand in ``forwarded`` for the ``replaced`` spans and at the ``inserted``
    positions of ``original``, in order, if every other character of ``original`` is there
    unchanged and in place; None otherwise."""
    events = sorted([(a, b) for a, b in replaced] + [(p, p) for p in inserted])
    pattern, done = [], 0
    for start, end in events:
        pattern.append(re.escape(original[done:start]) + "(.*?)")
        done = end
    pattern.append(re.escape(original[done:]))
    m = re.fullmatch("".join(pattern), forwarded, re.S)
    return None if m is None else list(m.groups())
