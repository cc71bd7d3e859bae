"""A str's code points as a read-only numpy array over the str's own buffer, without a copy.

CPython keeps a str's code points in one buffer of 1, 2 or 4 bytes each (its "kind": the
narrowest that holds its largest code point), which is what the tokenizer kernels read
(uint8, uint16 or uint32 code points). Encoding the str to UTF-16 or UTF-32 to get them
copies every character (~3 ns per token on the web crawl, as much as joining the batch's
texts); numba's str arguments already carry the buffer's address and kind, so the array is
built over it (:func:`code_point_view`) and holds a reference to the str, which stays alive
as long as the array does.

With ``NUMBA_DISABLE_JIT=1`` the plain twin encodes (the same values, a copy).
"""
from __future__ import annotations

import logging

import numba
import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.core.errors import NumbaError
from numba.extending import intrinsic

log = logging.getLogger(__name__)

_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@intrinsic
def _address(typingctx, ptr):
    """The integer address of a void pointer."""
    if ptr != types.voidptr:
        return None

    def codegen(context, builder, signature, args):
        return builder.ptrtoint(args[0], ir.IntType(64))

    return types.uint64(ptr), codegen


@njit(cache=True)
def _buffer_of(s):
    """(address of the str's code points, bytes per code point) as numba unboxed it (no copy)."""
    return _address(s._data), s._kind


class _StrBuffer:
    """The array interface of a str's buffer; numpy keeps it (and the str) as the array's base."""

    def __init__(self, s: str, address: int, kind: int):
        self.text = s
        self.__array_interface__ = {"data": (address, True), "shape": (len(s),),
                                    "typestr": np.dtype(_DTYPES[kind]).str, "version": 3}


def _view(s: str) -> np.ndarray:
    address, kind = _buffer_of(s)
    return np.asarray(_StrBuffer(s, int(address), int(kind)))


def _encoded(s: str) -> np.ndarray:
    """The plain twin of :func:`_view`: the same dtype and values, encoded (a copy)."""
    if s.isascii():
        return np.frombuffer(s.encode("ascii"), dtype=np.uint8)
    widest = max(map(ord, s))
    if widest < 0x100:
        return np.frombuffer(s.encode("latin-1"), dtype=np.uint8)
    if widest < 0x10000:
        return np.frombuffer(s.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


_VIEWS_WORK = True  # False once numba could not read a str's buffer: encode from then on


def code_point_view(s: str) -> np.ndarray:
    """The code points of ``s`` in the narrowest of uint8, uint16 and uint32 that holds them
    (its own buffer: read-only; ``s`` lives as long as the array).

    The view reads numba's own attributes of a str argument (``_data``, ``_kind``: numba's
    str model, not a public API). A numba without them fails to type :func:`_buffer_of`; the
    tokenizer then encodes every str (the same values, a copy) instead of failing."""
    global _VIEWS_WORK
    if config.DISABLE_JIT or not s or not _VIEWS_WORK:
        return _encoded(s)
    try:
        return _view(s)
    except NumbaError as exc:
        _VIEWS_WORK = False
        log.warning("str views off: numba %s cannot read a str's buffer (%s); encoding instead",
                    numba.__version__, type(exc).__name__)
        return _encoded(s)
