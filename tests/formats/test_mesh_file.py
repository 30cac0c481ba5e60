"""The mesh file (formats/meshes.py), the in-process mesh recorder and the dump directory's
graph-hash reader (plugin/torch_xla/mesh_recorder.py, plugin/dump_dir.py), without torch_xla."""

from __future__ import annotations

import json
import re
import shutil
from types import SimpleNamespace

import pytest

from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import meshes
from shardy_convert.plugin import dump_dir
from shardy_convert.plugin.torch_xla.mesh_recorder import MeshRecorder
from tests.helpers import TESTDATA


def torch_xla_mesh(ids, shape, names, kind="Mesh"):
    """Stands in for a torch_xla Mesh: the recorder reads only these attributes."""
    cls = type(kind, (), {})
    mesh = cls()
    mesh.device_ids, mesh.mesh_shape, mesh.axis_names = ids, shape, names
    return mesh


def test_recorded_meshes_round_trip_through_the_file(tmp_path):
    recorder = MeshRecorder()
    path = recorder.write_to(tmp_path / "run.dump.meshes.json")
    assert meshes.read(path) == ()
    recorder.add(torch_xla_mesh([3, 6, 0, 5, 1, 7, 2, 4], (2, 4), ("data", "model")))
    recorder.add(torch_xla_mesh(list(range(8)), (8,), None, kind="HybridMesh"))
    recorder.add(torch_xla_mesh([3, 6, 0, 5, 1, 7, 2, 4], (2, 4), ("data", "model")))
    got = meshes.read(path)
    assert [str(m) for m in got] == [
        '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>',
        '<["_axis_0"=8]>',
    ]
    assert got == recorder.meshes()
    assert got[0].label == "Mesh((2, 4), ('data', 'model'), device_ids=[3, 6, 0, 5, 1, 7, 2, 4])"
    assert got[1].label == "HybridMesh((8,), ('_axis_0',))"
    assert recorder.version == 2
    data = json.loads(path.read_text())
    assert data["meshes"][0] == {
        "kind": "Mesh",
        "axis_names": ["data", "model"],
        "mesh_shape": [2, 4],
        "device_ids": [3, 6, 0, 5, 1, 7, 2, 4],
    }
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_mesh_with_an_axis_name_shardy_cannot_carry_is_not_recorded(caplog):
    recorder = MeshRecorder()
    recorder.add(torch_xla_mesh(list(range(4)), (2, 2), ('a"b', "c")))
    assert recorder.meshes() == ()
    assert "not used for names" in caplog.text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "not a mesh file"),
        ("{", "no JSON"),
        ('{"shardy_convert_meshes": 1, "meshes": {}}', '"meshes" is no list'),
        (
            '{"shardy_convert_meshes": 1, "meshes": [{"mesh_shape": [2, 2], '
            '"axis_names": ["a"], "device_ids": [0, 1, 2, 3]}]}',
            "mesh 0: axis_names must be 2 distinct names",
        ),
        (
            '{"shardy_convert_meshes": 1, "meshes": [{"mesh_shape": [2, 2], '
            '"axis_names": ["a", "b"], "device_ids": [0, 1, 2, 2]}]}',
            "mesh 0: device_ids must order the 4 devices 0..3",
        ),
        (
            '{"shardy_convert_meshes": 1, "meshes": [{"mesh_shape": [0]}]}',
            "mesh 0: mesh_shape must be a list of sizes >= 1",
        ),
    ],
)
def test_a_bad_mesh_file_is_an_error_naming_it(tmp_path, content, message):
    path = tmp_path / "m.meshes.json"
    path.write_text(content)
    with pytest.raises(ShardyConvertError, match=re.escape(message)) as e:
        meshes.read(path)
    assert e.value.file == str(path)


def test_the_mesh_file_is_found_beside_a_dump(tmp_path):
    dump = tmp_path / "run.dump.0"
    dump.write_text("")
    assert meshes.beside(dump) is None
    (tmp_path / "meshes.json").write_text("{}")
    assert meshes.beside(dump) == tmp_path / "meshes.json"
    (tmp_path / "run.dump.meshes.json").write_text("{}")
    assert meshes.beside(dump) == tmp_path / "run.dump.meshes.json"
    (tmp_path / "run.dump.0.meshes.json").write_text("{}")
    assert meshes.beside(dump) == tmp_path / "run.dump.0.meshes.json"
    module = tmp_path / "matmul.mlir"
    (tmp_path / "matmul.meshes.json").write_text("{}")
    assert meshes.beside(module) == tmp_path / "matmul.meshes.json"


def test_the_graph_hash_is_the_last_one_torch_xla_wrote(tmp_path, monkeypatch):
    # torch_xla writes "Graph Hash: H" just before it compiles the graph H.
    source = TESTDATA / "torch_xla" / "linear_retrace.dump"
    shutil.copy(source, tmp_path / "run.txt.0")
    monkeypatch.setenv("XLA_SAVE_TENSORS_FILE", str(tmp_path / "run.txt"))
    last = re.findall(r"^Graph Hash: (\w+)$", source.read_text(), re.M)[-1]
    assert dump_dir.torch_xla_graph_hash("SyncTensorsGraph.12") == last
    assert dump_dir.torch_xla_graph_hash("ReplicateShardedData.3") is None
    monkeypatch.delenv("XLA_SAVE_TENSORS_FILE")
    assert dump_dir.torch_xla_graph_hash("SyncTensorsGraph.12") is None


def test_the_index_names_every_file_and_keeps_earlier_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("XLA_SAVE_TENSORS_FILE", raising=False)
    out = dump_dir.DumpDir(tmp_path)
    name, graph_hash = out.name_for(b"program", "SyncTensorsGraph.7")
    assert (name[0], len(name), graph_hash) == ("c", 33, "-")
    record = SimpleNamespace(
        name=name,
        graph_hash=graph_hash,
        module="SyncTensorsGraph.7",
        devices=8,
        mesh='<["data"=2, "model"=4]>',
        device_ids="-",
        mesh_from="user",
        note="a\tb\nc",
        mlirbc=f"{name}.mlirbc",
        mlir=f"{name}.mlir",
    )
    out.write(record, b"\x00bytes", "// text\n")
    out.write(record, b"again", "again")
    assert (tmp_path / f"{name}.mlirbc").read_bytes() == b"\x00bytes"
    lines = (tmp_path / "index.tsv").read_text().splitlines()
    assert lines[0].split("\t") == list(dump_dir.COLUMNS)
    assert lines[1].split("\t") == [
        name,
        "-",
        "SyncTensorsGraph.7",
        "8",
        '<["data"=2, "model"=4]>',
        "-",
        "user",
        "a b c",
        f"{name}.mlirbc",
        f"{name}.mlir",
    ]
    again = dump_dir.DumpDir(tmp_path)
    assert again.has(name)
    assert (tmp_path / "index.tsv").read_text().count(name) == 3
