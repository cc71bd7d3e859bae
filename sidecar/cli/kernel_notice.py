"""Tell the user when numba compiles kernels, once, and how long it took.

The engine's kernels are ``@njit(cache=True)``: numba compiles each one the first time it is
called and keeps the machine code in its cache (``__pycache__`` next to the module, or
``NUMBA_CACHE_DIR``, or a per-user directory when the package directory is read-only), so
only the first run after an install or an upgrade compiles — 10 to 25 seconds of silence
without this notice. numba reports a compilation (never a cache hit) as a ``numba:compile``
event; :func:`watch_compilation` listens for it.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

_lock = threading.Lock()
_listener = None  # the process's one listener; commands share it


class CompileWatch:
    """Counts top-level kernel compilations (a kernel that compiles the kernels it calls
    counts once) and their wall time; says ``start_message`` at the first one."""

    def __init__(self, say: Callable[[str], None]):
        self.say = say
        self.kernels = 0
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0
        self.cache_dirs: set[str] = set()  # where numba put what it compiled
        self.uncached: set[str] = set()  # kernels numba could not cache (no writable location)

    def on_start(self, event) -> None:
        if self._depth == 0:
            if self.kernels == 0:
                self.say(start_message())
            self._t0 = time.perf_counter()
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.kernels += 1
            seconds = time.perf_counter() - self._t0
            self.seconds += seconds
            cache_dir = _cache_dir(event)
            if cache_dir:
                self.cache_dirs.add(cache_dir)
            else:
                self.uncached.add(_kernel_name(event))
            log.debug("numba compiled kernel=%s seconds=%.2f cache=%s", _kernel_name(event), seconds, cache_dir)

    def finish_message(self) -> str | None:
        """What to say when the command ends: ``None`` when nothing was compiled."""
        if not self.kernels:
            return None
        text = f"bloomspan: compiled {self.kernels} numba kernels in {self.seconds:.1f} s"
        if self.uncached and not self.cache_dirs:
            return text + " (not cached: set NUMBA_CACHE_DIR to a writable directory)"
        return text + f" (cached in {cache_location(self.cache_dirs)}; later runs start at once)"


def start_message() -> str:
    return "bloomspan: compiling numba kernels (first run only)…"


def cache_location(cache_dirs: set[str] = frozenset()) -> str:
    """NUMBA_CACHE_DIR when set, else the directories numba used (``__pycache__`` next to the
    modules, or a per-user one when the package directory is read-only)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    dirs = sorted(cache_dirs)
    if not dirs:
        return "numba's cache"
    return os.path.commonpath(dirs) if len(dirs) > 1 else dirs[0]


def watch_compilation(say: Callable[[str], None]) -> Callable[[], None]:
    """Start saying, through ``say``, that kernels compile; returns ``finish()``, which says
    how many compiled and in how long (nothing when every kernel came from the cache) and
    returns the :class:`CompileWatch` with those counts.

    Imports numba: call it from a command that runs kernels, never from ``--help``.
    """
    global _listener
    from numba.core import event

    from .kernel_loading import lean_cache_loads

    lean_cache_loads()  # a command that runs kernels loads them from the cache, mostly

    class _Listener(event.Listener):
        def __init__(self):
            self.watch: CompileWatch | None = None

        def on_start(self, ev):
            if self.watch is not None:
                self.watch.on_start(ev)

        def on_end(self, ev):
            if self.watch is not None:
                self.watch.on_end(ev)

    with _lock:
        if _listener is None:
            _listener = _Listener()
            event.register("numba:compile", _listener)
        watch = CompileWatch(say)
        _listener.watch = watch

    def finish() -> CompileWatch:
        with _lock:
            if _listener.watch is watch:
                _listener.watch = None
        message = watch.finish_message()
        if message:
            log.info("numba compiled kernels=%d seconds=%.2f cache=%s", watch.kernels, watch.seconds,
                     cache_location(watch.cache_dirs))
            say(message)
        return watch

    return finish


def _cache_dir(event) -> str | None:
    """The directory the compiled kernel was cached in, ``None`` when numba keeps no cache."""
    dispatcher = (getattr(event, "data", None) or {}).get("dispatcher")
    return getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)


def _kernel_name(event) -> str:
    dispatcher = (getattr(event, "data", None) or {}).get("dispatcher")
    func = getattr(dispatcher, "py_func", None)
    return f"{func.__module__}.{func.__qualname__}" if func is not None else "?"
