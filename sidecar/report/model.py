"""What the HTML report shows, gathered into one plain dict (JSON-serialisable).

Two sources give the same shape:

* :func:`cluster_report_model` — the run behind a template index alias (its run document,
  top phrases and template records, every kept run's run document for the trend, and a few
  example pages re-read from the source index and matched as ``bloomspan explain`` does);
* :func:`results_report_model` — a ``bloomspan mine --jsonl`` result directory
  (``report.json`` + ``phrases.jsonl``; example pages from the mined file when it is still
  there).

The quantities keep the names of the run document and ``/metrics`` (the table of names is
in :mod:`bloomspan.sidecar.publish.run_names`): ``covered_share``, ``covered_tokens``,
``tokens_mined``, ``docs_mined``, ``mean_doc_covered_fraction``, ``clutter_histogram``,
``psi`` (length x df). The page holds at most ``table_rows`` phrases (top by psi); the
model says how many there are and where the full set is.
"""
from __future__ import annotations

import heapq
import json
import logging
import os

from bloomspan.sidecar.errors import BloomspanSidecarError, DocumentNotFoundError
from bloomspan.sidecar.publish.template_index import current_run_doc, list_runs
from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, read_documents

from .curation_section import curation_model
from .operator_report import PhraseFinder, explain, report, run_phrase_finder, run_template_matcher

log = logging.getLogger(__name__)

TABLE_ROWS = 2000      # phrases in the page's table; the rest stay in the index / phrases.jsonl
EXAMPLE_PAGES = 3      # pages shown with their boilerplate highlighted
EXAMPLE_CHARS = 4000   # characters of an example page shown (spans clipped to them)
TEMPLATE_FIELDS = ["phrase_id", "template_kind", "text", "length", "df", "scope", "slots"]


# The quantities a report.json must hold (the names of bloomspan.sidecar.publish.run_names).
REPORT_KEYS = ("covered_share", "covered_tokens", "tokens_mined", "docs_mined", "phrases")


class ReportSourceError(BloomspanSidecarError):
    """The result directory cannot be read (missing or malformed ``report.json`` / ``phrases.jsonl``)."""


def _phrase_row(p: dict, kind: str = "phrase") -> dict:
    length, df = int(p.get("length") or len(p.get("tokens") or [])), int(p.get("df") or 0)
    return {"kind": kind, "text": p.get("text", ""), "length": length, "df": df,
            "psi": int(p["psi"]) if p.get("psi") is not None else length * df,
            "scope": p.get("scope") or "global", "slots": len(p.get("slots") or []),
            "example_ids": list(p.get("example_ids") or [])}


def _table_order(row: dict) -> tuple:
    return -row["psi"], -row["length"], row["text"]


def _example(doc_id: str, text: str, found: dict, template_spans: list | None = None) -> dict:
    """An example page: its first EXAMPLE_CHARS characters and the spans inside them."""
    clipped = text[:EXAMPLE_CHARS]

    def clip(spans):
        return [[s, min(e, len(clipped))] for s, e in spans if s < len(clipped)]
    return {"id": doc_id, "tokens": found["tokens"], "covered_tokens": found["covered_tokens"],
            "covered_share": found["covered_share"], "chars": len(text), "text": clipped,
            "spans": clip(found["spans"]), "template_spans": clip(template_spans or []),
            "phrases": [{"text": r["text"], "occurrences": r["occurrences"]} for r in found["phrases"][:5]]}


def _quantities(rep: dict, tokens_mined: int, docs_mined: int, phrases: int, covered_share: float,
                covered_tokens: int) -> dict:
    return {"covered_share": covered_share, "covered_tokens": covered_tokens, "tokens_mined": tokens_mined,
            "docs_mined": docs_mined, "phrases": phrases,
            "mean_doc_covered_fraction": rep.get("mean_doc_covered_fraction", 0.0),
            "docs_fully_covered": rep.get("docs_fully_covered", 0),
            "docs_without_coverage": rep.get("docs_without_coverage", 0)}


# ---------------------------------------------------------------------- cluster
def _template_rows(client, physical_index: str, size: int) -> tuple[list[dict], int]:
    """The template detector's records (``mine --templates``) with the largest df, and their count."""
    resp = client.search(index=physical_index, body={
        "size": size, "query": {"term": {"kind": "template"}}, "_source": TEMPLATE_FIELDS,
        "sort": [{"df": "desc"}, {"length": "desc"}], "track_total_hits": True})
    rows = [_phrase_row(h["_source"], h["_source"].get("template_kind") or "template") for h in resp["hits"]["hits"]]
    return rows, int(resp["hits"]["total"]["value"])


def run_history(client, template_index: str) -> list[dict]:
    """Every kept complete run of ``template_index``, oldest first: run id, finish time,
    covered_share (exact phrases), template_covered_share (with ``--templates``, else None),
    docs_seen, phrases, current."""
    runs = [r for r in list_runs(client, template_index) if r.get("complete")]
    if not runs:
        return []
    extra = {}
    resp = client.search(index=",".join(r["physical_index"] for r in runs), body={
        "size": len(runs), "query": {"term": {"kind": "run"}}, "_source": ["templates.covered_share"]},
        ignore_unavailable=True)
    for hit in resp["hits"]["hits"]:
        extra[hit["_index"]] = (hit["_source"].get("templates") or {}).get("covered_share")
    return [{"run_id": r["run_id"], "finished_at": r.get("finished_at"), "covered_share": r.get("covered_share") or 0.0,
             "template_covered_share": extra.get(r["physical_index"]), "docs_seen": r.get("docs_seen", 0),
             "phrases": r.get("phrases", 0), "current": bool(r.get("current"))} for r in reversed(runs)]


def _cluster_examples(client, template_index: str, run: dict, rep: dict, n: int) -> tuple[list[dict], list[str]]:
    # The most cluttered page, then pages holding the biggest index hogs: several clutter levels.
    wanted: list[str] = []
    for d in rep.get("most_cluttered_docs") or []:
        if d.get("id") is not None:
            wanted.append(str(d["id"]))
            break
    for h in rep.get("top_phrases") or []:
        for doc_id in h.get("example_ids") or []:
            if doc_id not in wanted:
                wanted.append(doc_id)
                break
        if len(wanted) >= n:
            break
    if not wanted:
        return [], []
    finder, matcher = run_phrase_finder(client, run), run_template_matcher(client, run)
    out, notes = [], []
    for doc_id in wanted[:n]:
        try:
            exp = explain(client, template_index, doc_id, run=run, finder=finder, template_matcher=matcher)
        except DocumentNotFoundError:
            notes.append(f"example page {doc_id!r} is no longer in {run.get('source_index')}")
            continue
        out.append(_example(doc_id, exp["text"], exp, (exp.get("templates") or {}).get("spans")))
    return out, notes


def cluster_report_model(client, template_index: str, *, table_rows: int = TABLE_ROWS,
                         examples: int = EXAMPLE_PAGES) -> dict:
    """The report of the run behind ``template_index`` (module docstring)."""
    rep = report(client, template_index, top=table_rows)
    run = current_run_doc(client, template_index)
    rows = [_phrase_row(h) for h in rep["top_phrases"]]
    notes = []
    template_total = 0
    if rep.get("templates"):
        template_rows, template_total = _template_rows(client, rep["physical_index"], table_rows)
        rows = sorted(rows + template_rows, key=_table_order)[:table_rows]
    total = int(rep["phrases"]) + template_total
    quantities = _quantities(rep, rep["tokens_mined"], rep["docs_mined"], rep["phrases"], rep["covered_share"],
                             rep["covered_tokens"])
    if rep.get("templates"):
        quantities["template_covered_share"] = rep["templates"].get("covered_share")
        quantities["template_phrases"] = rep["templates"].get("phrases")
        quantities["skeletons"] = rep["templates"].get("skeletons")
    example_pages, example_notes = _cluster_examples(client, template_index, run, rep, examples)
    notes += example_notes
    if not rep.get("most_cluttered_sites"):
        notes.append("clutter per site needs a run with --site-field")
    p = rep.get("params") or {}
    return {
        "title": f"bloomspan report: {template_index}",
        "origin": {"kind": "cluster", "template_index": template_index, "physical_index": rep["physical_index"],
                   "run_id": rep["run_id"], "source_index": rep.get("source_index"), "field": rep.get("field"),
                   "finished_at": rep.get("finished_at"), "sigma": p.get("sigma"), "min_length": p.get("min_length"),
                   "engine": p.get("engine")},
        "quantities": quantities,
        "clutter_histogram": rep.get("clutter_histogram") or [],
        "top_phrases": [_phrase_row(h) for h in rep["top_phrases"][:20]],
        "phrases": rows,
        "phrases_total": total,
        "phrases_note": (f"the full set: documents with kind=phrase (and kind=template) in {rep['physical_index']}, "
                         f"e.g. GET /{rep['physical_index']}/_search"),
        "sites": rep.get("most_cluttered_sites") or [],
        "runs": run_history(client, template_index),
        "examples": example_pages,
        "curation": curation_model(client, template_index),
        "notes": notes,
    }


# ---------------------------------------------------------------------- result directory
def read_results_report(out_dir: str) -> dict:
    path = os.path.join(out_dir, "report.json")
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
    except FileNotFoundError:
        raise ReportSourceError(f"--results {out_dir}: no report.json (give the --out directory of "
                                "`bloomspan mine --jsonl`)", item=path) from None
    except (OSError, ValueError) as exc:
        raise ReportSourceError(f"{path}: cannot be read ({exc})", item=path) from None
    missing = [k for k in REPORT_KEYS if k not in rep] if isinstance(rep, dict) else list(REPORT_KEYS)
    if missing:
        raise ReportSourceError(f"{path}: not a report of this bloomspan's `mine --jsonl` (no {', '.join(missing)}); "
                                "run `bloomspan mine --jsonl` again", item=path)
    return rep


def _read_phrases(out_dir: str) -> list[dict]:
    """Every phrase record of ``phrases.jsonl`` (template records too; config and skeleton
    records of a ``templates.jsonl`` are skipped, as a plain phrase reader does)."""
    path = os.path.join(out_dir, "phrases.jsonl")
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as exc:
                    raise ReportSourceError(f"{path}:{lineno}: invalid JSON ({exc})", item=path) from None
                if isinstance(rec, dict) and "text" in rec and "df" in rec:
                    records.append(rec)
    except FileNotFoundError:
        raise ReportSourceError(f"--results {out_dir}: no phrases.jsonl next to report.json", item=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportSourceError(f"{path}: cannot be read ({exc})", item=path) from None
    return records


def _results_examples(rep: dict, records: list[dict], n: int) -> tuple[list[dict], list[str]]:
    """Example pages re-read from the mined file (``report.json``'s ``source``), matched by id
    and checked by their token count, so a changed file never shows the wrong page."""
    cluttered = [d for d in rep.get("most_cluttered_docs") or [] if d.get("id") is not None]
    if not cluttered:
        return [], []
    picks = [cluttered[i] for i in sorted({0, len(cluttered) // 2, len(cluttered) - 1})][:n]
    source = rep.get("source")
    if not source or not os.path.isfile(source):
        return [], [f"example pages need the mined file {source!r}, which is not there any more"]
    wanted = {str(d["id"]): d for d in picks}
    texts: dict[str, str] = {}
    try:
        for doc_id, text in read_documents(source, rep.get("field") or "text", rep.get("id_field")):
            if doc_id in wanted:
                texts[doc_id] = text
                if len(texts) == len(wanted):
                    break
    except JsonlInputError as exc:
        return [], [f"example pages: {exc}"]
    finder = PhraseFinder(records)
    out, notes = [], []
    for doc_id, entry in wanted.items():
        found = finder.find(texts[doc_id]) if doc_id in texts else None
        if found is None or found["tokens"] != entry["tokens"]:
            notes.append(f"example page {doc_id!r}: not found unchanged in {source}")
            continue
        out.append(_example(doc_id, texts[doc_id], found))
    return out, notes


def results_report_model(out_dir: str, *, table_rows: int = TABLE_ROWS, examples: int = EXAMPLE_PAGES) -> dict:
    """The report of a ``bloomspan mine --jsonl`` result directory (module docstring)."""
    rep = read_results_report(out_dir)
    records = _read_phrases(out_dir)
    total = len(records)
    rows = heapq.nsmallest(table_rows, (_phrase_row(r, r.get("kind") or "phrase") for r in records), key=_table_order)
    finder_records = [{"text": r["text"], "tokens": r.get("tokens") or r["text"].split(), "df": r["df"],
                       "psi": _phrase_row(r)["psi"]} for r in records]
    example_pages, notes = _results_examples(rep, finder_records, examples) if examples else ([], [])
    notes.append("clutter per site needs a cluster run with --site-field")
    notes.append("one --jsonl result is one run: the trend across runs needs a template index")
    return {
        "title": f"bloomspan report: {os.path.basename(os.path.abspath(out_dir))}",
        "origin": {"kind": "results", "results": out_dir, "source": rep.get("source"), "sigma": rep.get("sigma"),
                   "min_length": rep.get("min_length"), "engine": rep.get("engine")},
        "quantities": _quantities(rep, int(rep.get("tokens_mined", 0)), int(rep.get("docs_mined", 0)),
                                  int(rep.get("phrases", total)), float(rep["covered_share"]),
                                  int(rep.get("covered_tokens", 0))),
        "clutter_histogram": rep.get("clutter_histogram") or [],
        "top_phrases": rows[:20],
        "phrases": rows,
        "phrases_total": total,
        "phrases_note": f"the full set: {os.path.join(out_dir, 'phrases.jsonl')}",
        "sites": [],
        "runs": [{"run_id": os.path.basename(os.path.abspath(out_dir)), "finished_at": None,
                  "covered_share": float(rep["covered_share"]), "template_covered_share": None,
                  "docs_seen": int(rep.get("docs_mined", 0)), "phrases": total, "current": True}],
        "examples": example_pages,
        "notes": notes,
    }
