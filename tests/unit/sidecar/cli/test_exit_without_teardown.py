"""The command's process ends without the interpreter's teardown once the command returned
(``main.exit_without_teardown``): what it wrote is all there, the exit status is the command's,
``atexit`` handlers still run, and a live non-daemon thread gets the normal exit instead."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent("""
        import atexit, logging, sys, threading, time
        from bloomspan.sidecar.cli.main import exit_without_teardown
    """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


def test_buffered_output_atexit_handlers_and_the_status_survive():
    out = _run("""
        atexit.register(lambda: print("atexit ran", file=sys.stderr))
        sys.stdout.write("no newline, still buffered")
        exit_without_teardown(3)
        print("not reached")
    """)
    assert out.returncode == 3
    assert out.stdout == "no newline, still buffered"
    assert "atexit ran" in out.stderr


def test_a_message_as_the_code_is_printed_and_exits_1_like_sys_exit():
    out = _run("""
        exit_without_teardown("error: --sigma must be >= 2")
    """)
    assert out.returncode == 1 and out.stderr.strip() == "error: --sigma must be >= 2"
    assert _run("exit_without_teardown(None)").returncode == 0


def test_a_running_non_daemon_thread_gets_the_normal_exit():
    out = _run("""
        done = []
        t = threading.Thread(target=lambda: (time.sleep(0.5), done.append(1), print("thread finished")))
        t.start()
        exit_without_teardown(0)
        print("returned")
        sys.exit(5)
    """)
    assert out.returncode == 5
    assert out.stdout.splitlines() == ["returned", "thread finished"]


def test_the_cli_exits_this_way_with_its_outputs_written(tmp_path):
    src = tmp_path / "in.jsonl"
    boiler = "all rights reserved acme corporation terms of use privacy policy contact us today"
    src.write_text("".join(json.dumps({"id": f"d{i}", "text": f"w{i} unique words {i}. {boiler}"}) + "\n"
                           for i in range(6)), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "bloomspan.sidecar.cli.main", "mine", "--jsonl", str(src),
                          "--field", "text", "--out", str(tmp_path / "out"), "--sigma", "3", "--min-length", "4",
                          "--progress", "none"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "wrote " in out.stdout + out.stderr  # the last line, after the report
    assert json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["phrases"] == 1
    phrases = (tmp_path / "out" / "phrases.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(phrases) == 1 and "acme corporation" in phrases[0]
    bad = subprocess.run([sys.executable, "-m", "bloomspan.sidecar.cli.main", "mine", "--jsonl", str(src),
                          "--field", "text", "--out", str(tmp_path / "o2"), "--sigma", "x"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--sigma" in bad.stderr
