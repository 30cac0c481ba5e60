# ruff: noqa: E501  (the MLIR as torch_xla prints it, one op a line)
"""import-sharding-groups, proven by compiling on OpenXLA's CPU PJRT plugin (8 devices):
torch_xla's `xs.shard_as(x, y)` program compiles with Shardy to GSPMD's placement (y split as
x is), and without the groups it would not (y replicated: the group was the only thing that
placed it)."""

from __future__ import annotations

import numpy as np
import pytest

from shardy_convert.converter import ConvertRequest, convert_module
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from shardy_convert.passes import pipeline
from shardy_convert.passes.import_shardings import ImportShardingsPass
from shardy_convert.sharding import parse

from .. import pjrt_plugin

N = 8
# What torch_xla 2.9 lowers `x, y = xs.shard_as(x, y)` to (x marked 8 ways, y not).
SHARD_AS = """
func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{devices=[8]0,1,2,3,4,5,6,7}"}) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = call @main.3(%arg1, %arg0) : (tensor<8xf32>, tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<8xf32>
  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}
func.func private @main.3(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", has_side_effect = true, mhlo.sharding = "{unknown shard_as 0}"} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.custom_call @Sharding(%arg1) {backend_config = "", has_side_effect = true, mhlo.sharding = "{unknown shard_as 0}"} : (tensor<8xf32>) -> tensor<8xf32>
  %2 = stablehlo.tuple %0, %1 : tuple<tensor<8xf32>, tensor<8xf32>>
  return %2 : tuple<tensor<8xf32>, tensor<8xf32>>
}
"""


def _converted(groups: bool = True) -> str:
    pipe = pipeline.conversion(ImportShardingsPass(num_devices=N))
    if not groups:
        pipe = tuple(p for p in pipe if getattr(p, "NAME", p) != "import-sharding-groups")
    with new_context() as ctx:
        mod = formats.load(SHARD_AS, ctx)
        pipeline.run(mod, pipe)
        return str(mod)


@pytest.mark.slow
def test_shard_as_compiles_to_gspmds_placement():
    client = pjrt_plugin.get_client(N)
    shardy_text = _converted()
    assert "sdy.sharding_group" in shardy_text
    gspmd = client.compile(
        client.portable_artifact(SHARD_AS), N, shardy=False, propagate_to_output=True
    )
    shardy = client.compile(
        client.portable_artifact(shardy_text), N, shardy=True, propagate_to_output=True
    )
    want = [parse(str(s)) for s in gspmd.output_shardings]
    assert want == [parse("{devices=[8]<=[8]}")] * 2  # y split as x is
    assert [parse(str(s)) for s in shardy.output_shardings] == want
    x, y = np.arange(8, dtype=np.float32), np.arange(10, 18, dtype=np.float32)
    for got, expected in zip(client.run(shardy, [x, y]), (y, x)):
        np.testing.assert_array_equal(got, expected)
    # the same program without the groups: y comes back replicated, another placement
    other = client.compile(
        client.portable_artifact(_converted(groups=False)), N, shardy=True, propagate_to_output=True
    )
    assert parse(str(other.output_shardings[1])) != want[1]


def test_convert_module_keeps_the_group():
    with new_context() as ctx:
        mod = formats.load(SHARD_AS, ctx)
        convert_module(mod, ConvertRequest(ImportShardingsPass(num_devices=N)))
        assert str(mod).count("sdy.sharding_group") == 2
