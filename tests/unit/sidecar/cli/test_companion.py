"""`bloomspan dedup` (file mode) and the usage rules of `dedup` and `collapse`, through CliRunner.

The output is compared with a set-based oracle on seeded random corpora at B = 0.1, 1, 10;
untouched lines come back byte for byte; bad lines are passed through, never lost."""
from __future__ import annotations

import json
import random

import click
import pytest
from click.testing import CliRunner

from bloomspan.ingest.companions.paragraph_dedup import paragraphs
from bloomspan.sidecar.cli.companion import COMMANDS

cli = click.Group("bloomspan", commands={c.name: c for c in COMMANDS})


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def random_corpus(seed: int, n_docs: int = 60) -> list[bytes]:
    rng = random.Random(seed)
    pool = [f"Paragraph {i} says {' '.join(rng.choice('abcdefgh') for _ in range(rng.randint(1, 6)))}." for i in range(40)]
    lines = []
    for i in range(n_docs):
        paras = [rng.choice(pool) if rng.random() < 0.5 else f"Unique text {seed}-{i}-{j}." for j in range(rng.randint(0, 5))]
        seps = [rng.choice(["\n\n", "\n \n", "\n\t\n\n", "\r\n\r\n"]) for _ in paras]
        text = rng.choice(["", "  ", "\n"]) + "".join(p + s for p, s in zip(paras, seps))
        doc = {"id": i, "text": text, "n": rng.random()}
        style = rng.choice([None, (",", ":"), (", ", ": ")])
        lines.append(json.dumps(doc, separators=style, ensure_ascii=rng.random() < 0.5).encode() + b"\n")
    return lines


def oracle(lines: list[bytes], field: str = "text") -> list[tuple[bytes | None, list[str] | None]]:
    """Per output document: (the original line if untouched, else None; the kept paragraphs)."""
    seen: set[str] = set()
    out = []
    for raw in lines:
        paras = paragraphs(json.loads(raw)[field])
        kept = []
        for p in paras:
            if p not in seen:
                seen.add(p)
                kept.append(p)
        if paras and not kept:
            continue
        out.append((raw if len(kept) == len(paras) else None, kept))
    return out


@pytest.mark.parametrize("b", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_file_mode_equals_the_set_oracle(tmp_path, b, seed):
    lines = random_corpus(seed)
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b"".join(lines))
    res = run("dedup", "--in", str(src), "--out", str(dst), "--bloom-bytes-per-item", str(b), "--json")
    assert res.exit_code == 0, res.output
    got = dst.read_bytes().splitlines(keepends=True)
    want = oracle(lines)
    assert len(got) == len(want)
    for line, (raw, kept) in zip(got, want):
        if raw is not None:
            assert line == raw  # byte for byte
        else:
            assert paragraphs(json.loads(line)["text"]) == kept
    stats = json.loads(res.output)["stats"]
    assert stats["documents_out"] == len(want)
    if b == 0.1:
        assert stats["false_positives"] > 0  # a tiny filter: many candidates, still no unique paragraph lost


def test_bad_lines_pass_through_and_blank_lines_go(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b'{"text": "A.\\n\\nB."}\n\n[1, 2]\nnot json\n{"text": 5}\n{"other": 1}\n{"text": "B."}\n'
                    b'{"text": "A.\\n\\nC."}')  # no final newline
    res = run("dedup", "--in", str(src), "--out", str(dst))
    assert res.exit_code == 0, res.output
    assert dst.read_bytes() == (b'{"text": "A.\\n\\nB."}\n[1, 2]\nnot json\n{"text": 5}\n{"other": 1}\n'
                                b'{"text": "C."}\n')
    assert "invalid_json=1" in res.output and "no_field=1" in res.output and "not_a_string=1" in res.output
    assert "not_an_object=1" in res.output and "1 dropped" in res.output


def test_nested_field_and_spool_is_removed(tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    docs = [{"page": {"body": "Intro one.\n\nFooter."}}, {"page": {"body": "Intro two.\n\nFooter."}, "x": [1]}]
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    res = run("dedup", "--in", str(src), "--out", str(dst), "--field", "page.body", "--spool-dir", str(spool))
    assert res.exit_code == 0, res.output
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert out == [docs[0], {"page": {"body": "Intro two."}, "x": [1]}]
    assert list(spool.iterdir()) == []


def test_a_missing_input_is_a_clean_error_and_writes_nothing(tmp_path):
    dst = tmp_path / "out.jsonl"
    res = run("dedup", "--in", str(tmp_path / "nope.jsonl"), "--out", str(dst))
    assert res.exit_code != 0 and "no such file" in res.output
    assert not dst.exists() and not (tmp_path / "out.jsonl.partial").exists()


@pytest.mark.parametrize("args, message", [
    ([], "either --in and --out"),
    (["--in", "a", "--index", "x"], "either --in and --out"),
    (["--in", "a"], "both --in and --out"),
    (["--index", "x"], "exactly one of --dest-index"),
    (["--index", "x", "--dest-index", "y", "--annotate"], "exactly one of --dest-index"),
    (["--in", "a", "--out", "b", "--bloom-bytes-per-item", "0"], "bloom_bytes_per_item"),
])
def test_dedup_usage_errors(tmp_path, args, message):
    (tmp_path / "a").write_text('{"text": "x"}\n')
    res = CliRunner().invoke(cli, ["dedup", *[str(tmp_path / a) if a in ("a", "b") else a for a in args]])
    assert res.exit_code != 0 and message in res.output


def test_collapse_usage_errors():
    res = CliRunner().invoke(cli, ["collapse", "--index", "x"])
    assert res.exit_code != 0 and "exactly one of --query" in res.output
    res = CliRunner().invoke(cli, ["collapse", "--index", "x", "--body", "{nope"])
    assert res.exit_code != 0 and "not valid JSON" in res.output


def test_help_lists_both_modes():
    res = run("dedup", "--help")
    assert "--dest-index" in res.output and "--annotate" in res.output and "--bloom-bytes-per-item" in res.output
    assert "--threshold" in run("collapse", "--help").output
