"""Pipeline export: a run's phrases and template records as a native ingest pipeline.

:func:`export_pipeline` / :func:`build_pipeline` (:mod:`.export`) write the ``_ingest/pipeline``
body, with its regular expressions (:mod:`.regex`) and the Painless scope conditions
(:mod:`.scopes`).
"""
from __future__ import annotations

from ..base.lazy_exports import lazy_exports

_EXPORTS = {
    "export_pipeline": "export",
    "build_pipeline": "export",
    "phrase_regex": "export",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
