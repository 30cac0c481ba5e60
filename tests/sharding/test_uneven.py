"""Uneven shardings: a dim its shard count does not divide. GSPMD pads it; Shardy keeps only
the major axes that divide it (sharding/uneven.py), so the faithful conversion compiles to
another program. It is reported, located, as a warning (an error with strict).

The rule itself is proven by compiling: for each case, the sharding jaxlib's Shardy
partitioner gives the parameter is the one `shardy_kept` predicts.
"""

from __future__ import annotations

import warnings

import pytest

from shardy_convert import ShardyConvertError, ShardyConvertWarning, convert
from shardy_convert.commands.check import compile_module
from shardy_convert.errors import NoShardyFormError
from shardy_convert.formats import dump
from shardy_convert.sharding.sdy import AxisRef
from shardy_convert.sharding.uneven import shardy_kept
from tests.helpers import run


def module(shape, sharding: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    return (
        f'func.func @main(%arg0: {t} {{mhlo.sharding = "{sharding}"}}) -> {t} {{\n'
        f"  %0 = stablehlo.add %arg0, %arg0 : {t}\n"
        f"  return %0 : {t}\n}}\n"
    )


A = AxisRef
# (dim size, axes of the dim, mesh axis sizes) -> the axes Shardy keeps
RULE = {
    "size_1_of_8": (1, (A("x"),), {"x": 8}, ()),
    "size_12_of_8": (12, (A("x"),), {"x": 8}, (A("x", 1, 4),)),
    "size_6_of_2x4": (6, (A("d"), A("m")), {"d": 2, "m": 4}, (A("d"),)),
    "size_4_of_2x4": (4, (A("d"), A("m")), {"d": 2, "m": 4}, (A("d"), A("m", 1, 2))),
    "size_6_of_4x3": (6, (A("a"), A("b")), {"a": 4, "b": 3}, (A("a", 1, 2),)),
    "size_3_of_4x3": (3, (A("a"), A("b")), {"a": 4, "b": 3}, ()),
    "sub_axis": (2, (A("d"), A("m", 1, 2)), {"d": 2, "m": 4}, (A("d"),)),
    "even": (16, (A("d"), A("m")), {"d": 2, "m": 4}, (A("d"), A("m"))),
}


@pytest.mark.parametrize(("size", "axes", "mesh", "kept"), RULE.values(), ids=RULE)
def test_the_axes_shardy_keeps(size, axes, mesh, kept):
    assert shardy_kept(size, axes, mesh) == kept


# (shape, sharding, mesh, devices) -> the parameter sharding Shardy's partitioner compiles
COMPILED = {
    "issue_1x128_on_8": ((1, 128), "{devices=[8,1]<=[8]}", None, 8, "{replicated}"),
    "12_on_8": (
        (12, 16),
        "{devices=[8,1]<=[8]}",
        None,
        8,
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
    ),
    "6_on_data2_model4": (
        (6, 16),
        "{devices=[8,1]<=[8]}",
        "data=2,model=4",
        8,
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
    ),
    "6_on_a4_b3": (
        (6, 16),
        "{devices=[12,1]<=[12]}",
        "a=4,b=3",
        12,
        "{devices=[2,1,6]<=[12] last_tile_dim_replicate}",
    ),
    "3_on_a4_b3": ((3, 16), "{devices=[12,1]<=[12]}", "a=4,b=3", 12, "{replicated}"),
    "second_dim_of_2x4": (
        (4, 2),
        "{devices=[2,4]<=[8]}",
        None,
        8,
        "{devices=[2,2,2]<=[8] last_tile_dim_replicate}",
    ),
}


@pytest.mark.parametrize(
    ("shape", "sharding", "mesh", "n", "compiled"), COMPILED.values(), ids=COMPILED
)
def test_shardy_compiles_what_the_warning_says(shape, sharding, mesh, n, compiled):
    text = module(shape, sharding)
    with pytest.warns(ShardyConvertWarning) as caught:
        converted = convert(text, num_devices=n, mesh=mesh)
    (warning,) = [w.message for w in caught]
    assert warning.location == "1:17: arg 0 of @main"
    assert f'"{sharding}"' in warning.message
    assert "GSPMD pads it" in warning.message
    shardy = compile_module(converted, n, shardy=True)
    assert str(shardy.parameters[0]) == compiled
    gspmd = compile_module(text, n, shardy=False)
    assert str(gspmd.parameters[0]) == sharding  # GSPMD keeps the padded tiling


def test_the_message_says_what_shardy_will_do():
    with pytest.warns(ShardyConvertWarning) as caught:
        convert(module((12, 16), "{devices=[8,1]<=[8]}"), num_devices=8)
    assert str(caught[0].message.message).startswith(
        'dim 0 of size 12 is split 8 ways ({"_axis_0"}): GSPMD pads it, Shardy shards it only '
        '{"_axis_0":(1)4} (4 ways)'
    )
    with pytest.warns(ShardyConvertWarning, match="not at all"):
        convert(module((1, 128), "{devices=[8,1]<=[8]}"), num_devices=8)


def test_even_shardings_convert_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        convert(module((16, 16), "{devices=[8,1]<=[8]}"), num_devices=8)


def test_strict_makes_it_a_located_error():
    with pytest.raises(NoShardyFormError) as info:
        convert(module((1, 128), "{devices=[8,1]<=[8]}"), num_devices=8, strict=True)
    assert info.value.location == "1:17: arg 0 of @main"
    assert isinstance(info.value, ShardyConvertError)


def test_cli_prints_the_warning_located_and_converts(tmp_path):
    path = tmp_path / "uneven.mlir"
    path.write_text(module((1, 128), "{devices=[8,1]<=[8]}"))
    out = tmp_path / "out.mlir"
    result = run("convert", path, "-o", out)
    assert result.exit_code == 0, result.output
    assert f"{path}:1:17: arg 0 of @main: warning: dim 0 of size 1 is split 8 ways" in result.stderr
    assert out.exists()
    strict = run("convert", path, "-o", tmp_path / "strict.mlir", "--strict")
    assert strict.exit_code == 1
    assert f"{path}:1:17: arg 0 of @main: error: dim 0 of size 1" in strict.stderr
    assert not (tmp_path / "strict.mlir").exists()


def test_dump_graph_warnings_name_their_graph(tmp_path):
    graph = module((1, 128), "{devices=[8,1]<=[8]}")
    text = f"## BEGIN_GRAPH\n{graph}\nGraph Hash: 1\n\n## END_GRAPH\n"
    path = tmp_path / "uneven.dump"
    path.write_text(text)
    assert dump.is_dump(text)
    result = run("convert", path, "-o", tmp_path / "out.dump")
    assert result.exit_code == 0, result.output
    assert f"{path}:graph 0:2:17: arg 0 of @main: warning: dim 0 of size 1" in result.stderr
