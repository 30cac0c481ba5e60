"""Input that is no program and work already done (issue 24): bytes no program holds (NUL
bytes, binary junk, 1 GB of zeros, 4 NULs on stdin) and a module with no function exit 1 with
a located error and write nothing, every command alike, and a file whose first bytes say so
is refused without being read on; `convert` of a module that is already Shardy writes it as
it came, saying so, and a batch counts those apart."""

from __future__ import annotations

import os
import random
import shutil
import threading

import pytest

from shardy_convert import ShardyConvertError, convert

from ..conftest import TESTDATA
from ..helpers import MATMUL, SHARDY, run

NOT_A_MODULE = "input is neither MLIR text nor bytecode, nor HLO text or proto"
NUL = f"{NOT_A_MODULE} (it holds a NUL byte)"
NO_FUNCTION = "the module defines no function: it holds no program"


def junk(seed: int, size: int = 4096) -> bytes:
    """Random bytes that do not start like bytecode or an HLO proto (those are read whole,
    in a child process, and refused there: tests of their own)."""
    data = random.Random(seed).randbytes(size)
    return (b"x" if data[:1] in (b"\n", b"M") else b"") + data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\0" * 16, f"1:1: error: {NUL}"),
        (b"module {\n}\n\0\0\0\0", f"3:1: error: {NUL}"),
        (MATMUL.read_bytes() + b"\0", f"{MATMUL.read_bytes().count(10) + 1}:1: error: {NUL}"),
        (junk(0), "1:1: error: " + NOT_A_MODULE),
        (junk(1), "1:1: error: " + NOT_A_MODULE),
        (b"module {}\n", f"1:1: error: {NO_FUNCTION}"),
        (b"module {\n  sdy.mesh @mesh = <[]>\n}\n", f"1:1: error: {NO_FUNCTION}"),
        (
            b"module @m attributes {mhlo.num_partitions = 8 : i32} {\n}\n",
            f"1:1: error: {NO_FUNCTION}",
        ),
    ],
    ids=[
        "zeros",
        "nul-after-a-module",
        "nul-at-the-end",
        "junk-0",
        "junk-1",
        "empty-module",
        "only-a-mesh",
        "only-attributes",
    ],
)
@pytest.mark.parametrize("command", ["convert", "v2", "to-gspmd", "inspect", "check"])
def test_no_program_is_a_located_error_and_nothing_is_written(tmp_path, data, message, command):
    path = tmp_path / "in.bin"
    path.write_bytes(data)
    out = tmp_path / "out"
    args = [command, path] + (["-o", out] if command in ("convert", "v2", "to-gspmd") else [])
    result = run(*args)
    assert result.exit_code == 1, result.output
    found = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert found[0].startswith(f"{path}:{message.split(': error: ')[0]}: error: "), found
    assert message.split(": error: ")[1] in found[0]
    assert not out.exists()


def test_nul_bytes_on_stdin_are_refused(tmp_path):
    result = run("convert", "-", input=b"\0\0\0\0")
    assert result.exit_code == 1
    assert result.stderr == f"-:1:1: error: {NUL}\n"
    assert result.stdout == ""


def test_diff_of_no_program_is_trouble_not_a_difference(tmp_path):
    path = tmp_path / "z.bin"
    path.write_bytes(b"\0" * 16)
    result = run("diff", MATMUL, path)
    assert result.exit_code == 2
    assert f"{path}:1:1: error: {NUL}" in result.stderr


def test_the_library_refuses_them_alike():
    for data in (b"\0" * 16, "\0\0\0\0", "module {}"):
        with pytest.raises(ShardyConvertError, match=r"NUL byte|defines no function"):
            convert(data)


@pytest.mark.parametrize(
    "args", [["convert"], ["check"], ["inspect"], ["diff", str(MATMUL)]], ids=lambda a: a[0]
)
def test_a_file_whose_first_bytes_are_no_program_is_not_read_on(tmp_path, args):
    """A FIFO whose writer sends 64 KB of zeros and then waits: a command that read on would
    wait for ever (1 GB of zeros took 13 s and 3.3 GB before)."""
    fifo = tmp_path / "zeros"
    os.mkfifo(fifo)
    release = threading.Event()

    def writer():
        with open(fifo, "wb") as f:
            f.write(b"\0" * (1 << 16))
            f.flush()
            release.wait(60)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    result = {}
    command = threading.Thread(target=lambda: result.update(r=run(*args, fifo)), daemon=True)
    command.start()
    command.join(60)
    release.set()
    thread.join(5)
    assert not command.is_alive(), "the command read on past the first 64 KB"
    assert result["r"].exit_code in (1, 2), result["r"].output
    assert f"{fifo}:1:1: error: {NUL}" in result["r"].stderr


def test_a_big_file_of_zeros_is_refused_from_its_head(tmp_path):
    path = tmp_path / "zeros.bin"
    with open(path, "wb") as f:
        f.truncate(1 << 30)  # 1 GB, sparse
    result = run("convert", path, "-o", tmp_path / "out.mlir")
    assert result.exit_code == 1
    assert result.stderr == f"{path}:1:1: error: {NUL}\n"
    assert not (tmp_path / "out.mlir").exists()


# --- already Shardy --------------------------------------------------------------------------


def test_a_shardy_module_is_written_as_it_came_saying_so(tmp_path):
    out = tmp_path / "out.mlir"
    result = run("convert", SHARDY, "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == SHARDY.read_bytes()
    assert result.stderr == (
        f"{SHARDY}: warning: written as it is: it already carries Shardy shardings\n"
    )


def test_a_batch_counts_the_inputs_that_were_already_shardy_apart(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for path in (MATMUL, SHARDY, TESTDATA / "jax" / "mesh3d.shardy.mlir"):
        shutil.copy(path, inputs / path.name)
    shutil.copy(TESTDATA / "torch_xla" / "tp_mlp_train.dump", inputs / "step.dump")
    shutil.copy(TESTDATA / "torch_xla" / "matmul_2x4.meshes.json", inputs / "step.dump.meshes.json")
    # a mesh file beside a Shardy module changes nothing: no note of it
    shutil.copy(
        TESTDATA / "torch_xla" / "matmul_2x4.meshes.json", inputs / f"{SHARDY.name}.meshes.json"
    )
    result = run("convert", inputs, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == "2 of 4 inputs converted, 2 already Shardy"
    assert f"{inputs / 'step.dump'}: note: using the 1 mesh of" in result.stderr
    assert f"{inputs / SHARDY.name}: note:" not in result.stderr
    assert (tmp_path / "out" / SHARDY.name).read_bytes() == SHARDY.read_bytes()


def test_v2_and_to_gspmd_count_what_their_inputs_already_were(tmp_path):
    inputs = [MATMUL, SHARDY]
    v2 = run("v2", *inputs, "-o", tmp_path / "v2")
    assert v2.stderr.splitlines()[-1] == "1 of 2 inputs converted, 1 already Shardy"
    back = run("to-gspmd", *inputs, "-o", tmp_path / "gspmd")
    assert back.stderr.splitlines()[-1] == "1 of 2 inputs converted, 1 already GSPMD"


def test_a_dump_counts_as_already_shardy_only_when_every_graph_was(tmp_path):
    shardy = tmp_path / "shardy.dump"
    assert (
        run("convert", TESTDATA / "torch_xla" / "linear_retrace.dump", "-o", shardy).exit_code == 0
    )
    result = run("convert", shardy, MATMUL, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (
        f"{shardy}: warning: written as it is: it already carries Shardy shardings (graphs 0-15)"
        in (result.stderr)
    )
    assert result.stderr.splitlines()[-1] == "1 of 2 inputs converted, 1 already Shardy"
