"""Tokenizer: lowercase, split on anything that is not a Unicode letter or digit.

A token is a maximal run of characters ``c`` with ``c.isalnum()`` (Unicode letters and
digits: categories L*, Nd, Nl, No). Everything else — punctuation, "©", "_", whitespace,
combining marks — separates tokens. Tokens are lowercased with ``str.lower``.

Offsets are character offsets into the *original* text (``text[start:end]`` is the token
before lowercasing), so the ingest hook can cut phrases out of the original.
"""
from __future__ import annotations

import re

import numpy as np

# [^\W_] = word characters minus underscore = letters and digits (Python's \w also
# admits underscore, which must separate).
_TOKEN_RE = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lowercased tokens of ``text`` in order.

    Split first, lowercase second: ``"İ".lower()`` is "i" + a combining dot, which would
    otherwise split "İstanbul" in two and disagree with :func:`token_spans`.
    """
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def token_spans(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Tokens with character offsets into ``text``.

    Returns ``(tokens, starts, ends)``: ``tokens`` lowercased, ``starts``/``ends`` int64
    arrays of shape (n_tokens,), ``ends`` exclusive.
    """
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _TOKEN_RE.finditer(text):
        tokens.append(m.group().lower())
        starts.append(m.start())
        ends.append(m.end())
    return tokens, np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
