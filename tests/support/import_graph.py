"""The import graph of a code folder, function-local imports counted, for the layering tests."""
from __future__ import annotations

import ast
from pathlib import Path


def bloomspan_imports(path: Path, code_root: Path, prefix: str = "bloomspan") -> list[tuple[str, int]]:
    """Absolute names of the modules under ``prefix`` that ``path`` imports, at any depth, with
    their lines; ``code_root`` is the folder that holds the package folders (the repository)."""
    package = ["bloomspan", *path.relative_to(code_root).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            found.append((name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.startswith(prefix)]


def assert_no_cycle(edges: dict[str, dict[str, str]], fix: str) -> None:
    """AssertionError naming the first cycle of ``edges`` (node -> {node: "file:line"}) and ``fix``."""
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt, where in sorted(edges.get(node, {}).items()):
            if state.get(nxt) == "open":
                cycle = trail[trail.index(nxt):] + [node, nxt] if nxt in trail else [node, nxt]
                raise AssertionError(f"import cycle {' -> '.join(cycle)} (e.g. {where}); {fix}")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
