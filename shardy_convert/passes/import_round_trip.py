"""import-round-trip: the manual computations of Shardy's round-trip form back to Shardy ops.

A Shardy module serialized as a StableHLO portable artifact (what XLA's PJRT client hands a
plugin) carries Shardy in its round-trip form: `xla.sdy.*` frontend attributes, which the
registered `xla-sdy-round-trip-import-shardy-attrs` reads back, and each manual computation as
`@xla.sdy.GlobalToLocalShape` -> `call @xla.sdy.manual_computation_body` ->
`@xla.sdy.LocalToGlobalShape`, which jaxlib registers no pass for: this pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ModuleError
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.diagnostics import op_location
from ..ir.ops import clone_body, find_ops
from ..ir.parse import string_value
from ..ir.walker import call_target, callee, func_name, funcs

GLOBAL_TO_LOCAL = "xla.sdy.GlobalToLocalShape"
LOCAL_TO_GLOBAL = "xla.sdy.LocalToGlobalShape"
BODY_PREFIX = "xla.sdy.manual_computation_body"
FRONTEND = "mhlo.frontend_attributes"


@dataclass(frozen=True)
class ImportRoundTripPass:
    """Turns every `@xla.sdy.GlobalToLocalShape` -> `call @xla.sdy.manual_computation_body*`
    -> `@xla.sdy.LocalToGlobalShape` into an `sdy.manual_computation` (in/out shardings and
    manual axes from the calls' `xla.sdy.*` frontend attributes, the body inlined) and erases
    the body funcs. Runs after `xla-sdy-round-trip-import-shardy-attrs`."""

    NAME: ClassVar[str] = "import-round-trip"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        bodies = {func_name(f): f for f in funcs(module) if func_name(f).startswith(BODY_PREFIX)}
        if not bodies:
            return
        with module.context:
            # Outermost first: an inner computation's call is cloned with its body, then
            # found again inside the new manual computation.
            while calls := find_ops(module, lambda op: _is_body_call(op, bodies)):
                _import(calls[0], bodies[callee(calls[0])])
            for func in bodies.values():
                func.erase()


def _is_body_call(op: ir.Operation, bodies: dict) -> bool:
    return op.name == "func.call" and callee(op) in bodies


def _import(call: ir.Operation, body: ir.Operation) -> None:
    entry = _entry(call)
    exit_op = _exit(call)
    source = entry if entry is not None else exit_op
    if source is None:
        raise ModuleError(
            f"@{callee(call)} is called without {GLOBAL_TO_LOCAL} or {LOCAL_TO_GLOBAL}",
            location=op_location(call),
        )
    operands = list(entry.operands) if entry is not None else []
    results = exit_op.results if exit_op is not None else []
    mc = ir.Operation.create(
        "sdy.manual_computation",
        results=[r.type for r in results],
        operands=operands,
        attributes={
            "in_shardings": _frontend(entry, "xla.sdy.in_shardings", call),
            "out_shardings": _frontend(exit_op, "xla.sdy.out_shardings", call),
            "manual_axes": _frontend(source, "xla.sdy.manual_axes", call),
        },
        regions=1,
        loc=call.location,
        ip=ir.InsertionPoint(call),
    )
    block = mc.regions[0].blocks.append(
        *[v.type for v in call.operands], arg_locs=[call.location] * len(call.operands)
    )
    ip = ir.InsertionPoint(block)
    returned = clone_body(body, list(block.arguments), ip)
    ir.Operation.create("sdy.return", operands=returned, loc=call.location, ip=ip)
    for old, new in zip(results, mc.results):
        old.replace_all_uses_with(new)
    for op in (exit_op, call, entry):
        if op is not None:
            op.erase()


def _entry(call: ir.Operation) -> ir.Operation | None:
    """The `@xla.sdy.GlobalToLocalShape` whose results are exactly the call's operands."""
    owners = {_owner(v) for v in call.operands}
    if len(owners) != 1:
        return None
    (op,) = owners
    if op is None or call_target(op) != GLOBAL_TO_LOCAL:
        return None
    return op


def _exit(call: ir.Operation) -> ir.Operation | None:
    """The `@xla.sdy.LocalToGlobalShape` that takes the call's results."""
    users = {use.owner.operation for r in call.results for use in r.uses}
    if len(users) != 1:
        return None
    (op,) = users
    return op if call_target(op) == LOCAL_TO_GLOBAL else None


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _frontend(op: ir.Operation | None, name: str, call: ir.Operation) -> ir.Attribute:
    """A Shardy attribute the round-trip form keeps as a string frontend attribute."""
    if op is None:  # no operands or no results: an empty list
        return ir.Attribute.parse("#sdy.sharding_per_value<[]>")
    attrs = op.attributes[FRONTEND] if FRONTEND in op.attributes else None
    text = None
    if isinstance(attrs, ir.DictAttr) and name in attrs:
        text = string_value(attrs[name])
    if text is None:
        raise ModuleError(f"{call_target(op)} without its {name}", location=op_location(op))
    try:
        return ir.Attribute.parse(text)
    except (ir.MLIRError, ValueError):
        raise ModuleError(
            f'{name} "{text[:120]}" of {call_target(op)} is not a Shardy attribute',
            location=op_location(op),
        ) from None
