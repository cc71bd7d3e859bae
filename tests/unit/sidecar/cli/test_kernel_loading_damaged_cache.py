"""A damaged numba cache file (an index numba cannot read) is a cache miss with a one-line
warning: the kernel compiles again, the index is rewritten, the next run loads from the cache
(it failed every command with numba's ValueError traceback)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from numba.core import config as numba_config

needs_jit = pytest.mark.skipif(numba_config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is cached")

_KERNEL = textwrap.dedent('''
    from numba import njit

    @njit(cache=True)
    def total(a):
        s = 0
        for x in a:
            s += x
        return s
''')

_RUN = textwrap.dedent('''
    import json
    import numpy as np
    from bloomspan.sidecar.cli.kernel_loading import lean_cache_loads
    assert lean_cache_loads()
    import kernels
    out = int(kernels.total(np.arange(5)))
    print(json.dumps({"out": out, "hits": sum(kernels.total.stats.cache_hits.values())}))
''')


@needs_jit
def test_an_unreadable_index_compiles_again_and_is_rewritten(tmp_path):
    (tmp_path / "kernels.py").write_text(_KERNEL)
    (tmp_path / "run.py").write_text(_RUN)
    cache = tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(tmp_path)}

    def run():
        done = subprocess.run([sys.executable, str(tmp_path / "run.py")], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), done.stderr

    assert run()[0] == {"out": 10, "hits": 0}
    (index,) = cache.rglob("*.nbi")
    index.write_text("garbage\n")
    result, stderr = run()
    assert result == {"out": 10, "hits": 0}
    warnings = [line for line in stderr.splitlines() if "unreadable" in line]
    assert len(warnings) == 1 and "numba cache of total unreadable (ValueError" in warnings[0]
    assert "Traceback" not in stderr
    assert run()[0] == {"out": 10, "hits": 1}, "the rewritten index did not serve the next run"
