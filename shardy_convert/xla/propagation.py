"""What a partitioner decided for every value, before it partitioned: the module XLA dumps
after sharding propagation, read back from a compile.

XLA's SPMD pipeline runs propagation (GSPMD's `sharding-propagation`, or `shardy-xla`, which
imports the module to Shardy, propagates and exports) and then `spmd-partitioning`. Asked
through the compile's `env_option_overrides` (`xla_dump_to`, `xla_dump_hlo_pass_re`), XLA
writes the module between the two as HLO text, each instruction with its `sharding={...}` and
`metadata={op_name=...}` (measured on jaxlib 0.10.2's CPU client:
`module_0000.NAME.0003.spmd-partitioner.after_sharding-propagation.before_spmd-partitioning.txt`,
and `...after_shardy-xla.before_spmd-partitioning.txt` for Shardy). The dump goes to a
temporary folder, read and removed before this returns.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

from .compiler import Executable, compile_program

# The pass whose output each partitioner's decisions are read from.
PROPAGATION_PASS = {False: "sharding-propagation", True: "shardy-xla"}
_BEFORE_PARTITIONING = "before_spmd-partitioning.txt"


@dataclass(frozen=True)
class Propagated:
    """A compiled program (`compiled`) and its module as propagation left it (`hlo`, HLO
    text; "" where XLA wrote none: a one-device program is not partitioned)."""

    compiled: Executable
    hlo: str


def compile_propagated(
    program: str | bytes, num_devices: int, options: Any, *, shardy: bool
) -> Propagated:
    """Compiles `program` as `compiler.compile_program` does, XLA dumping the module after the
    partitioner's propagation (`shardy` says which partitioner `options` asks for)."""
    step = PROPAGATION_PASS[shardy]
    with tempfile.TemporaryDirectory(prefix="shardy-convert-propagation-") as folder:
        options.env_option_overrides = [
            ("xla_dump_to", folder),
            ("xla_dump_hlo_pass_re", step),
            ("xla_dump_hlo_as_text", True),
        ]
        compiled = compile_program(program, num_devices, options)
        return Propagated(compiled, _read(folder, step))


def _read(folder: str, step: str) -> str:
    """The module after `step`, just before the partitioner; "" when XLA dumped none."""
    names = sorted(
        n for n in os.listdir(folder) if f"after_{step}." in n and n.endswith(_BEFORE_PARTITIONING)
    )
    if not names:
        return ""
    with open(os.path.join(folder, names[-1]), encoding="utf-8") as f:
        return f.read()
