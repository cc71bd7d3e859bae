"""Which curation entries touched one document (``bloomspan explain``).

A deny entry touched a document when its phrase occurs in the text, or when it denies a
phrase of the run that occurs there (that phrase is then not applied: ``explain`` lists it
with ``denied_by``). An allow entry touched it when its phrase occurs in the text (the
cleaner removes it there). Scoped entries count only for documents of their site/section.
"""
from __future__ import annotations

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.records.curation import contains, denying_entry, within


def _applies_to(entry, site: str | None) -> bool:
    return entry.scope is None or within(site, entry.scope)


def entries_touching(text: str, phrases: list[dict], entries, site: str | None = None) -> list[dict]:
    """Entries (as dicts, with ``effect`` and ``phrases``: the run's phrase ids they deny here)
    that touched ``text``; marks each denied phrase of ``phrases`` with ``denied_by``."""
    tokens = tokenize(text)
    touched: dict[str, dict] = {}
    for entry in entries:
        if not _applies_to(entry, site):
            continue
        if entry.tokens and contains(tokens, entry.tokens):
            effect = "not applied (denied)" if entry.action == "deny" else "applied (allowed below sigma)"
            touched[entry.id] = {**entry.to_dict(), "effect": effect, "phrases": []}
    denies = [e for e in entries if e.action == "deny" and _applies_to(e, site)]
    for phrase in phrases:
        entry = denying_entry({"tokens": phrase["text"].split(" "), "id": phrase.get("phrase_id")}, denies,
                              frozenset([site]) if site else frozenset())
        if entry is None:
            continue
        phrase["denied_by"] = entry.id
        row = touched.setdefault(entry.id, {**entry.to_dict(), "effect": "not applied (denied)", "phrases": []})
        row["phrases"].append(phrase.get("phrase_id"))
    return list(touched.values())
