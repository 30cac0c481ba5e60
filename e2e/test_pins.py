"""GSPMD's program under Shardy, from a real torch_xla program (issue 32): traced with
`XLA_HLO_DEBUG=1` (torch_xla then prints its StableHLO with MLIR's pretty debug locations, which
the converter reads: ir/debug_locations.py), `check` names each value the two propagations
decide differently by the program's own source line, and `--suggest` the mark_sharding lines
that pin GSPMD's decisions. The program with those lines added, at those source lines, traced
again: `check` shows no divergence and the two programs cost the same.

The program is the README's matmul (testdata/make_testdata.py's SPMD notebook on a (2, 4) mesh),
one statement a line so that a pin goes in after the line that makes its value."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from e2e.test_torch_xla import _torch_xla_is_installed  # noqa: F401  (fail, never skip)

PROGRAM = """\
import sys
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()
torch.manual_seed(0)
dev = torch_xla.device()
mesh = xs.Mesh(np.arange(8), (2, 4), ("x", "y"))
a = torch.randn(8, 16).to(dev)
b = torch.randn(16, 8).to(dev)
c = torch.randn(8, 8).to(dev)
d = torch.randn(8, 8).to(dev)
xs.mark_sharding(a, mesh, (0, 1))
xs.mark_sharding(b, mesh, (1, 0))
xs.mark_sharding(c, mesh, (0, None))
xs.mark_sharding(d, mesh, (None, 1))
ab = a @ b
xs.mark_sharding(ab, mesh, (1, 0))
m = ab * c
r = torch.relu(d)
s = m + r
out = s @ d.T
open(sys.argv[1], "w").write(xm.get_stablehlo([out]))
"""
# `xs.mark_sharding(<value>, mesh, (1, 0))  # stablehlo.multiply at /tmp/.../program.py:23:0`
PIN = re.compile(
    r"^xs\.mark_sharding\(<value>, mesh, (?P<spec>.+)\)  # \S+ at (?P<file>.+):(?P<line>\d+):\d+$"
)


def _trace(tmp_path: Path, source: str, name: str) -> Path:
    program, out = tmp_path / f"{name}.py", tmp_path / f"{name}.mlir"
    program.write_text(source)
    env = dict(os.environ, PJRT_DEVICE="CPU", CPU_NUM_DEVICES="8", XLA_HLO_DEBUG="1")
    env.pop("XLA_STABLEHLO_COMPILE", None)
    subprocess.run([sys.executable, program, out], env=env, check=True, timeout=600)
    return out


def _check(module: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "check", "--format", "json", "--suggest", module],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (graph,) = json.loads(done.stdout)["graphs"]
    return graph


def _pinned(source: str, pins: list[str], program: Path) -> str:
    """The program with each pin written after the line that makes its value."""
    lines = source.splitlines()
    after: dict[int, str] = {}
    for pin in pins:
        found = PIN.match(pin)
        assert found is not None, pin
        assert found.group("file") == str(program)
        k = int(found.group("line")) - 1
        value = lines[k].split("=")[0].strip()  # `m = ab * c`: m
        after[k] = f"xs.mark_sharding({value}, mesh, {found.group('spec')})"
    for k in sorted(after, reverse=True):
        lines.insert(k + 1, after[k])
    return "\n".join(lines) + "\n"


def test_the_suggested_pins_added_to_the_program_leave_no_divergence(tmp_path):
    plain = _trace(tmp_path, PROGRAM, "program")
    graph = _check(plain)
    assert graph["verdict"].startswith("same program")
    found = graph["divergences"]
    assert found
    lines = PROGRAM.splitlines()
    program = tmp_path / "program.py"
    for d in found:  # each at the source line of the statement that makes its value
        file, line, _ = d["location"].rsplit(":", 2)
        assert file == str(program)
        assert "=" in lines[int(line) - 1], d
    multiply = next(d for d in found if d["op"] == "stablehlo.multiply")
    assert lines[int(multiply["location"].split(":")[1]) - 1] == "m = ab * c"
    assert graph["ratios"]["collective_bytes"] > 1  # Shardy's program costs more here

    pins = [p for p in graph["pins"] if not p.startswith("not pinned")]
    assert len(pins) == len(graph["pins"]) == 3
    again = _check(_trace(tmp_path, _pinned(PROGRAM, pins, program), "pinned"))
    assert again["verdict"].startswith("same program")
    assert again["divergences"] == []
    assert again["cheaper"] == "same"
    assert again["ratios"] == {"collective_bytes": 1.0, "temp_bytes": 1.0, "flops": 1.0}
