"""The in-process portable writer (`round_trip.serialize`, what `formats.save` tries first)
writes byte for byte what jaxlib's writer (`_jax.mlir.serialize_portable_artifact`, the
previous path) writes, on every real graph of the test data as the plugin wrapper converts
it, and leaves to jaxlib's writer what it does not cover."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from shardy_convert.formats import module as formats
from shardy_convert.formats import portable as round_trip
from shardy_convert.ir.legacy_i1 import unpack_i1_hex
from shardy_convert.ir.parse import new_context, print_module
from shardy_convert.plugin import compile_options
from shardy_convert.plugin.program import _to_shardy
from shardy_convert.xla import compat
from tests import pjrt_plugin
from tests.conftest import real_graphs

# What the in-process writer leaves to jaxlib's: manual computations (XLA's shard-map export)
# and while loops (control flow XLA's export may annotate).
JAXLIB_WRITES = {
    "torch_xla/custom_device_ids_manual.dump:0",
    "torch_xla/custom_device_ids_manual.mlir:0",
    "jax/scan_loop.gspmd.mlir:0",
    "jax/shard_map_full.gspmd.mlir:0",
    "jax/shard_map_partial.gspmd.mlir:0",
}

GRAPHS = [  # text only: the HLO proto is binary (test_wrapper converts it)
    pytest.param(graph, e["num_devices"], f"{e['path']}:{k}", id=f"{e['path']}:{k}")
    for e, k, graph in real_graphs(ok=True)
]


def _options(n: int) -> compile_options.CompileOptions:
    return compile_options.CompileOptions(
        num_partitions=n, use_spmd_partitioning=True, device_assignment=tuple(range(n))
    )


def _both_writers(module: ir.Module, target: str) -> tuple[bytes | None, bytes]:
    fast = round_trip.serialize(module, target)
    previous = compat.serialize_portable_artifact(print_module(module, "bytecode"), target)
    return fast, previous


@pytest.mark.parametrize(("graph", "num_devices", "name"), GRAPHS)
def test_the_wrappers_output_is_what_jaxlibs_writer_writes(graph, num_devices, name):
    program = pjrt_plugin.portable_artifact(unpack_i1_hex(graph), "1.13.0")  # as torch_xla
    with new_context() as ctx:
        module = formats.load(program, ctx, trusted=True)
        _to_shardy(module, _options(num_devices))
        before = module.operation.get_asm(enable_debug_info=True)
        fast, previous = _both_writers(module, formats.portable_version(program))
        assert module.operation.get_asm(enable_debug_info=True) == before  # left as it was
        if name in JAXLIB_WRITES:
            assert fast is None
            return
        assert fast == previous
        text = formats.deserialize_portable(fast, ctx).operation.get_asm()
        assert text == formats.deserialize_portable(previous, ctx).operation.get_asm()


def test_graphs_cover_the_test_data():
    names = [p.values[2] for p in GRAPHS]
    assert len(names) >= 70
    assert JAXLIB_WRITES <= set(names)


def test_this_jaxlib_is_detected_and_agrees():
    from jaxlib.version import __version__

    assert round_trip._agrees_with_jaxlib()
    assert round_trip.prepare()
    # jaxlib 0.10.2's writer canonicalizes before the export, 0.7.1's does not
    canonicalizes = {"0.7.1": False, "0.10.2": True}.get(__version__)
    assert round_trip._jaxlib_canonicalizes() in (
        {True, False} if canonicalizes is None else {canonicalizes}
    )


SHARDY = """
module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
    BODY
    return RESULT : tensor<8x16xf32>
  }
}
"""


def _module(body: str = "", result: str = "%0") -> str:
    return SHARDY.replace("BODY", body).replace("RESULT", result)


TWO_MESHES = _module().replace(
    "sdy.mesh @mesh =", 'sdy.mesh @other = <["z"=8]>\n  sdy.mesh @mesh ='
)
MANUAL = _module(
    """%1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {}]>]
        out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x16xf32>) {
      sdy.return %a : tensor<4x16xf32>
    } : (tensor<8x16xf32>) -> tensor<8x16xf32>""",
    "%1",
)
WHILE = _module(
    """%1 = stablehlo.while(%i = %arg0) : tensor<8x16xf32>
      cond {
        %t = stablehlo.constant dense<true> : tensor<i1>
        stablehlo.return %t : tensor<i1>
      } do {
        stablehlo.return %i : tensor<8x16xf32>
      }""",
    "%1",
)
# An op of another dialect that XLA's pipeline legalizes (shape, as chlo and mhlo would be).
SHAPE = _module(
    """%s = shape.const_shape [8, 16] : tensor<2xindex>
    %1 = stablehlo.dynamic_reshape %0, %s
      : (tensor<8x16xf32>, tensor<2xindex>) -> tensor<8x16xf32>""",
    "%1",
)
# An sdy attribute no export reads (the imported form's sharding rule): stablehlo's writer
# refuses it, so jaxlib's writer decides.
RULE = _module(
    "%1 = stablehlo.abs %0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j])"
    " {i=8, j=16}>} : tensor<8x16xf32>",
    "%1",
)


def _registered(op: str) -> bool:
    with new_context() as ctx:
        return ctx.is_registered_operation(op)


LEFT_TO_JAXLIB = [
    pytest.param(TWO_MESHES, id="two meshes"),
    pytest.param(MANUAL, id="manual computation"),
    pytest.param(WHILE, id="while loop"),
    pytest.param(RULE, id="sharding rule"),
    # jaxlib 0.7.1's context has no shape dialect (nor, on any release, chlo or mhlo)
    *([pytest.param(SHAPE, id="shape op")] if _registered("shape.const_shape") else []),
]


@pytest.mark.parametrize("text", LEFT_TO_JAXLIB)
def test_what_it_does_not_export_is_left_to_jaxlibs_writer(text):
    target = stablehlo.get_minimum_version()
    with new_context() as ctx:
        module = ir.Module.parse(text, context=ctx)
        fast, previous = _both_writers(module, target)
        assert fast is None
        assert formats.save(module, "portable", target) == previous


def test_the_constraint_example_is_written_in_process():
    target = stablehlo.get_minimum_version()
    with new_context() as ctx:
        module = ir.Module.parse(_module(), context=ctx)
        fast, previous = _both_writers(module, target)
        assert fast == previous
        assert formats.save(module, "portable", target) == previous


def test_a_target_newer_than_this_jaxlib_writes_is_left_to_jaxlibs_writer():
    with new_context() as ctx:
        module = ir.Module.parse(_module(), context=ctx)
        assert round_trip.serialize(module, "99.0.0") is None


class _CtrlC:
    """Stands for a set the export's walk looks in; a Ctrl-C arrives as it is asked."""

    def __contains__(self, name: str) -> bool:
        raise KeyboardInterrupt


def test_a_ctrl_c_in_the_in_process_writer_is_not_taken_for_its_failure(monkeypatch):
    """Issue 19: a KeyboardInterrupt during the export was swallowed by the writer's fallback
    ("in-process writer failed; using jaxlib's") and the step ran on."""
    from shardy_convert.formats import portable_export

    target = stablehlo.get_minimum_version()
    assert round_trip.prepare()
    monkeypatch.setattr(portable_export, "_UNHANDLED_OPS", _CtrlC())
    with new_context() as ctx:
        module = ir.Module.parse(_module(), context=ctx)
        with pytest.raises(KeyboardInterrupt):
            round_trip.serialize(module, target)
