"""single-device-program returns the device of a program placed whole on one device as a
value; only a file written records it (formats/device_order.py)."""

from __future__ import annotations

import warnings

from shardy_convert.converter import run_passes
from shardy_convert.formats import device_order
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.passes import pipeline
from shardy_convert.passes.single_device_program import OnOneDevice, SingleDeviceProgramPass

ON_DEVICE_3 = """
module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>})
      -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"""


def test_the_pass_returns_the_device_and_writes_nothing_on_the_module():
    with new_context() as ctx:
        module = parse_module(ON_DEVICE_3, ctx)
        found = pipeline.run(module, (SingleDeviceProgramPass(always=True),))
        assert found.of(OnOneDevice) == OnOneDevice(3)
        assert device_order.read(module.operation) is None
        assert device_order.ATTRIBUTE not in str(module)
        assert "@empty_mesh = <[]>" in str(module)


def test_a_file_written_records_the_device_and_reads_back():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = run_passes(ON_DEVICE_3, ["single-device-program{always=true}"])
    assert "shardy_convert.device_order = array<i64: 3>" in text
    with new_context() as ctx:
        module = parse_module(text, ctx).operation
        assert device_order.read(module) == (3,)
        assert device_order.take(module) == (3,)
        assert device_order.read(module) is None


def test_a_program_on_several_devices_gets_no_record():
    sharded = ON_DEVICE_3.replace("<[], device_ids=[3]>", '<["x"=4]>')
    sharded = sharded.replace("@maximal_mesh_3, []>", '@maximal_mesh_3, [{"x"}]>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing found, nothing said
        out = run_passes(sharded, ["single-device-program{always=true}"])
    assert device_order.ATTRIBUTE not in out
    assert '<["x"=4]>' in out
