"""XLA's own forms of a program in every command: HLO text as `--xla_dump_to` writes it, the
HloProto of `--xla_dump_hlo_as_proto`, torch_xla's HloModuleProto (make testdata runs torch_xla
and JAX with `XLA_FLAGS=--xla_dump_to=...`), and the directories XLA dumps into.

Each converts to Shardy with the meshes of the same program's MLIR and compiles (Shardy) to
the program XLA compiles (GSPMD) from the HLO itself, on 8 CPU devices.
"""

from __future__ import annotations

import re
import shutil
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.commands.check import Verdict, compare
from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import hlo
from shardy_convert.formats import module as formats
from shardy_convert.ir.parse import new_context
from tests.conftest import TESTDATA, manifest
from tests.helpers import run

HLO_KINDS = ("xla_hlo_text", "xla_hlo_proto", "torch_xla_hlo_proto")
ENTRIES = [pytest.param(e, id=e["path"]) for e in manifest() if e["kind"] in HLO_KINDS]
JAX_DUMP = TESTDATA / "jax" / "mesh3d_xla_dump.xla_dump"
TORCH_DUMP = TESTDATA / "torch_xla" / "tp_mlp_xla_dump.xla_dump"
JAX_TEXT = JAX_DUMP / "module_0002.jit_f.before_optimizations.txt"
JAX_PROTO = JAX_DUMP / "module_0002.jit_f.before_optimizations.hlo.pb"
TORCH_TEXT = TORCH_DUMP / "module_0002.SyncTensorsGraph.157.before_optimizations.txt"
TORCH_PROTO = TESTDATA / "torch_xla" / "tp_mlp_train.hlo.pb"
FORMS = [pytest.param(p, id=p.name) for p in (JAX_TEXT, JAX_PROTO, TORCH_TEXT, TORCH_PROTO)]
_MESH = re.compile(r"sdy\.mesh @\w+ = <[^>]*>")


def test_testdata_holds_every_form_from_both_producers():
    forms = {(e["kind"], e["path"].split("/")[0]) for e in manifest() if e["kind"] in HLO_KINDS}
    for kind in ("xla_hlo_text", "xla_hlo_proto"):
        assert {(kind, "torch_xla"), (kind, "jax")} <= forms
    assert ("torch_xla_hlo_proto", "torch_xla") in forms


def _sibling_meshes(entry: dict) -> list[str]:
    """The meshes the same program converts to from its MLIR form: JAX's `module.mlir` in
    the dump, torch_xla's get_stablehlo text; else the torch_xla Mesh the case used."""
    path = TESTDATA / entry["path"]
    stem = re.sub(r"\.before_optimizations\.(txt|hlo\.pb)$", "", path.name)
    for mlir in (path.parent / stem / "module.mlir", path.with_name(stem + ".mlir")):
        if mlir.name != path.name and mlir.exists():
            return _MESH.findall(convert(mlir.read_text()))
    axes = ", ".join(f'"_axis_{k}"={n}' for k, n in enumerate(entry["mesh"]["shape"]))
    return [f"sdy.mesh @mesh = <[{axes}]>"]


@pytest.mark.parametrize("entry", ENTRIES)
def test_hlo_converts_to_the_same_program(entry):
    data = (TESTDATA / entry["path"]).read_bytes()
    assert hlo.kind(data) == (hlo.TEXT if entry["kind"] == "xla_hlo_text" else hlo.PROTO)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the device count is known, no guess
        converted = convert(data, validate=True).decode()
    assert converted.startswith("module @")  # MLIR text, by default
    assert "mhlo.sharding" not in converted
    assert _MESH.findall(converted) == _sibling_meshes(entry)
    report = compare(hlo.to_stablehlo(data), converted, entry["num_devices"])
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)


def test_hlo_text_says_its_device_count_and_locates_instructions():
    with new_context() as ctx:
        module = formats.load(JAX_TEXT.read_bytes(), ctx)
        assert str(module.operation.attributes["mhlo.num_partitions"]) == "8 : i32"
        main = module.body.operations[1]
        arg = main.regions[0].blocks[0].arguments[0]
        assert str(arg.location) == 'loc("-":39:3)'  # the line of `%a.1 = ... parameter(0)`
    assert JAX_TEXT.read_text().splitlines()[38].startswith("  %a.1 = f32[8,8]")


def test_a_module_proto_with_config_gives_its_num_partitions():
    """HloModuleProtoWithConfig (PJRT's "hlo_with_config"): the module in field 1, the config
    in field 2, whose field 5 is num_partitions (XLA's xla.proto, read from jaxlib's
    descriptors). The envelope is built here around torch_xla's real module proto."""
    module = TORCH_PROTO.read_bytes()
    config = b"\x28\x08"  # num_partitions = 8
    wrapped = b"\x0a" + _varint(len(module)) + module + b"\x12" + _varint(len(config)) + config
    assert hlo.kind(wrapped) == hlo.PROTO
    with new_context() as ctx:
        loaded = formats.load(wrapped, ctx)
        assert str(loaded.operation.attributes["mhlo.num_partitions"]) == "8 : i32"
    assert b"sdy.mesh @mesh" in convert(wrapped)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_other_protos_and_text_are_not_hlo():
    for path in (
        JAX_DUMP / "module_0000.jit_f" / "compile_options.pb",
        JAX_DUMP / "module_0000.jit_f.cpu_after_optimizations-memory-usage-report.pb",
        TESTDATA / "torch_xla" / "matmul_2x4.mlir",
        JAX_DUMP / "module_0000.jit_f.debug_options",
    ):
        assert hlo.kind(path.read_bytes()) is None, path


# --- every command ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", FORMS)
def test_convert_reads_hlo_and_writes_shardy_mlir(path, tmp_path):
    result = run("convert", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("module @")
    assert 'sdy.mesh @mesh = <["_axis_0"=2' in result.stdout
    assert "mhlo.sharding" not in result.stdout
    out = tmp_path / "out.mlirbc"
    result = run("convert", path, "--emit", "bytecode", "-o", out)
    assert result.exit_code == 0, result.output
    assert formats.detect(out.read_bytes()) == "bytecode"


@pytest.mark.parametrize("path", FORMS)
def test_inspect_check_v2_to_gspmd_diff_and_opt_read_hlo(path):
    result = run("inspect", path)
    assert result.exit_code == 0, result.output
    assert "GSPMD, 8 devices" in result.stdout
    result = run("check", path)
    assert result.exit_code == 0, result.output
    assert f"{path}: same program" in result.stdout
    for command in ("v2", "to-gspmd"):  # GSPMD StableHLO out (MLIR, not the HLO as it was)
        result = run(command, path)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("module @")
        assert "mhlo.sharding" in result.stdout
    result = run("diff", path, path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("EQUAL")
    result = run("opt", path, "-p", "import-shardings")
    assert result.exit_code == 0, result.output
    assert "sdy.mesh @mesh" in result.stdout


@pytest.mark.parametrize("path", FORMS)
def test_diff_finds_hlo_and_its_conversion_equal_and_a_moved_shard_different(path, tmp_path):
    converted = tmp_path / "converted.mlir"
    assert run("convert", path, "-o", converted).exit_code == 0
    result = run("diff", path, converted)
    assert result.exit_code == 0, result.output
    assert re.match(r"EQUAL: \d+ placements compared", result.stdout)
    moved = tmp_path / "moved.mlir"
    moved.write_text(converted.read_text().replace('[{"_axis_0"}', '[{"_axis_1"}', 1))
    assert run("diff", path, moved).exit_code == 1


# --- directories -----------------------------------------------------------------------------


@pytest.mark.parametrize("folder", [JAX_DUMP, TORCH_DUMP], ids=["jax", "torch_xla"])
def test_an_xla_dump_directory_converts_each_module_once(folder, tmp_path):
    result = run("convert", folder, "-o", tmp_path)
    assert result.exit_code == 0, result.output
    texts = sorted(p.name for p in folder.glob("*.before_optimizations.txt"))
    written = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert written == [t.removesuffix(".txt") + ".mlir" for t in texts]
    assert all("sdy.mesh" in (tmp_path / name).read_text() for name in written)
    skipped = sum(1 for p in folder.rglob("*") if p.is_file()) - len(texts)
    assert f"{folder}: warning: an XLA dump directory (--xla_dump_to): {len(texts)} modules" in (
        result.stderr
    )
    assert f"{skipped} other files skipped" in result.stderr
    result = run("check", folder)
    assert result.exit_code == 0, result.output
    assert result.stdout.count(": same program") == len(texts)


def test_a_dump_directory_with_protos_only_reads_the_protos(tmp_path):
    for proto in JAX_DUMP.glob("*.before_optimizations.hlo.pb"):
        shutil.copy(proto, tmp_path)
    result = run("inspect", tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("== ") == 2


def test_a_directory_takes_hlo_protos_and_says_what_it_skips(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(TORCH_PROTO, folder)
    shutil.copy(TESTDATA / "torch_xla" / "matmul_2x4.mlir", folder)
    shutil.copy(JAX_DUMP / "module_0000.jit_f" / "compile_options.pb", folder)
    result = run("convert", folder, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "matmul_2x4.mlir",
        "tp_mlp_train.hlo.mlir",
    ]
    assert (
        f"{folder}: warning: skipped 1 file that hold no HLO module proto: compile_options.pb"
        in result.stderr
    )


# --- bad input -------------------------------------------------------------------------------


def test_a_truncated_proto_is_a_located_error(tmp_path):
    bad = tmp_path / "cut.hlo.pb"
    bad.write_bytes(JAX_PROTO.read_bytes()[:1000])
    out = tmp_path / "out.mlir"
    result = run("convert", bad, "-o", out)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{bad}: error: cannot read the HLO module proto: ")
    assert not out.exists()


def test_hlo_text_xla_cannot_parse_is_located_at_its_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(JAX_TEXT.read_text().replace("ENTRY %main", "ENTRY main ("))
    result = run("convert", bad)
    assert result.exit_code == 1
    assert re.match(
        rf"{re.escape(str(bad))}:38:\d+: error: cannot parse the HLO text: ", result.stderr
    )


def test_hlo_text_that_makes_xla_abort_is_an_error_not_a_crash(tmp_path):
    """A parameter number out of range fails a CHECK in XLA's parser (SIGABRT, measured): it
    is read in a child process, and the CHECK's message is the error."""
    bad = tmp_path / "abort.txt"
    bad.write_text(JAX_TEXT.read_text().replace("parameter(1)", "parameter(7)"))
    out = tmp_path / "out.mlir"
    result = run("convert", bad, "-o", out)
    assert result.exit_code == 1
    assert "cannot read the HLO text: XLA's reader crashed on it (SIGABRT): Check failed" in (
        result.stderr
    )
    assert not out.exists()
    with new_context() as ctx, pytest.raises(ShardyConvertError, match="SIGABRT"):
        formats.load(bad.read_bytes(), ctx)


def test_a_bad_sharding_in_hlo_text_is_located_at_its_instruction(tmp_path):
    bad = tmp_path / "dup.txt"
    text = JAX_TEXT.read_text()
    bad.write_text(
        text.replace("sharding={devices=[2,4]<=[4,2]T(1,0)}", "sharding={devices=[2,2]0,1,2,2}", 1)
    )
    result = run("convert", bad)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"{bad}:39:3: arg 0 of @main: error: device id 2 is listed twice"
    )
