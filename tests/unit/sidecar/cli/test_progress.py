"""Progress on stderr (a bar on a terminal, lines otherwise) and the numba compilation notice."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st
from numba import config as numba_config

from bloomspan.sidecar.cli.kernel_notice import CompileWatch, start_message, watch_compilation
from bloomspan.sidecar.cli.progress import Progress, render_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@given(st.text(min_size=1, max_size=30), st.integers(0, 10**12), st.one_of(st.none(), st.integers(1, 10**12)),
       st.integers(10, 300))
def test_a_bar_never_wraps_the_terminal(stage, done, total, width):
    line = render_bar(stage, done, total, width)
    # The stage name is the caller's text (kept, or cut at the width); what the bar adds after it
    # never holds a newline.
    assert len(line) < width and "\n" not in line[len(stage):]


def test_bar_shows_share_and_count():
    assert render_bar("scan", 1200, 3000, 200) == "scan       [##########..............] 1,200/3,000  40%"
    assert render_bar("tokenize", 5000, None, 200) == "tokenize   5,000"


def test_auto_is_lines_off_a_terminal():
    out = io.StringIO()
    progress = Progress("auto", stream=out)
    progress("scan", 10, 30)
    progress("mine", 5)
    progress.close()
    assert out.getvalue() == "bloomspan: scan 10/30\nbloomspan: mine 5\n"


def test_bar_redraws_in_place_and_notes_get_their_own_line():
    term = _Terminal()
    progress = Progress("auto", stream=term)
    assert progress.mode == "bar"
    for done in range(0, 1001):
        progress("scan", done, 1000)
    progress.note("a note")
    progress("mine", 7, None)
    progress.close()
    text = term.getvalue()
    draws = text.count("\r")
    assert 2 <= draws < 100  # throttled, but the first and the finished state are drawn
    scan_line, note, mine_line, end = text.split("\n")
    assert scan_line.endswith("1,000/1,000 100%") and note == "a note" and end == ""
    assert mine_line.strip("\r").startswith("mine") and "7" in mine_line


def test_none_prints_nothing_but_notes():
    out = _Terminal()
    progress = Progress("none", stream=out)
    progress("scan", 1, 2)
    progress.note("kept")
    assert out.getvalue() == "kept\n"


def test_compile_watch_counts_top_level_compilations_once():
    said = []
    watch = CompileWatch(said.append)
    assert watch.finish_message() is None
    for _ in range(2):  # a kernel compiling the kernel it calls, twice
        watch.on_start(None)
        watch.on_start(None)
        watch.on_end(None)
        watch.on_end(None)
    assert said == [start_message()] and watch.kernels == 2
    assert "compiled 2 numba kernels in" in watch.finish_message()


needs_jit = pytest.mark.skipif(numba_config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing compiles")


@needs_jit
def test_a_real_compilation_is_announced_and_a_cached_call_is_not():
    from numba import njit

    @njit  # no cache: compiled here, in this process
    def _twice(a):
        return a * 2

    said = []
    finish = watch_compilation(said.append)
    _twice(np.arange(3))
    finish()
    assert said[0] == start_message() and said[1].startswith("bloomspan: compiled 1 numba kernels in")
    assert "not cached: set NUMBA_CACHE_DIR" in said[1]  # @njit without cache=True
    said.clear()
    finish = watch_compilation(said.append)
    _twice(np.arange(4))  # same types: already compiled
    finish()
    assert said == []


@needs_jit
def test_a_cold_cache_says_compiling_once_and_a_warm_one_says_nothing(tmp_path):
    """A fresh NUMBA_CACHE_DIR (as on a wheel install whose package directory is read-only):
    the first run announces the compilation and fills that directory, the second is silent."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    cmd = [sys.executable, "-m", "bloomspan.sidecar.cli.main", "corpus", "web", "--docs", "20",
           "--out", str(tmp_path / "c.jsonl")]
    # `corpus` runs the text model's kernels; its generator compiles them on first use
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("compiling numba kernels (first run only)") == 1, first.stderr
    assert "numba kernels in" in first.stderr and f"cached in {tmp_path / 'numba-cache'};" in first.stderr
    assert "Traceback" not in first.stderr
    assert list((tmp_path / "numba-cache").rglob("*.nbi"))
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0 and "numba" not in second.stderr, second.stderr
