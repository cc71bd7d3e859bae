"""Lazy public names for the ingest rooms' ``__init__`` modules (PEP 562).

A room lists its public names and the submodule each comes from; the submodule loads (and
imports numba) only when one of its names is first used, so ``import bloomspan.ingest`` stays
cheap for a command that never cleans.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to the
    submodule (relative to ``package``) that defines it; a loaded name is kept in ``namespace``
    (the package's globals) so it is looked up once."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
