"""The README's Python examples, for the tests that run them as written."""
from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_block(heading: str) -> str:
    """The first ```python block after the README line ``heading`` (a whole heading line)."""
    text = README.read_text(encoding="utf-8")
    marker = f"\n{heading}\n"
    assert marker in text, f"README has no heading {heading!r}"
    return text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def run_block(heading: str, scope: dict) -> dict:
    """Execute the block in ``scope`` (the names it expects from the text around it); the scope after."""
    exec(compile(python_block(heading), f"README.md ({heading})", "exec"), scope)  # noqa: S102 - the README's example
    return scope
