"""Phrase records: the JSON shape of one mined phrase, shared by `phrases.jsonl` files and
the phrase documents of the template index (which add run id, bitmap and example ids).

:func:`phrase_record` writes the record of a mined phrase; :func:`document_record` turns a
phrase (or template) document of the template index back into the record. Both shapes are
read by one parser, :func:`bloomspan.ingest.records.phrase_set.parse_phrase_record` (template
records also by :mod:`bloomspan.ingest.match.template_matcher`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.ingest.records.phrase_set import stable_phrase_id


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


def phrase_document(phrase: Phrase, token_strings: list[str], example_ids: list[str], doc_bitmap: str) -> dict:
    """The phrase document of the template index (without ``kind`` and ``run_id``): the
    phrase record under its stable ``phrase_id``, with example document ids and the encoded
    roaring bitmap of its documents. Every run (single node or Dask) publishes this shape."""
    return {"phrase_id": stable_phrase_id(token_strings, None), **phrase_record(phrase, token_strings),
            "example_ids": example_ids, "doc_bitmap": doc_bitmap}


def phrase_document_order(doc: dict) -> tuple:
    """Sort key of published phrase documents: psi descending, length descending, text."""
    return (-doc["psi"], -doc["length"], doc["text"])


def phrase_records(phrases: Iterable[Phrase], vocabulary) -> Iterator[dict]:
    """Records in the engines' order (psi descending); ``vocabulary.token(id)`` gives strings."""
    for phrase in phrases:
        yield phrase_record(phrase, [vocabulary.token(int(t)) for t in phrase.tokens])


def document_record(src: dict) -> dict:
    """The phrase record of a template index document of kind ``phrase`` or ``template``
    (``phrase_id`` becomes ``id``; a template document's ``template_kind``, ``slots``,
    ``block_lengths`` and ``anchor`` become the template record's keys)."""
    record = {"text": src["text"], "tokens": src["tokens"], "length": src.get("length", len(src["tokens"])),
              "df": src.get("df", 0)}
    if src.get("phrase_id") is not None:
        record["id"] = src["phrase_id"]
    if src.get("scope"):
        record["scope"] = src["scope"]
    if src.get("kind") == "template":
        record["kind"] = src.get("template_kind", "mcfp")
        record["slots"] = src.get("slots") or []
        for key in ("block_lengths", "anchor"):
            if src.get(key) is not None:
                record[key] = src[key]
    return record
