"""One name per quantity, in engine stats, run documents, ``report.json``, the reports and ``/metrics``.

=====================  ===================================================  ==============================
name                   quantity                                             earlier names (still read)
=====================  ===================================================  ==============================
``docs_seen``          documents read from the source (usable or not)
``docs_mined``         documents mined: they had text with at least one     ``docs_stored``, ``n_docs``,
                       token and are in the corpus store                    ``documents``
``docs_skipped``       documents read but not mined (no text, not a
                       string), by reason in ``skipped_by_reason``
``tokens_mined``       tokens of the mined documents (the corpus length)    ``tokens_seen``, ``n_tokens``,
                                                                            ``tokens`` (run totals)
``covered_tokens``     of those, tokens inside an occurrence of a phrase
``covered_share``      ``covered_tokens / tokens_mined``                    ``coverage_ratio``
``phrases``            phrases the run found (and published)                ``n_phrases``
``clutter_histogram``  documents per bin of their covered fraction          ``doc_covered_fraction_histogram``
``top_phrases``        the phrases with the largest psi = length x df       ``top_hogs``
=====================  ===================================================  ==============================

Per-document entries keep ``tokens`` / ``covered_tokens`` / ``covered_fraction`` for that
one document, and a phrase record's ``tokens`` is its token list.

``/metrics`` uses the same words: ``bloomspan_last_run_docs_mined``,
``bloomspan_last_run_tokens_mined``, ``bloomspan_last_run_phrases``,
``bloomspan_last_run_covered_share``.

Run documents already published in a template index, and ``report.json`` files written
before, carry the earlier names: :func:`current_names` (applied by every reader of run
documents and reports) gives them the current ones, so an old run still lists, reports and
rolls back.
"""
from __future__ import annotations

# Earlier name -> current name, for run documents, their ``report`` and ``stats``, and report.json.
RUN_DOCUMENT_RENAMES = {"tokens_seen": "tokens_mined", "docs_stored": "docs_mined"}
REPORT_RENAMES = {"n_docs": "docs_mined", "n_tokens": "tokens_mined", "n_phrases": "phrases",
                  "doc_covered_fraction_histogram": "clutter_histogram", "top_hogs": "top_phrases"}
STATS_RENAMES = {"documents": "docs_mined", "tokens": "tokens_mined", "n_docs": "docs_mined",
                 "n_tokens": "tokens_mined", "coverage_ratio": "covered_share"}
# A run summary (``RunSummary.as_dict``, kept in a checkpoint once published) as earlier versions wrote it;
# ``documents`` was a second copy of ``docs_stored``.
SUMMARY_RENAMES = {"docs_stored": "docs_mined", "tokens": "tokens_mined", "documents": None}
# Fields a reader asks for with ``_source`` so that a run document of either shape answers.
EARLIER_RUN_FIELDS = tuple(RUN_DOCUMENT_RENAMES)


def _renamed(d: dict, renames: dict) -> dict:
    """``d`` with each earlier key under its current name (a current key already there wins)."""
    out = {}
    for key, value in d.items():
        if key not in renames:
            out[key] = value
        elif renames[key] is not None and renames[key] not in d:  # None: a copy, dropped
            out[renames[key]] = value
    return out


def current_report(report: dict) -> dict:
    """A coverage report (a run document's ``report``, or ``report.json``) under the current names."""
    rep = _renamed(report, REPORT_RENAMES)
    if "stats" in rep and isinstance(rep["stats"], dict):
        rep["stats"] = _renamed(rep["stats"], STATS_RENAMES)
    return rep


def current_summary(summary: dict) -> dict:
    """A run summary saved by any version (a checkpoint of a run that published before it was
    stopped) under the current names, so the run resumes after an upgrade."""
    return _renamed(summary, SUMMARY_RENAMES)


def current_names(run_doc: dict) -> dict:
    """A run document (or a run summary row) under the current names, whatever version wrote it."""
    doc = _renamed(run_doc, RUN_DOCUMENT_RENAMES)
    if isinstance(doc.get("report"), dict):
        doc["report"] = current_report(doc["report"])
    if isinstance(doc.get("stats"), dict):
        doc["stats"] = _renamed(doc["stats"], STATS_RENAMES)
    return doc
