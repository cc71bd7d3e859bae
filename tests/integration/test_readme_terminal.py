"""Every `bloomspan …` command of the README, once, under a pseudo-terminal, against the real node.

A user meets the CLI at a terminal: progress bars draw (a missing bar library was a traceback
there and nowhere else), the first run compiles kernels, errors are one line. ``STEPS`` lists
the README's commands in the README's order, each with the command actually run: the
README's flags on small generated corpora, with index names under this test's ``bstest-``
prefix, the node's URL, a free port, and flags that keep a test off shared names
(``--lease-index``). ``test_steps_match_the_readme`` fails when a ```bash block of the README
changes and this list was not updated, so the two cannot drift apart.

`bloomspan serve` steps start in the background under their own pty, answer ``/healthz``, and
stop on SIGINT. Without installed documentation sites `real-corpus` must say, in one line,
what to install (and `quality` then scores the generated crawl).
"""
from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOOMSPAN = str(Path(sys.executable).parent / "bloomspan")
DOCS = 300  # the generated crawl indexed as `crawl`
COMMAND_SECONDS = 240


@dataclass(frozen=True)
class Step:
    readme: str  # the README's command, continuation lines joined, comment dropped
    run: tuple[str, ...]  # what runs: str.format templates over the names of `_names`
    bar: bool = False  # progress must render as a redrawn bar
    background: bool = False  # `serve`: started, checked, stopped
    may_fail_with: str | None = None  # a one-line error accepted where the machine lacks it
    produces: str | None = None  # a file the command must write (in the step's folder)


STEPS: tuple[Step, ...] = (
    Step("bloomspan setup --url https://search.internal:9200 --index crawl --clean-index 'crawl-*' [--field text]",
         ("setup --url {url} --index {crawl} --clean-index {crawl}-* --field text --template-index {tpl} "
          "--lease-index {lease}",)),
    Step("bloomspan mine --url https://search.internal:9200 --index crawl --field text --sigma 20 --min-length 10 "
         "--template-index bloomspan-templates --site-field site --url-field url",
         ("mine --url {url} --index {crawl} --field text --sigma 20 --min-length 10 --template-index {tpl} "
          "--site-field site --url-field url --lease-index {lease} --work-dir {work}/mine",), bar=True),
    Step("bloomspan report --url https://search.internal:9200 --template-index bloomspan-templates",
         ("report --url {url} --template-index {tpl}",)),
    Step("bloomspan report --url https://search.internal:9200 --template-index bloomspan-templates --html report.html",
         ("report --url {url} --template-index {tpl} --html report.html",), produces="report.html"),
    Step("bloomspan explain --url https://search.internal:9200 --template-index bloomspan-templates --id <doc id>",
         ("explain --url {url} --template-index {tpl} --id {doc_id}",)),
    Step("bloomspan runs / bloomspan rollback [--to RUN]",
         ("runs --url {url} --template-index {tpl}", "rollback --url {url} --template-index {tpl} --to {first_run}")),
    Step("bloomspan index --url http://127.0.0.1:9200 --jsonl export.jsonl --index crawl --id-field id",
         ("index --url {url} --jsonl export.jsonl --index {crawl}-export --id-field id",), bar=True),
    Step("bloomspan corpus web --docs 3000 --seed 1 --out web.jsonl",
         ("corpus web --docs 300 --seed 1 --out web.jsonl",)),
    Step("bloomspan mine --jsonl web.jsonl --field text --id-field id --sigma 20 --min-length 10 --out out/",
         ("mine --jsonl web.jsonl --field text --id-field id --sigma 20 --min-length 10 --out out/",), bar=True),
    Step("bloomspan report --results out/ --html report.html",
         ("report --results out/ --html report-jsonl.html",), produces="report-jsonl.html"),
    Step("bloomspan corpus web --docs 3000 --seed 1 --out web.jsonl.gz",
         ("corpus web --docs 300 --seed 1 --out web.jsonl.gz",), produces="web.jsonl.gz"),
    Step("bloomspan mine --jsonl web.jsonl.gz --field text --id-field id --out out-gz/",
         ("mine --jsonl web.jsonl.gz --field text --id-field id --out out-gz/",), bar=True,
         produces="out-gz/phrases.jsonl"),
    Step("bloomspan clean --phrases out-gz/phrases.jsonl --in web.jsonl.gz --out clean.jsonl.zst",
         ("clean --phrases out-gz/phrases.jsonl --in web.jsonl.gz --out clean.jsonl.zst",),
         produces="clean.jsonl.zst"),
    Step("bloomspan corpus web --docs 3000 --seed 1 --out web.parquet",
         ("corpus web --docs 300 --seed 1 --out web.parquet",), produces="web.parquet"),
    Step("bloomspan mine --jsonl web.parquet --field text --id-field id --out out-parquet/",
         ("mine --jsonl web.parquet --field text --id-field id --out out-parquet/",), bar=True,
         produces="out-parquet/phrases.jsonl"),
    Step("bloomspan clean --phrases out-parquet/phrases.jsonl --in web.parquet --out clean.parquet",
         ("clean --phrases out-parquet/phrases.jsonl --in web.parquet --out clean.parquet",),
         produces="clean.parquet"),
    Step("bloomspan corpus web --docs 3000 --seed 1 --out web.warc.wet.gz",
         ("corpus web --docs 300 --seed 1 --out web.warc.wet.gz",), produces="web.warc.wet.gz"),
    Step("bloomspan mine --jsonl web.warc.wet.gz --field text --site-field site --url-field url --out out-wet/",
         ("mine --jsonl web.warc.wet.gz --field text --site-field site --url-field url --out out-wet/",), bar=True,
         produces="out-wet/templates.jsonl"),
    Step("bloomspan clean --phrases out-wet/phrases.jsonl --in web.warc.wet.gz --out clean-wet.jsonl --site-field site",
         ("clean --phrases out-wet/phrases.jsonl --in web.warc.wet.gz --out clean-wet.jsonl --site-field site",),
         produces="clean-wet.jsonl"),
    Step("bloomspan mine --jsonl web.jsonl --field text --id-field id --out out/ --dask local:4",
         ("mine --jsonl web.jsonl --field text --id-field id --out out-dask/ --dask local:2",)),
    Step("bloomspan mine --index crawl --template-index bloomspan-templates --dask tcp://scheduler:8786",
         ("mine --url {url} --index {crawl} --template-index {tpl} --dask local:2 --lease-index {lease} "
          "--work-dir {work}/mine-dask",)),
    Step("bloomspan clean --phrases out/phrases.jsonl --in new.jsonl --out clean.jsonl --field text --mode strip "
         "--site-field site --url-field url",
         ("clean --phrases out/phrases.jsonl --in new.jsonl --out clean.jsonl --field text --mode strip "
          "--site-field site --url-field url",), bar=True),
    Step("bloomspan clean --template-index bloomspan-templates --url URL --in new.jsonl --out clean.jsonl "
         "--mode downweight",
         ("clean --template-index {tpl} --url {url} --in new.jsonl --out clean.jsonl --mode downweight",)),
    Step("bloomspan serve --upstream-url http://127.0.0.1:9200 --port 9280 --template-index bloomspan-templates "
         "--clean-index crawl-* --field text --mode strip --mine-index crawl --every 6h",
         ("serve --upstream-url {url} --port {port} --template-index {tpl} --clean-index {crawl}-* --field text "
          "--mode strip --mine-index {crawl} --every 6h --lease-index {lease} --work-dir {work}/serve",),
         background=True),
    Step("bloomspan pipeline --template-index bloomspan-templates --url URL --pipeline-id bloomspan-clean "
         "--field text --site-field site --url-field url --top 500",
         ("pipeline --template-index {tpl} --url {url} --pipeline-id {pipeline} --field text --site-field site "
          "--url-field url --top 500",)),
    Step("bloomspan curate deny 'All rights reserved by ACME' --template-index bloomspan-templates "
         "--site shop.example --why 'legal text is content'",
         ("curate deny 'All rights reserved by ACME' --url {url} --template-index {tpl} --site shop.example "
          "--why 'legal text is content'",)),
    Step("bloomspan curate allow 'Free shipping on all orders' --template-index bloomspan-templates",
         ("curate allow 'Free shipping on all orders' --url {url} --template-index {tpl}",)),
    Step("bloomspan curate list --template-index bloomspan-templates",
         ("curate list --url {url} --template-index {tpl}",)),
    Step("bloomspan curate remove ENTRY_ID --template-index bloomspan-templates",
         ("curate remove {allow_entry} --url {url} --template-index {tpl}",)),
    Step("bloomspan mine --index crawl --template-index bloomspan-templates --dry-run",
         ("mine --url {url} --index {crawl} --template-index {tpl} --dry-run --lease-index {lease} "
          "--work-dir {work}/mine-dry",), bar=True),
    Step("bloomspan diff --template-index bloomspan-templates",
         ("diff --url {url} --template-index {tpl}",)),
    Step("bloomspan promote RUN --template-index bloomspan-templates",
         ("promote {first_run} --url {url} --template-index {tpl}",)),
    Step("bloomspan curate mode 'crawl-*' strip --template-index bloomspan-templates",
         ("curate mode '{crawl}-*' strip --url {url} --template-index {tpl}",)),
    Step("bloomspan templates --jsonl web.jsonl --field text --site-field site --url-field url --out templates.jsonl",
         ("templates --jsonl web.jsonl --field text --site-field site --url-field url --out templates.jsonl",),
         bar=True),
    Step("bloomspan clean --phrases templates.jsonl --in new.jsonl --out clean.jsonl --site-field site "
         "--url-field url",
         ("clean --phrases templates.jsonl --in new.jsonl --out clean.jsonl --site-field site --url-field url",)),
    Step("bloomspan real-corpus --out real.jsonl",
         ("real-corpus --out real.jsonl --max-pages 20",), may_fail_with="no documentation site installed"),
    Step("bloomspan quality --jsonl real.jsonl --per-site",
         ("quality --jsonl {real_or_web} --per-site",)),
    Step("bloomspan dedup --in crawl.jsonl --out dedup.jsonl --field text --bloom-bytes-per-item 10",
         ("dedup --in crawl.jsonl --out dedup.jsonl --field text --bloom-bytes-per-item 10",)),
    Step("bloomspan dedup --url http://127.0.0.1:9200 --index crawl --dest-index crawl-dedup",
         ("dedup --url {url} --index {crawl} --dest-index {crawl}-dedup",)),
    Step("bloomspan dedup --url http://127.0.0.1:9200 --index crawl --annotate",
         ("dedup --url {url} --index {crawl} --annotate",)),
    Step("bloomspan serve --clean-index crawl-* --template-index bloomspan-templates --mine-index crawl "
         "--emerging-shingle 8 --emerging-threshold 50",
         ("serve --upstream-url {url} --port {port} --clean-index {crawl}-* --template-index {tpl} "
          "--mine-index {crawl} --emerging-shingle 8 --emerging-threshold 50 --lease-index {lease} "
          "--work-dir {work}/serve",), background=True),
    Step("bloomspan serve --clean-index crawl-* --template-index bloomspan-templates --fingerprint",
         ("serve --upstream-url {url} --port {port} --clean-index {crawl}-* --template-index {tpl} --fingerprint",),
         background=True),
    Step("bloomspan collapse --index crawl --query 'wireless headphones' --k 80 --threshold 0.5",
         ("collapse --url {url} --index {crawl} --query 'wireless headphones' --k 80 --threshold 0.5",)),
    Step("bloomspan warmup", ("warmup",), bar=True),
)


def readme_commands(text: str) -> list[str]:
    """The `bloomspan …` commands of the README's ```bash blocks, in order: continuation lines
    joined, comments dropped, quoting normalised (``'crawl-*'`` and ``crawl-*`` read alike)."""
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["bloomspan"]:
                commands.append(shlex.join(words))
    return commands


def _flags(command: str) -> set[str]:
    return {w.strip("[]") for w in shlex.split(command) if w.strip("[").startswith("--")}


def test_steps_match_the_readme():
    want = readme_commands(README.read_text(encoding="utf-8"))
    have = [shlex.join(shlex.split(s.readme)) for s in STEPS]
    assert have == want, ("the README's bloomspan commands changed: update STEPS in this file to match, in order\n"
                          + "\n".join(f"  README: {w}" for w in want if w not in have)
                          + "\n" + "\n".join(f"  STEPS:  {h}" for h in have if h not in want))
    for step in STEPS:
        ran = set().union(*(_flags(r) for r in step.run))
        assert _flags(step.readme) <= ran, f"{step.readme}: the test leaves out {_flags(step.readme) - ran}"
        subcommands = {r.split()[0] for r in step.run}
        assert subcommands <= set(shlex.split(step.readme)), step


# ----------------------------------------------------------------------------- running under a pty


def run_in_pty(argv: list[str], cwd: Path, timeout: float = COMMAND_SECONDS) -> tuple[int, str]:
    """Run ``argv`` with stdin, stdout and stderr on a new 120x40 pseudo-terminal; its exit
    status and everything it wrote."""
    proc, master = _spawn(argv, cwd)
    out = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"{shlex.join(argv)} ran over {timeout}s:\n{out.decode(errors='replace')}")
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            chunk = _read(master)
            if chunk is None:
                break
            out += chunk
    os.close(master)
    return proc.wait(timeout=30), out.decode("utf-8", errors="replace")


def _spawn(argv: list[str], cwd: Path):
    master, slave = pty.openpty()
    fcntl_winsize(slave, rows=40, cols=120)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True)
    os.close(slave)
    return proc, master


def fcntl_winsize(fd: int, rows: int, cols: int) -> None:
    import fcntl

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _read(master: int) -> bytes | None:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the other side closed
        return None
    return chunk or None


def serve_in_pty(argv: list[str], cwd: Path, port: int) -> tuple[int, str, int]:
    """Start ``serve`` under a pty, wait for ``/healthz``, stop it with SIGINT: its exit status,
    output and the health check's status."""
    proc, master = _spawn(argv, cwd)
    out = bytearray()
    status = None
    deadline = time.monotonic() + 60
    try:
        while status is None and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready and (chunk := _read(master)):
                out += chunk
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as res:
                    status = res.status
            except OSError:
                continue
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
        while (chunk := _read(master)) is not None:
            out += chunk
        os.close(master)
    return rc, out.decode("utf-8", errors="replace"), status


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- the README, in order


@pytest.fixture
def workspace(os_client, opensearch_url, index_prefix, tmp_path):
    """The crawl index, its JSON Lines copy, a file of new pages, and a first published run
    (so that `rollback` has a run to go back to); the names the steps use."""
    from opensearchpy import helpers

    from bloomspan.corpora import generate_web, write_jsonl

    names = {"url": opensearch_url, "crawl": f"{index_prefix}crawl", "tpl": f"{index_prefix}templates",
             "lease": f"{index_prefix}lease", "pipeline": f"{index_prefix}clean", "work": str(tmp_path / "work")}
    docs = list(generate_web(DOCS, 11))
    os_client.indices.create(index=names["crawl"], body={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    helpers.bulk(os_client, ({"_index": names["crawl"], "_id": d["id"],
                              "_source": {k: d[k] for k in ("text", "url", "site")}} for d in docs), refresh=True)
    write_jsonl(({k: d[k] for k in ("id", "text", "url", "site")} for d in docs), tmp_path / "crawl.jsonl")
    write_jsonl(({k: d[k] for k in ("id", "text", "url", "site")} for d in generate_web(60, 12)),
                tmp_path / "new.jsonl")
    write_jsonl(({k: d[k] for k in ("id", "text", "url", "site")} for d in generate_web(40, 13)),
                tmp_path / "export.jsonl")
    first = subprocess.run([BLOOMSPAN, "mine", "--url", opensearch_url, "--index", names["crawl"], "--template-index",
                            names["tpl"], "--lease-index", names["lease"], "--work-dir", str(tmp_path / "work" / "mine"),
                            "--sigma", "20", "--min-length", "10", "--json", "--no-report", "--progress", "none"],
                           capture_output=True, text=True, timeout=COMMAND_SECONDS)
    assert first.returncode == 0, first.stderr
    names["first_run"] = json.loads(first.stdout)["run_id"]
    names["doc_id"] = docs[0]["id"]
    # `curate remove ENTRY_ID`: entry ids are a stable hash of the entry (what `curate list` shows)
    from bloomspan.engine.text.tokenizer import tokenize
    from bloomspan.ingest.records.curation import entry_id

    names["allow_entry"] = entry_id("allow", tuple(tokenize("Free shipping on all orders")), None, None)
    yield names, tmp_path


def test_every_readme_command_runs_at_a_terminal(workspace):
    names, cwd = workspace
    from bloomspan.corpora.real_corpus import installed_sites

    has_doc_sites = bool(installed_sites())
    for step in STEPS:
        for template in step.run:
            values = {**names, "port": _free_port(),
                      "real_or_web": "real.jsonl" if has_doc_sites else "web.jsonl"}
            argv = [BLOOMSPAN, *shlex.split(template.format(**values))]
            label = f"README `{step.readme}` ran as `{shlex.join(argv[1:])}`"
            if step.background:
                rc, out, health = serve_in_pty(argv, cwd, values["port"])
                assert health == 200, f"{label}: /healthz answered {health}\n{out}"
            else:
                rc, out = run_in_pty(argv, cwd)
            assert "Traceback" not in out, f"{label}\n{out}"
            if step.may_fail_with and not has_doc_sites:
                assert rc == 1 and step.may_fail_with in out, f"{label}: exit {rc}\n{out}"
                continue
            assert rc == 0, f"{label}: exit {rc}\n{out}"
            if step.bar:
                assert "\r" in out, f"{label}: no progress bar drawn on the terminal\n{out}"
            if step.produces:
                assert (cwd / step.produces).stat().st_size > 0, f"{label}: wrote no {step.produces}\n{out}"
    assert (cwd / "out" / "phrases.jsonl").exists() and (cwd / "clean.jsonl").exists()
