"""One name per quantity, in engine stats, run documents, ``report.json``, the reports and ``/metrics``.

=====================  ===================================================
name                   quantity
=====================  ===================================================
``docs_seen``          documents read from the source (usable or not)
``docs_mined``         documents mined: they had text with at least one
                       token and are in the corpus store
``docs_skipped``       documents read but not mined (no text, not a
                       string), by reason in ``skipped_by_reason``
``tokens_mined``       tokens of the mined documents (the corpus length)
``covered_tokens``     of those, tokens inside an occurrence of a phrase
``covered_share``      ``covered_tokens / tokens_mined``
``phrases``            phrases the run found (and published)
``clutter_histogram``  documents per bin of their covered fraction
``top_phrases``        the phrases with the largest psi = length x df
=====================  ===================================================

Per-document entries keep ``tokens`` / ``covered_tokens`` / ``covered_fraction`` for that
one document, and a phrase record's ``tokens`` is its token list.

``/metrics`` uses the same words: ``bloomspan_last_run_docs_mined``,
``bloomspan_last_run_tokens_mined``, ``bloomspan_last_run_phrases``,
``bloomspan_last_run_covered_share``.

Every writer uses these names and every reader reads them as they are: a quantity has no
second spelling to translate (this module holds the table only).
"""
