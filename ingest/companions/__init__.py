"""Companions of the cleaner: emerging boilerplate, near-duplicates, paragraph dedup.

:class:`EmergingDetector` (boilerplate that appeared since the last mining run),
:func:`collapse` (near-duplicate search results by chunk fingerprint) and
:func:`dedup_documents` (repeated paragraphs across documents).
"""
from __future__ import annotations

from ..base.lazy_exports import lazy_exports

_EXPORTS = {
    "EmergingConfig": "emerging",
    "EmergingDetector": "emerging",
    "collapse": "near_duplicates",
    "dedup_documents": "paragraph_dedup",
    "DedupStats": "paragraph_dedup",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
