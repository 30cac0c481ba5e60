"""pad-uneven, proven by compiling on OpenXLA's CPU PJRT plugin (8 devices): the converted,
padded program takes and gives exactly the per-device buffers of the GSPMD original (same
compiled shardings, same block per device) and computes the same values; where no padded form
exists, the error names the value, its shape, the dim and what to change."""

from __future__ import annotations

import numpy as np
import pytest

from shardy_convert import ShardyConvertError
from shardy_convert.passes import pipeline
from shardy_convert.sharding import parse

from .. import pjrt_plugin

N = 8
V1 = "{devices=[8,1]0,1,2,3,4,5,6,7}"

# (name, module): torch_xla-shaped programs with uneven tilings. Each argument and result is
# checked per device against GSPMD; `rows` are the logical shapes of the arguments.
PROGRAMS = {
    # FSDPv2's [20, 10] weight (3 rows a device), a gradient-like update, returned sharded.
    "argument_and_result": (
        f'func.func @main(%arg0: tensor<20x10xf32> {{mhlo.sharding = "{V1}"}}, '
        '%arg1: tensor<20x10xf32> {mhlo.sharding = "{replicated}"}) '
        f'-> (tensor<20x10xf32> {{mhlo.sharding = "{V1}"}}) {{\n'
        "  %0 = stablehlo.multiply %arg0, %arg1 : tensor<20x10xf32>\n"
        "  %1 = stablehlo.subtract %arg0, %0 : tensor<20x10xf32>\n"
        "  return %1 : tensor<20x10xf32>\n}\n"
    ),
    # the [1, 64] weight of the issue: device 0 holds the row, 1-7 padding; a @Sharding on a
    # computed value, returned unannotated.
    "one_row_constrained": (
        f'func.func @main(%arg0: tensor<1x64xf32> {{mhlo.sharding = "{V1}"}}, '
        '%arg1: tensor<16x64xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) '
        "-> (tensor<1x64xf32>, tensor<16x1xf32>) {\n"
        "  %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [1] : "
        "(tensor<16x64xf32>, tensor<1x64xf32>) -> tensor<16x1xf32>\n"
        "  %1 = stablehlo.sine %arg0 : tensor<1x64xf32>\n"
        f'  %2 = stablehlo.custom_call @Sharding(%1) {{mhlo.sharding = "{V1}"}} : '
        "(tensor<1x64xf32>) -> tensor<1x64xf32>\n"
        "  return %2, %0 : tensor<1x64xf32>, tensor<16x1xf32>\n}\n"
    ),
    # a dim of 3 over a 2x4 mesh's 4-way axis, partly replicated (ceil(3/4) = 1 a device).
    "partially_replicated": (
        "func.func @main(%arg0: tensor<6x3xf32> "
        '{mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7}"}) -> tensor<6x3xf32> {\n'
        "  %0 = stablehlo.exponential %arg0 : tensor<6x3xf32>\n"
        "  return %0 : tensor<6x3xf32>\n}\n"
    ),
}


def _padded_inputs(executable, shapes, rng) -> list[np.ndarray]:
    """Random logical inputs, each padded to GSPMD's padded global shape with NaN (what GSPMD
    holds there is unspecified; NaN makes any read of it show in the values)."""
    inputs = []
    for sharding, shape in zip(executable.parameter_shardings, shapes):
        tiles = (1,) * len(shape)
        if sharding.kind == "tiled":
            tiles = sharding.tiles.shape[: sharding.tiles.ndim - sharding.subgroups]
        out = np.full([-(-s // t) * t for s, t in zip(shape, tiles)], np.nan, np.float32)
        out[tuple(slice(0, s) for s in shape)] = rng.standard_normal(shape)
        inputs.append(out)
    return inputs


def _shapes(text: str, kind: str) -> list[tuple[int, ...]]:
    from shardy_convert.commands.check.signature import main_signature

    signature = main_signature(text)
    values = signature.args if kind == "args" else signature.results
    return [tuple(shape) for shape, _ in values]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_padded_program_takes_and_gives_gspmds_buffers(name):
    gspmd_text = PROGRAMS[name]
    shardy_text = _convert(gspmd_text)
    client = pjrt_plugin.get_client(N)
    gspmd = client.compile(client.portable_artifact(gspmd_text), N, shardy=False)
    shardy = client.compile(client.portable_artifact(shardy_text), N, shardy=True)
    assert _placements(shardy.parameter_shardings) == _placements(gspmd.parameter_shardings)
    logical = _shapes(gspmd_text, "args")
    inputs = _padded_inputs(gspmd, logical, np.random.default_rng(0))
    results = _shapes(gspmd_text, "results")
    padded_out = _shapes(shardy_text, "results")
    # Each program's outputs as its partitions hold them, laid side by side in the padded shape
    got = client.run(shardy, inputs, output_shapes=padded_out)
    want = client.run(gspmd, inputs, output_shapes=padded_out)
    for k, shape in enumerate(results):
        assert _placements(shardy.output_shardings[k : k + 1]) == _placements(
            gspmd.output_shardings[k : k + 1]
        ), k
        region = tuple(slice(0, s) for s in shape)
        np.testing.assert_allclose(got[k][region], want[k][region], rtol=1e-5, atol=1e-6)
        assert not np.isnan(got[k][region]).any()


def _placements(shardings) -> list:
    return [parse(str(s)) for s in shardings]  # semantic: V1 and V2 of one placement agree


def _convert(text: str) -> str:
    """As the plugin converts: the two GSPMD passes, then the conversion, strict (every
    uneven sharding left is an error), an unannotated output replicated as XLA's default
    options compile it (GSPMD and Shardy alike)."""
    from shardy_convert.converter import ConvertRequest, convert_module
    from shardy_convert.formats import module as formats
    from shardy_convert.ir.parse import new_context
    from shardy_convert.passes.import_shardings import ImportShardingsPass
    from shardy_convert.plugin.program import GSPMD_AS_MEANT

    importer = ImportShardingsPass(
        num_devices=N, strict=True, allow_spmd_sharding_propagation_to_output=False
    )
    with new_context() as ctx:
        mod = formats.load(text, ctx)
        pipeline.run(mod, pipeline.build(GSPMD_AS_MEANT))
        convert_module(mod, ConvertRequest(importer))
        return str(mod)


def test_an_ops_own_uneven_sharding_is_refused_naming_the_value():
    text = (
        "func.func @main(%arg0: tensor<20x10xf32>) -> tensor<20x10xf32> {\n"
        f'  %0 = stablehlo.negate %arg0 {{mhlo.sharding = "{V1}"}} : tensor<20x10xf32>\n'
        "  return %0 : tensor<20x10xf32>\n}\n"
    )
    with pytest.raises(ShardyConvertError) as e:
        _convert(text)
    assert str(e.value) == (
        f"2:8: stablehlo.negate: a value of shape [20, 10] sharded '{V1}': dim 0 of size 20 is "
        "split 8 ways, which GSPMD pads and Shardy cannot (the sharding of stablehlo.negate has "
        "no padded form); make dim 0 a multiple of 8 (pad the tensor) or shard it fewer ways"
    )


def test_convert_pads_uneven_shardings_when_asked():
    from shardy_convert import convert

    text = PROGRAMS["argument_and_result"]
    with pytest.raises(ShardyConvertError, match="another program"):
        convert(text, strict=True)
    out = convert(text, strict=True, pad_uneven=True, num_devices=N)
    assert "%arg0: tensor<24x10xf32>" in out
    assert "stablehlo.slice %arg0 [0:20, 0:10]" in out
