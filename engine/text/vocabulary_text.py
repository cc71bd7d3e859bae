"""Text form of a vocabulary: one token per line, numba kernels both ways.

Line j is ``<token j>`` or ``<token j>\\t<df j>``, each ending in ``\\n``. Inside tokens
``\\``, tab, newline and carriage return are written ``\\\\``, ``\\t``, ``\\n``, ``\\r``
(tokenizer output never contains them, so real files read as plain word lists). The
kernels work on code points (uint32); callers convert to and from UTF-8 with
"surrogatepass", so lone surrogates survive.
"""
from __future__ import annotations

import numpy as np
from numba import njit

PARSE_ERRORS = {1: "bad escape", 2: "bad or missing document frequency",
                3: "last line is not terminated", 4: "more lines than the header's size"}


@njit(cache=True, nogil=True)
def write_lines(pool, rec, start, stop, with_df, out):
    """Escaped tokens start..stop-1 as lines, written as code points into ``out``.

    pool uint32 code points; rec int64 (>= stop, 4) with token j at
    pool[rec[j, 0]:rec[j, 0] + rec[j, 1]] and its df in rec[j, 3]; out uint32 must hold
    2 * chars + 22 * (stop - start). Returns the number of code points written.
    """
    n = 0
    digits = np.empty(20, dtype=np.uint32)
    for j in range(start, stop):
        a = rec[j, 0]
        for k in range(a, a + rec[j, 1]):
            c = pool[k]
            if c == 0x5C or c == 0x09 or c == 0x0A or c == 0x0D:
                out[n] = 0x5C
                out[n + 1] = 0x5C if c == 0x5C else (0x74 if c == 0x09 else (0x6E if c == 0x0A else 0x72))
                n += 2
            else:
                out[n] = c
                n += 1
        if with_df:
            out[n] = 0x09
            n += 1
            v = rec[j, 3]
            nd = 0
            while True:
                digits[nd] = 0x30 + v % 10
                nd += 1
                v //= 10
                if v == 0:
                    break
            for k in range(nd - 1, -1, -1):
                out[n] = digits[k]
                n += 1
        out[n] = 0x0A
        n += 1
    return n


@njit(cache=True, nogil=True)
def parse_lines(cps, with_df, pool, rec):
    """Inverse of :func:`write_lines`: fills pool and rec[:, 0], rec[:, 1] (and rec[:, 3]).

    Each token goes into pool as its length followed by its code points (the layout of
    :mod:`.vocabulary`); rec[j, 0] is where its code points start.
    cps uint32 (C,); pool uint32 (>= C + max_lines,); rec int64 (max_lines, 4).
    Returns (n_tokens, 0) or (line_index, error) with errors as in PARSE_ERRORS.
    """
    n = 0
    p = 0
    i = 0
    while i < cps.size:
        if n >= rec.shape[0]:
            return n, 4
        p += 1  # the length word
        rec[n, 0] = p
        while i < cps.size:
            c = cps[i]
            if c == 0x0A or (with_df and c == 0x09):
                break
            if c == 0x5C:
                if i + 1 >= cps.size:
                    return n, 1
                e = cps[i + 1]
                if e == 0x5C:
                    c = 0x5C
                elif e == 0x74:
                    c = 0x09
                elif e == 0x6E:
                    c = 0x0A
                elif e == 0x72:
                    c = 0x0D
                else:
                    return n, 1
                i += 1
            pool[p] = c
            p += 1
            i += 1
        if i >= cps.size:
            return n, 3
        if with_df:
            if cps[i] != 0x09:
                return n, 2
            i += 1
            v = np.int64(0)
            nd = 0
            while i < cps.size and cps[i] != 0x0A:
                c = cps[i]
                if c < 0x30 or c > 0x39 or nd >= 18:
                    return n, 2
                v = v * 10 + np.int64(c - 0x30)
                nd += 1
                i += 1
            if nd == 0:
                return n, 2
            if i >= cps.size:
                return n, 3
            rec[n, 3] = v
        rec[n, 1] = p - rec[n, 0]
        pool[rec[n, 0] - 1] = rec[n, 1]
        i += 1  # the newline
        n += 1
    return n, 0
