"""Eight bytes at a time: tests on the bytes of a 64-bit word, for numba kernels.

The tokenizer's branch-free pass (:func:`.token_keys.simple_document`) writes one byte per code
point and then reads them eight to a word: which bytes are letters, newlines or undecided, the
positions where a run of letters starts or ends (the lowest set bit of a mask), and a token's
packed key (its bytes' low seven bits side by side). Byte j of a word is bits 8j..8j+7, the
byte at the lowest address lowest (a little-endian word, as the kernels view a byte array).

Every function here is exact for every byte (no borrow from one byte into the next) and has
no branch. :func:`lowest_bit` and :func:`bit_length` are LLVM's ``cttz`` and ``ctlz``, plain
Python with the JIT off.
"""
from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.extending import intrinsic

if sys.byteorder != "little":  # pragma: no cover
    raise ImportError("the tokenizer views byte arrays as little-endian 64-bit words")

LOW7 = 0x7F7F7F7F7F7F7F7F
HIGH = 0x8080808080808080
# (flags at bits 8j) * _GATHER puts flag j at bit 56 + j, and nothing else lands in bits 56..63.
_GATHER = 0x0102040810204080


@njit(cache=True, nogil=True, inline="always")
def zero_bytes(x):
    """The high bit of every byte of x that is 0, nothing else (uint64)."""
    return ~(((x & np.uint64(LOW7)) + np.uint64(LOW7)) | x) & np.uint64(HIGH)


@njit(cache=True, nogil=True, inline="always")
def low7_bytes(x):
    """The high bit of every byte of x in 1..0x7F (high bit clear, a low bit set)."""
    return ~x & ((x & np.uint64(LOW7)) + np.uint64(LOW7)) & np.uint64(HIGH)


@njit(cache=True, nogil=True, inline="always")
def byte_mask(high_bits):
    """The 8-bit mask of the bytes whose high bit is set (byte j -> bit j), from a word with
    no other bit set (:func:`zero_bytes`, :func:`low7_bytes`)."""
    return ((high_bits >> np.uint64(7)) * np.uint64(_GATHER)) >> np.uint64(56)


@njit(cache=True, nogil=True, inline="always")
def bytes_at(words, k):
    """The 8 bytes from byte offset k of the array that ``words`` (uint64) views, one word.
    Reads words[k // 8 + 1] as well, which must exist."""
    q = k >> 3
    r = np.uint64(8 * (k & 7))
    # (w << 1) << (63 - r) is w << (64 - r) without a shift by 64 when r is 0.
    return (words[q] >> r) | ((words[q + 1] << np.uint64(1)) << (np.uint64(63) - r))


@njit(cache=True, nogil=True, inline="always")
def low_bytes(x, m):
    """x with all but its low min(m, 8) bytes cleared (m >= 1)."""
    bits = np.uint64(8 * min(m, 8) - 1)
    return x & (((np.uint64(1) << bits) << np.uint64(1)) - np.uint64(1))


@njit(cache=True, nogil=True, inline="always")
def packed7(x):
    """The low 7 bits of each byte of x (every byte below 0x80) side by side: byte j's at bit 7j."""
    x = (x & np.uint64(0x007F007F007F007F)) | ((x & np.uint64(0x7F007F007F007F00)) >> np.uint64(1))
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x & np.uint64(0x3FFF00003FFF0000)) >> np.uint64(2))
    return (x & np.uint64(0x000000000FFFFFFF)) | ((x & np.uint64(0x0FFFFFFF00000000)) >> np.uint64(4))


@intrinsic
def _cttz(typingctx, x):
    """LLVM's ``cttz`` of a uint64 (zero is not undefined: 64)."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(x), codegen


def _cttz_plain(x):
    """:func:`_cttz` without the compiler (``NUMBA_DISABLE_JIT=1``)."""
    x = int(x)
    return np.uint64((x & -x).bit_length() - 1 if x else 64)


@intrinsic
def _ctlz(typingctx, x):
    """LLVM's ``ctlz`` of a uint64 (zero is not undefined: 64)."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(x), codegen


def _ctlz_plain(x):
    """:func:`_ctlz` without the compiler (``NUMBA_DISABLE_JIT=1``)."""
    return np.uint64(64 - int(x).bit_length())


_cttz_any = _cttz_plain if config.DISABLE_JIT else _cttz
_ctlz_any = _ctlz_plain if config.DISABLE_JIT else _ctlz


@njit(cache=True, nogil=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of the uint64 x (64 when x is 0), as int64."""
    return np.int64(_cttz_any(x))


@njit(cache=True, nogil=True, inline="always")
def bit_length(x):
    """Bits of the uint64 x up to its highest set bit (0 for 0), as int64."""
    return np.int64(64) - np.int64(_ctlz_any(x))
