"""Every op of a module named by its position, so that XLA's view of the program can be
matched back to it exactly.

XLA keeps an op's `NameLoc` as the `op_name` of its instructions' metadata, through GSPMD's
propagation and through Shardy's (`shardy-xla` imports the module, propagates and exports it
with the names kept; measured on jaxlib 0.10.2). `tag_ops` gives each op of a copy of the
module the location `loc("sc.op.K"(ORIGINAL))`, K its position in a pre-order walk: the
original's own location stays inside, and the instructions XLA makes for op K carry
`op_name="sc.op.K"` on both partitioners' sides. The module the user gets is never tagged:
`ops_in_order` walks it in the same order, so position K is the same op there.

Example: `%3 = stablehlo.multiply %1, %arg1` as the 4th op of the walk becomes
`... loc("sc.op.3"("-":6:10))`, and GSPMD's `%sc.op.3.1 = f32[8,8] multiply(...),
sharding={...}, metadata={op_name="sc.op.3"}` is that op's result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ShardyConvertError
from . import compat
from .bindings import ir
from .diagnostics import format_location

TAG = "sc.op."
# Ops that make no value of the program: no tag, so XLA's instructions never point at them.
_UNTAGGED = frozenset({"builtin.module", "func.func", "func.return", "stablehlo.return"})


@dataclass(frozen=True)
class TaggedOp:
    """Op number `index` of the walk: its MLIR name (`stablehlo.multiply`), its location as
    the user's program gives it (`model.py:12:3`, `6:10` for a line of the module's text;
    None when unknown) and each result's shape and element type (None for a non-tensor)."""

    index: int
    name: str
    location: str | None
    results: tuple[tuple[tuple[int, ...], str] | None, ...]

    @property
    def tag(self) -> str:
        return f"{TAG}{self.index}"


def ops_in_order(module: ir.Operation) -> list[ir.Operation]:
    """Every op of `module` that makes a value of the program, in the order `tag_ops` numbers
    them (pre-order)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name not in _UNTAGGED:
            found.append(op)
        return ir.WalkResult.ADVANCE

    compat.walk(module, visit, ir.WalkOrder.PRE_ORDER)
    return found


class NoOpTags(ShardyConvertError):
    """These MLIR bindings cannot set an op's location: nothing can be matched to XLA's view."""


def tag_ops(module: ir.Operation) -> list[TaggedOp]:
    """Tags every op of `module` (in place: give it a copy) and says what each one is.
    NoOpTags where this jaxlib's bindings cannot set an op's location (0.7.1)."""
    if not compat.op_locations_settable():
        raise NoOpTags(
            f"jaxlib {compat.jaxlib_version()}'s MLIR bindings cannot set an op's location, which "
            "matching XLA's instructions to the program's values needs (jaxlib 0.10.2 can)"
        )
    table = []
    for k, op in enumerate(ops_in_order(module)):
        table.append(TaggedOp(k, op.name, format_location(op.location), _results(op)))
        op.location = ir.Location.name(f"{TAG}{k}", childLoc=op.location)
    return table


def index_of(op_name: str) -> int | None:
    """The position an XLA `op_name` tags (`sc.op.12` -> 12), None for another name."""
    if not op_name.startswith(TAG):
        return None
    number = op_name[len(TAG) :]
    return int(number) if number.isdigit() else None


def _results(op: ir.Operation) -> tuple[tuple[tuple[int, ...], str] | None, ...]:
    out: list[tuple[tuple[int, ...], str] | None] = []
    for result in op.results:
        if not isinstance(result.type, ir.RankedTensorType):
            out.append(None)
            continue
        t = ir.RankedTensorType(result.type)
        out.append((tuple(t.shape), str(t.element_type)))
    return tuple(out)
