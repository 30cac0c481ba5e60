"""The user's meshes through the plugin wrapper, and what the plugin compiled, dumped: stock
torch_xla 2.9 through `use_plugin(dump_dir=...)` on xla-cpu-pjrt, each program also on the
built-in CPU runtime (e2e/mesh_programs.py; run like e2e/test_torch_xla.py, which see).

The dumped modules are read back with the project's MLIR reader (the index parsed as TSV, the
`.mlirbc` portable artifacts and the `.mlir` texts parsed as modules, their `sdy.mesh` ops read
as meshes), never grepped.
"""

from __future__ import annotations

import csv
from pathlib import Path

from shardy_convert.converter import import_round_trip
from shardy_convert.formats import meshes as mesh_file
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from shardy_convert.ir.sdy_attrs import read_meshes

from .compare import assert_same
from .programs import CUSTOM_ORDER
from .test_torch_xla import assert_only_shardy, assert_ran, run


def meshes_in(data: bytes) -> dict:
    """The `sdy.mesh` ops of a dumped module (text or portable artifact), by name."""
    with new_context() as ctx:
        mod = formats.load(data, ctx, trusted=True)
        import_round_trip(mod)
        return read_meshes(mod.operation)


def read_dump(path: Path) -> list[dict]:
    """index.tsv's lines, each with the meshes of its two files read back."""
    with open(path / "index.tsv", newline="") as f:
        lines = list(csv.DictReader(f, delimiter="\t"))
    assert lines, f"nothing dumped in {path}"
    for line in lines:
        line["from_mlirbc"] = meshes_in((path / line["mlirbc"]).read_bytes())
        line["from_mlir"] = meshes_in((path / line["mlir"]).read_bytes())
    return lines


def assert_all_on(lines: list[dict], axes: tuple, device_ids: list[int] | None) -> None:
    """Every dumped program is on the user's mesh: its names, order and sizes; the device
    order went to the device assignment (the mesh the plugin gets is iota)."""
    for line in lines:
        assert line["mesh_from"] == "user", line
        for read in (line["from_mlirbc"], line["from_mlir"]):
            assert read["mesh"].axes == axes, (line["name"], read)
            assert read["mesh"].device_ids is None, (line["name"], read)
        assert line["mesh"] == str(read["mesh"])
        expected = "-" if device_ids is None else ",".join(map(str, device_ids))
        assert line["device_ids"] == expected, line


def test_llama_tensor_parallel_loop_on_the_users_2x4_mesh(tmp_path):
    dump = tmp_path / "dump"
    cpu, ours = run(tmp_path, "llama_tp_2x4", "--dump-dir", str(dump))
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert_same(cpu, ours)
    lines = read_dump(dump)
    assert_all_on(lines, (("data", 2), ("model", 4)), None)
    assert {line["devices"] for line in lines} == {"8"}
    assert len(lines) == ours["counters"]["converted"] == ours["counters"]["user_meshes"]
    recorded = mesh_file.read(dump / "meshes.json")
    assert [(m.axes, m.device_ids) for m in recorded] == [
        ((("data", 2), ("model", 4)), tuple(range(8)))
    ]


def test_a_custom_order_4x2_program_on_the_users_mesh(tmp_path):
    dump = tmp_path / "dump"
    cpu, ours = run(tmp_path, "custom_order_4x2", "--dump-dir", str(dump))
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert_same(cpu, ours)
    lines = read_dump(dump)
    assert_all_on(lines, (("data", 4), ("model", 2)), CUSTOM_ORDER)
    assert all(r["device_assignment"] == CUSTOM_ORDER for r in ours["records"])


def test_a_graph_that_fits_no_mesh_falls_back_and_says_so(tmp_path, monkeypatch):
    # The environment variable, for programs that cannot change their use_plugin call.
    dump = tmp_path / "dump"
    monkeypatch.setenv("SHARDY_CONVERT_DUMP_DIR", str(dump))
    cpu, ours = run(tmp_path, "meshes_that_do_not_fit")
    assert_ran(cpu), assert_ran(ours)
    assert_only_shardy(ours)
    assert_same(cpu, ours)
    lines = read_dump(dump)
    on = {line["mesh_from"]: [] for line in lines}
    for line in lines:
        on[line["mesh_from"]].append(line["from_mlirbc"]["mesh"].axes)
    assert (("a", 2), ("b", 3)) in on["user"]
    assert (("c", 3), ("d", 2)) in on["user"]
    assert on["inferred"] == [(("_axis_0", 6),)]
    (fallback,) = [line for line in lines if line["mesh_from"] == "inferred"]
    assert "Mesh((2, 3), ('a', 'b')): " in fallback["note"]
    assert "Mesh((3, 2), ('c', 'd')): " in fallback["note"]
    assert "fits none of the meshes the program created" in ours["log"]
    assert ours["counters"]["inferred_meshes"] == 1
