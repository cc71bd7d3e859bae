"""Operator output from the template index: ``bloomspan report`` and ``bloomspan explain``.

:func:`report` reads the run behind the alias — the covered share, the per-document
clutter histogram, the top index hogs (phrases by psi = length x df), the most cluttered
documents and sites (when the run had ``--site-field``) — and
:func:`bloomspan.sidecar.report.text.render_report` prints it. :func:`explain` answers "why
is this page cluttered": it re-reads the document from the source index, tokenizes it,
finds every published phrase in it (Aho–Corasick over the phrase tokens) and returns each
phrase's character spans; :func:`render_explain` shows them with the original text.
"""
from __future__ import annotations

import logging

import numpy as np

from bloomspan.engine.text.tokenizer import token_spans
from bloomspan.ingest.match.automaton import build_automaton, scan_symbols
from bloomspan.ingest.match.scopes import template_scopes
from bloomspan.sidecar.cluster.field_paths import lookup_field
from bloomspan.sidecar.cluster.scroll import extract_text
from bloomspan.sidecar.curation.store import load_curation
from bloomspan.sidecar.curation.touches import entries_touching
from bloomspan.sidecar.errors import DocumentNotFoundError, RunNotFoundError
from bloomspan.sidecar.publish.document_annotation import covered_char_spans
from bloomspan.sidecar.publish.publication import document_sites, site_name
from bloomspan.sidecar.publish.template_index import aliased_indices, current_run_doc
from bloomspan.sidecar.publish.template_reader import load_cleaning_set

log = logging.getLogger(__name__)

PHRASE_FIELDS = ["phrase_id", "text", "tokens", "length", "df", "occurrences", "psi", "example_ids"]


def top_phrases(client, physical_index: str, top: int) -> list[dict]:
    """The ``top`` phrases by psi desc, length desc, text asc."""
    if top <= 0:
        return []
    resp = client.search(index=physical_index, body={
        "size": top, "query": {"term": {"kind": "phrase"}}, "_source": PHRASE_FIELDS,
        "sort": [{"psi": "desc"}, {"length": "desc"}, {"text.raw": "asc"}]})
    return [h["_source"] for h in resp["hits"]["hits"]]


def report(client, template_index: str, top: int = 20) -> dict:
    """Summary of the current run of ``template_index`` (see module docstring), under the
    names of :mod:`bloomspan.sidecar.publish.run_names`."""
    run = current_run_doc(client, template_index)
    rep = run.get("report") or {}
    tokens = int(run.get("tokens_mined", 0))
    hogs = []
    for rank, p in enumerate(top_phrases(client, run["physical_index"], top), start=1):
        hogs.append({"rank": rank, **{k: p.get(k) for k in ("text", "length", "df", "occurrences", "psi",
                                                            "phrase_id", "example_ids")},
                     "psi_share": p["psi"] / tokens if tokens else 0.0})
    return {
        "template_index": template_index, "physical_index": run["physical_index"], "run_id": run["run_id"],
        "source_index": run.get("source_index"), "field": run.get("field"), "started_at": run.get("started_at"),
        "finished_at": run.get("finished_at"), "params": run.get("params", {}),
        "docs_seen": run.get("docs_seen", 0), "docs_mined": rep.get("docs_mined", 0),
        "docs_skipped": run.get("docs_skipped", 0), "skipped_by_reason": rep.get("skipped_by_reason", {}),
        "tokens_mined": tokens, "covered_tokens": run.get("covered_tokens", 0),
        "covered_share": run.get("covered_share", 0.0),
        "phrases": run.get("phrases", 0), "empty_docs": rep.get("empty_docs", 0),
        "docs_fully_covered": rep.get("docs_fully_covered", 0),
        "docs_without_coverage": rep.get("docs_without_coverage", 0),
        "mean_doc_covered_fraction": rep.get("mean_doc_covered_fraction", 0.0),
        "clutter_histogram": rep.get("clutter_histogram", []),
        "top_phrases": hogs,
        "most_cluttered_docs": (rep.get("most_cluttered_docs") or [])[:top],
        "most_cluttered_sites": (rep.get("most_cluttered_sites") or [])[:top],
        "templates": {k: v for k, v in (run.get("templates") or {}).items() if k != "detector"} or None,
    }


def _clip(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


# ---------------------------------------------------------------------- explain
def _fetch_document(client, source_index: str, doc_id: str) -> dict:
    """The hit of ``doc_id`` (``_id``, or ``<index>:<_id>``) in the source index."""
    candidates = [(source_index, doc_id)]
    if ":" in doc_id:
        prefix, _, rest = doc_id.partition(":")
        candidates.insert(0, (prefix, rest))
    for index, _id in candidates:
        resp = client.search(index=index, body={"query": {"ids": {"values": [_id]}}, "size": 2},
                             ignore_unavailable=True, allow_no_indices=True)
        hits = resp["hits"]["hits"]
        if len(hits) > 1:
            raise DocumentNotFoundError(f"{_id!r} exists in several indices of {source_index} "
                                        f"({[h['_index'] for h in hits]}); give --id INDEX:ID", index=source_index,
                                        item=doc_id)
        if hits:
            return hits[0]
    raise DocumentNotFoundError(f"document {doc_id!r} not found in {source_index}", index=source_index,
                                item=doc_id)


def _run_phrases(client, physical_index: str) -> list[dict]:
    from opensearchpy import helpers

    return [h["_source"] for h in helpers.scan(client, index=physical_index,
                                                query={"query": {"term": {"kind": "phrase"}},
                                                       "_source": ["phrase_id", "text", "tokens", "df", "psi"]},
                                                size=1000)]


class PhraseFinder:
    """Every occurrence of a run's phrases in a text: Aho–Corasick over the phrase tokens,
    built once and applied to as many texts as needed (``explain``, the HTML report's
    example pages). ``phrases``: dicts with ``tokens``, ``text``, ``df``, ``psi`` and
    ``phrase_id`` (the phrase documents, or ``phrases.jsonl`` records)."""

    def __init__(self, phrases: list[dict]):
        self.phrases = phrases
        self._symbol: dict[str, int] = {}
        patterns = [tuple(self._symbol.setdefault(t, len(self._symbol) + 1) for t in p["tokens"]) for p in phrases]
        self._automaton = build_automaton(patterns) if patterns else None

    def find(self, text: str) -> dict:
        """``{"tokens", "covered_tokens", "covered_share", "spans" (merged, characters),
        "phrases": [{"phrase_id", "text", "df", "psi", "occurrences", "spans"}, ...]}``."""
        tokens, starts, ends = token_spans(text)
        covered = np.zeros(len(tokens), dtype=bool)
        found: dict[int, list[list[int]]] = {}
        if tokens and self._automaton is not None:
            sym = np.fromiter((self._symbol.get(t, 0) for t in tokens), dtype=np.int32, count=len(tokens))
            start, end, idx = scan_symbols(self._automaton, sym)
            for s, e, i in zip(start.tolist(), end.tolist(), idx.tolist()):
                covered[s:e] = True
                found.setdefault(i, []).append([int(starts[s]), int(ends[e - 1])])
        rows = [{"phrase_id": self.phrases[i].get("phrase_id"), "text": self.phrases[i]["text"],
                 "df": self.phrases[i]["df"], "psi": self.phrases[i]["psi"], "occurrences": len(spans),
                 "spans": spans} for i, spans in found.items()]
        rows.sort(key=lambda r: (-r["occurrences"] * len(r["text"]), -r["psi"], r["text"]))
        n, c = len(tokens), int(covered.sum())
        return {"tokens": n, "covered_tokens": c, "covered_share": c / n if n else 0.0,
                "spans": covered_char_spans(covered, starts, ends), "phrases": rows}


def run_phrase_finder(client, run: dict) -> PhraseFinder:
    """A :class:`PhraseFinder` over every phrase of ``run`` (a run document with ``physical_index``)."""
    return PhraseFinder(_run_phrases(client, run["physical_index"]))


def explain(client, template_index: str, doc_id: str, *, run: dict | None = None,
            finder: PhraseFinder | None = None, template_matcher=None) -> dict:
    """Which phrases of the current run cover document ``doc_id``, and where.

    Returns ``{"id", "index", "run_id", "tokens", "covered_tokens", "covered_share",
    "spans": [[start, end], ...] (merged, characters), "phrases": [{"phrase_id", "text",
    "df", "psi", "occurrences", "spans"}, ...] (most occurrences first), "text"}``.
    ``run`` (the current run document), ``finder`` (:func:`run_phrase_finder` of it) and
    ``template_matcher`` (:func:`run_template_matcher`) may be passed by a caller that
    explains several documents of one run.
    """
    if run is None:
        if not aliased_indices(client, template_index):
            raise RunNotFoundError(f"template index {template_index!r} has no published run", index=template_index)
        run = current_run_doc(client, template_index)
    hit = _fetch_document(client, run["source_index"], doc_id)
    status, text = extract_text(hit.get("_source"), run["field"])
    text = text or ""
    found = (finder or run_phrase_finder(client, run)).find(text)
    out = {"id": doc_id, "index": hit["_index"], "run_id": run["run_id"], "field": run["field"],
           "field_status": status, **found, "text": text}
    out["curation"] = _curation_touches(client, template_index, run, hit.get("_source") or {}, text, out["phrases"])
    if run.get("templates") and text:
        out["templates"] = _explain_templates(client, run, hit.get("_source") or {}, text, template_matcher)
    return out


def _curation_touches(client, template_index: str, run: dict, source: dict, text: str, phrases: list) -> list:
    """The curation entries that touched this document (:mod:`bloomspan.sidecar.curation.touches`)."""
    curation = load_curation(client, template_index)
    if not curation.entries:
        return []
    site_field = (run.get("params") or {}).get("site_field")
    site = source.get(site_field) if site_field else None
    return entries_touching(text, phrases, curation.entries, site_name(site) if isinstance(site, str) else None)


def run_template_matcher(client, run: dict):
    """The template detector's matcher of ``run`` (``mine --templates``), or None."""
    return load_cleaning_set(client, run["physical_index"])[1] if run.get("templates") else None


def _explain_templates(client, run: dict, source: dict, text: str, matcher=None) -> dict:
    """What the template detector's records of the run (``mine --templates``) cover in ``text``,
    with the document's site and URL section scopes read from the run's fields."""
    params = run.get("params") or {}
    matcher = matcher or run_template_matcher(client, run)

    def read(field):  # as the run read it (publication.read_document_fields): a non-empty string or None
        value = lookup_field(source, field) if field else None
        return [value if isinstance(value, str) and value else None] if field else None
    url = read(params.get("url_field"))
    site = document_sites(read(params.get("site_field")), url)
    scopes = template_scopes(site[0] if site else None, url[0] if url else None)
    m = matcher.find(text, scopes)
    return {"scopes": scopes, "covered_tokens": m.covered_tokens,
            "covered_share": m.covered_tokens / m.n_tokens if m.n_tokens else 0.0,
            "spans": [[int(a), int(b)] for a, b in zip(m.span_char_start.tolist(), m.span_char_end.tolist())]}


def render_explain(exp: dict, top: int = 20) -> str:
    """Plain-text form of :func:`explain`: summary, then each phrase with its first span."""
    text = exp["text"]
    lines = [f"{exp['index']}/{exp['id']} (run {exp['run_id']}): {exp['covered_tokens']} of {exp['tokens']} tokens "
             f"covered = {exp['covered_share']:.1%}, {len(exp['spans'])} span(s), {len(exp['phrases'])} phrase(s)"]
    for r in exp["phrases"][:top]:
        s, e = r["spans"][0]
        lines.append(f"  x{r['occurrences']} df={r['df']:>6} chars {s}-{e}: {_clip(text[s:e], 100)!r}")
    if len(exp["phrases"]) > top:
        lines.append(f"  ... {len(exp['phrases']) - top} more")
    t = exp.get("templates")
    if t:
        lines.append(f"with the template detector's records (scopes {t['scopes']}): {t['covered_tokens']} tokens "
                     f"covered = {t['covered_share']:.1%}, {len(t['spans'])} span(s)")
        for s, e in t["spans"][:top]:
            lines.append(f"  chars {s}-{e}: {_clip(text[s:e], 100)!r}")
        if len(t["spans"]) > top:
            lines.append(f"  ... {len(t['spans']) - top} more")
    for entry in exp.get("curation") or []:
        denied = f", {len(entry['phrases'])} phrase(s) of the run" if entry.get("phrases") else ""
        lines.append(f"curation {entry['action']} {entry['text'] or entry.get('phrase_id')!r}"
                     f"{' on ' + entry['scope'] if entry.get('scope') else ''} ({entry['entry_id']}, by "
                     f"{entry.get('who')}): {entry['effect']}{denied}")
    return "\n".join(lines)
