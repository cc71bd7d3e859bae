"""Companions of the cleaner: emerging boilerplate, near-duplicates, paragraph dedup.

:class:`EmergingDetector` (boilerplate that appeared since the last mining run),
:func:`collapse` (near-duplicate search results by chunk fingerprint) and
:func:`dedup_documents` (repeated paragraphs across documents).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "EmergingConfig": "emerging",
    "EmergingDetector": "emerging",
    "collapse": "near_duplicates",
    "dedup_documents": "paragraph_dedup",
    "DedupStats": "paragraph_dedup",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # PEP 562: a submodule loads (and imports numba) when first used
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
