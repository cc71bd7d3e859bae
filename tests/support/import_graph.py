"""The import graph of a code folder, function-local imports and lazy exports counted, for the
layering tests."""
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


def lazy_export_imports(path: Path, code_root: Path) -> list[tuple[str, int]]:
    """The submodules a package ``__init__`` names in its ``_EXPORTS`` table (PEP 562 lazy
    exports, :mod:`bloomspan.ingest.base.lazy_exports`), as absolute names with their lines: the
    package imports them on first use, so they are edges of the graph like any import."""
    package = ".".join(["bloomspan", *path.relative_to(code_root).parent.parts])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)):
            found += [(f"{package}.{value.value}", value.lineno) for value in node.value.values
                      if isinstance(value, ast.Constant) and isinstance(value.value, str)]
    return found


ROOT_NODE = "(package root)"


def subpackage_edges(folder: Path, code_root: Path) -> dict[str, dict[str, str]]:
    """Subpackage of the code folder ``folder`` (``bloomspan.<folder name>``) -> {imported
    subpackage: "file:line" of one import}. The package's own modules (its ``__init__``, lazy
    exports counted, and any module beside it) are one node, :data:`ROOT_NODE`: a room that
    imports a module of the root while the root's ``__init__`` exports the room is a cycle."""
    prefix = ["bloomspan", folder.name]
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).parts
        source = parts[0] if len(parts) > 1 else ROOT_NODE
        for name, line in bloomspan_imports(path, code_root) + lazy_export_imports(path, code_root):
            target = name.split(".")
            if target[:2] != prefix:
                continue
            room = target[2] if len(target) > 2 and (folder / target[2]).is_dir() else ROOT_NODE
            if room != source:
                edges.setdefault(source, {}).setdefault(room, f"{path.relative_to(code_root)}:{line}")
    return edges


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
