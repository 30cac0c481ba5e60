"""The floor's MLIR context: made by jaxlib alone, as JAX's `make_ir_context` makes one.

Every figure "against the floor" (run.py's module table, bench_big_dump.py, profile_convert.py)
times parsing, verifying and printing a module in a new context made here: the dialects jaxlib
registers, all loaded, StableHLO's and Shardy's registered. It is not the package's
`new_context`: that one is code under test (since e362801 it loads dialects on first use,
2.5-3.5 ms less per context), and the floor must be the same code in every tree that
`--base-ref` compares, and the same as in every earlier dated figure of docs/performance.md.
"""

from __future__ import annotations


def floor_context():
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext, _sdy, _stablehlo

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    _stablehlo.register_dialect(ctx)
    _sdy.register_dialect(ctx)
    return ctx
