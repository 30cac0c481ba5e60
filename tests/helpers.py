"""What several test modules share: the test inputs they all use, the command line run
through click's runner, and the installed command run with a stream on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shardy_convert.cli.main import main
from shardy_convert.ir.legacy_i1 import one_byte_per_element
from tests.conftest import TESTDATA

MATMUL = TESTDATA / "torch_xla" / "matmul_2x4.mlir"  # 8 devices, V1 lists in custom orders
SHARDY = TESTDATA / "jax" / "shard_map_full.shardy.mlir"  # already Shardy
ESCAPE = TESTDATA / "torch_xla" / "manual_escape.dump"  # no Shardy form


def run(*args, input=None) -> Result:
    """`shardy-convert ARGS...` in process (paths may be given as Path)."""
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def said_same(stdout: str, where, shape: str) -> bool:
    """`check` printed `WHERE: same program[ up to float reassociation (...)]: SHAPE` (how the
    two partitioners order a reduction's partial sums is theirs to choose)."""
    import re

    verdict = r"same program(?: up to float reassociation \(max relative [^)]*\))?"
    return (
        re.search(rf"(?m)^{re.escape(str(where))}: {verdict}: {re.escape(shape)}", stdout)
        is not None
    )


def on_a_terminal(
    args, stream: str = "stdout", *, env: dict | None = None, cwd=None
) -> tuple[int, bytes, str]:
    """Runs the installed `shardy-convert ARGS...` with `stream` ("stdout" or "stderr") on a
    pseudo-terminal: (exit code, what the terminal received, what the other stream got)."""
    script = shutil.which("shardy-convert", path=str(Path(sys.executable).parent))
    assert script, "shardy-convert is not installed beside this Python"
    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as other:  # a file: a full pipe would block the child
        streams = {"stdout": other, "stderr": other, stream: follower}
        child = subprocess.Popen(
            [script, *map(str, args)], stdin=subprocess.DEVNULL, env=env, cwd=cwd, **streams
        )
        os.close(follower)
        received = read_until_closed(leader)
        code = child.wait(timeout=120)
        other.seek(0)
        return code, received, other.read().decode(errors="replace")


def read_until_closed(fd: int) -> bytes:
    """All a pseudo-terminal's leader `fd` receives until the other side is closed; closes
    `fd`."""
    received = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed the terminal (Linux: EIO)
            break
        if not chunk:
            break
        received += chunk
    os.close(fd)
    return received


def _op_locations_settable() -> bool:
    from shardy_convert.ir.compat import op_locations_settable

    return op_locations_settable()


# Matching XLA's view of a program to its values needs an op's location set (ir/op_tags.py):
# jaxlib 0.7.1's bindings cannot, and there the divergences and pins say so instead (each test
# module that uses this also checks that).
needs_op_tags = pytest.mark.skipif(
    not _op_locations_settable(), reason="this jaxlib's bindings cannot set an op's location"
)


# What releases print differently for the same module: 0.10.2's `sdy-lift-inlined-meshes`
# adds `{stablehlo.mesh = {axes = [...], device_ids = ...}}` to `sdy.mesh` (0.7.1 adds none),
# 0.7.1 prints `stablehlo.compare  LT, %a, %b,  SIGNED` with doubled spaces, and its MLIR
# prints `i1` hex constants bit-packed (see legacy_i1).
_MESH_ATTR = re.compile(r" \{stablehlo\.mesh = \{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\}")


def comparable_text(text: str) -> str:
    """Printed MLIR with what differs between jaxlib releases (and means the same) spelled
    one way, so files written by one release compare with what another prints (goldens)."""

    text = one_byte_per_element(_MESH_ATTR.sub("", text))
    return "\n".join(_comparable_line(line) for line in text.split("\n"))


def _comparable_line(line: str) -> str:
    if "stablehlo.compare" not in line:
        return line
    indent = line[: len(line) - len(line.lstrip(" "))]
    return indent + re.sub(" {2,}", " ", line[len(indent) :])
