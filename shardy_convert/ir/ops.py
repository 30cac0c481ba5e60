"""Finding ops in a module and cloning a func's body (the inliners' and the round-trip
import's tools); every walk goes through `compat.walk`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from . import compat
from .bindings import ir


def find_ops(root: ir.Operation, keep: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The ops nested in `root` (not `root` itself) for which `keep` is true, in pre-order."""
    root = root.operation
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        if op != root and keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    compat.walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return found


def clone_body(func: ir.Operation, operands: list[ir.Value], ip: ir.InsertionPoint) -> list:
    """Clones the body of `func` (one block) at `ip` with its arguments bound to `operands`;
    returns the values its `func.return` returns, as the clones define them."""
    block = func.regions[0].blocks[0]
    mapping = dict(zip(block.arguments, operands))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [mapping.get(v, v) for v in op.operands]
        clone = op.clone(ip=ip)
        _remap(clone, mapping)
        mapping.update(zip(op.results, clone.results))
    return []


def _remap(root: ir.Operation, mapping: dict) -> None:
    """Operands of `root` and of every op nested in it that are keys of `mapping` are
    replaced by their values (uses of the callee's values inside nested regions too)."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        for k, v in enumerate(op.operands):
            if v in mapping:
                op.operands[k] = mapping[v]
        return ir.WalkResult.ADVANCE

    compat.walk(root, visit, ir.WalkOrder.PRE_ORDER)


def sharding_call(
    value: ir.Value, attributes: Mapping[str, ir.Attribute], *, loc: ir.Location, ip
) -> ir.Operation:
    """`stablehlo.custom_call @Sharding(value)`, GSPMD's sharding constraint, made at `ip`
    with `attributes` (its `mhlo.sharding`, and a `backend_config` where the caller writes
    one, as torch_xla does)."""
    return ir.Operation.create(
        "stablehlo.custom_call",
        results=[value.type],
        operands=[value],
        attributes={"call_target_name": ir.StringAttr.get("Sharding"), **attributes},
        loc=loc,
        ip=ip,
    )


def reroute_uses(value: ir.Value, to: ir.Operation | ir.OpView) -> None:
    """Every use of `value` except `to`'s own reads `to`'s first result instead."""
    for use in list(value.uses):
        if use.owner != to:
            use.owner.operands[use.operand_number] = to.result
