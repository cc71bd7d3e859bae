"""The README's Layout table matches the tree: one row per code package and subpackage, each
row's folder exists and names its package, and no package is left out."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_FOLDERS = ("engine", "ingest", "sidecar", "mappings")
ROW = re.compile(r"^\| `(?P<folder>[^`]+)/` \| (?:`(?P<package>[^`]+)`)? *\| (?P<what>.+) \|$")


def _layout_rows() -> dict[str, str | None]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            assert match["folder"] not in rows, f"README Layout lists {match['folder']}/ twice"
            assert match["what"].strip(), f"README Layout row {match['folder']}/ says nothing"
            rows[match["folder"]] = match["package"]
    return rows


def _package_dirs() -> dict[str, str]:
    """pyproject.toml's package-dir: installed package name -> folder."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]


def _packages() -> dict[str, str]:
    """Folder -> installed package name, for every folder with an __init__.py under a code folder
    or a folder pyproject.toml maps (bench/corpora installs as bloomspan.corpora)."""
    roots = {folder: package for package, folder in _package_dirs().items()}
    found = {}
    for top in sorted({*CODE_FOLDERS, *roots}):
        for init in (ROOT / top).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            folder = init.parent.relative_to(ROOT).as_posix()
            mapped = max((f for f in roots if folder == f or folder.startswith(f + "/")), key=len, default=None)
            if mapped is None:
                found[folder] = "bloomspan." + folder.replace("/", ".")
            else:
                found[folder] = ".".join([roots[mapped], *folder[len(mapped):].strip("/").split("/")]).rstrip(".")
    return found


def test_every_package_has_one_row_naming_it():
    rows = _layout_rows()
    for folder, package in sorted(_packages().items()):
        assert folder in rows, f"README Layout has no row for {folder}/ ({package}); add one line saying what it holds"
        assert rows[folder] == package, f"README Layout row {folder}/ names {rows[folder]!r}, the package is {package!r}"


def test_every_row_is_a_folder_of_the_tree():
    packages = _packages()
    for folder, package in _layout_rows().items():
        assert (ROOT / folder).is_dir(), f"README Layout lists {folder}/, which does not exist"
        if package is not None:
            assert packages.get(folder) == package, f"README Layout row {folder}/: {package!r} is not its package"


def test_pyproject_ships_every_package():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    missing = set(_packages().values()) - listed
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {sorted(missing)}: a wheel would not ship them"
