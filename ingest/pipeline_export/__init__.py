"""Pipeline export: a run's phrases and template records as a native ingest pipeline.

:func:`export_pipeline` / :func:`build_pipeline` (:mod:`.export`) write the ``_ingest/pipeline``
body, with its regular expressions (:mod:`.regex`) and the Painless scope conditions
(:mod:`.scopes`).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "export_pipeline": "export",
    "build_pipeline": "export",
    "phrase_regex": "export",
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
