"""Phrase records: the JSON shape of one mined phrase, shared by `phrases.jsonl` files and
the phrase documents of the template index (which add run id, bitmap and example ids).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from bloomspan.engine.mining.phrases import Phrase


def phrase_record(phrase: Phrase, token_strings: list[str]) -> dict:
    """``{"text", "tokens", "length", "df", "occurrences", "psi"}`` for one phrase.

    ``token_strings`` are the phrase's tokens as strings (``vocabulary`` lookups of
    ``phrase.tokens``); ``text`` joins them with one space.
    """
    return {
        "text": " ".join(token_strings),
        "tokens": list(token_strings),
        "length": phrase.length,
        "df": int(phrase.df),
        "occurrences": int(phrase.occurrences),
        "psi": int(phrase.psi),
    }


def phrase_records(phrases: Iterable[Phrase], vocabulary) -> Iterator[dict]:
    """Records in the engines' order (psi descending); ``vocabulary.token(id)`` gives strings."""
    for phrase in phrases:
        yield phrase_record(phrase, [vocabulary.token(int(t)) for t in phrase.tokens])
