"""The plugin path and the partitioner XLA will use: a program handed over for Shardy that XLA
would compile with GSPMD is counted and logged; a program placed whole on one device takes the
form this jaxlib compiles, or is refused (the failure policy) where that form cannot run on the
caller's partitions."""

from __future__ import annotations

import logging
import struct

import numpy as np
import pytest

from shardy_convert.errors import ShardyConvertError
from shardy_convert.ir import compat
from shardy_convert.plugin import wrapper
from shardy_convert.plugin.program import convert_program
from shardy_convert.plugin.settings import Settings

from ..conftest import TESTDATA

MATMUL = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
MAXIMAL = (TESTDATA / "jax" / "maximal_device3.gspmd.mlir").read_text()

# Shardy's round-trip form (a portable artifact's, as JAX hands plugins) with a GSPMD
# `@Sharding` custom call left in: the wrapper passes it through as Shardy, XLA compiles it
# with GSPMD's propagation (openxla/xla#42481's kind of program).
ROUND_TRIP_MIXED = """module @mixed attributes {mhlo.frontend_attributes = {xla.sdy.meshes =
    "{mesh = #sdy.mesh<[\\\\\\"a\\\\\\"=8]>}"}, mhlo.num_partitions = 8 : i32} {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[8,1]<=[8]}"} :
        (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""


def options(n: int) -> bytes:
    """Serialized compile options of `n` partitions, as jaxlib's C++ writes them."""
    from jaxlib import xla_client as xc

    opts = xc.CompileOptions()
    build = opts.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning = True
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return opts.SerializeAsString()


def test_a_program_xla_would_compile_with_gspmd_is_counted_and_logged(caplog):
    session = wrapper.Session()
    with caplog.at_level(logging.WARNING, logger="shardy_convert.wrapper"):
        session.compile(ROUND_TRIP_MIXED.encode(), b"mlir", options(8))
        session.compile(ROUND_TRIP_MIXED.encode(), b"mlir", options(8))  # cached: counted once
    assert session.counters.gspmd_fallbacks == 1
    assert "1 program compiled by GSPMD, not Shardy" in str(session.counters)
    (record,) = [r for r in caplog.records if "GSPMD's propagation" in r.getMessage()]
    message = record.getMessage()
    assert message.startswith("shardy-convert: graph mixed: XLA will compile it with GSPMD's")
    assert 'stablehlo.custom_call @Sharding: mhlo.sharding "{devices=[8,1]<=[8]}"' in message


def test_a_converted_program_never_falls_back():
    session = wrapper.Session()
    session.compile(MATMUL.encode(), b"mlir", options(8))
    assert session.counters.converted == 1
    assert session.counters.gspmd_fallbacks == 0


def test_a_program_on_one_device_of_four():
    """0.11.2 on: one partition on device 3 is what compiles, and the caller runs 4: refused
    (on_error="passthrough" compiles it with GSPMD, which still works there); before: the
    maximal mesh, on the caller's 4 partitions."""
    if not compat.single_device_arguments_refused():
        program, _, _, order = convert_program(MAXIMAL.encode(), "mlir", options(4), emit="text")
        assert b"sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>" in program
        assert order in (b"", struct.pack("<4i", 0, 1, 2, 3))  # the caller's own order
        return
    with pytest.raises(ShardyConvertError, match=r"placed whole on device 3: .* runs 4 partitions"):
        convert_program(MAXIMAL.encode(), "mlir", options(4), emit="text")
    session = wrapper.Session(Settings(on_error="passthrough"))
    answer = session.compile(MAXIMAL.encode(), b"mlir", options(4))
    assert answer == (MAXIMAL.encode(), b"mlir", options(4), b"")
    assert session.counters.passed_through == 1


def test_a_one_partition_program_on_its_device():
    text = MAXIMAL.replace("mhlo.num_partitions = 4", "mhlo.num_partitions = 1").replace(
        "maximal device=3", "maximal device=0"
    )
    program, _, _, order = convert_program(text.encode(), "mlir", options(1), emit="text")
    if compat.single_device_arguments_refused():
        assert b"sdy.mesh @empty_mesh = <[]>" in program
        assert b"shardy_convert.device_order" not in program  # the order went to the options
        assert order == b"\0\0\0\0"
    else:
        assert b"sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>" in program
