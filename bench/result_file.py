"""One benchmark's current figure as a JSON file, ``bench/results/NAME.json``: what every bench
writes when it runs (:func:`write_section`), and what ``python -m bench.results_page`` turns into
``bench/RESULTS.md``.

A file holds one benchmark (one bench command and its settings, e.g. ``mining-web-10M``) and is
replaced by its next run; earlier runs' notes live in ``bench/history/``. Fields:

* ``name`` (the file's stem), ``topic`` (the page section it goes under), ``title``;
* ``command`` (what produced it), ``date`` (UTC, ``YYYY-MM-DD HH:MM``), ``commit`` (short hash of
  the checkout that ran, ``+dirty`` when it had uncommitted changes), ``context`` (where it ran:
  the machine, the node; may be empty); converted entries also name their ``history`` file;
* ``body``: the figures as blocks, ``{"text": [lines]}`` or ``{"table": {"header": [...],
  "align": [...], "rows": [[...], ...]}}`` (a Markdown table's cells, as written); a table with
  ``"detail": true`` (a breakdown per site or per variant, :data:`DETAIL_COLUMNS`) stays off the
  generated page, which names the file instead.

A bench builds its section in Markdown as before (a heading, the command in backticks, tables and
a few lines of text) and hands it to :func:`write_section`; :func:`blocks_from_markdown` and
:func:`markdown_from_blocks` are inverse up to blank lines (a table always stands apart from
the text around it), so the page shows what the bench wrote.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
FIELDS = ("name", "topic", "title", "command", "date", "commit", "context", "body")
# A table whose first column is one of these is a breakdown of the figures above it.
DETAIL_COLUMNS = ("site", "detector variant")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")
_DATE = re.compile(r"\s+—\s+(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\s*$")


def command_line(module: str, argv: list[str] | None = None) -> str:
    """``python -m MODULE ARGS...`` (this process's arguments by default), as a user would type it again."""
    return " ".join(["python", "-m", module, *map(shlex.quote, sys.argv[1:] if argv is None else argv)])


def current_commit() -> str:
    """Short hash of the checkout bench/ runs from, ``+dirty`` with uncommitted changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells (split at every ``|`` not escaped as ``\\|``)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def _is_table(lines: list[str]) -> bool:
    return len(lines) >= 2 and all(line.startswith("|") for line in lines) \
        and set(lines[1].replace("|", "").replace(" ", "")) <= set("-:")


def blocks_from_markdown(text: str) -> list[dict]:
    """Blocks of a section body: runs of lines between blank lines, a table's lines apart from
    the text lines around it, tables as cells (a ragged table stays text)."""
    blocks: list[dict] = []
    for chunk in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = chunk.split("\n")
        runs: list[list[str]] = []
        for line in lines:
            if runs and runs[-1][0].startswith("|") == line.startswith("|"):
                runs[-1].append(line)
            else:
                runs.append([line])
        for run in runs:
            blocks.append(_table(run) or {"text": run})
    return blocks


def _table(lines: list[str]) -> dict | None:
    if not (_is_table(lines) and all(line.rstrip().endswith("|") for line in lines)):
        return None
    header, align = _cells(lines[0]), _cells(lines[1])
    rows = [_cells(line) for line in lines[2:]]
    if len(align) != len(header) or any(len(row) != len(header) for row in rows):
        return None
    table: dict = {"header": header, "align": align, "rows": rows}
    return {"table": table, "detail": True} if header[0] in DETAIL_COLUMNS else {"table": table}


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def markdown_from_blocks(blocks: list[dict], max_rows: int | None = None, where: str = "") -> str:
    """The blocks as Markdown. With ``max_rows`` (the page), detail tables and those longer than
    that are left out and named in one closing line that points to ``where``; so is a one-line
    heading or lead-in that introduces only tables left out."""

    def left_out(block: dict) -> bool:
        return max_rows is not None and "table" in block and (
            bool(block.get("detail")) or len(block["table"]["rows"]) > max_rows)

    parts, omitted = [], []
    for i, block in enumerate(blocks):
        if "table" in block:
            table = block["table"]
            if left_out(block):
                omitted.append(f"{table['header'][0]} ({len(table['rows'])} rows)")
                continue
            parts.append("\n".join([_row(table["header"]), _row(table["align"]), *map(_row, table["rows"])]))
        elif not (max_rows is not None and _introduces_only(blocks, i, left_out)):
            parts.append("\n".join(block["text"]))
    if omitted:
        parts.append(f"*Tables by {', '.join(omitted)}: in {where}.*")
    return "\n\n".join(parts)


def _introduces_only(blocks: list[dict], i: int, left_out) -> bool:
    """Is ``blocks[i]`` a one-line heading (``#``) or lead-in (ending in ``:``) whose tables, the
    blocks up to the next text, are all left out? Such a line says nothing without them."""
    text = blocks[i]["text"]
    if len(text) != 1 or not (text[0].startswith("#") or text[0].rstrip().endswith(":")):
        return False
    following = []
    for block in blocks[i + 1:]:
        if "table" not in block:
            break
        following.append(block)
    return bool(following) and all(left_out(b) for b in following)


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def table_of_rows(rows: dict[str, dict], first: str) -> str:
    """A Markdown table of ``rows`` (row name -> {column: value}); columns in first-seen order."""
    columns = list(dict.fromkeys(k for row in rows.values() for k in row))
    lines = [_row([first, *columns]), _row(["---"] * (len(columns) + 1))]
    lines += [_row([name, *(_cell(row.get(c, "")) for c in columns)]) for name, row in rows.items()]
    return "\n".join(lines)


def table_of_figures(figures: dict) -> str:
    """A two-column Markdown table of ``figures``, nested dicts flattened to ``key.sub``."""
    flat: dict[str, object] = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            flat[prefix] = value

    walk("", figures)
    return table_of_rows({k: {"value": v} for k, v in flat.items()}, "figure")


def split_section(section: str) -> tuple[str, str, str | None, str, str]:
    """``(title, command, date, context, body)`` of a Markdown section as the benches wrote it: a
    heading (its trailing "— DATE" is the date), then the command in backticks as the next line's
    first code span; ``context`` is the rest of that line (the machine, the node)."""
    lines = section.strip("\n").split("\n")
    heading = lines[0].lstrip("#").strip()
    found = _DATE.search(heading)
    date = found.group(1) if found else None
    title = heading[:found.start()] if found else heading
    rest = lines[1:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    command = ""
    if rest and rest[0].startswith("`"):
        while "`" not in rest[0][1:] and len(rest) > 1:  # a command wrapped over two lines
            rest = [rest[0] + " " + rest[1], *rest[2:]]
        end = rest[0].index("`", 1)
        command, tail = rest[0][1:end], rest[0][end + 1:]
        dated = re.match(r"^ — (\d{4}-\d{2}-\d{2} \d{2}:\d{2})(?: — )?(.*)$", tail)
        if dated:
            date = date or dated.group(1)
            tail = dated.group(2)
        return title.strip(), command, date, tail.strip(), "\n".join(rest[1:])
    return title.strip(), command, date, "", "\n".join(rest)


def write_section(name: str, topic: str, section: str, results_dir: Path = RESULTS_DIR) -> Path:
    """Write bench ``name``'s figure (a Markdown section: heading, backticked command, body) to
    ``results_dir/NAME.json``, dated now and stamped with the checkout's commit; return the path."""
    if not _NAME.match(name):
        raise ValueError(f"name={name!r}: a result name is letters, digits and dashes (e.g. mining-web-10M)")
    title, command, _, context, body = split_section(section)
    record = {"name": name, "topic": topic, "title": title, "command": command,
              "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "commit": current_commit(),
              "context": context, "body": blocks_from_markdown(body)}
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"figure written to {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}; "
          "run `python -m bench.results_page` to regenerate bench/RESULTS.md", file=sys.stderr)
    return path


def read_result(path: Path) -> dict:
    """One result file, checked: every field present, the name its file's stem."""
    record = json.loads(path.read_text(encoding="utf-8"))
    missing = [field for field in FIELDS if field not in record]
    if missing:
        raise ValueError(f"{path}: fields {missing} missing; write it with bench.result_file.write_section")
    if record["name"] != path.stem:
        raise ValueError(f"{path}: name={record['name']!r} is not the file's stem {path.stem!r}; rename one of them")
    return record


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.result_file NAME TOPIC < section.md``: a figure measured by hand (no bench
    command of its own) written as NAME.json, exactly as a bench would write it."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__.split("\n\n")[0])
    ap.add_argument("name", help="the result's name, e.g. dask-cost (replaces bench/results/NAME.json)")
    ap.add_argument("topic", help='the page section, e.g. "Mining on Dask"')
    args = ap.parse_args(argv)
    write_section(args.name, args.topic, sys.stdin.read(), results_dir=RESULTS_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
