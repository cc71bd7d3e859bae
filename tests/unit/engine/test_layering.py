"""The engine's subpackages import one another in one direction (no cycle, function-local imports
counted: engine.mining never imports engine.oracles, which checks it), and engine/ imports nothing
of ingest, sidecar or the corpora."""
from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[3] / "engine"


def _imports(path: Path) -> list[tuple[str, int]]:
    """Absolute names of the bloomspan modules ``path`` imports, at any depth, with their lines."""
    package = ["bloomspan", *path.relative_to(ENGINE.parent).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            found.append((name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.startswith("bloomspan")]


def _subpackage_edges() -> dict[str, dict[str, str]]:
    """engine subpackage -> {imported engine subpackage: "file:line" of one import}."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = path.relative_to(ENGINE).parts
        if len(parts) < 2:
            continue
        source = parts[0]
        for name, line in _imports(path):
            target = name.split(".")
            if target[:2] == ["bloomspan", "engine"] and len(target) > 2 and target[2] != source:
                edges.setdefault(source, {}).setdefault(target[2], f"{path.relative_to(ENGINE.parent)}:{line}")
    return edges


def test_engine_subpackages_form_no_cycle():
    edges = _subpackage_edges()
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt, where in edges.get(node, {}).items():
            if state.get(nxt) == "open":
                cycle = trail[trail.index(nxt):] + [node, nxt] if nxt in trail else [node, nxt]
                raise AssertionError(f"import cycle {' -> '.join(cycle)} (e.g. {where}); the lower layer must not "
                                     "import the higher one")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [])


def test_mining_does_not_import_the_oracles():
    assert "oracles" not in _subpackage_edges().get("mining", {}), \
        "engine.mining imports engine.oracles: the brute force checks the engines, never the reverse"


def test_engine_imports_no_higher_layer():
    for path in sorted(ENGINE.rglob("*.py")):
        for name, line in _imports(path):
            assert name.split(".")[1:2] == ["engine"], \
                f"{path.relative_to(ENGINE.parent)}:{line} imports {name}: engine/ depends on nothing above it"
