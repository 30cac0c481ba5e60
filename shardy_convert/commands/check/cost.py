"""What a partitioner compiled: one program's collectives, memory, FLOPs and XLA's warnings.

Read from a compiled program (xla/compiler.py reads the executable):
- collectives: the instructions of the optimized, partitioned HLO
  (`Executable.optimized_hlo()`), counted by kind; their bytes are the byte sizes
  of each collective's result, one device's program (a tuple result sums its elements). An
  asynchronous pair (`all-gather-start` ... `all-gather-done`) counts once, with the `-done`'s
  result. The count is static: a collective inside a loop body counts once, not per iteration.
  Example: `%all-reduce.23 = (f32[], f32[]) all-reduce(...)` is one all-reduce of 8 bytes,
  `%all-gather.1 = f32[1,64,32]{2,0,1} all-gather(...)` one all-gather of 8192 bytes.
- memory: XLA's compiled memory stats (`Executable.memory()`): temporaries, arguments,
  outputs, aliased bytes; peak = arguments + outputs + temporaries - aliased (what the program
  holds at once at most).
- FLOPs: XLA's cost analysis (`Executable.flops()`).
- rematerializations: how often XLA logged `Involuntary full rematerialization` (it replicates
  a tensor to re-partition it) on file descriptor 2 while it compiled: pass that text in.
  jaxlib 0.10.2 logs it at WARNING level, so `TF_CPP_MIN_LOG_LEVEL=2` (read once, when jaxlib
  loads) hides it, and then the count is unknown; jaxlib 0.7.1 does not log it at all
  (`compiled.rematerializations_logged` finds out).

A measure this jaxlib's executable cannot give is None ("n/a"), never a crash.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from ...xla.compiler import Executable

COLLECTIVES = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
REMATERIALIZATION = "Involuntary full rematerialization"

# `  ROOT %name = SHAPE opcode(` : SHAPE may be a tuple with spaces, `(f32[], f32[4]{0})`.
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[^\s=]+\s*=\s*(?P<shape>.+?)\s+(?P<op>[a-z][\w-]*)\(")
# One array in a shape: `f32[1,64,32]`, `pred[]`, `s32[<=8]` (dynamic: its bound).
_ARRAY = re.compile(r"\b(?P<type>[a-z][a-z0-9]*)\[(?P<dims>[^\]]*)\]")


@dataclass(frozen=True)
class Collectives:
    """The collectives of one kind in a program: how many, and their results' bytes."""

    count: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Cost:
    """What one compiled program costs (one device's share). None: this jaxlib cannot say."""

    by_kind: dict[str, Collectives] | None = field(default_factory=dict)
    temp_bytes: int | None = None
    argument_bytes: int | None = None
    output_bytes: int | None = None
    alias_bytes: int | None = None
    flops: float | None = None
    rematerializations: int | None = None

    @property
    def collectives(self) -> int | None:
        if self.by_kind is None:
            return None
        return sum(c.count for c in self.by_kind.values())

    @property
    def collective_bytes(self) -> int | None:
        if self.by_kind is None:
            return None
        return sum(c.bytes for c in self.by_kind.values())

    @property
    def peak_bytes(self) -> int | None:
        parts = (self.argument_bytes, self.output_bytes, self.temp_bytes)
        if any(p is None for p in parts):
            return None
        return sum(p for p in parts if p is not None) - (self.alias_bytes or 0)


def ratio(gspmd: float | None, shardy: float | None) -> float | None:
    """Shardy's measure over GSPMD's: 1.0 when both are 0, inf when only GSPMD's is 0, None
    when either is unknown."""
    if gspmd is None or shardy is None:
        return None
    if gspmd == 0:
        return 1.0 if shardy == 0 else math.inf
    return shardy / gspmd


def program_cost(program: Executable, stderr_text: str | None) -> Cost:
    """The cost of a compiled program (xla/'s); `stderr_text` is what XLA wrote to file
    descriptor 2 while compiling it (None when not captured: rematerializations unknown)."""
    hlo = program.optimized_hlo()
    memory = program.memory()
    return Cost(
        by_kind=collectives(hlo) if hlo is not None else None,
        temp_bytes=memory.get("temp"),
        argument_bytes=memory.get("argument"),
        output_bytes=memory.get("output"),
        alias_bytes=memory.get("alias"),
        flops=program.flops(),
        rematerializations=rematerializations(stderr_text),
    )


def collectives(hlo: str) -> dict[str, Collectives]:
    """Collectives by kind in HLO text (kinds with none left out), in `COLLECTIVES` order."""
    found: dict[str, list[int]] = {}
    for line in hlo.splitlines():
        m = _INSTRUCTION.match(line)
        if m is None:
            continue
        kind = _kind(m.group("op"))
        if kind is not None:
            found.setdefault(kind, []).append(shape_bytes(m.group("shape")))
    return {k: Collectives(len(found[k]), sum(found[k])) for k in COLLECTIVES if k in found}


def _kind(op: str) -> str | None:
    """The collective an opcode is (its `-done` half for an async pair), else None."""
    name = op.removesuffix("-done")
    return name if name in COLLECTIVES else None


def shape_bytes(shape: str) -> int:
    """Bytes of an HLO shape: `f32[2,3]{1,0}` is 24, `(f32[], s8[4])` is 8, `pred[]` is 1."""
    total = 0
    for m in _ARRAY.finditer(shape):
        elements = 1
        for dim in filter(None, m.group("dims").split(",")):
            elements *= int(dim.strip().removeprefix("<="))
        total += (elements * _bits(m.group("type")) + 7) // 8
    return total


def _bits(element_type: str) -> int:
    """Bits of an element type: the number in its name (`bf16`, `f8e4m3fn`, `c64`, `s4`);
    `pred` is a byte, `token` nothing."""
    if element_type == "pred":
        return 8
    digits = re.search(r"\d+", element_type)
    return int(digits.group()) if digits else 0


def rematerializations(stderr_text: str | None) -> int | None:
    """How often XLA logged an involuntary full rematerialization; None when its log was not
    captured or its warnings are hidden (`TF_CPP_MIN_LOG_LEVEL` 2 or more)."""
    if stderr_text is None or warnings_hidden():
        return None
    return stderr_text.count(REMATERIALIZATION)


def warnings_hidden() -> bool:
    """XLA's C++ warnings are not written (`TF_CPP_MIN_LOG_LEVEL` 2 or more)."""
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0").strip()
    return level.isdigit() and int(level) >= 2
