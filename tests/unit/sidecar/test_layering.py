"""The sidecar's rooms import one another in one direction: no cycle between its subpackages,
function-local imports counted (a room that needs a higher one's helper means the helper is
in the wrong room: the scan's document status codes live in cluster/, not run/)."""
from __future__ import annotations

import ast
from pathlib import Path

SIDECAR = Path(__file__).resolve().parents[3] / "sidecar"


def _imports(path: Path) -> list[tuple[str, int]]:
    """Absolute names of the bloomspan modules ``path`` imports, at any depth, with their lines."""
    package = ["bloomspan", *path.relative_to(SIDECAR.parent).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            found.append((name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.startswith("bloomspan.sidecar.")]


def _room_edges() -> dict[str, dict[str, str]]:
    """sidecar room -> {imported sidecar room: "file:line" of one import}."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(SIDECAR.rglob("*.py")):
        parts = path.relative_to(SIDECAR).parts
        if len(parts) < 2:
            continue
        for name, line in _imports(path):
            target = name.split(".")
            if len(target) > 3 and target[2] != parts[0] and (SIDECAR / target[2]).is_dir():
                edges.setdefault(parts[0], {}).setdefault(target[2], f"{path.relative_to(SIDECAR.parent)}:{line}")
    return edges


def test_sidecar_rooms_form_no_cycle():
    edges = _room_edges()
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt, where in sorted(edges.get(node, {}).items()):
            if state.get(nxt) == "open":
                cycle = trail[trail.index(nxt):] + [node, nxt] if nxt in trail else [node, nxt]
                raise AssertionError(f"import cycle {' -> '.join(cycle)} (e.g. {where}); move what the lower room "
                                     "needs into it")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [])


def test_the_distributed_room_does_not_import_the_run_room():
    """Dask's primitives (read, count, cut, grow, templates) know nothing of runs: the run room's
    Dask mine phase calls them, never the reverse."""
    assert "run" not in _room_edges().get("distributed", {}), _room_edges()["distributed"]
