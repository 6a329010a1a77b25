"""``prefetch(a, i)``: a hint, from compiled code, that ``a[i]`` will be read soon.

A coordinate-descent epoch visits the rows in a fresh random order, so each row's data is a
cache miss the processor cannot predict; the order is known a few rows ahead, and asking for
those rows' memory early hides most of the wait. The hint is LLVM's ``llvm.prefetch`` (read,
high locality, data cache): it changes no value and cannot fault, so an address one past an
array's end (an empty last row) is harmless.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, index):
    """Compiled code only: ``prefetch(a, i)`` for a 1-D array ``a`` and an integer ``i``."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_ptr],
            fnty=ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]))
        # read (0), high temporal locality (3), data cache (1)
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), ir.Constant(i32, 0),
                          ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, index), codegen
