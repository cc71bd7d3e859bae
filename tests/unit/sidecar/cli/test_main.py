"""The `bloomspan` CLI through click's CliRunner: help, bad input, and complete outputs."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from bloomspan.sidecar.cli.main import cli

BOILER = "all rights reserved acme corporation terms of use privacy policy contact us today"


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _corpus(n=12):
    docs = []
    for i in range(n):
        words = " ".join(f"w{i}x{j}" for j in range(30))
        docs.append(json.dumps({"id": f"d{i}", "text": f"{words}. {BOILER}!"}))
    return docs


def test_help_and_version_are_instant_and_import_nothing_heavy():
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c",
                          "import sys; from bloomspan.sidecar.cli.main import cli; "
                          "sys.argv=['bloomspan','--help']\n"
                          "try:\n cli()\nexcept SystemExit:\n pass\n"
                          "print('numba' in sys.modules, 'opensearchpy' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert "mine" in out.stdout and "serve" in out.stdout and "clean" in out.stdout
    assert out.stdout.strip().endswith("False False")
    assert time.perf_counter() - t0 < 10
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and "bloomspan" in res.output


def test_mine_jsonl_writes_phrases_and_report(tmp_path):
    src = _write(tmp_path / "in.jsonl", _corpus())
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["mine", "--jsonl", src, "--id-field", "id", "--sigma", "10", "--min-length", "5",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    phrases = [json.loads(line) for line in (out / "phrases.jsonl").read_text().splitlines()]
    assert [p["text"] for p in phrases] == [BOILER]
    assert phrases[0]["df"] == 12 and phrases[0]["psi"] == 12 * len(BOILER.split())
    assert phrases[0]["tokens"] == BOILER.split() and phrases[0]["occurrences"] == 12
    report = json.loads((out / "report.json").read_text())
    assert report["docs_mined"] == 12 and report["phrases"] == 1
    assert "boilerplate" in res.output


def test_engines_agree_through_the_cli(tmp_path):
    src = _write(tmp_path / "in.jsonl", _corpus(15))
    outs = {}
    for engine in ("bloomspan", "fhk"):
        res = CliRunner().invoke(cli, ["mine", "--jsonl", src, "--sigma", "3", "--min-length", "3", "--engine", engine,
                                       "--out", str(tmp_path / engine)])
        assert res.exit_code == 0, res.output
        outs[engine] = (tmp_path / engine / "phrases.jsonl").read_text()
    assert outs["bloomspan"] == outs["fhk"]


@pytest.mark.parametrize("lines, args, message", [
    (['{"text": "a b c"}', '{"text": '], [], "in.jsonl:2: invalid JSON"),
    (['{"text": "a b c"}', '{"body": "x"}'], [], "in.jsonl:2: field 'text' is missing"),
    (['{"text": 5}'], [], "in.jsonl:1: field 'text' is int, not a string"),
    (['[1, 2]'], [], "in.jsonl:1: expected a JSON object"),
    (['{"text": "a b"}'], ["--id-field", "id"], "in.jsonl:1: id field 'id' is missing"),
    (['{"text": "..."}', '{"text": ""}'], [], "empty corpus"),
])
def test_bad_input_names_the_line_and_leaves_no_output(tmp_path, lines, args, message):
    src = _write(tmp_path / "in.jsonl", lines)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["mine", "--jsonl", src, "--out", str(out), "--sigma", "2", "--min-length", "2", *args])
    assert res.exit_code != 0
    assert message in res.output
    assert not (out / "phrases.jsonl").exists() and not (out / "report.json").exists()


@pytest.mark.parametrize("flag, value, field", [("--sigma", "1", "sigma"), ("--min-length", "1", "min_length")])
def test_bad_parameters_name_the_option(tmp_path, flag, value, field):
    src = _write(tmp_path / "in.jsonl", _corpus(3))
    res = CliRunner().invoke(cli, ["mine", "--jsonl", src, "--out", str(tmp_path / "o"), flag, value])
    assert res.exit_code == 2
    assert flag in res.output and f"{field}=1" in res.output


def test_corpus_then_clean_strips_mined_boilerplate(tmp_path):
    runner = CliRunner()
    corpus = tmp_path / "web.jsonl"
    res = runner.invoke(cli, ["corpus", "web", "--docs", "300", "--seed", "3", "--out", str(corpus)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["mine", "--jsonl", str(corpus), "--id-field", "id", "--sigma", "10", "--min-length", "8",
                              "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    bad = tmp_path / "in.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()[:50] + ["{broken", json.dumps({"id": "n", "text": 3})]
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = runner.invoke(cli, ["clean", "--phrases", str(tmp_path / "m" / "phrases.jsonl"), "--in", str(bad),
                              "--out", str(tmp_path / "clean.jsonl"), "--mode", "strip"])
    assert res.exit_code == 0, res.output
    out = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text(encoding="utf-8").splitlines()]
    errors = [json.loads(line) for line in (tmp_path / "clean.jsonl.errors.jsonl").read_text().splitlines()]
    assert len(out) == 51  # 50 documents + the one with a non-string field, unchanged
    assert {e["line"] for e in errors} == {51, 52}
    originals = [json.loads(line) for line in lines[:50]]
    assert sum(len(o["text"]) for o in out[:50]) < sum(len(o["text"]) for o in originals)
    assert out[50] == {"id": "n", "text": 3}
