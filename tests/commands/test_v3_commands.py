"""`inspect`, `v2` and `convert` on named (V3) strings, from the command line: inspect shows
them as given with their V2 and their Shardy form on their own mesh (priorities of the fork's
frontend attribute included); v2 rewrites them to the V2 of the same placement."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shardy_convert.cli.main import main
from shardy_convert.sharding import parse

from ..conftest import TESTDATA

DEVICE_IDS = TESTDATA / "v3" / "device_ids.v3.mlir"
FORK = """\
module @fork attributes {mhlo.num_partitions = 8 : i32} {
  func.func @main(%arg0: tensor<8x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = \
"#sdy.sharding<@mesh, [{\\22mesh_idx_0\\22}p1, {\\22mesh_idx_1\\22}p0]>"}, \
mhlo.sharding = "{mesh['data'=2,'model'=4], [{'data'}, {'model'}]}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}
"""


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def test_inspect_shows_v3_strings_their_v2_and_their_own_mesh():
    result = run("inspect", DEVICE_IDS, "--format", "json")
    assert result.exit_code == 0, result.output
    (graph,) = json.loads(result.output)["graphs"]
    assert graph["meshes"][0]["mesh"] == (
        '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>'
    )
    assert graph["mesh_from"] == "V3 mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4)"
    arg1 = next(v for v in graph["values"] if v["name"] == "%arg1")
    assert arg1["sharding"].startswith("{mesh['data'=2,'model'=4], device_ids=")
    assert arg1["sdy"] == '<@mesh, [{"model"}, {}], replicated={"data"}>'
    constraint = next(v for v in graph["values"] if v["op"] == "@Sharding")
    assert constraint["sdy"] == '<@mesh, [{"model":(1)2}, {"model":(2)2, ?}]>'
    assert parse(constraint["gspmd"]) == parse(constraint["sharding"])


def test_inspect_shows_the_forks_priorities():
    result = run("inspect", "-", input=FORK)
    assert result.exit_code == 0, result.output
    assert '<@mesh, [{"data"}p1, {"model"}p0]>' in result.output


def test_v2_rewrites_v3_to_the_v2_of_the_same_placement():
    result = run("v2", DEVICE_IDS)
    assert result.exit_code == 0, result.output
    module = result.stdout[: result.stdout.rindex("}") + 1]
    assert "mhlo.sharding" in module
    assert "mesh[" not in module
    assert '"{devices=[2,4]3,6,0,5,1,7,2,4}"' in module
    assert "have a device order with no V2 iota form" in result.output  # a warning, counted


def test_convert_keeps_the_forks_priorities_on_the_v3_axes():
    result = run("convert", "-", input=FORK)
    assert result.exit_code == 0, result.output
    assert '#sdy.sharding<@mesh, [{"data"}p1, {"model"}p0]>' in result.output
    assert "xla.sdy.sharding" not in result.output
