"""The `shardy-convert` entry point's collector settings (shardy_convert/__main__.py): the
imports' objects frozen, the youngest objects collected once 100,000 more are alive, collection
still on, and a command's result unchanged by it. In a child process: they are per-process."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import TESTDATA

CHILD = """
import gc, json, sys
from shardy_convert.__main__ import _YOUNG_THRESHOLD, run
sys.argv = ["shardy-convert", "convert", sys.argv[1], "-o", sys.argv[2]]
try:
    run()
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "enabled": gc.isenabled(), "threshold": gc.get_threshold(),
                  "young": _YOUNG_THRESHOLD, "frozen": gc.get_freeze_count()}))
"""


def test_the_entry_collects_young_objects_less_often_and_still_collects(tmp_path):
    out = tmp_path / "matmul.shardy.mlir"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(TESTDATA / "torch_xla" / "matmul_2x4.mlir"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    state = json.loads(done.stdout.splitlines()[-1])
    assert state["code"] in (0, None), done.stderr
    assert state["enabled"]
    assert state["threshold"][0] == state["young"] == 100_000
    assert state["frozen"] > 10_000  # click's and the commands' objects, then everything
    assert "sdy.mesh" in out.read_text()
