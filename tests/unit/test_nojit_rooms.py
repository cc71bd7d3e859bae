"""`make test`'s plain-Python pass (NUMBA_DISABLE_JIT=1) covers every room that holds a kernel.

The pass runs only the unit tests of the rooms with ``@njit`` kernels (the Makefile's
``NOJIT_TESTS``), so a kernel added to a room outside that list would never run as Python in CI.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_ROOMS = ("engine", "ingest", "sidecar", "bench/corpora")
KERNEL = re.compile(r"^\s*@(?:numba\.)?njit\b", re.MULTILINE)


def nojit_test_dirs() -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^NOJIT_TESTS\s*:=\s*(.+)$", makefile, re.MULTILINE)
    assert match, "the Makefile defines NOJIT_TESTS"
    return match.group(1).split()


def kernel_modules() -> list[Path]:
    found = []
    for room in CODE_ROOMS:
        for path in (ROOT / room).rglob("*.py"):
            if KERNEL.search(path.read_text(encoding="utf-8")):
                found.append(path.relative_to(ROOT))
    return found


def test_every_kernel_module_has_its_tests_in_the_plain_python_pass():
    covered = nojit_test_dirs()
    for test_dir in covered:
        assert (ROOT / test_dir).is_dir(), f"NOJIT_TESTS names {test_dir}, which does not exist"
    modules = kernel_modules()
    assert len(modules) >= 20, modules  # the scan finds the kernels (the engine alone has more)
    missing = []
    for module in modules:
        mirrored = f"tests/unit/{module.parent}"
        if not any(mirrored == d or mirrored.startswith(d + "/") for d in covered):
            missing.append(f"{module} (tests in {mirrored})")
    assert not missing, f"kernels whose tests the NUMBA_DISABLE_JIT pass skips: {missing}; add the folder to NOJIT_TESTS"
