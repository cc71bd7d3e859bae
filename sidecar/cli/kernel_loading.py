"""Load cached numba kernels without initialising numba's compiler.

Before numba loads a kernel from its cache, it refreshes the target context: it imports and
registers the lowering of every numba feature (numpy ufuncs, linalg, random, typed
containers, datetime...) and refreshes the typing context. That is what compiling needs,
and it costs about a quarter of a CPU second per process (as much as importing numba);
loading machine code from the cache needs none of it — only the runtime's symbols (NRT,
numba's C helpers), which the loaded code calls. :func:`lean_cache_loads` makes cache
loads skip the refresh. Compiling still refreshes first (numba's compiler does so itself),
so a kernel missing from the cache compiles as before; a lean load that fails for any reason
is retried the way numba loads (refresh first), so the worst case is today's cost. A cache
file that numba's own load cannot read either (truncated, overwritten) is a cache miss with a
warning: the kernel compiles again and its damaged index is replaced.

It replaces one method of numba's ``FunctionCache``; when numba has no such method (a
version whose cache works differently) nothing is replaced and kernels load as numba
loads them.
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)

_installed = False


def lean_cache_loads() -> bool:
    """Make numba's cache loads skip the target-context refresh (see module doc); idempotent.

    Returns whether cache loads are lean now. Imports numba.
    """
    global _installed
    if _installed:
        return True
    from numba.core import caching
    from numba.core.runtime import nrt

    cache_class = getattr(caching, "FunctionCache", None)
    runtime = getattr(nrt, "rtsys", None)
    if cache_class is None or not hasattr(cache_class, "_load_overload") or runtime is None \
            or not hasattr(runtime, "initialize"):
        log.debug("numba cache loads unchanged: this numba has no FunctionCache._load_overload")
        return False
    guard = getattr(cache_class, "_guard_against_spurious_io_errors", None)
    if guard is None:
        log.debug("numba cache loads unchanged: this numba has no _guard_against_spurious_io_errors")
        return False

    def load_overload(self, sig, target_context):
        # What the refresh would have done that loaded code needs: the runtime's symbols.
        try:
            runtime.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None  # the guard swallowed an I/O error: numba compiles instead
        except Exception as exc:  # noqa: BLE001 - any failure of the lean path takes numba's own
            log.debug("lean cache load of %s failed (%s): loading with numba's refresh", sig, type(exc).__name__)
            target_context.refresh()
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None
        except Exception as exc:  # noqa: BLE001 - a damaged cache file: compile, as for a missing one
            name = getattr(getattr(self, "_py_func", None), "__qualname__", None) or sig
            log.warning("numba cache of %s unreadable (%s: %s): compiling it again", name, type(exc).__name__, exc)
            _drop_damaged_index(self)
            return None

    cache_class.load_overload = load_overload
    _installed = True
    return True


def _drop_damaged_index(cache) -> None:
    """After a failed load: an index file numba cannot read would fail the save of the kernel
    compiled instead too (numba reads the index before writing it), so it is removed and the
    save writes a new one; where it cannot be removed, this process stops saving to it."""
    import os

    cache_file = getattr(cache, "_cache_file", None)
    try:
        cache_file._load_index()
        return  # the index reads: the damage was in a data file, which the save overwrites
    except Exception:  # noqa: BLE001 - unreadable in any way
        pass
    try:
        os.unlink(cache_file._index_path)
    except (OSError, AttributeError):
        cache._enabled = False
