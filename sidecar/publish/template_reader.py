"""Read the published phrase set back from the template index (for the cleaner and the proxy).

A run made with ``bloomspan mine --templates`` also holds the template detector's records
(documents of kind ``template``, ``skeleton`` and ``template_config``);
:func:`load_cleaning_set` then returns a
:class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher` over the phrases and those records.

Every loader applies the operator's curation of the template index the run belongs to
(:mod:`bloomspan.sidecar.curation.store`): :func:`load_cleaner` exactly, site-scoped deny
entries included; :func:`load_phrase_set` and :func:`load_cleaning_set`, which return one set
for every document, with every deny entry applied everywhere (``strict``), so no reader of
the cluster ever applies a denied phrase. ``curated=False`` reads the run as published.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from opensearchpy import helpers

from bloomspan.ingest.clean.curated_cleaner import curated_cleaner
from bloomspan.ingest.match.template_matcher import TemplateMatcher
from bloomspan.ingest.records.curation import curate_records
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.ingest.records.record_kinds import CONFIG_KIND, PAGE_MODEL_KINDS
from bloomspan.sidecar.curation.store import Curation, load_curation
from bloomspan.sidecar.publish.phrase_records import document_record

from .template_index import template_alias_of

log = logging.getLogger(__name__)

PHRASE_FIELDS = ["text", "tokens", "length", "df", "phrase_id", "scope"]
# Page models stored whole under ``skeleton`` (an opaque object: a skeleton's pairs, a line shape's
# fixed words, a site's title names, its own-fact line types), by kind: the prefix of their ids.
# The kinds are ingest's (one list of page models); an id prefix is the kind with dashes.
WHOLE_MODELS = {kind: kind.replace("_", "-") for kind in PAGE_MODEL_KINDS}
# Kinds of document in a template index (what a cleaner reads back besides phrases).
TEMPLATE_DOCUMENT_KINDS = ["template", *WHOLE_MODELS, "template_config"]
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
    source = {"_source": fields} if fields is not None else {"_source_excludes": BULKY_FIELDS}
    yield from helpers.scan(client, index=index, query={"query": {"terms": {"kind": kinds}}}, size=1000,
                            preserve_order=False, **source)


def phrase_documents(client, index: str):
    """Yield the phrase documents (``kind: phrase``) of one physical template index."""
    for hit in _scan(client, index, ["phrase"], PHRASE_FIELDS):
        yield hit["_source"]


def run_min_length(client, index: str) -> int | None:
    """The ``--min-length`` run ``index`` was mined with (its run document's parameters), or
    None when the index holds no run document: the window matcher's window length."""
    resp = client.get(index=index, id="run", _source_includes=["params.min_length"], ignore=[404])
    value = ((resp or {}).get("_source") or {}).get("params", {}).get("min_length")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _with_min_length(records: list[dict], min_length: int | None) -> list[dict]:
    """The run's phrase records, each recording the run's min_length (the matcher finds their windows)."""
    if min_length is not None:
        for record in records:
            record.setdefault("min_length", min_length)
    return records


def run_curation(client, index: str):
    """The curation of the template alias physical index ``index`` belongs to (empty when
    ``index`` is not a run index)."""
    alias = template_alias_of(index)
    return load_curation(client, alias) if alias is not None else Curation()


def _strictly_curated(client, index: str, records: list) -> list:
    curation = run_curation(client, index)
    if not curation.entries:
        return records
    curated = curate_records(records, curation.entries, strict=True)
    log.info("curation applied index=%s filtered=%d added=%d", index, len(curated.filtered), len(curated.added))
    return curated.records


def load_phrase_set(client, index: str, curated: bool = True):
    """A :class:`~bloomspan.ingest.records.phrase_set.PhraseSet` of every phrase in ``index`` (curated
    strictly unless ``curated`` is False)."""
    records = _with_min_length([document_record(src) for src in phrase_documents(client, index)],
                               run_min_length(client, index))
    log.info("loaded phrases index=%s count=%d", index, len(records))
    if curated:
        records = _strictly_curated(client, index, records)
    return PhraseSet.from_records(records, source=index)


def iter_template_documents(template_records: Iterable[dict]) -> Iterator[tuple[str, dict]]:
    """Index documents ``(_id, source)`` for the records of a template detection
    (:func:`bloomspan.engine.templates.detector.detect_templates_in_texts` shape: a config
    record, phrase records, skeleton records), one at a time. The phrase records' ``kind``
    becomes ``template_kind``; page models (:data:`WHOLE_MODELS`) are stored whole under ``skeleton``."""
    stored = dict.fromkeys(WHOLE_MODELS, 0)  # documents written per page-model kind
    for rec in template_records:
        kind = rec.get("kind")
        if kind == CONFIG_KIND:
            yield ("template-config", {"kind": "template_config", "template_config": rec["template_config"]})
        elif kind in WHOLE_MODELS:
            yield (f"{WHOLE_MODELS[kind]}-{stored[kind]:06d}", {"kind": kind, "scope": rec.get("scope"), "skeleton": rec})
            stored[kind] += 1
        else:
            src = {"kind": "template", "phrase_id": rec["id"], "template_kind": kind,
                   **{k: rec[k] for k in ("text", "tokens", "length", "df", "occurrences", "slots") if k in rec}}
            for k in ("scope", "block_lengths", "anchor"):
                if rec.get(k) is not None:
                    src[k] = rec[k]
            yield (rec["id"], src)


def template_documents(template_records: Iterable[dict]) -> list[tuple[str, dict]]:
    """:func:`iter_template_documents` as a list."""
    return list(iter_template_documents(template_records))


def cleaning_records(client, index: str) -> tuple[list[dict], bool]:
    """``(records, with_templates)``: the run's phrase records, and with ``--templates`` the
    template detector's config, template and skeleton records too (as a TemplateMatcher
    reads them), uncurated."""
    config, phrases, skeletons, templates = None, [], [], []
    for hit in _scan(client, index, ["phrase", *TEMPLATE_DOCUMENT_KINDS]):  # one pass over the index
        src = hit["_source"]
        if src["kind"] == "phrase":
            phrases.append(document_record(src))
        elif src["kind"] == "template_config":
            config = {"kind": "config", "template_config": src["template_config"]}
        elif src["kind"] in WHOLE_MODELS:
            skeletons.append(src["skeleton"])
        else:
            templates.append(document_record(src))
    _with_min_length(phrases, run_min_length(client, index))
    if config is None:
        log.info("loaded phrases index=%s count=%d", index, len(phrases))
        return phrases, False
    skeletons.sort(key=lambda r: (r.get("kind") or "", r.get("scope") or "", r.get("edge") or ""))
    log.info("loaded templates index=%s phrases=%d templates=%d skeletons=%d", index, len(phrases), len(templates),
             len(skeletons))
    return [config] + phrases + templates + skeletons, True


def load_cleaning_set(client, index: str, curated: bool = True):
    """``(phrase_set, templates)`` for a cleaner: the index's phrases, and a
    :class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher` over them plus the template
    detector's records when the run was made with ``--templates`` (else None); curated
    strictly unless ``curated`` is False."""
    records, with_templates = cleaning_records(client, index)
    if curated:
        records = _strictly_curated(client, index, records)
    if not with_templates:
        return PhraseSet.from_records(records, source=index), None
    matcher = TemplateMatcher(records, source=index)
    return matcher.phrase_set, matcher


def load_cleaner(client, index: str, config, curation=None):
    """``(cleaner, curation, curated)``: a cleaner with ``config`` (a CleanerConfig) over run
    ``index`` with its template index's curation applied exactly (site-scoped deny entries
    route documents, :mod:`bloomspan.ingest.clean.curated_cleaner`); ``curation`` (already read)
    saves reading it again; ``curated`` is the base set's outcome (filtered and added)."""
    curation = run_curation(client, index) if curation is None else curation
    records, with_templates = cleaning_records(client, index)
    outcome: list = []
    cleaner = curated_cleaner(records, config, curation.entries, with_templates=with_templates, source=index,
                              on_curated=outcome.append)
    if curation.entries:
        log.info("curated cleaner index=%s curation=%s filtered=%d added=%d", index, curation.version,
                 len(outcome[0].filtered), len(outcome[0].added))
    return cleaner, curation, outcome[0]
