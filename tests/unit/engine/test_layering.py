"""The engine's subpackages import one another in one direction (no cycle, function-local imports
counted: engine.mining never imports engine.oracles, which checks it), and engine/ imports nothing
of ingest, sidecar or the corpora."""
from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import assert_no_cycle, bloomspan_imports

ENGINE = Path(__file__).resolve().parents[3] / "engine"


def _subpackage_edges() -> dict[str, dict[str, str]]:
    """engine subpackage -> {imported engine subpackage: "file:line" of one import}."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = path.relative_to(ENGINE).parts
        if len(parts) < 2:
            continue
        source = parts[0]
        for name, line in bloomspan_imports(path, ENGINE.parent):
            target = name.split(".")
            if target[:2] == ["bloomspan", "engine"] and len(target) > 2 and target[2] != source:
                edges.setdefault(source, {}).setdefault(target[2], f"{path.relative_to(ENGINE.parent)}:{line}")
    return edges


def test_engine_subpackages_form_no_cycle():
    edges = _subpackage_edges()
    assert_no_cycle(edges, "the lower layer must not import the higher one")


def test_mining_does_not_import_the_oracles():
    assert "oracles" not in _subpackage_edges().get("mining", {}), \
        "engine.mining imports engine.oracles: the brute force checks the engines, never the reverse"


def test_engine_imports_no_higher_layer():
    for path in sorted(ENGINE.rglob("*.py")):
        for name, line in bloomspan_imports(path, ENGINE.parent):
            assert name.split(".")[1:2] == ["engine"], \
                f"{path.relative_to(ENGINE.parent)}:{line} imports {name}: engine/ depends on nothing above it"
