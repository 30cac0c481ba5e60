"""ir/parse.py's `new_context`: builtin, func, StableHLO and Shardy loaded when it is made, and
every other dialect jaxlib registers loaded where it is first met (by the parser, the bytecode
reader, the pass manager), not up front."""

from __future__ import annotations

from shardy_convert.ir import parse
from shardy_convert.ir.bindings import ir, passmanager, sdy

# An op of a dialect jaxlib registers and new_context does not load (LLVM: the most costly
# to load, ~1.3 ms of a first context).
ARITH_AND_LLVM = """
func.func @main(%arg0: i32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32
  %1 = llvm.mlir.undef : i32
  return %0 : i32
}
"""


def test_the_dialects_the_package_builds_ops_of_are_loaded_when_it_is_made():
    ctx = parse.new_context()
    for op in ("func.func", "func.return", "stablehlo.custom_call", "sdy.mesh", "sdy.return"):
        assert ctx.is_registered_operation(op), op
    assert not ctx.is_registered_operation("llvm.return")  # registered, not loaded yet


def test_a_registered_dialect_is_loaded_where_the_parser_meets_it():
    ctx = parse.new_context()
    module = parse.parse_module(ARITH_AND_LLVM, ctx)
    assert ctx.is_registered_operation("llvm.return")
    assert "llvm.mlir.undef" in str(module)


def test_ops_are_built_in_a_fresh_context_without_parsing_anything_first():
    with parse.new_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            ir.Operation.create(
                "sdy.mesh",
                attributes={  # built, not parsed: parsing would load the dialect itself
                    "sym_name": ir.StringAttr.get("mesh"),
                    "mesh": sdy.MeshAttr.get([sdy.MeshAxisAttr.get("x", 2)], []),
                },
            )
        assert module.operation.verify()
        assert 'sdy.mesh @mesh = <["x"=2]>' in str(module)


def test_the_pass_manager_loads_what_its_passes_need():
    ctx = parse.new_context()
    module = parse.parse_module(
        'sdy.mesh @mesh = <["x"=2]>\n'
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  return %arg0 : tensor<8xf32>\n}\n",
        ctx,
    )
    with ctx:
        passmanager.PassManager.parse("builtin.module(sdy-import-pipeline)").run(module.operation)
    assert module.operation.verify()
