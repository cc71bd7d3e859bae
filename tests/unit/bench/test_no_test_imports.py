"""bench/ never imports tests/: what both need (generated corpora, reading back a publication)
lives in bench/ or the product, and tests import it from there."""
from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import bloomspan_imports

ROOT = Path(__file__).resolve().parents[3]


def test_bench_imports_nothing_of_tests():
    found = [f"{path.relative_to(ROOT)}:{line} imports {name}"
             for path in sorted((ROOT / "bench").rglob("*.py"))
             for name, line in bloomspan_imports(path, ROOT, "tests")
             if name == "tests" or name.startswith("tests.")]
    assert not found, f"{found}: move what bench/ needs out of tests/ (into bench/ or the product)"
