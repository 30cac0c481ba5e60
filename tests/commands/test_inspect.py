"""`shardy-convert inspect` through click's runner on the real test data: the table, the JSON
schema, the audit findings, `--show` grids checked against the parsed device grid, errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from shardy_convert import convert
from shardy_convert.commands.inspect import SCHEMA
from shardy_convert.formats import dump
from shardy_convert.sharding import parse
from tests.conftest import TESTDATA
from tests.helpers import run

TORCH = TESTDATA / "torch_xla"
MATMUL_DUMP = TORCH / "matmul_2x4.dump"
MATMUL_MESHES = TORCH / "matmul_2x4.meshes.json"  # found beside the dump by inspect
CUSTOM_DUMP = TORCH / "custom_device_ids_manual.dump"
RETRACE_DUMP = TORCH / "linear_retrace.dump"
JAX_MESH3D = TESTDATA / "jax" / "mesh3d.gspmd.mlir"

HAND_MADE = """\
module @hand {
  func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}, %arg2: tensor<1024x1024xbf16> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg3: tensor<8xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> (tensor<4x4xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg1) {backend_config = "", mhlo.sharding = "{devices=[2,2]<=[2,2]T(1,0)}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
"""  # noqa: E501


def inspect_json(*args) -> dict:
    result = run("inspect", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == SCHEMA
    return data


def by_name(graph: dict) -> dict[str, dict]:
    return {v["name"]: v for v in graph["values"]}


def codes(data: dict, **match) -> list[tuple[str, str | None, str | None]]:
    """(code, value, location) of the findings whose fields equal `match`."""
    return [
        (f["code"], f["value"], f["location"])
        for f in data["findings"]
        if all(f[k] == v for k, v in match.items())
    ]


# --- table ---------------------------------------------------------------------------------


def test_table_shows_every_form_of_each_value_and_the_mesh_once():
    result = run("inspect", MATMUL_DUMP)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"== {MATMUL_DUMP}:graph 0: GSPMD, 8 devices (from shardings)"
    assert result.stdout.count("mesh @mesh = ") == 1
    # the program's own mesh, recorded beside the dump (matmul_2x4.meshes.json)
    assert "   mesh @mesh = <[\"x\"=2, \"y\"=4]>  (the program's Mesh((2, 4), ('x', 'y')))" in lines
    arg0 = next(k for k, line in enumerate(lines) if line.lstrip().startswith("%arg0"))
    assert lines[arg0].split() == [
        "%arg0", "13:19", "8x8xf32",
        "{devices=[1,4,2]0,4,1,5,2,6,3,7", "last_tile_dim_replicate}",
        "<@mesh,", "[{},", '{"y"}]>',
        "8x2", "per", "device,", "2", "replicas",
    ]  # fmt: skip
    # The V2 form sits on the next line, in the SHARDING column.
    assert lines[arg0 + 1].strip() == "v2 {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert lines[arg0 + 1].index("v2") == lines[arg0].index("{devices")
    sharding = next(line for line in lines if "%1 = @Sharding" in line)
    assert sharding.split()[3:5] == ["16:10", "8x8xf32"]
    assert '<@mesh, [{"y"}, {"x"}]>  2x4 per device' in sharding
    assert lines[-1] == "1 graph, 5 sharded values; findings: 0 errors, 5 warnings, 0 infos"


def test_locations_point_at_the_value_in_the_dump():
    data = inspect_json(MATMUL_DUMP)
    text = MATMUL_DUMP.read_text().splitlines()
    for value in data["graphs"][0]["values"]:
        line, col = map(int, value["location"].split(":"))
        at = text[line - 1][col - 1 :]
        expected = value["name"] if value["kind"] == "arg" else "stablehlo.custom_call @Sharding"
        assert at.startswith(expected), (value["name"], at[:40])


# --- JSON ----------------------------------------------------------------------------------


def test_json_forms_agree_with_the_converter():
    data = inspect_json(MATMUL_DUMP)
    (graph,) = data["graphs"]
    assert (graph["file"], graph["graph"], graph["form"]) == (str(MATMUL_DUMP), 0, "gspmd")
    assert (graph["num_devices"], graph["device_count_from"]) == (8, "shardings")
    assert graph["meshes"] == [{"name": "mesh", "mesh": '<["x"=2, "y"=4]>'}]
    values = by_name(graph)
    assert list(values) == ["%arg0", "%arg1", "%arg2", "%arg3", "%1"]
    converted = convert(dump.graphs(MATMUL_DUMP.read_text())[0].text, meshes=MATMUL_MESHES)
    converted_args = re.findall(r"sdy\.sharding = #sdy\.sharding(<@mesh, \[.*?\]>)", converted)
    assert [values[f"%arg{k}"]["sdy"] for k in range(4)] == converted_args
    assert f"sdy.sharding_constraint %0 {values['%1']['sdy']}" in converted
    for value in values.values():
        assert parse(value["v2"]) == parse(value["sharding"])
        assert "<=" in value["v2"]
    arg3 = values["%arg3"]
    assert (arg3["type"], arg3["shape"], arg3["dtype"]) == ("tensor<8x16xf32>", [8, 16], "f32")
    assert arg3["shard"] == {
        "shape": [4, 4],
        "tiles": 8,
        "devices_per_shard": 1,
        "uneven": False,
        "text": "4x4 per device",
    }
    assert values["%arg1"]["shard"]["devices_per_shard"] == 4
    assert values["%1"]["op"] == "@Sharding"
    assert data["errors"] == []


def test_custom_device_order_is_a_finding_and_kept_in_the_mesh():
    data = inspect_json(CUSTOM_DUMP)
    (graph,) = data["graphs"]
    assert graph["meshes"][0]["mesh"] == (
        '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>'
    )
    values = by_name(graph)
    assert values["%arg3"]["v2"] is None
    assert values["%arg3"]["sdy"] == '<@mesh, [{"data"}, {"model"}]>'
    assert values["%0"]["sdy"] == 'manual_axes={"data", "model"}'
    custom = codes(data, code="custom-device-order")
    assert [(v, loc) for _, v, loc in custom] == [
        ("%arg0", "12:19"),
        ("%arg3", "12:227"),
        ("%6", "27:10"),
        ("%10", "31:11"),
        ("%17", "38:11"),
        ("%20", "41:11"),
    ]
    finding = next(f for f in data["findings"] if f["code"] == "custom-device-order")
    assert finding["severity"] == "warning"
    assert "CONVERT_SHLO_TO_SHARDY" in finding["message"]
    assert "device_ids=[3,6,0,5,1,7,2,4]" in finding["message"]
    table = run("inspect", CUSTOM_DUMP).stdout
    assert "v2: none, no iota form (custom device order)" in table


def test_every_graph_of_a_dump_is_inspected_at_its_own_lines():
    text = RETRACE_DUMP.read_text()
    data = inspect_json(RETRACE_DUMP)
    graphs = data["graphs"]
    assert [g["graph"] for g in graphs] == list(range(text.count(dump.BEGIN)))
    assert {g["num_devices"] for g in graphs} == {2}
    lines = text.splitlines()
    for graph in graphs:
        for value in graph["values"]:
            if value["kind"] == "arg":
                line, col = map(int, value["location"].split(":"))
                assert lines[line - 1][col - 1 :].startswith(value["name"] + ": tensor<")
    table = run("inspect", RETRACE_DUMP).stdout
    assert table.count(f"== {RETRACE_DUMP}:graph ") == len(graphs)
    only = inspect_json(RETRACE_DUMP, "--graph", "5")
    assert [g["graph"] for g in only["graphs"]] == [5]
    assert {f["graph"] for f in only["findings"]} <= {5, None}


def test_graphs_of_one_dump_that_disagree_on_the_device_count(tmp_path):
    mixed = tmp_path / "mixed.dump"
    mixed.write_text(MATMUL_DUMP.read_text() + (TORCH / "matmul_2x2.dump").read_text())
    data = inspect_json(mixed)
    assert [g["num_devices"] for g in data["graphs"]] == [8, 4]
    (finding,) = [f for f in data["findings"] if f["code"] == "device-count-mismatch"]
    assert finding["severity"] == "error"
    assert (finding["file"], finding["graph"]) == (str(mixed), None)
    assert "device count (8 in graph 0; 4 in graph 1)" in finding["message"]


def test_jax_module_takes_the_count_from_num_partitions():
    data = inspect_json(JAX_MESH3D)
    (graph,) = data["graphs"]
    assert (graph["graph"], graph["num_devices"]) == (None, 8)
    assert graph["device_count_from"] == "mhlo.num_partitions"
    values = by_name(graph)
    assert list(values) == ["%arg0", "%arg1", "%arg2", "result 0", "result 1", "%1"]
    for value in values.values():
        assert value["v2"] == value["sharding"]  # JAX already writes V2
    converted = convert(JAX_MESH3D.read_text())
    assert f"sdy.sharding_constraint %0 {values['%1']['sdy']}" in converted
    assert values["result 1"]["shard"]["text"] == "4 per device, 4 replicas"
    assert values["result 0"]["location"] == "2:3"


def test_shardy_module_shows_the_gspmd_equivalent(tmp_path):
    original = by_name(inspect_json(MATMUL_DUMP)["graphs"][0])
    shardy = tmp_path / "matmul.shardy.mlir"
    shardy.write_text(convert(dump.graphs(MATMUL_DUMP.read_text())[0].text, meshes=MATMUL_MESHES))
    data = inspect_json(shardy)
    (graph,) = data["graphs"]
    assert (graph["form"], graph["num_devices"], graph["device_count_from"]) == (
        "shardy",
        8,
        "sdy.mesh",
    )
    values = by_name(graph)
    assert set(values) == set(original)
    assert values["%1"]["op"] == "sdy.sharding_constraint"
    for name, value in values.items():
        assert value["sharding"] == original[name]["sdy"]
        assert parse(value["gspmd"]) == parse(original[name]["sharding"])
        assert value["shard"] == original[name]["shard"]
    table = run("inspect", shardy).stdout
    assert "SHARDING (SDY)" in table
    assert "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}" in table


def test_shardy_module_with_a_device_order_exports_the_same_lists(tmp_path):
    original = by_name(inspect_json(CUSTOM_DUMP)["graphs"][0])
    shardy = tmp_path / "custom.mlir"
    shardy.write_text(convert(dump.graphs(CUSTOM_DUMP.read_text())[0].text))
    values = by_name(inspect_json(shardy)["graphs"][0])
    assert parse(values["%arg3"]["gspmd"]) == parse(original["%arg3"]["sharding"])
    assert values["%arg3"]["v2"] is None


# --- findings ------------------------------------------------------------------------------


def test_hand_made_module_findings(tmp_path):
    path = tmp_path / "hand.mlir"
    path.write_text(HAND_MADE)
    data = inspect_json(path)
    assert codes(data, severity="warning") == [
        ("unannotated-arg", "%arg0", "2:19"),
        ("small-sharded", "%arg1", "2:42"),
        ("small-sharded", "%0", "3:10"),
    ]
    assert codes(data, severity="error") == [("rank-mismatch", "%arg3", "2:179")]
    small = next(f for f in data["findings"] if f["code"] == "small-sharded")
    assert small["message"].startswith("16 elements in 4 tiles of 16 bytes")
    assert small["file"] == str(path)
    values = by_name(data["graphs"][0])
    assert values["%arg3"]["sdy"] is None
    assert values["%arg3"]["shard"] is None
    assert values["%arg2"]["shard"]["shape"] == [256, 1024]  # 512 KiB shards: not small
    table = run("inspect", path).stdout
    assert re.search(
        r"warning +2:19 +%arg0 +unannotated-arg +tensor<16xf32> has no sharding", table
    )


def test_unannotated_arg_finding_says_what_convert_does_with_it(tmp_path):
    """GSPMD input: convert closes an unannotated @main argument replicated, as torch_xla
    compiles it (the finding once said Shardy would leave it to propagation); Shardy input:
    it is open, left to propagation."""
    text = (
        "func.func @main(%arg0: tensor<16xf32>, %arg1: tensor<8xf32> "
        '{mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<16xf32> {\n'
        "  return %arg0 : tensor<16xf32>\n}\n"
    )
    gspmd = tmp_path / "gspmd.mlir"
    gspmd.write_text(text)
    message = _finding(inspect_json(gspmd), "unannotated-arg")["message"]
    assert "convert closes it replicated" in message
    assert "--propagate-to-parameters" in message
    closed = " {sdy.sharding = #sdy.sharding<@mesh, [{}]>}"
    converted = convert(text)
    assert f"%arg0: tensor<16xf32>{closed}" in converted
    shardy = tmp_path / "shardy.mlir"
    shardy.write_text(converted.replace(closed, "", 1))
    message = _finding(inspect_json(shardy), "unannotated-arg")["message"]
    assert "left open to Shardy's propagation" in message


def _finding(data: dict, code: str) -> dict:
    return next(f for f in data["findings"] if f["code"] == code)


def test_an_order_xla_aborts_on_is_a_finding_and_still_gets_a_mesh(tmp_path):
    path = tmp_path / "transposed.mlir"
    path.write_text(
        "module {\n  func.func @main(%arg0: tensor<64x96xf32> "
        '{mhlo.sharding = "{devices=[2,3]<=[2,3]T(1,0)}"}) -> tensor<64x96xf32> {\n'
        "    return %arg0 : tensor<64x96xf32>\n  }\n}\n"
    )
    data = inspect_json(path)
    assert codes(data) == [("no-common-factorization", "%arg0", "2:19")]
    (graph,) = data["graphs"]
    mesh = '<["_axis_0"=2, "_axis_1"=3], device_ids=[0, 3, 1, 4, 2, 5]>'
    assert graph["meshes"][0]["mesh"] == mesh
    assert graph["values"][0]["sdy"] == '<@mesh, [{"_axis_0"}, {"_axis_1"}]>'
    assert data["findings"][0]["message"].endswith(f"places it on mesh {mesh}")
    assert graph["values"][0]["shard"]["text"] == "32x32 per device"


def test_all_replicated_graph_has_no_device_count(tmp_path):
    path = tmp_path / "replicated.mlir"
    path.write_text(
        'module {\n  func.func @main(%arg0: tensor<16xf32> {mhlo.sharding = "{replicated}"})'
        " -> tensor<16xf32> {\n    return %arg0 : tensor<16xf32>\n  }\n}\n"
    )
    data = inspect_json(path)
    assert data["graphs"][0]["num_devices"] is None
    assert codes(data) == [("no-device-count", None, None)]


def test_manual_value_returned_from_main():
    data = inspect_json(TORCH / "manual_escape.dump")
    assert codes(data, severity="error") == [("manual-at-boundary", "result 0", "24:5")]


# --- --show --------------------------------------------------------------------------------


def grid_cells(text: str, bar: str = "│") -> list[list[list[int]]]:
    """The device ids in each cell of a drawn grid, row by row."""
    rows = []
    for line in text.splitlines():
        if line.count(bar) < 2:
            continue
        cells = line.split(bar)[1:-1]
        rows.append([_expand(cell.strip()) for cell in cells])
    return rows


def _expand(cell: str) -> list[int]:
    ids = []
    for part in cell.split(","):
        lo, _, hi = part.partition("-")
        ids.extend(range(int(lo), int(hi or lo) + 1))
    return ids


@pytest.mark.parametrize(
    ("path", "name", "graph", "bar"),
    [
        (MATMUL_DUMP, "%arg0", None, "│"),  # partial replication: groups {0,4}, {1,5}, ...
        (MATMUL_DUMP, "arg2", None, "│"),
        (CUSTOM_DUMP, "%arg3", None, "|"),  # custom device order, plain ASCII
        (CUSTOM_DUMP, "%20", None, "│"),
        (RETRACE_DUMP, "arg1", "2", "│"),
    ],
)
def test_show_draws_the_device_grid(path, name, graph, bar):
    args = [path, "--show", name] + (["--graph", graph] if graph else [])
    args += ["--ascii"] if bar == "|" else []
    result = run("inspect", *args)
    assert result.exit_code == 0, result.output
    info = inspect_json(*([path] + (["--graph", graph] if graph else [])))
    value = by_name(info["graphs"][0])["%" + name.lstrip("%")]
    sharding = parse(value["sharding"])
    rows, cols = sharding.data_dims
    expected = np.sort(sharding.tiles.array().reshape(rows, cols, -1), axis=-1).tolist()
    assert grid_cells(result.stdout, bar) == expected
    # Column labels are dim-1 index ranges of the tensor, row labels dim-0 ranges.
    width = value["shape"][1] // cols
    labels = [f"{k * width}:{(k + 1) * width}" for k in range(cols)]
    assert result.stdout.split("\n\n")[1].splitlines()[0].split() == labels
    assert f"  sharding {value['sharding']}" in result.stdout


def test_show_replicated_and_rank_3_values():
    replicated = run("inspect", CUSTOM_DUMP, "--show", "arg1").stdout
    assert grid_cells(replicated) == [[list(range(8))]]
    assert "replicated: every device holds the whole scalar" in replicated
    rank3 = run("inspect", TORCH / "mesh3d_partial.mlir", "--show", "arg0").stdout
    assert "  tile (0, 0, 0)    [0:2, 0:8, 0:8]  devices 0,1,4,5" in rank3
    assert "  tile (1, 0, 0)    [2:4, 0:8, 0:8]  devices 2,3,6,7" in rank3


def test_show_has_no_json_form():
    result = run("inspect", MATMUL_DUMP, "--show", "%arg0", "--format", "json")
    assert result.exit_code == 2, result.output
    assert "--show draws a grid: it has no JSON form" in result.stderr
    assert result.stdout == ""


def test_show_names_that_are_ambiguous_or_unknown_are_usage_errors():
    ambiguous = run("inspect", RETRACE_DUMP, "--show", "arg3")
    assert ambiguous.exit_code == 2
    assert "pick one with --graph N" in ambiguous.output
    unknown = run("inspect", MATMUL_DUMP, "--show", "%arg9")
    assert unknown.exit_code == 2
    assert 'no sharded value "%arg9"; values: %arg0, %arg1, %arg2, %arg3, %1' in unknown.output


# --- errors --------------------------------------------------------------------------------


def test_bad_sharding_string_is_a_located_error(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        'module {\n  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]0,1"})'
        " -> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    bad_dump = tmp_path / "bad.dump"
    bad_dump.write_text(MATMUL_DUMP.read_text().replace("{devices=[2,4]0,1,2,3,4,5,6,7}", "{x}"))
    result = run("inspect", bad, bad_dump, TORCH / "matmul_2x2.mlir")
    assert result.exit_code == 1
    assert f"{bad}:2:19: arg 0 of @main: error: expected '}}' to end the sharding" in result.stderr
    assert f"{bad_dump}:graph 0:13:297: arg 3 of @main: error:" in result.stderr
    assert "matmul_2x2.mlir: GSPMD, 4 devices" in result.stdout  # the good input still shown


def test_unparsable_module_and_json_errors(tmp_path):
    bad = tmp_path / "broken.mlir"
    bad.write_text("module {\n  func.func @main() {\n    return %x : tensor<f32>\n  }\n}\n")
    result = run("inspect", bad, "--format", "json")
    assert result.exit_code == 1
    assert f"{bad}:3:12: error: cannot parse the module" in result.stderr
    (error,) = json.loads(result.stdout)["errors"]
    assert (error["file"], error["location"]) == (str(bad), "3:12")


def test_stdin_and_usage_errors():
    result = run("inspect", "-", input=(TORCH / "matmul_2x2.mlir").read_text())
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("== -: GSPMD, 4 devices")
    assert run("inspect", MATMUL_DUMP, "--format", "yaml").exit_code == 2
    assert run("inspect").exit_code == 2


def test_bad_num_partitions_is_a_located_error_not_a_traceback(tmp_path):
    bad = tmp_path / "np.mlir"
    bad.write_text(
        'module attributes {mhlo.num_partitions = "eight"} {\n'
        '  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]0,1}"}) '
        "-> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    result = run("inspect", bad)
    assert result.exit_code == 1
    assert f"{bad}:1:1: module attribute mhlo.num_partitions: error: " in result.stderr
    assert "must be a positive integer" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("path", "count"),
    [(MATMUL_DUMP, "1 graph"), (TORCH / "tp_mlp_train.dump", "2 graphs (0 to 1)")],
)
def test_graph_the_input_does_not_have_is_a_usage_error_naming_the_count(path, count):
    graphs = dump.graphs(path.read_text())
    result = run("inspect", path, "--graph", len(graphs) + 98)
    assert result.exit_code == 2
    assert f"there is no graph {len(graphs) + 98}: the input has {count}" in result.stderr
    assert run("inspect", path, "--graph", len(graphs) - 1).exit_code == 0


def test_portable_artifact_is_read_as_shardy_with_its_manual_computations(tmp_path):
    original = TORCH / "custom_device_ids_manual.mlir"
    portable = tmp_path / "m.portable"
    portable.write_bytes(convert(original.read_text(), emit="portable"))
    data = inspect_json(portable)
    (graph,) = data["graphs"]
    assert graph["form"] == "shardy"
    assert graph["num_devices"] == 8
    ops = [v["op"] for v in graph["values"] if v["kind"] == "op"]
    assert "sdy.manual_computation" in ops
    gspmd = {v["name"]: v["gspmd"] for v in inspect_json(original)["graphs"][0]["values"]}
    shardy = by_name(graph)
    for name in ("%arg0", "%arg3"):
        assert parse(shardy[name]["gspmd"]) == parse(gspmd[name])
