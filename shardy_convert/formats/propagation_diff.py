"""Where two partitioners decided differently: the values of one program whose sharding after
GSPMD's propagation differs from the one after Shardy's.

Both sides are the same program compiled from a tagged module (ir/op_tags.py): every
instruction XLA made for op K of the module carries `op_name="sc.op.K"`. The instructions of
one op are matched in the order XLA printed them, the k-th of GSPMD's with the k-th of
Shardy's, and only where both have the same opcode and shape: anything else is counted as
unmatched, never guessed. Instructions XLA made on its own (no tag: a constant it split, a
copy) and parameters (the boundary, compared apart) are not compared.

Shardings are compared by placement (`sharding.normalize`): `{devices=[4,2]0,4,1,5,2,6,3,7}`
and `{devices=[4,2]<=[2,4]T(1,0)}` are one decision. An instruction Shardy leaves without a
sharding is replicated (XLA's partitioner reads it so).

A divergence *starts* where none of the instruction's operands diverges: pinning that value
to GSPMD's decision may bring the values computed from it along.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ShardyConvertError
from ..ir.op_tags import index_of
from ..sharding import normalize
from .propagated_hlo import Instruction, instructions

REPLICATED = "{replicated}"


@dataclass(frozen=True)
class Divergence:
    """Op `op` of the module (its tag's number), the `part`-th instruction XLA made for it
    (`opcode`, HLO `shape`), with GSPMD's and Shardy's shardings as XLA printed them; `after`:
    the ops of its operands that diverge too (none: the divergence `starts` here)."""

    op: int
    part: int
    opcode: str
    shape: str
    gspmd: str
    shardy: str
    after: tuple[int, ...] = ()

    @property
    def starts(self) -> bool:
        return not self.after


@dataclass(frozen=True)
class Comparison:
    """The divergences in program order, how many tagged instructions were compared
    (`matched`) and which could not be matched (`unmatched`: `op 12: GSPMD made a dot,
    Shardy a transpose`)."""

    divergences: tuple[Divergence, ...]
    matched: int
    unmatched: tuple[str, ...]


def compare(gspmd_hlo: str, shardy_hlo: str) -> Comparison:
    """The two modules' decisions compared (see the module docstring)."""
    ours, theirs = _by_op(instructions(gspmd_hlo)), _by_op(instructions(shardy_hlo))
    pairs, unmatched = [], []
    for op in sorted(set(ours) | set(theirs)):
        a, b = ours.get(op, []), theirs.get(op, [])
        for part in range(max(len(a), len(b))):
            problem = _mismatch(a, b, part)
            if problem is not None:
                unmatched.append(f"op {op}: {problem}")
                continue
            pairs.append((op, part, a[part], b[part]))
    differing = {}
    for op, part, g, s in pairs:
        if not _same(g.sharding, s.sharding):
            differing[s.name] = (op, part, g, s)
    divergences = tuple(
        Divergence(
            op,
            part,
            s.opcode,
            _plain_shape(s.shape),
            g.sharding or REPLICATED,
            s.sharding or REPLICATED,
            tuple(dict.fromkeys(differing[n][0] for n in s.operands if n in differing)),
        )
        for op, part, g, s in differing.values()
    )
    return Comparison(divergences, len(pairs), tuple(unmatched))


def _by_op(found: list[Instruction]) -> dict[int, list[Instruction]]:
    by_op: dict[int, list[Instruction]] = {}
    for inst in found:
        op = index_of(inst.op_name)
        if op is not None and inst.opcode != "parameter":
            by_op.setdefault(op, []).append(inst)
    return by_op


def _mismatch(a: list[Instruction], b: list[Instruction], part: int) -> str | None:
    if part >= len(a):
        return f"only Shardy's program has a {b[part].opcode} ({len(b)} instructions vs {len(a)})"
    if part >= len(b):
        return f"only GSPMD's program has a {a[part].opcode} ({len(a)} instructions vs {len(b)})"
    g, s = a[part], b[part]
    if g.opcode != s.opcode or _plain_shape(g.shape) != _plain_shape(s.shape):
        return f"GSPMD made {g.opcode} {g.shape}, Shardy {s.opcode} {s.shape}"
    return None


def _same(a: str | None, b: str | None) -> bool:
    try:
        return normalize(a or REPLICATED) == normalize(b or REPLICATED)
    except ShardyConvertError:  # a form the algebra does not read: compare as printed
        return (a or REPLICATED) == (b or REPLICATED)


def _plain_shape(shape: str) -> str:
    """The shape without its layouts: `f32[8,8]{1,0}` -> `f32[8,8]` (the partitioners' layout
    passes may differ where the values do not)."""
    out, depth = [], 0
    for ch in shape:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)
