"""Read the published phrase set back from the template index (for the cleaner and the proxy)."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)

PHRASE_FIELDS = ["text", "tokens", "length", "df", "phrase_id", "scope"]


def current_run(client, alias: str) -> str | None:
    """The physical index the template alias points at now, or None if the alias is absent."""
    resp = client.indices.get_alias(name=alias, ignore=[404])
    if not resp or resp.get("status") == 404 or "error" in resp:
        return None
    indices = sorted(resp)
    if len(indices) != 1:
        raise RuntimeError(f"template alias {alias!r} points at {len(indices)} indices {indices}; expected exactly one")
    return indices[0]


def phrase_documents(client, index: str):
    """Yield the phrase documents (``kind: phrase``) of one physical template index."""
    from opensearchpy import helpers

    for hit in helpers.scan(client, index=index, query={"query": {"term": {"kind": "phrase"}}},
                            _source=PHRASE_FIELDS, size=1000, preserve_order=False):
        yield hit["_source"]


def load_phrase_set(client, index: str):
    """A :class:`~bloomspan.ingest.phrase_set.PhraseSet` of every phrase in ``index``."""
    from bloomspan.ingest.phrase_set import PhraseSet

    records = []
    for src in phrase_documents(client, index):
        record = {"text": src["text"], "tokens": src["tokens"], "length": src.get("length", len(src["tokens"])),
                  "df": src.get("df", 0)}
        if src.get("phrase_id") is not None:
            record["id"] = src["phrase_id"]
        if src.get("scope"):
            record["scope"] = src["scope"]
        records.append(record)
    log.info("loaded phrases index=%s count=%d", index, len(records))
    return PhraseSet.from_records(records, source=index)
