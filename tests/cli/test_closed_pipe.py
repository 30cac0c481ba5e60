"""`shardy-convert ... | head`: every command that prints exits 1 when its reader goes away
before the whole output was delivered (the output is incomplete), quietly: no traceback, no
"internal error", no "Exception ignored" at exit. It is done once, at the group's boundary."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests import pjrt_plugin
from tests.conftest import TESTDATA

MATMUL = TESTDATA / "torch_xla" / "matmul_2x4.mlir"


def _many_values(count: int) -> str:
    """A module with `count` sharded arguments and results: every command prints a lot. The
    V1 lists are in a non-identity order that has an iota form, so no command has a warning
    to print."""
    args = ", ".join(
        f'%arg{k}: tensor<8xf32> {{mhlo.sharding = "{{devices=[4]0,2,1,3}}"}}' for k in range(count)
    )
    body = "".join(
        f"    %{k} = stablehlo.add %arg{k}, %arg{k} : tensor<8xf32>\n" for k in range(count)
    )
    results = ", ".join(f"%{k}" for k in range(count))
    types = ", ".join(["tensor<8xf32>"] * count)
    return (
        f"module {{\n  func.func @main({args}) -> ({types}) {{\n{body}"
        f"    return {results} : {types}\n  }}\n}}\n"
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipe") / "big.mlir"
    path.write_text(_many_values(1500))
    return path


def _cut_off(args: list, read: int) -> tuple[int, bytes]:
    """Runs the command, reads `read` bytes of its stdout and closes it; exit code, stderr."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    command = [sys.executable, "-m", "shardy_convert", *map(str, args)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as p:
        p.stdout.read(read)
        p.stdout.close()
        stderr = p.stderr.read()
        return p.wait(timeout=600), stderr


BIG_OUTPUTS = {
    "convert": ["convert", "--no-validate", "{big}"],
    "v2": ["v2", "{big}"],
    "to-gspmd": ["to-gspmd", "{big}"],
    "opt": ["opt", "-p", "v1-to-v2", "{big}"],
    "inspect": ["inspect", "{big}"],
    "inspect-json": ["inspect", "--format", "json", "{big}"],
    "diff-normalize": ["diff", "--normalize", "{big}"],
}


@pytest.mark.parametrize("args", BIG_OUTPUTS.values(), ids=BIG_OUTPUTS.keys())
def test_output_cut_off_mid_write_exits_1_quietly(big, args):
    """The reader goes away after 100 bytes of an output larger than the pipe's buffer: one
    write is cut short (Python's buffered stdout would report that as success)."""
    code, stderr = _cut_off([a.format(big=big) for a in args], read=100)
    assert code == 1
    # Quietly: no error, no BrokenPipeError. (`opt -p v1-to-v2` warns that `{devices=[2]1,0}`
    # has no iota form before it writes.)
    assert all(": warning: " in line for line in stderr.decode().splitlines()), stderr


SMALL_OUTPUTS = {
    "list-passes": ["list-passes"],
    "help": ["--help"],
    "version": ["--version"],
    "diff": ["diff", MATMUL, MATMUL],
    "inspect-show": ["inspect", "--show", "arg0", MATMUL],
    "plugin-wrapper": ["plugin-wrapper", pjrt_plugin.plugin_path()],
    "check": ["check", "--no-reference", MATMUL],
}


@pytest.mark.parametrize("args", SMALL_OUTPUTS.values(), ids=SMALL_OUTPUTS.keys())
def test_output_to_a_closed_pipe_exits_1_quietly(args):
    """The reader is gone before the command writes anything."""
    code, stderr = _cut_off(args, read=0)
    # MATMUL's mesh file, found beside it, is noted before anything is written
    said = [line for line in stderr.splitlines() if b": note: using the 1 mesh of" not in line]
    assert (code, said) == (1, [])
