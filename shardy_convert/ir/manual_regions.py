"""Where GSPMD's manual regions are: the ops of one block between `@SPMDFullToShardShape`
(entries) and `@SPMDShardToFullShape` (exits), for JAX's pattern (around `call @shmap_body`)
and torch_xla's inline one; what a region uses from outside; which manual values escape it
(then Shardy has no form for the module). import-custom-calls builds each region into an
`sdy.manual_computation`."""

from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from ..errors import ModuleError, NoShardyFormError
from . import compat
from .diagnostics import op_location
from .walker import FULL_TO_SHARD, SHARD_TO_FULL, call_target


@dataclass
class Region:
    """One manual region of a block: its entries (F), exits (S) and the ops between."""

    entries: list[ir.Operation]
    exits: list[ir.Operation]
    ops: list[ir.Operation]


def check_region(region: Region) -> None:
    if not region.exits:
        raise ModuleError(
            f"manual region never closes: no @{SHARD_TO_FULL} takes the values this "
            f"@{FULL_TO_SHARD} makes manual",
            location=op_location(region.entries[0]),
        )


def top_level(op: ir.Operation | ir.OpView, block: ir.Block) -> ir.Operation | None:
    """The ancestor of `op` that sits directly in `block` (op itself if it does)."""
    op = op.operation
    while op.block != block:
        parent = op.parent
        if parent is None or parent.name == "func.func":
            return None
        op = parent.operation
    return op


def find_regions(block: ir.Block) -> list[Region]:
    """Groups the block's manual ops into regions: ops reachable from an entry's result,
    stopping at exits; entries whose reach overlaps form one region."""
    ops = [op.operation for op in block.operations]
    position = {op: k for k, op in enumerate(ops)}
    entries = [op for op in ops if call_target(op) == FULL_TO_SHARD]
    regions: list[tuple[set[int], set[int], set[int]]] = []  # (entries, exits, ops) by position
    for entry in entries:
        inside, exits = _reach(entry, block, position, ops)
        merged = ({position[entry]}, exits, inside)
        for other in [r for r in regions if r[1] & exits or r[2] & inside]:
            regions.remove(other)
            merged = (merged[0] | other[0], merged[1] | other[1], merged[2] | other[2])
        regions.append(merged)
    return [
        Region(
            [ops[k] for k in sorted(e)], [ops[k] for k in sorted(x)], [ops[k] for k in sorted(i)]
        )
        for e, x, i in sorted(regions, key=lambda r: min(r[0]))
    ]


def _reach(entry, block, position, ops) -> tuple[set[int], set[int]]:
    inside: set[int] = set()
    exits: set[int] = set()
    work = [entry]
    while work:
        op = work.pop()
        for result in op.results:
            for use in result.uses:
                user = top_level(use.owner, block)
                if user is None:
                    continue
                k = position[user]
                if k == len(ops) - 1:
                    raise NoShardyFormError(
                        f"a manual value escapes its manual region: {user.name} uses it; Shardy "
                        "has no form for it (a manual computation's results are global)",
                        location=op_location(user),
                    )
                if call_target(user) == SHARD_TO_FULL:
                    exits.add(k)
                elif k not in inside and user != entry:
                    inside.add(k)
                    work.append(user)
    return inside, exits


def producer(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def position_in_block(op: ir.Operation) -> int:
    return [o.operation for o in op.block.operations].index(op)


def captures(region: Region, inside: set) -> tuple[list[ir.Operation], list[ir.Value]]:
    """What the region uses from outside: operand-free ops (constants, cloned into it) and
    other values (passed in as extra operands), each once, in first-use order."""
    block = region.entries[0].block
    entries = set(region.entries)
    constants: list[ir.Operation] = []
    captured: list[ir.Value] = []
    for op in region.ops:
        for operand in _all_operands(op):
            made_by = producer(operand)
            if made_by is None:
                owner = ir.BlockArgument(operand).owner.owner
                if owner is not None and top_level(owner, block) in inside:
                    continue  # an argument of a block nested in the region
                _add_value(captured, operand)
                continue
            top = top_level(made_by, block)
            if top is not None and (top in inside or top in entries):
                continue
            if top is not None and not list(top.operands) and not len(top.regions):
                if top not in constants:
                    constants.append(top)
                continue
            _add_value(captured, operand)
    return constants, captured


def _add_value(values: list[ir.Value], value: ir.Value) -> None:
    if not any(v == value for v in values):
        values.append(value)


def _all_operands(op: ir.Operation) -> list[ir.Value]:
    values: list[ir.Value] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        values.extend(inner.operands)
        return ir.WalkResult.ADVANCE

    compat.walk(op, visit)
    return values


def check_no_escape(region: Region, inside: set, dropped: set) -> None:
    exits = set(region.exits)
    block = region.entries[0].block
    for op in region.ops:
        if op in dropped:
            continue
        for result in op.results:
            for use in result.uses:
                user = top_level(use.owner, block)
                if user is not None and user not in inside and user not in exits:
                    raise NoShardyFormError(
                        f"a manual value ({op.name}) escapes its manual region to {user.name}; "
                        "Shardy has no form for it",
                        location=op_location(user),
                    )
