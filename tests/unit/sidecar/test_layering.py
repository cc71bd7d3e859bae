"""The sidecar's rooms import one another in one direction: no cycle between its subpackages,
function-local imports counted (a room that needs a higher one's helper means the helper is
in the wrong room: the scan's document status codes live in cluster/, not run/)."""
from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import assert_no_cycle, bloomspan_imports

SIDECAR = Path(__file__).resolve().parents[3] / "sidecar"


def _room_edges() -> dict[str, dict[str, str]]:
    """sidecar room -> {imported sidecar room: "file:line" of one import}."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(SIDECAR.rglob("*.py")):
        parts = path.relative_to(SIDECAR).parts
        if len(parts) < 2:
            continue
        for name, line in bloomspan_imports(path, SIDECAR.parent, "bloomspan.sidecar."):
            target = name.split(".")
            if len(target) > 3 and target[2] != parts[0] and (SIDECAR / target[2]).is_dir():
                edges.setdefault(parts[0], {}).setdefault(target[2], f"{path.relative_to(SIDECAR.parent)}:{line}")
    return edges


def test_sidecar_rooms_form_no_cycle():
    edges = _room_edges()
    assert_no_cycle(edges, "move what the lower room needs into it")


def test_the_distributed_room_does_not_import_the_run_room():
    """Dask's primitives (read, count, cut, grow, templates) know nothing of runs: the run room's
    Dask mine phase calls them, never the reverse."""
    assert "run" not in _room_edges().get("distributed", {}), _room_edges()["distributed"]
