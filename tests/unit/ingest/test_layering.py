"""ingest/base/ is the floor of ingest: every room may import it, it imports no room and not the
package root (whose ``__init__`` exports the rooms), and ingest imports nothing of the sidecar."""
from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import bloomspan_imports, subpackage_edges

ROOT = Path(__file__).resolve().parents[3]
INGEST = ROOT / "ingest"


def test_base_imports_no_other_part_of_ingest():
    assert subpackage_edges(INGEST, ROOT).get("base", {}) == {}, \
        "ingest/base/ imports an ingest room: what it needs belongs in base/, or the caller in the room"


def test_ingest_imports_only_the_engine_below_it():
    for path in sorted(INGEST.rglob("*.py")):
        for name, line in bloomspan_imports(path, ROOT):
            assert name.split(".")[1:2] in (["engine"], ["ingest"]), \
                f"{path.relative_to(ROOT)}:{line} imports {name}: ingest/ depends only on the engine"
