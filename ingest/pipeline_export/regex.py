"""Java regexes for the exported ingest pipeline: a phrase or template record as a ``gsub``
pattern over the *original* text that matches where the tokenizer-based matcher would.

A token is a run of letters and digits with the combining marks that follow them
(:mod:`bloomspan.engine.text.tokenizer`), so the token class here is ``[\\p{L}\\p{N}\\p{M}]``:
a phrase never matches the start of a longer token ("bar" in "bár" written with a combining
accent). Separators and line gaps exclude marks for the same reason. Every quantifier next to a
token literal is possessive: a token is consumed whole, never split to retry, so a pattern
costs one pass over the text.

The lines of a text are those of the matcher (:func:`bloomspan.engine.templates.blocks.line_starts_batch`):
a token starts a line when a ``\\n`` lies between it and the previous token, so a line of
punctuation only is no line; ``(?d)`` makes ``\\n`` the only line terminator, as there.

Case folding is the regex engine's (``(?iu)``) over the text as written, where the tokenizer
applies NFKC and case folding first: a token written in full-width forms, or "Straße" for
"strasse", is not matched (less removed, never more); Java's folding of the Turkish dotless
"ı" onto "i" is the one known case where it matches more.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

SLOT_TOKEN = "<num>"  # bloomspan.engine.text.slots.SLOT_TOKEN: any number token (ASCII digits)
SLOT_REGEX = "[0-9]++"
TOKEN_CLASS = r"[\p{L}\p{N}\p{M}]"
SEPARATOR = r"[^\p{L}\p{N}\p{M}]++"  # between the tokens of an inline phrase (may cross lines)
LINE_GAP = r"[^\p{L}\p{N}\p{M}\n]*+"  # what a line may hold around its tokens: punctuation and spaces
LINE_SEPARATOR = r"[^\p{L}\p{N}\p{M}\n]++"  # between the tokens of one line
BLANK_LINES = r"(?:\n" + LINE_GAP + r")*+"  # lines without a token (no lines for the matcher)
SENTINEL = "\ufdd0"  # a noncharacter: marks the end of a page's first tokens (edge_regex)
INLINE_FLAGS = "(?iu)"
LINE_FLAGS = "(?imud)"


def token_regex(token: str) -> str:
    """One token: the slot matches any number token, anything else itself."""
    return SLOT_REGEX if token == SLOT_TOKEN else re.escape(token)


def phrase_regex(tokens: Sequence[str]) -> str:
    """Java regex matching ``tokens`` as whole tokens in order, any separators between them
    (no flags, no boundaries: see :func:`inline_regex`)."""
    if not tokens:
        raise ValueError("a phrase needs at least one token")
    return SEPARATOR.join(token_regex(t) for t in tokens)


def inline_regex(tokens: Sequence[str]) -> str:
    """A phrase anywhere in the text, whole tokens only; the punctuation and spaces after it,
    up to the next token or line break, go with it ("experience!" leaves no lone "!")."""
    return f"(?<!{TOKEN_CLASS}){phrase_regex(tokens)}(?!{TOKEN_CLASS}){LINE_GAP}"


def line_regex(tokens: Sequence[str]) -> str:
    return LINE_GAP + LINE_SEPARATOR.join(token_regex(t) for t in tokens) + LINE_GAP


def block_regex(tokens: Sequence[str], block_lengths: Sequence[int], anchor: str | None) -> str:
    """A whole-line template: its lines in order, each exactly one line of the text (lines of
    punctuation only may lie between them), the text's first line for anchor "start", its
    last for "end"; slots match any number. Matches with its line break."""
    if sum(block_lengths) != len(tokens) or not block_lengths:
        raise ValueError(f"block_lengths={list(block_lengths)!r} must sum to the {len(tokens)} tokens")
    lines, k = [], 0
    for n in block_lengths:
        lines.append(line_regex(tokens[k:k + n]))
        k += n
    body = (r"\n(?:" + LINE_GAP + r"\n)*+").join(lines)
    if anchor == "start":
        return rf"\A(?:{LINE_GAP}\n)*+{body}(?:\n|\z)"
    if anchor == "end":
        return rf"^{body}{BLANK_LINES}\z"
    return rf"^{body}(?:\n|\z)"


def alternation(alternatives: Sequence[str], flags: str = LINE_FLAGS) -> str:
    """One pattern trying ``alternatives`` in order at each position (give the longest first)."""
    return f"{flags}(?:{'|'.join(alternatives)})"


def tokens_after_below(limit: int) -> str:
    """Lookahead: fewer than ``limit`` tokens follow (the sentinel counts as a separator)."""
    return rf"(?=(?:[^\p{{L}}\p{{N}}\p{{M}}]*+{TOKEN_CLASS}++){{0,{limit - 1}}}+[^\p{{L}}\p{{N}}\p{{M}}]*+\z)"


def first_tokens_regex(limit: int) -> str:
    """The text's first ``limit`` tokens (fewer when it has fewer): ``$0`` plus :data:`SENTINEL`
    replaces it, so a lookahead for the sentinel (:data:`BEFORE_SENTINEL`) says that a match
    ends among them."""
    return rf"\A(?:[^\p{{L}}\p{{N}}\p{{M}}]*+{TOKEN_CLASS}++){{1,{limit}}}+"


BEFORE_SENTINEL = rf"(?=[^{SENTINEL}]*+{SENTINEL})"
