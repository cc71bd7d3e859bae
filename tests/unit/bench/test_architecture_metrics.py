"""The architecture table's counters see what they claim to count (issue 26's before/after table)."""
from __future__ import annotations

from bench.architecture_metrics import config_classes, import_facts, strongly_connected


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_function_local_import_and_a_cycle_between_rooms_are_counted(tmp_path):
    _write(tmp_path, {
        "sidecar/__init__.py": "",
        "sidecar/run/__init__.py": "",
        "sidecar/run/a.py": "from bloomspan.sidecar.publish import b\n",
        "sidecar/publish/__init__.py": "",
        "sidecar/publish/b.py": "def f():\n    from ..run import a\n",
        "sidecar/cli/__init__.py": "",
        "sidecar/cli/c.py": "def g():\n    from bloomspan.sidecar.run import a\n",
    })
    # One local import (the CLI's is exempt); run -> publish -> run is one cycle.
    assert import_facts(tmp_path) == (1, 1)


def test_imports_in_one_direction_make_no_cycle(tmp_path):
    _write(tmp_path, {
        "engine/__init__.py": "",
        "engine/mining/__init__.py": "from bloomspan.engine.text import t\n",
        "engine/text/__init__.py": "import json\n",
    })
    assert import_facts(tmp_path) == (0, 0)


def test_strongly_connected_finds_the_loop_only():
    components = strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert sorted(map(sorted, components)) == [["a", "b", "c"], ["d"]]


def test_config_classes_count_fields_not_class_vars(tmp_path):
    _write(tmp_path, {"ingest/x.py": "from dataclasses import dataclass\nfrom typing import ClassVar\n"
                      "@dataclass(frozen=True)\nclass MatchConfig:\n    a: int = 1\n    b: str = ''\n"
                      "    KINDS: ClassVar[tuple] = ()\n\nclass NotAConfig:\n    c: int = 2\n"})
    assert config_classes(tmp_path) == {"MatchConfig": 2}
