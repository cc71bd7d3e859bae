"""JSON Lines plain, gzip and Zstandard through sidecar/inputs: what is written is read back
line for line; the magic bytes decide on reading, the name on writing; a damaged stream
yields every line before the damage, then one error naming the file, the line and the byte."""
from __future__ import annotations

import gzip

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from bloomspan.sidecar.inputs import Compression, DamagedInputError, detect_compression, open_lines, open_output

LINES = [b'{"id": %d, "text": "page %d caf\xc3\xa9"}\n' % (i, i) for i in range(20_000)]
DATA = b"".join(LINES)


def _read(path) -> list[bytes]:
    with open_lines(str(path)) as lines:
        return list(lines)


def _read_until_damage(path) -> tuple[list[bytes], DamagedInputError]:
    got = []
    with pytest.raises(DamagedInputError) as caught:
        with open_lines(str(path)) as lines:
            for line in lines:
                got.append(line)
    return got, caught.value


@pytest.mark.parametrize("name, kind", [("a.jsonl", Compression.PLAIN), ("a.jsonl.gz", Compression.GZIP),
                                        ("a.jsonl.zst", Compression.ZSTD), ("a.jsonl.zstd", Compression.ZSTD)])
def test_written_as_the_name_asks_and_read_back_line_for_line(tmp_path, name, kind):
    path = tmp_path / name
    with open_output(str(path)) as out:
        for line in LINES:
            out.write(line)
    assert detect_compression(str(path)) is kind
    assert _read(path) == LINES


def test_the_magic_bytes_decide_not_the_name(tmp_path):
    gz_named_plain = tmp_path / "a.jsonl"
    gz_named_plain.write_bytes(gzip.compress(DATA))
    zst_named_gz = tmp_path / "b.jsonl.gz"
    zst_named_gz.write_bytes(zstandard.ZstdCompressor().compress(DATA))
    plain_named_zst = tmp_path / "c.jsonl.zst"
    plain_named_zst.write_bytes(DATA)
    for path in (gz_named_plain, zst_named_gz, plain_named_zst):
        assert _read(path) == LINES, path.name


def test_every_frame_of_a_multi_frame_zstd_file_and_every_member_of_a_gzip_file(tmp_path):
    cut = len(DATA) // 3
    zst, gz = tmp_path / "m.jsonl.zst", tmp_path / "m.jsonl.gz"
    zst.write_bytes(zstandard.ZstdCompressor().compress(DATA[:cut]) + zstandard.ZstdCompressor().compress(DATA[cut:]))
    gz.write_bytes(gzip.compress(DATA[:cut]) + gzip.compress(DATA[cut:]))
    assert b"".join(_read(zst)) == DATA
    assert b"".join(_read(gz)) == DATA


@pytest.mark.parametrize("compress", [gzip.compress, zstandard.ZstdCompressor().compress], ids=["gzip", "zstd"])
def test_a_truncated_file_yields_every_whole_line_before_the_end_then_names_it(tmp_path, compress):
    whole = compress(DATA)
    path = tmp_path / "cut.jsonl.x"
    path.write_bytes(whole[: len(whole) // 2])
    got, err = _read_until_damage(path)
    assert got == LINES[: len(got)] and 0 < len(got) < len(LINES)  # a prefix, every line whole
    assert err.line == len(got) + 1 and err.position == sum(map(len, got))
    assert str(err).startswith(f"{path}:{len(got) + 1}: compressed data ends early (a truncated file) at byte ")
    assert "\n" not in str(err)


def test_damaged_gzip_bytes_are_one_error_naming_the_file_and_line(tmp_path):
    # Deflate may decode damaged bytes into wrong text before it notices (the CRC is checked at
    # the end): what is promised here is the one-line error, not the lines before it.
    whole = bytearray(gzip.compress(DATA))
    whole[len(whole) // 2: len(whole) // 2 + 8] = b"\x00" * 8
    path = tmp_path / "flip.jsonl.gz"
    path.write_bytes(bytes(whole))
    got, err = _read_until_damage(path)
    assert err.line == len(got) + 1 and str(err).startswith(f"{path}:{err.line}: compressed data is damaged (")
    assert "\n" not in str(err)


def test_a_plain_file_is_read_through_the_file_object_itself(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(DATA)
    with open_lines(str(path)) as lines:
        assert hasattr(lines, "fileno")  # the fast path: no generator between the reader and the file


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=40),
       st.sampled_from(["x.jsonl", "x.jsonl.gz", "x.jsonl.zst"]))
def test_any_lines_round_trip_in_every_format(tmp_path_factory, lines, name):
    path = tmp_path_factory.mktemp("rt") / name
    with open_output(str(path)) as out:
        for line in lines:
            out.write(line)
    assert _read(path) == lines
