"""`convert`, `check` and `inspect` on the meshes a torch_xla program recorded (`--mesh-file`,
or the mesh file beside the dump), on real dumps whose meshes `make testdata` recorded with
`shardy_convert.torch_xla.record_meshes`."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from shardy_convert.ir.sdy_attrs import read_meshes
from tests.conftest import TESTDATA, graphs_of
from tests.helpers import run

TORCH = TESTDATA / "torch_xla"
CUSTOM_IDS = (3, 6, 0, 5, 1, 7, 2, 4)


def meshes_of(text: str) -> list[dict]:
    """The `sdy.mesh` ops of each graph of a converted module or dump, parsed."""
    found = []
    for graph in graphs_of(text):
        with new_context() as ctx:
            found.append(read_meshes(formats.load(graph, ctx).operation))
    return found


def test_the_mesh_file_beside_a_module_names_its_axes():
    result = run("convert", TORCH / "matmul_2x4.mlir")
    assert result.exit_code == 0, result.output
    (meshes,) = meshes_of(result.stdout)
    assert meshes["mesh"].axes == (("x", 2), ("y", 4))
    assert '#sdy.sharding<@mesh, [{"y"}, {"x"}]>' in result.stdout
    note = result.stderr.strip()
    assert note.startswith(f"{TORCH / 'matmul_2x4.mlir'}: note: using the 1 mesh of ")
    assert str(TORCH / "matmul_2x4.meshes.json") in note


def test_every_graph_of_a_dump_gets_the_programs_mesh():
    result = run("convert", TORCH / "tp_mlp_train.dump")
    assert result.exit_code == 0, result.output
    graphs = meshes_of(result.stdout)
    assert len(graphs) > 1
    assert {g["mesh"].axes for g in graphs} == {(("data", 2), ("model", 4))}


def test_a_custom_device_order_keeps_the_programs_names_and_order():
    result = run("convert", TORCH / "custom_device_ids_manual.dump")
    assert result.exit_code == 0, result.output
    for graph in meshes_of(result.stdout):
        assert graph["mesh"].axes == (("data", 2), ("model", 4))
        assert graph["mesh"].device_ids == CUSTOM_IDS
    assert 'manual_axes={"data", "model"}' in result.stdout


def test_graphs_that_fit_no_recorded_mesh_are_converted_on_the_inferred_one_with_a_warning():
    result = run("convert", TORCH / "mixed_meshes_12.mlir")
    assert result.exit_code == 0, result.output
    (meshes,) = meshes_of(result.stdout)
    assert meshes["mesh"].axes == (("_axis_0", 12),)
    assert "warning: the shardings fit none of the given meshes" in result.stderr
    assert "Mesh((3, 4), ('a', 'b')): " in result.stderr
    assert "Mesh((4, 3), ('c', 'd')): " in result.stderr


def test_mesh_overrides_the_mesh_file_and_both_together_are_a_usage_error():
    result = run("convert", TORCH / "matmul_2x4.mlir", "--mesh", "rows=2,cols=4")
    assert result.exit_code == 0, result.output
    assert meshes_of(result.stdout)[0]["mesh"].axes == (("rows", 2), ("cols", 4))
    assert result.stderr == ""
    result = run(
        "convert", TORCH / "matmul_2x4.mlir", "--mesh", "a=8", "--mesh-file",
        TORCH / "matmul_2x4.meshes.json",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "give --mesh or --mesh-file, not both" in result.output


def test_mesh_file_names_the_file_for_an_input_elsewhere(tmp_path):
    shutil.copy(TORCH / "custom_device_ids_manual.mlir", tmp_path / "program.mlir")
    plain = run("convert", tmp_path / "program.mlir")
    assert meshes_of(plain.stdout)[0]["mesh"].axes == (("_axis_0", 2), ("_axis_1", 4))
    named = run(
        "convert", tmp_path / "program.mlir",
        "--mesh-file", TORCH / "custom_device_ids_manual.meshes.json",
    )  # fmt: skip
    assert named.exit_code == 0, named.output
    assert meshes_of(named.stdout)[0]["mesh"].axes == (("data", 2), ("model", 4))
    assert named.stderr == ""  # named, not found: nothing to note


def test_a_bad_mesh_file_is_a_usage_error_or_the_inputs_error(tmp_path):
    (tmp_path / "bad.json").write_text('{"meshes": []}')
    result = run("convert", TORCH / "matmul_2x4.mlir", "--mesh-file", tmp_path / "bad.json")
    assert result.exit_code == 2
    assert "bad.json: not a mesh file" in result.output
    shutil.copy(TORCH / "matmul_2x4.mlir", tmp_path / "m.mlir")
    shutil.copy(tmp_path / "bad.json", tmp_path / "m.meshes.json")
    result = run("convert", tmp_path / "m.mlir")
    assert result.exit_code == 1
    assert re.search(r"m\.meshes\.json: error: not a mesh file", result.stderr), result.stderr


def test_inspect_shows_the_programs_mesh_and_where_it_came_from():
    result = run("inspect", "--format", "json", TORCH / "tp_mlp_train.mlir")
    assert result.exit_code == 0, result.output
    (graph,) = json.loads(result.stdout)["graphs"]
    assert graph["meshes"][0]["mesh"] == '<["data"=2, "model"=4]>'
    assert graph["mesh_from"] == "Mesh((2, 4), ('data', 'model'))"
    table = run("inspect", TORCH / "tp_mlp_train.mlir").stdout
    assert 'mesh @mesh = <["data"=2, "model"=4]>  (the program\'s Mesh((2, 4)' in table


def test_inspect_says_when_no_recorded_mesh_fits():
    result = run("inspect", "--format", "json", TORCH / "mixed_meshes_12.mlir")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["graphs"][0]["mesh_from"] is None
    codes = [f["code"] for f in data["findings"]]
    assert "no-recorded-mesh" in codes


@pytest.mark.slow
def test_check_compiles_the_program_on_its_own_mesh_to_the_same_program():
    result = run("check", TORCH / "custom_device_ids_manual.mlir")
    assert result.exit_code == 0, result.output
    assert "same program" in result.stdout
    assert "note: using the 1 mesh of" in result.stderr
