"""The operator's allow and deny lists applied to phrase records: which records a cleaner may use.

A :class:`CurationEntry` names a phrase (its tokens, as the tokenizer produces them) or one
record by its ``phrase_id``, optionally scoped to a site (``news.example.com``) or a site
section (``news.example.com/sport``, as :func:`~bloomspan.ingest.match.scopes.template_scopes` names
them). Rules, applied to the records read from a template index or a phrases file:

* **deny** wins over everything. A record is denied by an entry when the entry names its
  id, or when the record's tokens contain the entry's tokens or are contained in them
  (contiguously): a longer phrase around a denied sentence would still remove it, and a
  fragment of it would remove part of it. A record that records its run's ``min_length``
  (the window matcher finds any run of that many of its tokens) is denied too when one of
  those windows lies inside the entry's phrase. A phrase that only overlaps the start or end
  of a denied phrase is kept: where both occur joined, it can still remove that edge.
* A deny entry without scope applies everywhere. One with a scope removes the records
  scoped to that scope (or to a section below it) from every set, and the global records it
  matches only from the sets made for documents of that scope (:func:`curate_records`'s
  ``document_scopes``; :mod:`~bloomspan.ingest.clean.curated_cleaner` routes documents to those sets). With
  ``strict=True`` (an exported pipeline, which cannot tell sites apart) every deny entry
  applies everywhere: a denied phrase is then never applied, at the cost of not applying it
  on the other sites either.
* Records that are not phrases (page skeletons, line shapes) cannot be filtered by their
  tokens; every cleaner built by :mod:`~bloomspan.ingest.clean.curated_cleaner` instead leaves each occurrence of
  a deny entry's tokens uncovered whatever record covered it, phrases overlapping its edge
  included (:mod:`~bloomspan.ingest.clean.denied_text`), on the documents the entry applies to. So a denied phrase
  is never removed, and the text around it is cleaned as before.
* **allow** adds the entry's phrase as a record (scoped like the entry) unless a record with
  the same tokens and scope is there already or a deny entry applies to it: boilerplate the
  operator knows about is removed before it is frequent enough to be mined.

Pure functions over plain values; the cluster-stored lists are read by
:mod:`bloomspan.sidecar.curation.store`.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .phrase_set import is_phrase_record

ACTIONS = ("deny", "allow")


class CurationError(ValueError):
    """An invalid curation entry: ``field`` names the key, the message says the fix."""

    def __init__(self, field_name: str, value: Any, fix: str):
        self.field = field_name
        self.value = value
        super().__init__(f"{field_name}={value!r}: {fix}")


def entry_id(action: str, tokens: Sequence[str], phrase_id: str | None, scope: str | None) -> str:
    """Stable id of an entry: one entry per (phrase or record id, scope) and action."""
    key = "\x00".join([action, " ".join(tokens), phrase_id or "", scope or ""])
    return f"{action}-" + hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class CurationEntry:
    """One allow or deny entry (module docstring). ``who``/``why``/``created_at`` are for people."""

    action: str
    tokens: tuple[str, ...] = ()
    phrase_id: str | None = None
    scope: str | None = None
    who: str | None = None
    why: str | None = None
    created_at: str | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise CurationError("action", self.action, f"must be one of {', '.join(ACTIONS)}")
        tokens = self.tokens
        if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)):
            raise CurationError("tokens", tokens, "must be a list of tokens")
        object.__setattr__(self, "tokens", tuple(tokens))
        if any(not isinstance(t, str) or not t or t != t.lower() or any(c.isspace() for c in t) for t in tokens):
            raise CurationError("tokens", tokens, "each token must be a non-empty lowercase string without spaces "
                                "(tokenize the phrase first)")
        if not tokens and not self.phrase_id:
            raise CurationError("tokens", tokens, "give the phrase (tokens) or the phrase_id of a record")
        if self.action == "allow" and not tokens:
            raise CurationError("tokens", tokens, "an allow entry adds a phrase: give its text, not only an id")
        if self.phrase_id is not None and (not isinstance(self.phrase_id, str) or not self.phrase_id):
            raise CurationError("phrase_id", self.phrase_id, "must be a non-empty string or absent")
        if self.scope is not None and (not isinstance(self.scope, str) or not self.scope.strip("/")):
            raise CurationError("scope", self.scope, "must be a site (host) or site/section, or absent for every site")

    @property
    def id(self) -> str:
        return entry_id(self.action, self.tokens, self.phrase_id, self.scope)

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    def to_dict(self) -> dict:
        out = {"entry_id": self.id, "action": self.action, "text": self.text, "tokens": list(self.tokens)}
        for key in ("phrase_id", "scope", "who", "why", "created_at"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CurationEntry:
        return cls(action=obj.get("action"), tokens=tuple(obj.get("tokens") or ()), phrase_id=obj.get("phrase_id"),
                   scope=obj.get("scope") or None, who=obj.get("who"), why=obj.get("why"),
                   created_at=obj.get("created_at"))


def contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Does ``haystack`` hold ``needle`` as a contiguous run of tokens?"""
    n, m = len(haystack), len(needle)
    if m == 0 or m > n:
        return False
    first = needle[0]
    needle = tuple(needle)
    for i in range(n - m + 1):
        if haystack[i] == first and tuple(haystack[i:i + m]) == needle:
            return True
    return False


def overlaps(tokens: Sequence[str], entry: CurationEntry, window: int | None = None) -> bool:
    """The containment rule: ``tokens`` contain the entry's phrase or are contained in it;
    with ``window`` (the phrase's ``min_length``: the window matcher finds any run of that
    many of its tokens) also when one such window lies inside the entry's phrase."""
    if not entry.tokens or not tokens:
        return False
    if contains(tokens, entry.tokens) or contains(entry.tokens, tokens):
        return True
    if window is None or window >= len(tokens) or window > len(entry.tokens):
        return False
    return any(contains(entry.tokens, tokens[i:i + window]) for i in range(len(tokens) - window + 1))


def within(scope: str | None, entry_scope: str) -> bool:
    """Is a record scoped to ``scope`` inside ``entry_scope`` (the same site or a section of it)?"""
    return scope is not None and (scope == entry_scope or scope.startswith(entry_scope.rstrip("/") + "/"))


def _record_tokens(record: Mapping[str, Any]) -> tuple[str, ...]:
    tokens = record.get("tokens")
    if tokens is None and isinstance(record.get("text"), str):
        tokens = record["text"].split(" ")
    return tuple(tokens or ())


def denying_entry(record: Mapping[str, Any], denies: Iterable[CurationEntry], document_scopes: frozenset = frozenset(),
                  strict: bool = False) -> CurationEntry | None:
    """The first deny entry that removes ``record`` from a set for documents of
    ``document_scopes`` (module docstring), or None."""
    tokens = _record_tokens(record)
    rid = record.get("id", record.get("phrase_id"))
    scope = record.get("scope") or None
    window = record.get("min_length")
    window = window if isinstance(window, int) and not isinstance(window, bool) and window >= 1 else None
    for entry in denies:
        if not (entry.phrase_id is not None and rid == entry.phrase_id) and not overlaps(tokens, entry, window):
            continue
        if strict or entry.scope is None or within(scope, entry.scope) or (
                scope is None and entry.scope in document_scopes):
            return entry
    return None


@dataclass
class Curated:
    """The records a cleaner may use, and what curation did: ``filtered`` (record, entry)
    pairs removed by a deny, ``added`` the allow entries that became records."""

    records: list
    filtered: list[tuple[dict, CurationEntry]] = field(default_factory=list)
    added: list[CurationEntry] = field(default_factory=list)

    def summary(self) -> dict:
        return {"filtered": len(self.filtered), "added": len(self.added),
                "filtered_phrases": [{"text": " ".join(_record_tokens(r)), "entry_id": e.id}
                                     for r, e in self.filtered[:20]]}


def allowed_record(entry: CurationEntry) -> dict:
    """The phrase record an allow entry adds (its id derived from the entry's). ``curation:
    "allow"`` marks it as the operator's: it applies on every page of its scope, also where the
    detector's records decide about a run's mined exact phrases."""
    rec = {"id": "allow-" + entry.id.split("-", 1)[1], "text": entry.text, "tokens": list(entry.tokens),
           "length": len(entry.tokens), "df": 0, "curation": "allow"}
    if entry.scope is not None:
        rec["scope"] = entry.scope
    return rec


def curate_records(records: Sequence[Any], entries: Iterable[CurationEntry], *,
                   document_scopes: Iterable[str] = (), strict: bool = False) -> Curated:
    """Apply the entries to phrase records (dicts as in ``phrases.jsonl``, template-detector
    records included): denied records out, allowed phrases in (module docstring).
    ``document_scopes``: the scopes of the documents this set is for (empty: the set for
    documents without a scoped deny). Records that are not phrases pass through."""
    entries = list(entries)
    denies = [e for e in entries if e.action == "deny"]
    allows = [e for e in entries if e.action == "allow"]
    scopes = frozenset(document_scopes)
    out = Curated(records=[])
    present: set[tuple[tuple[str, ...], str | None]] = set()
    for record in records:
        # Skeleton, line-shape and configuration records are not phrases: they pass, and the
        # cleaners protect the denied text from what they cover (.denied_text).
        if isinstance(record, Mapping) and is_phrase_record(record):
            entry = denying_entry(record, denies, scopes, strict)
            if entry is not None:
                out.filtered.append((dict(record), entry))
                continue
            present.add((_record_tokens(record), record.get("scope") or None))
        out.records.append(record)
    for entry in allows:
        rec = allowed_record(entry)
        if (entry.tokens, entry.scope) in present or denying_entry(rec, denies, scopes, strict) is not None:
            continue
        if entry.scope is not None and strict:
            continue  # a set that cannot tell sites apart applies no site's phrase everywhere
        present.add((entry.tokens, entry.scope))
        out.records.append(rec)
        out.added.append(entry)
    return out


def scoped_deny_scopes(entries: Iterable[CurationEntry]) -> frozenset:
    """The scopes that have a deny entry of their own (documents of these need their own set)."""
    return frozenset(e.scope for e in entries if e.action == "deny" and e.scope is not None)
