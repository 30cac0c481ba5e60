"""The instructions of HLO text, as far as a partitioner's decisions need them: name, shape,
opcode, operands, `sharding={...}` and `metadata={op_name=...}`.

Read from the module XLA dumps after propagation (xla/propagation.py) and from an optimized,
partitioned program. One instruction a line:

    %sc3.0 = f32[8,8]{1,0} multiply(%sc2.0, %Arg_1.0), sharding={devices=[1,2,4]<=[8]
      last_tile_dim_replicate}, metadata={op_name="sc3" stack_frame_id=3}

(one line in the file). A tuple shape has spaces (`(f32[], s32[4]{0})`), a tuple sharding
nested braces (`sharding={{replicated}, {devices=[2]0,1}}`). Pure text, no XLA.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `  ROOT %name = SHAPE opcode(`; SHAPE may be a tuple with spaces.
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%(?P<name>[^\s=]+)\s*=\s*(?P<shape>.+?)\s+(?P<op>[a-z][\w-]*)\("
)
_OPERAND = re.compile(r"%([\w.\-]+)")
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_INDEX = re.compile(r"(?:^|[\s,])index=(\d+)")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%(?P<name>[^\s(]+)\s.*\{\s*$")


@dataclass(frozen=True)
class Instruction:
    """One HLO instruction: `sharding` is the text inside `sharding=` (`{replicated}`), None
    when the instruction has none; `op_name` its metadata's, "" when none; `computation` the
    computation it is in; `index` a `get-tuple-element`'s tuple index (None for others)."""

    name: str
    shape: str
    opcode: str
    operands: tuple[str, ...]
    sharding: str | None
    op_name: str
    computation: str
    index: int | None = None


def instructions(hlo: str) -> list[Instruction]:
    """Every instruction of `hlo`, in the order printed."""
    found: list[Instruction] = []
    computation = ""
    for line in hlo.splitlines():
        m = _INSTRUCTION.match(line)
        if m is None:
            c = _COMPUTATION.match(line)
            if c is not None:
                computation = c.group("name")
            continue
        found.append(_instruction(line, m, computation))
    return found


def _instruction(line: str, m: re.Match, computation: str) -> Instruction:
    rest = line[m.end() - 1 :]  # from the operands' `(`
    close = _closing(rest, 0, "(", ")")
    operands = tuple(_OPERAND.findall(rest[:close]))
    attributes = rest[close + 1 :]
    op_name = _OP_NAME.search(attributes)
    return Instruction(
        m.group("name"),
        m.group("shape"),
        m.group("op"),
        operands,
        _braced(attributes, "sharding="),
        op_name.group(1) if op_name else "",
        computation,
        _tuple_index(attributes) if m.group("op") == "get-tuple-element" else None,
    )


def _tuple_index(attributes: str) -> int | None:
    found = _INDEX.search(attributes)
    return int(found.group(1)) if found else None


def _braced(text: str, key: str) -> str | None:
    """The `{...}` after `key` (nested braces kept), None when `key` is not there."""
    at = re.search(r"(?:^|[\s,])" + re.escape(key) + r"\{", text)
    if at is None:
        return None
    start = at.end() - 1
    end = _closing(text, start, "{", "}")
    return text[start : end + 1]


def _closing(text: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one at or after `start` (quotes skipped); the
    text's end when it is not closed."""
    depth, quoted = 0, False
    for k in range(start, len(text)):
        ch = text[k]
        if ch == '"' and (k == 0 or text[k - 1] != "\\"):
            quoted = not quoted
        if quoted:
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return k
    return len(text)
