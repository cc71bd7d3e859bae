"""Every code package's subpackages import one another in one direction, its root counted as a
node: no cycle, function-local imports and lazy exports counted. A module that several rooms
share lives in a room of its own below them (ingest's ``base/``), not beside the ``__init__``
that exports those rooms."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_graph import ROOT_NODE, assert_no_cycle, subpackage_edges

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", ["engine", "ingest", "sidecar"])
def test_subpackages_and_root_form_no_cycle(package):
    assert_no_cycle(subpackage_edges(ROOT / package, ROOT),
                    f"move what the {package} rooms share into a room of its own below them")


def test_the_root_counts_lazy_exports_as_imports(tmp_path):
    """A root ``__init__`` that exports a room lazily and a root module that the room imports
    make a cycle, though no import statement of the root names the room."""
    pkg = tmp_path / "ingest"
    (pkg / "room").mkdir(parents=True)
    (pkg / "__init__.py").write_text('_EXPORTS = {"Thing": "room"}\n')
    (pkg / "shared.py").write_text("")
    (pkg / "room" / "__init__.py").write_text("from ..shared import x\n")
    edges = subpackage_edges(pkg, tmp_path)
    assert edges == {ROOT_NODE: {"room": "ingest/__init__.py:1"}, "room": {ROOT_NODE: "ingest/room/__init__.py:1"}}
    with pytest.raises(AssertionError, match="import cycle"):
        assert_no_cycle(edges, "fix")
