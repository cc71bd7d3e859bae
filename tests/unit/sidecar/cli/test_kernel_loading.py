"""Lean cache loads: a cached kernel loads and runs without numba's target-context refresh,
and a kernel missing from the cache still compiles."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from numba.core import config as numba_config

from bloomspan.sidecar.cli.kernel_loading import lean_cache_loads

needs_jit = pytest.mark.skipif(numba_config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")

_KERNEL = textwrap.dedent('''
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def running_max(a):
        out = np.empty(a.size, dtype=np.int64)  # allocates through numba's runtime (NRT)
        best = -1
        for i in range(a.size):
            best = max(best, a[i])
            out[i] = best
        return out
''')

_RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    if sys.argv[1] in ("lean", "failing"):
        from bloomspan.sidecar.cli.kernel_loading import lean_cache_loads
        assert lean_cache_loads()
    if sys.argv[1] == "failing":  # the lean load fails once: numba's own way must take over
        from numba.core import caching
        real, calls = caching.FunctionCache._load_overload, []

        def flaky(self, sig, target_context):
            calls.append(sig)
            if len(calls) == 1:
                raise RuntimeError("symbol not found")
            return real(self, sig, target_context)

        caching.FunctionCache._load_overload = flaky
    import kernels
    out = kernels.running_max(np.array([3, 1, 4, 1, 5, 9, 2, 6]))
    refreshed = "numba.np.linalg" in sys.modules  # imported only by the target-context refresh
    hits = sum(kernels.running_max.stats.cache_hits.values())
    from numba import njit

    @njit
    def doubled(a):  # not cached: compiles, and compiling refreshes the context itself
        return np.sum(a) * 2

    print(json.dumps({"out": out.tolist(), "refreshed": refreshed, "hits": hits,
                      "compiled": int(doubled(np.arange(4)))}))
''')


@needs_jit
def test_a_cached_kernel_loads_without_the_refresh_and_compiling_still_works(tmp_path):
    (tmp_path / "kernels.py").write_text(_KERNEL)
    (tmp_path / "run.py").write_text(_RUN)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}

    def run(mode):
        done = subprocess.run([sys.executable, str(tmp_path / "run.py"), mode], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = run("plain")  # compiles running_max and fills the cache
    assert first["hits"] == 0 and first["refreshed"]
    lean = run("lean")
    assert lean["hits"] == 1, "running_max did not come from the cache"
    assert not lean["refreshed"], "the cache load refreshed the target context"
    assert lean["out"] == first["out"] == [3, 3, 4, 4, 5, 9, 9, 9]
    assert lean["compiled"] == first["compiled"] == 12
    plain = run("plain")
    assert plain["hits"] == 1 and plain["refreshed"] and plain["out"] == lean["out"]
    failing = run("failing")
    assert failing["hits"] == 1, "the retried load did not come from the cache"
    assert failing["refreshed"] and failing["out"] == lean["out"]


def test_installing_twice_is_harmless():
    assert lean_cache_loads() is lean_cache_loads() is True
