"""Matching: find a phrase set's and the template records' spans in a batch of texts.

One core (:class:`~.phrase_index.PhraseIndex`: the phrase tokens' vocabulary, scopes, the
automaton and the window indices) under both matchers: :class:`PhraseMatcher` (exact
phrases) and :class:`TemplateMatcher` (the template detector's records, built on a
PhraseMatcher). Both give the cleaner one interface: ``tokenize(texts)`` -> the batch's
:class:`~bloomspan.ingest.base.batch_tokens.BatchTokens` as the matcher reads them,
``find_match_results(texts, scopes, tokens)`` -> :class:`MatchResult` per text,
``document_scopes(site, url)``, ``span_ids``, ``reads_url`` and ``closed_under_removal``.
:func:`load_run_phrases` / :func:`load_phrase_file` load a run's files into them.
"""
from __future__ import annotations

from ..base.lazy_exports import lazy_exports

_EXPORTS = {
    "MatchResult": "spans",
    "TemplateMatch": "spans",
    "PhraseMatcher": "phrase_matcher",
    "window_lengths": "phrase_index",
    "PhraseIndex": "phrase_index",
    "TemplateMatcher": "template_matcher",
    "TEMPLATE_SPAN_ID": "template_matcher",
    "template_scopes": "scopes",
    "GLOBAL_SCOPE": "scopes",
    "load_phrase_file": "loading",
    "load_run_phrases": "loading",
    "run_template_records": "loading",
    "RunPhrases": "loading",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
