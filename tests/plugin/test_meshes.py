"""The plugin wrapper on the program's own meshes, and its dump directory, without torch: the
meshes a torch_xla program would record are given to the wrapper's recorder directly.

torch_xla end to end (meshes recorded from `xs.Mesh`, dumps of real runs): e2e/test_meshes.py.
"""

from __future__ import annotations

import csv
import logging
import struct

import pytest

from shardy_convert.converter import import_round_trip
from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import meshes as mesh_file
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from shardy_convert.ir.sdy_attrs import read_meshes
from shardy_convert.plugin import compile_options, dump_dir, wrapper
from shardy_convert.plugin.settings import Settings
from shardy_convert.plugin.torch_xla import mesh_recorder
from tests.conftest import TESTDATA
from tests.helpers import run
from tests.plugin.test_wrapper import ESCAPE, MATMUL, jaxlib_options, portable

CUSTOM = (TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir").read_text()
CUSTOM_IDS = [3, 6, 0, 5, 1, 7, 2, 4]  # the Mesh(device_ids) of that program


class Mesh:
    """What the recorder reads of a torch_xla Mesh."""

    def __init__(self, device_ids, mesh_shape, axis_names):
        self.device_ids, self.mesh_shape, self.axis_names = device_ids, mesh_shape, axis_names


@pytest.fixture
def recorder(monkeypatch):
    fresh = mesh_recorder.MeshRecorder()
    monkeypatch.setattr(wrapper, "RECORDER", fresh)
    monkeypatch.setattr(dump_dir, "RECORDER", fresh)
    monkeypatch.delenv("XLA_SAVE_TENSORS_FILE", raising=False)
    return fresh


def meshes_of(code: bytes) -> dict:
    """The meshes of a program as the plugin receives it, read back from its bytes."""
    with new_context() as ctx:
        mod = formats.load(code, ctx, trusted=True)
        import_round_trip(mod)
        return {name: str(mesh) for name, mesh in read_meshes(mod.operation).items()}


def test_the_program_is_converted_on_the_mesh_it_fits(recorder):
    recorder.add(Mesh(list(range(8)), (4, 2), ("rows", "cols")))  # fits only with sub-axes
    recorder.add(Mesh(list(range(8)), (2, 4), ("x", "y")))
    recorder.add(Mesh(list(range(4)), (2, 2), ("a", "b")))  # another device count
    session = wrapper.Session()
    code, *_ = session.compile(portable(MATMUL), b"mlir", jaxlib_options(8))
    assert meshes_of(code) == {"mesh": '<["x"=2, "y"=4]>'}
    assert (session.counters.user_meshes, session.counters.inferred_meshes) == (1, 0)


def test_a_custom_device_order_keeps_the_names_and_goes_to_the_device_assignment(recorder):
    recorder.add(Mesh(CUSTOM_IDS, (2, 4), ("data", "model")))
    code, _, options, order = wrapper.Session().compile(
        portable(CUSTOM), b"mlir", jaxlib_options(8)
    )
    assert meshes_of(code) == {"mesh": '<["data"=2, "model"=4]>'}
    assert list(struct.unpack("<8i", order)) == CUSTOM_IDS
    assert list(compile_options.decode(options).device_assignment) == CUSTOM_IDS


def test_a_program_that_fits_no_mesh_is_converted_on_the_inferred_one_logged_once(recorder, caplog):
    recorder.add(Mesh(list(range(8)), (2, 4), ("data", "model")))  # not CUSTOM's order
    session = wrapper.Session()
    caplog.set_level(logging.WARNING, "shardy_convert.wrapper")
    for _ in range(3):
        code, *_ = session.compile(portable(CUSTOM), b"mlir", jaxlib_options(8))
    assert meshes_of(code) == {"mesh": '<["_axis_0"=2, "_axis_1"=4]>'}
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1, logged
    assert "fits none of the meshes the program created" in logged[0]
    assert "Mesh((2, 4), ('data', 'model')): sharding " in logged[0]
    assert (session.counters.user_meshes, session.counters.inferred_meshes) == (0, 1)
    assert "(0 on the program's meshes, 1 not)" in str(session.counters)


def test_mesh_names_off_keeps_the_inferred_mesh(recorder):
    recorder.add(Mesh(list(range(8)), (2, 4), ("x", "y")))
    code, *_ = wrapper.Session(Settings(mesh_names=False)).compile(
        portable(MATMUL), b"mlir", jaxlib_options(8)
    )
    assert meshes_of(code) == {"mesh": '<["_axis_0"=2, "_axis_1"=4]>'}


def test_a_mesh_made_later_converts_the_program_again(recorder):
    session = wrapper.Session()
    first, *_ = session.compile(portable(MATMUL), b"mlir", jaxlib_options(8))
    recorder.add(Mesh(list(range(8)), (2, 4), ("x", "y")))
    second, *_ = session.compile(portable(MATMUL), b"mlir", jaxlib_options(8))
    assert meshes_of(first) != meshes_of(second) == {"mesh": '<["x"=2, "y"=4]>'}


def index(path) -> list[dict]:
    with open(path / "index.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_the_dump_directory_holds_what_the_plugin_compiled(recorder, tmp_path):
    out = tmp_path / "dump"
    session = wrapper.configure(Settings(dump_dir=out))
    recorder.add(Mesh(CUSTOM_IDS, (2, 4), ("data", "model")))
    sent = session.compile(portable(CUSTOM), b"mlir", jaxlib_options(8))
    session.compile(portable(CUSTOM), b"mlir", jaxlib_options(8))  # the same program
    (line,) = index(out)
    assert line["mesh"] == '<["data"=2, "model"=4]>'
    assert line["device_ids"] == ",".join(map(str, CUSTOM_IDS))
    assert line["mesh_from"] == "user"
    assert line["note"] == "Mesh((2, 4), ('data', 'model'), device_ids=[3, 6, 0, 5, 1, 7, 2, 4])"
    assert (line["devices"], line["graph_hash"]) == ("8", "-")
    assert line["name"].startswith("c")
    assert line["module"].startswith("IrToHlo.")
    assert (out / line["mlirbc"]).read_bytes() == sent[0]
    text = (out / line["mlir"]).read_text()
    assert meshes_of(text.encode()) == {"mesh": '<["data"=2, "model"=4]>'}
    assert text.startswith("// shardy-convert: the program the PJRT plugin compiled")
    assert [str(m) for m in mesh_file.read(out / "meshes.json")] == [
        '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>'
    ]
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    # shardy-convert reads the dumped files back
    result = run("inspect", out / line["mlirbc"], out / line["mlir"])
    assert result.exit_code == 0, result.output
    assert result.output.count('mesh @mesh = <["data"=2, "model"=4]>') == 2


def test_the_dump_names_programs_by_torch_xlas_graph_hash(recorder, tmp_path, monkeypatch):
    torch_dump = tmp_path / "run.txt"
    (tmp_path / "run.txt.0").write_text((TESTDATA / "torch_xla" / "matmul_2x4.dump").read_text())
    monkeypatch.setenv("XLA_SAVE_TENSORS_FILE", str(torch_dump))
    session = wrapper.configure(Settings(dump_dir=tmp_path / "dump"))
    # torch_xla compiles a graph as SyncTensorsGraph.N (its dumps print IrToHlo.N)
    program = MATMUL.replace("module @IrToHlo.", "module @SyncTensorsGraph.", 1)
    session.compile(portable(program), b"mlir", jaxlib_options(8))
    (line,) = index(tmp_path / "dump")
    last = (tmp_path / "run.txt.0").read_text().rsplit("Graph Hash: ", 1)[1].split()[0]
    assert line["name"] == line["graph_hash"] == last
    assert line["mesh_from"] == "inferred"
    assert line["note"] == "the program created no mesh (or mesh_names=False)"


def test_failed_and_passed_through_programs_are_in_the_index(recorder, tmp_path):
    session = wrapper.configure(Settings(dump_dir=tmp_path, on_error="raise"))
    with pytest.raises(ShardyConvertError):
        session.compile(portable(ESCAPE), b"mlir", jaxlib_options(8))
    (failed,) = index(tmp_path)
    assert failed["mesh_from"] == "failed"
    assert "manual" in failed["note"]
    assert (tmp_path / failed["mlirbc"]).read_bytes() == portable(ESCAPE)
    assert failed["mlir"] == "-"
    other = tmp_path / "other"
    session = wrapper.configure(Settings(dump_dir=other, on_error="passthrough"))
    sent = session.compile(portable(ESCAPE), b"mlir", jaxlib_options(8))
    (passed,) = index(other)
    assert passed["mesh_from"] == "gspmd"
    assert (other / passed["mlirbc"]).read_bytes() == sent[0] == portable(ESCAPE)
    assert 'mhlo.sharding = "{manual}"' in (other / passed["mlir"]).read_text()


def test_a_dump_directory_that_cannot_be_made_is_an_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ShardyConvertError, match="cannot write the dump directory"):
        wrapper.configure(Settings(dump_dir=tmp_path / "file" / "dump"))


@pytest.fixture(autouse=True)
def _fresh_session():
    yield
    wrapper.configure()
    dump_dir._dirs.clear()
