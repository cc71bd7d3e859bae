"""A software prefetch for numba kernels: start loading an array row into the cache.

A kernel that knows which rows it will read a few iterations ahead (the vocabulary's
table slots of the next tokens' keys, their records) asks for them early, so the cache
misses of many tokens overlap instead of each stalling the loop in turn. A prefetch is
only a hint: it changes no value, reads nothing a kernel could see, and a row out of
bounds is never asked for (callers check the index, as for a load).
"""
from __future__ import annotations

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _prefetch_row(typingctx, arr, row):
    """Prefetch ``arr[row]`` (its first element) for reading into all cache levels
    (LLVM's ``llvm.prefetch``, read, locality 3, data cache)."""
    if not isinstance(arr, types.Array) or not isinstance(row, types.Integer):
        return None
    sig = types.void(arr, row)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        row_index = context.cast(builder, args[1], signature.args[1], types.intp)
        inds = [row_index] + [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer2(context, builder, data=ary.data,
                                        shape=cgutils.unpack_tuple(builder, ary.shape),
                                        strides=cgutils.unpack_tuple(builder, ary.strides),
                                        layout=aryty.layout, inds=inds, wraparound=False, boundscheck=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


def _no_prefetch(arr, row) -> None:
    """The hint without the compiler (``NUMBA_DISABLE_JIT=1``, the kernels' plain runs): nothing."""


# An intrinsic exists only inside compiled code; with the JIT off the kernels run as Python,
# where a prefetch has nothing to hint, so the name is a no-op there.
prefetch_row = _no_prefetch if config.DISABLE_JIT else _prefetch_row
