"""`make test`'s plain-Python pass (NUMBA_DISABLE_JIT=1) covers every room that holds a kernel.

The pass runs only the unit tests of the rooms with ``@njit`` kernels (the Makefile's
``NOJIT_TESTS``), so a kernel added to a room outside that list would never run as Python in CI.
An entry is a test folder, or the one test file that mirrors a kernel module
(``tests/unit/sidecar/run/test_snapshot.py`` for ``sidecar/run/snapshot.py``) where the room's
other tests reach no kernel and would only repeat themselves slower.
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
    for entry in covered:
        assert (ROOT / entry).is_dir() or (ROOT / entry).is_file(), f"NOJIT_TESTS names {entry}, which does not exist"
    modules = kernel_modules()
    assert len(modules) >= 20, modules  # the scan finds the kernels (the engine alone has more)
    missing = uncovered(modules, covered)
    assert not missing, f"kernels whose tests the NUMBA_DISABLE_JIT pass skips: {missing}; add the folder (or its test file) to NOJIT_TESTS"


def uncovered(modules: list[Path], entries: list[str]) -> list[str]:
    """The kernel modules whose mirrored test folder no entry holds, nor names their own test file."""
    missing = []
    for module in modules:
        mirrored = f"tests/unit/{module.parent}"
        own_file = f"{mirrored}/test_{module.stem}.py"
        if not any(mirrored == d or mirrored.startswith(d + "/") or own_file == d for d in entries):
            missing.append(f"{module} (tests in {mirrored})")
    return missing


def test_a_test_file_entry_covers_its_own_module_only():
    snapshot, other = Path("sidecar/run/snapshot.py"), Path("sidecar/run/mining_run.py")
    assert uncovered([snapshot], ["tests/unit/sidecar/run/test_snapshot.py"]) == []
    assert uncovered([other], ["tests/unit/sidecar/run/test_snapshot.py"]) != []
    assert uncovered([snapshot, other], ["tests/unit/sidecar"]) == []
