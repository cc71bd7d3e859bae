"""Records: the files and index documents a mining run writes, parsed and validated.

:class:`PhraseSet` (``phrases.jsonl``: exact phrases), :func:`parse_template_records` (the
template detector's records: config, block phrases, skeletons, line shapes) and the
operator's curation entries (:mod:`.curation`). No matching here: :mod:`bloomspan.ingest.match`
compiles what these return.
"""
from __future__ import annotations

from ..base.lazy_exports import lazy_exports

_EXPORTS = {
    "PhraseRecord": "phrase_set",
    "PhraseSet": "phrase_set",
    "stable_phrase_id": "phrase_set",
    "TemplateRecords": "template_records",
    "parse_template_records": "template_records",
    "read_records": "template_records",
    "is_template_record": "template_records",
    "PAGE_MODEL_KINDS": "record_kinds",
    "TEMPLATE_KINDS": "record_kinds",
    "CurationEntry": "curation",
    "curate_records": "curation",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
