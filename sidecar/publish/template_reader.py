"""Read the published phrase set back from the template index (for the cleaner and the proxy).

A run made with ``bloomspan mine --templates`` also holds the template detector's records
(documents of kind ``template``, ``skeleton`` and ``template_config``);
:func:`load_cleaning_set` then returns a
:class:`~bloomspan.ingest.template_matcher.TemplateMatcher` over the phrases and those records.
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)

PHRASE_FIELDS = ["text", "tokens", "length", "df", "phrase_id", "scope"]
TEMPLATE_KINDS = ["template", "skeleton", "template_config"]
BULKY_FIELDS = ["doc_bitmap", "example_ids"]  # what a cleaner never needs of a phrase document


def current_run(client, alias: str) -> str | None:
    """The physical index the template alias points at now, or None if the alias is absent."""
    resp = client.indices.get_alias(name=alias, ignore=[404])
    if not resp or resp.get("status") == 404 or "error" in resp:
        return None
    indices = sorted(resp)
    if len(indices) != 1:
        raise RuntimeError(f"template alias {alias!r} points at {len(indices)} indices {indices}; expected exactly one")
    return indices[0]


def _scan(client, index: str, kinds: list[str], fields: list[str] | None = None):
    """Documents of ``kinds``: only ``fields`` of each, or all but :data:`BULKY_FIELDS`."""
    from opensearchpy import helpers

    source = {"_source": fields} if fields is not None else {"_source_excludes": BULKY_FIELDS}
    yield from helpers.scan(client, index=index, query={"query": {"terms": {"kind": kinds}}}, size=1000,
                            preserve_order=False, **source)


def phrase_documents(client, index: str):
    """Yield the phrase documents (``kind: phrase``) of one physical template index."""
    for hit in _scan(client, index, ["phrase"], PHRASE_FIELDS):
        yield hit["_source"]


def _phrase_record(src: dict) -> dict:
    record = {"text": src["text"], "tokens": src["tokens"], "length": src.get("length", len(src["tokens"])),
              "df": src.get("df", 0)}
    if src.get("phrase_id") is not None:
        record["id"] = src["phrase_id"]
    if src.get("scope"):
        record["scope"] = src["scope"]
    return record


def load_phrase_set(client, index: str):
    """A :class:`~bloomspan.ingest.phrase_set.PhraseSet` of every phrase in ``index``."""
    from bloomspan.ingest.phrase_set import PhraseSet

    records = [_phrase_record(src) for src in phrase_documents(client, index)]
    log.info("loaded phrases index=%s count=%d", index, len(records))
    return PhraseSet.from_records(records, source=index)


def template_documents(template_records: list[dict]) -> list[tuple[str, dict]]:
    """Index documents ``(_id, source)`` for the records of a template detection
    (:func:`bloomspan.engine.templates.detector.detect_templates_in_texts` shape: a config
    record, phrase records, skeleton records). The phrase records' ``kind`` becomes
    ``template_kind``; skeletons are stored whole under ``skeleton``."""
    out: list[tuple[str, dict]] = []
    n_skeleton = 0
    for rec in template_records:
        kind = rec.get("kind")
        if kind == "config":
            out.append(("template-config", {"kind": "template_config", "template_config": rec["template_config"]}))
        elif kind == "skeleton":
            out.append((f"skeleton-{n_skeleton:06d}", {"kind": "skeleton", "scope": rec.get("scope"), "skeleton": rec}))
            n_skeleton += 1
        else:
            src = {"kind": "template", "phrase_id": rec["id"], "template_kind": kind,
                   **{k: rec[k] for k in ("text", "tokens", "length", "df", "occurrences", "slots") if k in rec}}
            for k in ("scope", "block_lengths", "anchor"):
                if rec.get(k) is not None:
                    src[k] = rec[k]
            out.append((rec["id"], src))
    return out


def load_cleaning_set(client, index: str):
    """``(phrase_set, templates)`` for a cleaner: the index's phrases, and a
    :class:`~bloomspan.ingest.template_matcher.TemplateMatcher` over them plus the template
    detector's records when the run was made with ``--templates`` (else None)."""
    from bloomspan.ingest.phrase_set import PhraseSet
    from bloomspan.ingest.template_matcher import TemplateMatcher

    config, phrases, skeletons, templates = None, [], [], []
    for hit in _scan(client, index, ["phrase", *TEMPLATE_KINDS]):  # one pass over the index
        src = hit["_source"]
        if src["kind"] == "phrase":
            phrases.append(_phrase_record(src))
        elif src["kind"] == "template_config":
            config = {"kind": "config", "template_config": src["template_config"]}
        elif src["kind"] == "skeleton":
            skeletons.append(src["skeleton"])
        else:
            rec = _phrase_record(src)
            rec["kind"] = src.get("template_kind", "mcfp")
            rec["slots"] = src.get("slots") or []
            for k in ("block_lengths", "anchor"):
                if src.get(k) is not None:
                    rec[k] = src[k]
            templates.append(rec)
    if config is None:
        log.info("loaded phrases index=%s count=%d", index, len(phrases))
        return PhraseSet.from_records(phrases, source=index), None
    skeletons.sort(key=lambda r: r.get("scope") or "")
    matcher = TemplateMatcher([config] + phrases + templates + skeletons, source=index)
    log.info("loaded templates index=%s phrases=%d templates=%d skeletons=%d", index, len(phrases), len(templates),
             len(skeletons))
    return matcher.phrase_set, matcher
