"""Slots: number tokens normalised to one reserved id, so templates with varying numbers repeat.

"© 2019 Acme" and "© 2024 Acme", or "Showing 1–20 of 345" and "Showing 21–40 of 900",
differ only in numbers. With slots on, every *number token* — a token made only of the
ASCII digits 0-9 (years, counts, page numbers, prices; "2nd", "v2" or "½" are not) — is
replaced, one token for one token, by :data:`SLOT_ID` before mining and before matching.
The token count and every offset stay the same, so coverage maps back to the original
text unchanged. A number written with separators ("1,200") is several number tokens, so
"Showing 1–20 of 1,200" has one slot more than "Showing 1–20 of 345" (both share the
phrase up to the last number).

Phrases report their slot positions (:class:`~bloomspan.engine.templates.phrase.TemplatePhrase.slots`);
in ``phrases.jsonl`` a slot is the token :data:`SLOT_TOKEN`, which the tokenizer never
produces, so a plain matcher never matches a slotted phrase and
:mod:`bloomspan.ingest.match.template_matcher` matches it with the same normalisation.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numba import njit

# A vocabulary gives ids 0..size-1 below UNKNOWN = 2**32 - 1; it would need 2**32 - 2
# tokens to reach this id, far beyond any corpus we mine (the vocabulary refuses it).
SLOT_ID = 0xFFFFFFFE
SLOT_TOKEN = "<num>"


def is_number_token(token: str) -> bool:
    """True for a non-empty token of ASCII digits only."""
    return bool(token) and token.isascii() and token.isdigit()


def number_token_mask(token_strings: Iterable[str]) -> np.ndarray:
    """bool (V,): True at id i when token_strings[i] is a number token (vocabulary order)."""
    tokens = token_strings if isinstance(token_strings, list) else list(token_strings)
    # str.isdigit over all (C speed), then the few digit tokens checked for ASCII.
    mask = np.fromiter(map(str.isdigit, tokens), dtype=bool, count=len(tokens))
    for i in np.flatnonzero(mask).tolist():
        mask[i] = tokens[i].isascii()
    return mask


def vocabulary_number_mask(vocabulary) -> np.ndarray:
    """bool (V,): :func:`number_token_mask` of ``vocabulary.tokens()``, read from its code points."""
    return vocabulary.all_code_points_in(ord("0"), ord("9"))


@njit(cache=True, nogil=True)
def _apply_slots_kernel(tokens, is_number, slot_id, out):
    """out[i] = slot_id where tokens[i] < len(is_number) and is_number[tokens[i]], else tokens[i]."""
    n_mask = is_number.shape[0]
    count = 0
    for i in range(tokens.shape[0]):
        t = tokens[i]
        if t < n_mask and is_number[t]:
            out[i] = slot_id
            count += 1
        else:
            out[i] = t
    return count


def apply_slots(tokens: np.ndarray, is_number: np.ndarray) -> tuple[np.ndarray, int]:
    """Copy of ``tokens`` (uint32 (W,)) with number tokens replaced by SLOT_ID.

    is_number: bool (V,) from :func:`number_token_mask`; ids >= V (e.g. UNKNOWN) are
    left as they are. Returns ``(slotted uint32 (W,), number of slots)``.
    """
    tokens = np.ascontiguousarray(tokens)
    if tokens.ndim != 1 or tokens.dtype != np.uint32:
        raise ValueError(f"tokens: must be uint32 of shape (W,), got {tokens.dtype} {tokens.shape}")
    is_number = np.ascontiguousarray(is_number, dtype=np.bool_)
    if is_number.ndim != 1:
        raise ValueError(f"is_number: must be bool of shape (V,), got shape {is_number.shape}")
    if is_number.shape[0] > SLOT_ID and is_number[SLOT_ID:].any():
        raise ValueError("is_number: ids >= SLOT_ID cannot be number tokens")
    out = np.empty_like(tokens)
    count = _apply_slots_kernel(tokens, is_number, np.uint32(SLOT_ID), out)
    return out, int(count)


def apply_slots_reference(tokens: np.ndarray, is_number: np.ndarray) -> tuple[np.ndarray, int]:
    """Numpy twin of :func:`apply_slots`."""
    tokens = np.asarray(tokens, dtype=np.uint32)
    hit = np.zeros(tokens.shape[0], dtype=bool)
    inside = tokens < is_number.shape[0]
    hit[inside] = np.asarray(is_number, dtype=bool)[tokens[inside]]
    return np.where(hit, np.uint32(SLOT_ID), tokens).astype(np.uint32), int(hit.sum())


def slot_strings(tokens: Sequence[str]) -> list[str]:
    """Token strings with number tokens replaced by SLOT_TOKEN (the string-level twin)."""
    return [SLOT_TOKEN if is_number_token(t) else t for t in tokens]


def slot_positions(tokens: Sequence[int]) -> tuple[int, ...]:
    """Positions of SLOT_ID in a phrase's token ids."""
    return tuple(i for i, t in enumerate(tokens) if t == SLOT_ID)
