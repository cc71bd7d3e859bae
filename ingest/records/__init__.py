"""Records: the files and index documents a mining run writes, parsed and validated.

:class:`PhraseSet` (``phrases.jsonl``: exact phrases), :func:`parse_template_records` (the
template detector's records: config, block phrases, skeletons, line shapes) and the
operator's curation entries (:mod:`.curation`). No matching here: :mod:`bloomspan.ingest.match`
compiles what these return.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PhraseRecord": "phrase_set",
    "PhraseSet": "phrase_set",
    "stable_phrase_id": "phrase_set",
    "TemplateRecords": "template_records",
    "parse_template_records": "template_records",
    "read_records": "template_records",
    "is_template_record": "template_records",
    "CurationEntry": "curation",
    "curate_records": "curation",
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
