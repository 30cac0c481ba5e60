"""Which partitioner XLA really compiled a program with (check's `Compiled.partitioner`): from
XLA's log line where its warnings reach us, from its own predicate where they are hidden (the
suite runs with TF_CPP_MIN_LOG_LEVEL=2)."""

from __future__ import annotations

import os
import subprocess
import sys

from shardy_convert.commands.check import compile_module
from shardy_convert.commands.check.partitioner import GSPMD, SHARDY, partitioner_used

SHARDY_MODULE = """sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""
# The same with a GSPMD sharding custom call left in: XLA compiles it with GSPMD.
MIXED = SHARDY_MODULE.replace(
    "  return %0",
    '  %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[1,4]<=[4]}"} : '
    "(tensor<8x8xf32>) -> tensor<8x8xf32>\n  return %1",
)


def test_shardy_compiled_by_shardy():
    used = compile_module(SHARDY_MODULE, 4, shardy=True).partitioner
    assert (used.requested, used.used, used.fell_back) == (SHARDY, SHARDY, False)


def test_a_silent_fallback_is_told_with_its_site():
    used = compile_module(MIXED, 4, shardy=True).partitioner
    assert used.fell_back
    assert str(used).startswith("GSPMD, not the Shardy asked for: XLA falls back on 5:8: ")
    assert "stablehlo.custom_call @Sharding" in str(used)


def test_gspmd_asked_for():
    used = partitioner_used(MIXED, shardy=False, log="")
    assert (used.requested, used.used, used.fell_back) == (GSPMD, GSPMD, False)


_WITH_LOGS = """
from shardy_convert.commands.check import compile_module
from tests.commands.check.test_partitioner import MIXED, SHARDY_MODULE
for text in (SHARDY_MODULE, MIXED):
    print(compile_module(text, 4, shardy=True).partitioner)
"""


def test_xla_log_line_where_warnings_are_written():
    """As `check` runs (TF_CPP_MIN_LOG_LEVEL=1): XLA's own line is the evidence."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    out = subprocess.run(
        [sys.executable, "-c", _WITH_LOGS], capture_output=True, text=True, env=env, check=True
    )
    shardy, mixed = out.stdout.splitlines()
    assert shardy == "Shardy: XLA logs a fallback to GSPMD and logged none"
    assert mixed.startswith("GSPMD, not the Shardy asked for: XLA's log: \"Module has GSPMD")
