"""Content-defined chunking and the per-document Bloom fingerprint: kernels vs references,
chunk-size rules, locality of edits, and the encoded form."""
from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.sketches.chunk_fingerprint import (
    DEFAULT_CONFIG,
    GEAR,
    FingerprintConfig,
    _bloom_bytes_kernel,
    _bloom_bytes_reference,
    _cdc_kernel,
    _cdc_reference,
    chunk_ends,
    chunk_hashes,
    decode_fingerprint,
    filter_from_hashes,
    fingerprint,
    fingerprint_b64,
    normalized_bytes,
    select_chunks,
)

CONFIGS = [
    DEFAULT_CONFIG,
    FingerprintConfig(mask_bits=2, window=8, min_chunk=1, max_chunk=5),
    FingerprintConfig(mask_bits=6, window=63, min_chunk=30, max_chunk=30),
]


def random_bytes(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@settings(derandomize=True, max_examples=40, deadline=None)
@given(data=st.binary(min_size=0, max_size=600), cfg=st.sampled_from(CONFIGS))
def test_cdc_kernel_matches_reference_and_chunk_rules(data, cfg):
    ends = chunk_ends(data, cfg)
    assert ends.tolist() == _cdc_reference(data, GEAR, cfg.mask, cfg.min_chunk, cfg.max_chunk)
    sizes = np.diff(np.concatenate(([0], ends)))
    if data:
        assert ends[-1] == len(data)
        assert (sizes > 0).all() and (sizes <= cfg.max_chunk).all()
        assert (sizes[:-1] >= cfg.min_chunk).all()  # only the last chunk may be short
    else:
        assert ends.size == 0


def test_gear_values_fit_in_63_bits():
    assert GEAR.dtype == np.uint64 and GEAR.shape == (256,)
    assert int(GEAR.max()) < 2**63 and len(set(GEAR.tolist())) == 256


def test_chunks_average_near_min_plus_two_to_the_mask_bits():
    ends = chunk_ends(random_bytes(0, 40_000), DEFAULT_CONFIG)
    mean = 40_000 / len(ends)
    assert 0.7 * 24 < mean < 1.3 * 24  # min 8 + 2^4


def test_an_edit_only_moves_nearby_boundaries():
    data = random_bytes(1, 6000)
    edited = data[:3000] + b"X" + data[3000:]  # one inserted byte
    a, b = chunk_ends(data).tolist(), chunk_ends(edited).tolist()
    before = [e for e in a if e < 3000]
    assert [e for e in b if e < 3000] == before  # nothing before the edit moves
    after_a = {e for e in a if e > 3000 + 300}  # past window + max_chunk: resynchronised
    after_b = {e - 1 for e in b if e - 1 > 3000 + 300}
    assert after_a == after_b


@settings(derandomize=True, max_examples=25, deadline=None)
@given(n=st.integers(0, 50), m=st.sampled_from([64, 512, 4096]), k=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_bloom_bytes_kernel_matches_reference(n, m, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = rng.integers(0, m, n)
    out = np.zeros(m // 8, dtype=np.uint8)
    _bloom_bytes_kernel(a, b, k, m, out)
    assert out.tobytes() == _bloom_bytes_reference(a, b, k, m)


def test_bit_order_is_bit_i_and_7_of_byte_i_shr_3():
    cfg = FingerprintConfig(num_bits=64, num_hashes=1)
    for bit in (0, 7, 8, 13, 63):
        h = np.array([[bit, 0]], dtype=np.uint64)
        raw = filter_from_hashes(h, cfg)
        assert raw == bytes(8)[: bit >> 3] + bytes([1 << (bit & 7)]) + bytes(8)[(bit >> 3) + 1:]


def test_fingerprint_shape_and_determinism():
    text = "The quick brown fox jumps over the lazy dog. " * 20
    fp = fingerprint(text)
    assert len(fp) == 64 and fp == fingerprint(text)
    assert fp != bytes(64)
    ones = int(np.unpackbits(np.frombuffer(fp, np.uint8)).sum())
    n_chunks = len(select_chunks(chunk_hashes(normalized_bytes(text), chunk_ends(normalized_bytes(text))), 128))
    assert 1 <= ones <= DEFAULT_CONFIG.num_hashes * n_chunks
    assert decode_fingerprint(fingerprint_b64(text)) == fp
    assert base64.b64decode(fingerprint_b64(text)) == fp


def test_normalisation_ignores_case_punctuation_and_spacing():
    a = "Hello, World!  This is   a test.\n\nSecond paragraph here, with words."
    b = "hello world this is a test second PARAGRAPH here -- with words"
    assert fingerprint(a) == fingerprint(b)
    raw = FingerprintConfig(normalize=False)
    assert fingerprint(a, raw) != fingerprint(b, raw)


def test_empty_text_gives_an_empty_filter():
    assert fingerprint("") == bytes(64)
    assert fingerprint("  ... !!! ") == bytes(64)


def test_long_documents_insert_at_most_max_chunks():
    cfg = FingerprintConfig(max_chunks=4, num_hashes=1)
    text = " ".join(f"word{i}" for i in range(3000))
    ones = int(np.unpackbits(np.frombuffer(fingerprint(text, cfg), np.uint8)).sum())
    assert 1 <= ones <= 4
    h = np.array([[5, 1], [3, 9], [5, 1], [1, 2]], dtype=np.uint64)
    assert select_chunks(h, 2).tolist() == [[1, 2], [3, 9]]  # distinct, smallest h1 first


def test_decode_rejects_garbage():
    with pytest.raises(ValueError, match="base64"):
        decode_fingerprint("not base64!")
    with pytest.raises(TypeError):
        decode_fingerprint(123)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"num_bits": 100}, "num_bits"),
        ({"num_bits": 32}, "num_bits"),
        ({"num_hashes": 0}, "num_hashes"),
        ({"window": 64}, "window"),
        ({"mask_bits": 20, "window": 16}, "mask_bits"),
        ({"min_chunk": 0}, "min_chunk"),
        ({"min_chunk": 10, "max_chunk": 5}, "max_chunk"),
        ({"max_chunks": 0}, "max_chunks"),
        ({"normalize": 1}, "normalize"),
    ],
)
def test_config_errors_name_the_field(kw, field):
    with pytest.raises(ConfigError, match=field):
        FingerprintConfig(**kw)


def test_cdc_kernel_rejects_wrong_dtype():
    with pytest.raises(ValueError, match="uint8"):
        chunk_ends(np.zeros(4, dtype=np.int32))
    ends = np.empty(5, dtype=np.int64)
    assert _cdc_kernel(np.zeros(4, np.uint8), GEAR, np.uint64(DEFAULT_CONFIG.mask), 8, 256, ends) == 1
