"""Bad input files through the CLI: lone surrogates, invalid UTF-8, deep nesting, huge lines and
empty files give a per-line error naming the file and the right line, never a traceback, and
`clean` never loses a line (bad documents stay in the output byte for byte)."""
from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.cli.clean_jsonl import clean_jsonl
from bloomspan.sidecar.cli.main import cli

BOILER = "all rights reserved acme corporation terms of use privacy policy contact us today"
DEEP = b"[" * 100_000  # json.loads: RecursionError, not ValueError


def _doc(i: int, text: str | None = None, **extra) -> bytes:
    body = f"unique words number {i} here and there {i}. {BOILER}!" if text is None else text
    return json.dumps({"id": f"d{i}", "text": body, **extra}).encode() + b"\n"


def _phrases(tmp_path) -> str:
    path = tmp_path / "phrases.jsonl"
    path.write_text(json.dumps({"tokens": BOILER.split(), "df": 10}) + "\n", encoding="utf-8")
    return str(path)


def _clean(tmp_path, lines: list[bytes], *extra):
    src = tmp_path / "web.jsonl"
    src.write_bytes(b"".join(lines))
    out = tmp_path / "clean.jsonl"
    res = CliRunner().invoke(cli, ["clean", "--phrases", _phrases(tmp_path), "--in", str(src), "--out", str(out),
                                   *extra])
    errors = [json.loads(line) for line in (tmp_path / "clean.jsonl.errors.jsonl").read_bytes().splitlines()] \
        if (tmp_path / "clean.jsonl.errors.jsonl").exists() else None
    return res, src, out, errors


def test_clean_keeps_bad_documents_in_place_and_names_their_lines(tmp_path):
    lines = [_doc(i) for i in range(20)]
    lines[16] = b'{"id": "s", "text": "bad \\ud800 surrogate"}\n'  # line 17: valid JSON, not UTF-8-encodable
    lines[4] = DEEP + b"\n"  # line 5
    lines[9] = b'{"id": "t", "text": "fine", "title": "\\udfff"}\n'  # surrogate outside the cleaned field
    lines[11] = b'{"id": "b", "text": "bad \xff byte"}\n'  # line 12: not UTF-8 -> not a document
    lines[13] = b"[1, 2]\n"  # line 14: not an object
    res, src, out, errors = _clean(tmp_path, lines)
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    for n in (5, 10, 12, 14, 17):
        assert f"{src}:{n}: " in res.output
    assert [e["line"] for e in errors] == [5, 10, 12, 14, 17]  # in input order
    kept = out.read_bytes().splitlines(keepends=True)
    assert len(kept) == 19  # every line but the non-UTF-8 one, in order
    for n in (5, 10, 14, 17):
        assert lines[n - 1] in kept  # byte for byte
    assert kept.index(lines[4]) == 4 and kept.index(lines[16]) == 15
    assert errors[2]["raw_base64"] and "\ufffd" in errors[2]["raw"]  # the bytes are kept too
    cleaned = [json.loads(line) for line in kept if line not in (lines[4], lines[13])]
    assert all(BOILER not in d["text"] for d in cleaned if isinstance(d, dict) and d["id"] not in ("s", "t"))


def test_clean_invalid_json_is_described_with_its_raw_text(tmp_path):
    lines = [_doc(0), b'{"text": \n', _doc(1)]
    res, src, out, errors = _clean(tmp_path, lines)
    assert res.exit_code == 0 and f"{src}:2: invalid JSON" in res.output
    assert errors == [{"line": 2, "reason": errors[0]["reason"], "raw": '{"text": '}]
    assert len(out.read_bytes().splitlines()) == 2


def test_clean_an_empty_file_writes_empty_outputs(tmp_path):
    res, src, out, errors = _clean(tmp_path, [])
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == b"" and errors == []
    assert "0 documents" in res.output


def test_clean_a_field_no_document_has_says_so(tmp_path):
    res, _, out, _ = _clean(tmp_path, [_doc(0), _doc(1)], "--field", "body")
    assert res.exit_code == 0 and "--field body" in res.output
    assert out.read_bytes() == _doc(0) + _doc(1)


def test_clean_a_50_mb_line(tmp_path):
    blob = "x" * 50_000_000
    lines = [_doc(0), _doc(1, blob=blob), _doc(2)]
    res, _, out, errors = _clean(tmp_path, lines)
    assert res.exit_code == 0, res.output
    kept = out.read_bytes().splitlines()
    assert len(kept) == 3 and errors == []
    assert json.loads(kept[1])["blob"] == blob and BOILER not in json.loads(kept[1])["text"]


_LINE = st.one_of(
    st.integers(0, 50).map(lambda i: _doc(i)),
    st.integers(0, 50).map(lambda i: _doc(i, text=f"plain page {i}")),
    st.sampled_from([b'{"text": "x \\ud800"}\n', b'{"text": 5}\n', b"[1]\n", b"null\n", DEEP + b"\n",
                     b"{broken\n", b'{"text": "\xc3"}\n', b"\n", b"   \n", b'{"text": "no newline"}']),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_LINE, max_size=30))
def test_clean_loses_no_line_and_keeps_the_order(tmp_path, lines):
    """Every non-blank line is in the output (in input order) or described with its raw text."""
    # a line without its newline can only be the last one
    lines = [line if line.endswith(b"\n") or i == len(lines) - 1 else line + b"\n" for i, line in enumerate(lines)]
    src, out, errs = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "err.jsonl"
    src.write_bytes(b"".join(lines))
    cleaner = Cleaner(PhraseSet.from_records([{"tokens": BOILER.split(), "df": 3}]),
                      CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None))
    summary = clean_jsonl(cleaner, str(src), str(out), str(errs), batch=4)
    written = out.read_bytes().splitlines()
    described = {e["line"]: e for e in map(json.loads, errs.read_bytes().splitlines())}
    cursor = 0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if n in described and "raw" in described[n]:  # not a document: described, with its text
            continue
        assert cursor < len(written), (n, line)
        if n in described:
            assert written[cursor] == line.rstrip(b"\n")  # a bad document: byte for byte
        else:  # a cleaned one: the same document but for its text and the bloomspan namespace
            before, after = json.loads(line), json.loads(written[cursor])
            assert {k: v for k, v in after.items() if k not in ("text", "bloomspan")} == \
                {k: v for k, v in before.items() if k != "text"}
            assert (BOILER in before["text"]) == (after["text"] != before["text"])
        cursor += 1
    assert cursor == len(written)
    assert summary.errors == len(described)


def test_mine_names_the_right_line_for_invalid_utf8_after_long_lines(tmp_path):
    """Regression: a text-mode reader decodes 8 KB ahead and blamed an earlier line."""
    lines = [_doc(i, text=("word " * 600) + str(i)) for i in range(30)]
    lines[16] = b'{"id": "u", "text": "bad \xff utf8"}\n'
    src = tmp_path / "web.jsonl"
    src.write_bytes(b"".join(lines))
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "o"), "--sigma", "2"])
    assert res.exit_code == 1 and f"{src}:17: not valid UTF-8" in res.output, res.output
    assert not (tmp_path / "o" / "phrases.jsonl").exists()


def test_mine_names_a_deeply_nested_line(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(_doc(0) + _doc(1) + DEEP + b"\n")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "o"), "--sigma", "2"])
    assert res.exit_code == 1 and f"{src}:3: nested deeper than the JSON parser allows" in res.output
    assert "Traceback" not in res.output


def test_mine_an_empty_file_says_so(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(b"")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and f"{src}: empty corpus: the file holds no document" in res.output


def test_mine_a_lone_surrogate_in_the_id_names_the_line(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(_doc(0) + b'{"id": "\\ud800", "text": "x y"}\n')
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--id-field", "id", "--out", str(tmp_path / "o"),
                                   "--sigma", "2"])
    assert res.exit_code == 1 and f"{src}:2: id field 'id' holds a lone surrogate" in res.output


def test_mine_a_lone_surrogate_in_the_text_is_no_token(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(b"".join(_doc(i) for i in range(4)) + b'{"id": "s", "text": "\\ud800 ' + BOILER.encode() + b'"}\n')
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "o"), "--sigma", "5",
                                   "--min-length", "5"])
    assert res.exit_code == 0, res.output
    phrases = [json.loads(line) for line in (tmp_path / "o" / "phrases.jsonl").read_text().splitlines()]
    assert [p["text"] for p in phrases] == [BOILER]


def test_templates_and_dedup_name_or_pass_a_deep_line(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(_doc(0) + DEEP + b"\n")
    res = CliRunner().invoke(cli, ["templates", "--jsonl", str(src), "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 1 and f"{src}:2: nested deeper" in res.output
    res = CliRunner().invoke(cli, ["dedup", "--in", str(src), "--out", str(tmp_path / "d.jsonl")])
    assert res.exit_code == 0 and "too_deep=1" in res.output, res.output
    assert (tmp_path / "d.jsonl").read_bytes() == _doc(0) + DEEP + b"\n"


def test_dedup_writes_a_lone_surrogate_escaped_never_as_invalid_utf8(tmp_path):
    src = tmp_path / "web.jsonl"
    a = json.dumps({"text": "Same para.\n\nOwn \ud800 one."}).encode() + b"\n"
    b = json.dumps({"text": "Same para.\n\nOther \ud800 two."}).encode() + b"\n"
    src.write_bytes(a + b)
    res = CliRunner().invoke(cli, ["dedup", "--in", str(src), "--out", str(tmp_path / "d.jsonl")])
    assert res.exit_code == 0, res.output
    out = (tmp_path / "d.jsonl").read_bytes()
    out.decode("utf-8")  # strict: no surrogate bytes
    assert [json.loads(line)["text"] for line in out.splitlines()] == ["Same para.\n\nOwn \ud800 one.", "Other \ud800 two."]


def test_mine_a_sigma_above_the_documents_is_refused_as_the_cluster_form_refuses_it(tmp_path):
    src = tmp_path / "web.jsonl"
    src.write_bytes(b"".join(_doc(i) for i in range(12)))
    out = tmp_path / "o"
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(out), "--sigma", "50"])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert (f"--sigma 50: only 12 documents of {src} have a text value in field 'text', and a phrase must occur "
            "in at least --sigma of them; give --sigma 12 or less") in res.output, res.output
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(out), "--sigma", "50", "--allow-empty"])
    assert res.exit_code == 0 and "(0 phrases)" in res.output, res.output
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(out), "--sigma", "12"])
    assert res.exit_code == 0, res.output


def test_clean_writes_back_numbers_exactly_as_the_standard_library_reads_them(tmp_path):
    # orjson parses the lines first; it reads an integer beyond 64 bits as a float and refuses
    # NaN, so such documents must be read (and written back) as before, not rounded or dropped.
    big = 123456789012345678901234567890
    lines = [_doc(0, n=big), _doc(1, score=0.1, nested={"x": [1, 2.5e-7, big]}), _doc(2, n=7),
             b'{"id": "nan", "text": "unique words here. ' + BOILER.encode() + b'!", "v": NaN}\n']
    res, _, out, errors = _clean(tmp_path, lines)
    assert res.exit_code == 0, res.output
    assert errors == []
    written = out.read_bytes().splitlines()
    assert b'"n": ' + str(big).encode() in written[0]
    assert b'"score": 0.1, "nested": {"x": [1, 2.5e-07, ' + str(big).encode() + b"]}" in written[1]
    assert b'"n": 7' in written[2]
    assert b'"v": NaN' in written[3]
    assert all(b"acme corporation" not in line for line in written)  # every one was cleaned


def test_one_wording_and_one_count_for_bad_lines_in_clean_and_mine(tmp_path):
    """The same bad byte is named at the same (0-based) byte by clean and mine, and clean's
    summary counts every line it read: 3 lines were "1 documents: 1 cleaned, 2 errors"."""
    lines = [_doc(0), b'{"id": "x", "text": nope}\n', b'{"id": "b", "text": "bad \xff byte"}\n']
    res, src, _, _ = _clean(tmp_path, lines)
    assert res.exit_code == 0, res.output
    assert "3 documents: 1 cleaned (1 with boilerplate), 0 unchanged, 2 errors" in res.output
    assert f"{src}:3: not valid UTF-8 (invalid start byte at byte 25)" in res.output
    mined = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "m"), "--sigma", "2"])
    assert mined.exit_code == 1
    assert f"{src}:2: invalid JSON (Expecting value at column 21)" in mined.output
    src.write_bytes(lines[0] + lines[2])
    mined = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / "m"), "--sigma", "2"])
    assert f"{src}:2: not valid UTF-8 (invalid start byte at byte 25)" in mined.output, mined.output


def test_a_byte_order_mark_starting_the_file_is_read_past_by_clean_and_mine(tmp_path):
    """index read past a UTF-8 BOM, clean and mine refused line 1 ("Unexpected UTF-8 BOM")."""
    docs = [_doc(i) for i in range(6)]
    outputs = {}
    for name, head in (("plain", b""), ("bom", b"\xef\xbb\xbf")):
        src = tmp_path / f"{name}.jsonl"
        src.write_bytes(head + b"".join(docs))
        out = tmp_path / f"{name}-clean.jsonl"
        res = CliRunner().invoke(cli, ["clean", "--phrases", _phrases(tmp_path), "--in", str(src), "--out", str(out)])
        assert res.exit_code == 0 and "6 documents: 6 cleaned (6 with boilerplate), 0 unchanged, 0 errors" in res.output, res.output
        mined = CliRunner().invoke(cli, ["mine", "--jsonl", str(src), "--out", str(tmp_path / name), "--sigma", "3",
                                         "--min-length", "5"])
        assert mined.exit_code == 0, mined.output
        outputs[name] = (out.read_bytes(), (tmp_path / name / "phrases.jsonl").read_bytes())
    assert outputs["bom"] == outputs["plain"]
