"""A step whose framework is not installed is one ImportError naming the extra to install (each
framework is an optional extra, imported only by its own module)."""
from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module,framework,extra", [
    ("langchain_transformer", "langchain_core", "langchain"),
    ("llama_index_component", "llama_index", "llama-index"),
    ("datatrove_steps", "datatrove", "datatrove")])
def test_a_missing_framework_names_its_extra(module, framework, extra):
    code = (f"import sys; sys.modules[{framework!r}] = None\n"  # as if not installed
            f"import bloomspan.sidecar.integrations.{module}")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1].endswith(f"pip install 'bloomspan[{extra}]'"), res.stderr


def test_the_room_imports_no_framework():
    code = ("import sys, bloomspan.sidecar.integrations.text_cleaning\n"
            "print(sorted(m for m in ('langchain_core', 'llama_index', 'datatrove') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
