"""Function-local imports of bloomspan modules are few and each says why: outside the CLI (whose
commands import their heavy modules inside, so that ``--help`` is instant) an import inside a
function hides a dependency from the reader and from the layering tests' cycle check, so it is
allowed only with a ``# local: why`` comment on its first line or the line above it (a real cost,
e.g. the lazy exports that keep ``import bloomspan`` light), and at most ``MAX_LOCAL`` in all."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.support.import_graph import bloomspan_imports

ROOT = Path(__file__).resolve().parents[2]
# The installed rooms: the three code folders and bench/corpora (installed as bloomspan.corpora).
CODE = ("engine", "ingest", "sidecar", "bench/corpora")
EXEMPT = ("sidecar", "cli")
MAX_LOCAL = 25
MARK = "# local:"


def module_level_lines(tree: ast.Module) -> set[int]:
    """The first lines of the import statements a module runs on import (at its top, or inside a
    module-level ``if``/``try`` such as ``if TYPE_CHECKING``)."""
    lines = set()
    for node in tree.body:
        for sub in ast.walk(node) if isinstance(node, ast.If | ast.Try) else [node]:
            if isinstance(sub, ast.Import | ast.ImportFrom):
                lines.add(sub.lineno)
    return lines


def local_imports(path: Path, code_root: Path = ROOT) -> list[tuple[str, int, bool]]:
    """``(module, line, commented)`` for each function-local bloomspan import of ``path``."""
    text = path.read_text(encoding="utf-8")
    source = text.splitlines()
    top = module_level_lines(ast.parse(text))
    found = []
    for name, line in bloomspan_imports(path, code_root):
        if line in top:
            continue
        commented = MARK in source[line - 1] or (line > 1 and source[line - 2].strip().startswith(MARK))
        found.append((name, line, commented))
    return found


def product_local_imports() -> list[tuple[str, str, bool]]:
    """``("file:line", module, commented)`` over the product's code outside the CLI."""
    found = []
    for room in CODE:
        for path in sorted((ROOT / room).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative.parts[:2] == EXEMPT:
                continue
            found += [(f"{relative}:{line}", name, commented) for name, line, commented in local_imports(path)]
    return found


def test_at_most_max_local_function_local_imports_outside_the_cli():
    found = product_local_imports()
    assert len(found) <= MAX_LOCAL, (f"{len(found)} function-local bloomspan imports outside sidecar/cli (at most "
                                     f"{MAX_LOCAL}); move them to the module's top: " + ", ".join(w for w, _, _ in found))


def test_every_function_local_import_says_why():
    bare = [f"{where} ({name})" for where, name, commented in product_local_imports() if not commented]
    assert not bare, f"function-local imports without a '{MARK} why' comment: {', '.join(bare)}"


def test_the_counter_sees_a_local_import_and_its_comment(tmp_path):
    """The count cannot pass vacuously: a function-local import is found, a top one is not, and
    the comment is read on the import's line or the line above."""
    room = tmp_path / "engine"
    room.mkdir()
    (room / "m.py").write_text("from bloomspan.engine import a\n\n\ndef f():\n    from .b import c\n"
                               "    # local: cost\n    from bloomspan.sidecar import d\n"
                               "    import bloomspan.ingest  # local: lazy\n    import json\n")
    assert local_imports(room / "m.py", tmp_path) == [("bloomspan.engine.b", 5, False),
                                                      ("bloomspan.sidecar", 7, True), ("bloomspan.ingest", 8, True)]
