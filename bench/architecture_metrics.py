"""The middle layer's shape, before and after (issue 26): the figures its closing table needs,
measured the same way on two checkouts.

``python -m bench.architecture_metrics [--before REV] [--write]`` measures the working tree and
the commit ``REV`` (default: the tree the issue was read from, 2026-12-01 evening) and prints one
table:

* lines of Python code in the installed rooms (non-blank, non-comment lines);
* function-local imports of bloomspan modules outside ``sidecar/cli`` (imports that do not run
  when their module is imported);
* import cycles between the subpackages of ``engine``, ``ingest`` and ``sidecar`` (strongly
  connected sets of more than one room, function-local imports counted);
* config classes (dataclasses named ``*Config``) and their fields, the largest few by name;
* flags per command (``bloomspan CMD --help`` of that checkout);
* the most complex functions (radon's cyclomatic complexity, the tool the issue's figures came from:
  the ``bench`` extra installs it);
* ``bench/RESULTS.md``'s lines and the places that mention data "written before".

The earlier checkout is exported with ``git archive`` into a temporary folder and its CLI runs
from there with this environment's packages, so both columns come from one run of one tool.
"""
from __future__ import annotations

import argparse
import ast
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import defaultdict
from pathlib import Path

from bench.result_file import ROOT, command_line, write_section

# The commit issue 26 was read from (the last one of 2026-12-01).
BEFORE = "0f61568"
ROOMS = ("engine", "ingest", "sidecar", "bench/corpora")
CODE_PACKAGES = ("engine", "ingest", "sidecar")
COMMANDS = ("mine", "serve", "clean", "templates", "pipeline")
TOP_FUNCTIONS = 5


def python_files(tree: Path, rooms=ROOMS) -> list[Path]:
    return [p for room in rooms if (tree / room).is_dir() for p in sorted((tree / room).rglob("*.py"))]


def code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def module_name(path: Path, tree: Path) -> list[str]:
    parts = list(path.relative_to(tree).with_suffix("").parts)
    if parts[:2] == ["bench", "corpora"]:
        parts = ["corpora", *parts[2:]]
    return ["bloomspan", *parts]


def imported_modules(node: ast.AST, package: list[str]) -> list[str]:
    """Absolute names of the bloomspan modules an import statement names."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = package[:len(package) - node.level + 1]
            head = ".".join(base + ([node.module] if node.module else []))
            names = [head] if node.module else [f"{head}.{a.name}" for a in node.names]
        else:
            names = [node.module or ""]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        return []
    return [n for n in names if n.startswith("bloomspan")]


def module_level_import_nodes(tree: ast.Module) -> set[int]:
    """ids of the import nodes a module runs on import: at its top or in a top-level if/try."""
    found = set()
    for node in tree.body:
        for sub in ast.walk(node) if isinstance(node, ast.If | ast.Try) else [node]:
            if isinstance(sub, ast.Import | ast.ImportFrom):
                found.add(id(sub))
    return found


def import_facts(tree: Path) -> tuple[int, int]:
    """(function-local bloomspan imports outside sidecar/cli, import cycles between subpackages)."""
    local = 0
    edges: dict[str, set[str]] = defaultdict(set)
    for path in python_files(tree):
        rel = path.relative_to(tree)
        module = ast.parse(path.read_text(encoding="utf-8"))
        package = module_name(path, tree)[:-1]  # a module's package; an __init__'s own package
        top = module_level_import_nodes(module)
        for node in ast.walk(module):
            names = imported_modules(node, package)
            if not names:
                continue
            if id(node) not in top and rel.parts[:2] != ("sidecar", "cli"):
                local += 1
            if rel.parts[0] in CODE_PACKAGES and len(rel.parts) > 2:
                source = f"{rel.parts[0]}.{rel.parts[1]}"
                for name in names:
                    parts = name.split(".")
                    if len(parts) > 2 and parts[1] == rel.parts[0]:
                        target = f"{parts[1]}.{parts[2]}"
                        if target != source and (tree / parts[1] / parts[2]).is_dir():
                            edges[source].add(target)
    return local, len([c for c in strongly_connected(edges) if len(c) > 1])


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of a small graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            found.append(component)

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def config_classes(tree: Path) -> dict[str, int]:
    """Dataclass name ``*Config`` -> its number of fields (``Name (file)`` where names repeat)."""
    found: dict[str, int] = {}
    for path in python_files(tree, CODE_PACKAGES):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ClassDef) and node.name.endswith("Config")):
                continue
            decorated = any("dataclass" in ast.unparse(d) for d in node.decorator_list)
            if not decorated:
                continue
            count = sum(1 for s in node.body if isinstance(s, ast.AnnAssign)
                        and "ClassVar" not in ast.unparse(s.annotation))
            name = node.name if node.name not in found else f"{node.name} ({path.relative_to(tree)})"
            found[name] = count
    return found


def complexity(tree: Path) -> list[tuple[int, str]]:
    """The most complex functions: (cyclomatic complexity, "file:function")."""
    from radon.complexity import cc_visit  # local: radon is the bench extra's, not the product's

    found = []
    for path in python_files(tree):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            name = f"{block.classname}.{block.name}" if getattr(block, "classname", None) else block.name
            found.append((block.complexity, f"{path.relative_to(tree)}:{name}"))
    return sorted(found, reverse=True)[:TOP_FUNCTIONS]


def package_view(tree: Path, into: Path) -> Path:
    """A folder whose ``bloomspan`` package is ``tree``'s code, laid out as that checkout's
    pyproject ``package-dir`` installs it, so that its CLI runs from there."""
    mapping = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    pkg = into / "bloomspan"
    pkg.mkdir(parents=True)
    if "bloomspan" in mapping:  # the root package has a folder of its own
        for item in (tree / mapping["bloomspan"]).iterdir():
            (pkg / item.name).symlink_to(item)
    else:
        (pkg / "__init__.py").write_text("")
    for name, folder in mapping.items():
        if name != "bloomspan" and not (pkg / name.split(".", 1)[1]).exists():
            (pkg / name.split(".", 1)[1]).symlink_to(tree / folder)
    return into


def flags_per_command(tree: Path) -> dict[str, int]:
    """``bloomspan CMD --help``'s options (``--help`` not counted), run from ``tree``'s code."""
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(package_view(tree, Path(tmp))), "COLUMNS": "200"}
        for command in COMMANDS:
            out = subprocess.run([sys.executable, "-c", "from bloomspan.sidecar.cli.main import main; main()",
                                  command, "--help"], env=env, capture_output=True, text=True, cwd=tmp)
            options = out.stdout.split("Options:", 1)[-1] if "Options:" in out.stdout else ""
            counts[command] = sum(1 for line in options.splitlines()
                                  if re.match(r"^\s+(-\w, )?--[\w-]", line) and "--help" not in line)
    return counts


def measure(tree: Path) -> dict:
    local, cycles = import_facts(tree)
    results = tree / "bench" / "RESULTS.md"
    written_before = sum(len(re.findall(r"written before", p.read_text(encoding="utf-8")))
                         for p in python_files(tree, CODE_PACKAGES))
    return {
        "lines": sum(code_lines(p.read_text(encoding="utf-8")) for p in python_files(tree)),
        "local_imports": local,
        "cycles": cycles,
        "configs": config_classes(tree),
        "flags": flags_per_command(tree),
        "complexity": complexity(tree),
        "results_lines": len(results.read_text(encoding="utf-8").splitlines()) if results.exists() else 0,
        "written_before": written_before,
        "evaluation_in_sidecar": (tree / "sidecar" / "corpora").is_dir(),
    }


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def table(before: dict, after: dict, rev: str) -> list[str]:
    def configs(m):
        big = sorted(m["configs"].items(), key=lambda kv: -kv[1])[:4]
        return f"{len(m['configs'])} classes; " + ", ".join(f"{k} {v}" for k, v in big)

    def flags(m):
        return ", ".join(f"{c} {n}" for c, n in m["flags"].items())

    def top(m):
        return "; ".join(f"{name.split('/')[-1]} {cc}" for cc, name in m["complexity"][:3])

    rows = [
        ("lines of Python in the installed rooms", "lines"),
        ("function-local bloomspan imports outside sidecar/cli", "local_imports"),
        ("import cycles between subpackages", "cycles"),
        ("config classes (fields)", configs),
        ("flags per command", flags),
        ("most complex functions (radon CC)", top),
        ("bench/RESULTS.md lines", "results_lines"),
        ('mentions of data "written before"', "written_before"),
        ("evaluation package inside sidecar/", "evaluation_in_sidecar"),
    ]
    lines = [f"| measure | {rev} (before) | working tree |", "|---|---|---|"]
    for label, key in rows:
        get = key if callable(key) else (lambda m, k=key: m[k])
        lines.append(f"| {label} | {get(before)} | {get(after)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default=BEFORE, help=f"the commit to compare with (default {BEFORE})")
    ap.add_argument("--write", action="store_true", help="write bench/results/architecture.json")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        before = measure(export(args.before, Path(tmp)))
    after = measure(ROOT)
    lines = table(before, after, args.before)
    print("\n".join(lines))
    if args.write:
        write_section("architecture", "Code shape",
                      f"### The middle layer, before and after (issue 26)\n"
                      f"`{command_line('bench.architecture_metrics', argv)}`\n\n"
                      "Both columns measured in one run: the commit the issue was read from, and the working tree.\n\n"
                      + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
