"""Deterministic test, demo and benchmark corpora with known answers (``bloomspan.corpora``).

Evaluation, not product: it lives in bench/, the room tests and benchmarks share, and installs
as ``bloomspan.corpora`` (pyproject.toml's package-dir) because ``bloomspan demo``, ``corpus``,
``quality`` and ``warmup`` use it. Import it by that name only: ``bench.corpora`` would load a
second copy of every module (a second ``TextModel`` class, second caches).

* :func:`generate_web` - a web crawl: sites with templates (navigation, breadcrumbs,
  footers, cookie banners, disclaimers, product cards, "Read also") around natural-like
  content; truth = character spans of every template string, near-duplicate pairs.
* :func:`generate_synthetic1`, :func:`synthetic1_expected` - the article's Synthetic 1 (Part 5)
  (unique 8-letter background, three planted phrases with supports 3, 5, 4).
* :func:`generate_synthetic2`, :func:`synthetic2_expected` - dense nested overlaps of 300
  phrases of decreasing length (BloomSpan's worst case).
* :func:`lz78_phrases_per_token` - the article's corpus-shape measure c/n (Part 5).
* :func:`evaluate_template_recovery` - template recall and content damage of a coverage.
* :func:`write_jsonl`, :func:`read_jsonl`, :func:`corpus_by_name`.

All generators stream dicts with keys ``id, url, site, lang, page_type, text, truth``;
``truth`` has ``template_spans``, ``variable_spans`` (lists of [start, end] character
spans, end exclusive) and ``near_duplicate_of`` (an id or None).
"""
if __name__ != "bloomspan.corpora":
    raise ImportError(f"{__name__}: import bloomspan.corpora instead (one copy of the corpora modules)")

from .catalog import CORPUS_NAMES, corpus_by_name
from .evaluate import (
                       RecoveryCounts,
                       RecoveryReport,
                       doc_counts,
                       evaluate_template_recovery,
                       spans_from_token_mask,
                       token_labels,
)
from .jsonl import read_jsonl, write_jsonl
from .lz78 import LZ78Stats, lz78_parse, lz78_phrases_per_token
from .synthetic import (
                       SYNTHETIC1_PHRASES,
                       ExpectedPhrase,
                       generate_synthetic1,
                       generate_synthetic2,
                       synthetic1_expected,
                       synthetic2_expected,
)
from .text_model import TextModel
from .web import default_n_sites, generate_web

__all__ = [
    "CORPUS_NAMES", "corpus_by_name",
    "RecoveryCounts", "RecoveryReport", "doc_counts", "evaluate_template_recovery",
    "spans_from_token_mask", "token_labels",
    "read_jsonl", "write_jsonl",
    "LZ78Stats", "lz78_parse", "lz78_phrases_per_token",
    "SYNTHETIC1_PHRASES", "ExpectedPhrase", "generate_synthetic1", "generate_synthetic2",
    "synthetic1_expected", "synthetic2_expected",
    "TextModel", "default_n_sites", "generate_web",
]
