"""lift-callee-shardings: the shardings torch_xla put on a called function's arguments and
results go on `@main`'s, where the executable's parameters and outputs are.

torch_xla's StableHLO of a program with wrapped parameters (XLA_PARAMETER_WRAPPING_THREADSHOLD,
or a dynamo graph) is a thin `@main` that passes its arguments straight to
`call @SyncTensorsGraph.N` and returns elements of its tuple; the shardings sit on the callee's
arguments only. torch_xla itself compiled the HLO, where those are the entry computation's
parameters: it hands the executable buffers sharded so. Compiled as written (GSPMD or Shardy),
`@main`'s unannotated parameters are replicated: "Executable expected parameter 1 of size 80
but got buffer with incompatible size 12".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ShardyConvertError
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.value_attrs import edited, value_dict
from ..ir.walker import SHARDING, callee, func_name, funcs
from ..sharding import Kind, parse


@dataclass(frozen=True)
class LiftCalleeShardingsPass:
    """Gives each unannotated `@main` argument that is used once, as an operand of a
    `func.call`, the `mhlo.sharding` of the callee's matching argument; and each unannotated
    `@main` result that is a call's result (or an element of its one tuple result) the
    callee's sharding of it. Shardings elsewhere are left as they are."""

    NAME: ClassVar[str] = "lift-callee-shardings"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        if lift(module) == 0 and analyses is not None:  # nothing lifted: nothing changed
            analyses.mark_all_preserved()


def lift(module: ir.Operation) -> int:
    """Runs the pass; how many shardings it put on `@main`."""
    by_name = {func_name(f): f for f in funcs(module)}
    main = by_name.get("main")
    if main is None or not len(main.regions[0].blocks):
        return 0
    edits: dict = {}
    args, results = edited(edits, main, "arg"), edited(edits, main, "result")
    lifted = 0
    with module.context:
        for k, value in enumerate(main.regions[0].blocks[0].arguments):
            if not args.has(k, SHARDING):
                lifted += _set(args, k, _arg_sharding(value, by_name))
        for k, value in enumerate(_returned(main)):
            if not results.has(k, SHARDING):
                lifted += _set(results, k, _result_sharding(value, by_name))
        for values in edits.values():
            if values.changed:
                values.save()
    return lifted


def _set(values, k: int, sharding: ir.Attribute | None) -> int:
    if sharding is None:
        return 0
    values.dict(k)[SHARDING] = sharding
    values.changed = True
    return 1


def _returned(func: ir.Operation) -> list[ir.Value]:
    block = func.regions[0].blocks[0]
    last = block.operations[len(block.operations) - 1].operation
    return list(last.operands) if last.name == "func.return" else []


def _callee_attr(
    by_name: dict, call: ir.Operation | ir.OpView, kind: str, k: int
) -> ir.Attribute | None:
    """The `mhlo.sharding` of the k-th argument or result of the func `call` calls."""
    func = by_name.get(callee(call))
    entry = None if func is None else value_dict(func, kind, k)
    return entry[SHARDING] if entry is not None and SHARDING in entry else None


def _arg_sharding(value: ir.Value, by_name: dict) -> ir.Attribute | None:
    uses = list(value.uses)
    if len(uses) != 1 or uses[0].owner.name != "func.call":
        return None
    return _callee_attr(by_name, uses[0].owner, "arg", uses[0].operand_number)


def _result_sharding(value: ir.Value, by_name: dict) -> ir.Attribute | None:
    """A call's k-th result: the callee's k-th result sharding; element j of a call's one tuple
    result (`get_tuple_element`): element j of the callee's tuple sharding."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    if op.name == "func.call":
        return _callee_attr(by_name, op, "result", ir.OpResult(value).result_number)
    if op.name != "stablehlo.get_tuple_element":
        return None
    call = op.operands[0].owner
    if isinstance(call, ir.Block) or call.operation.name != "func.call":
        return None
    whole = _callee_attr(by_name, call.operation, "result", 0)
    return None if whole is None else _element(whole, ir.IntegerAttr(op.attributes["index"]).value)


def _element(attr: ir.Attribute, j: int) -> ir.Attribute | None:
    """Element j of a tuple sharding string, as a string attribute; None if it is no tuple
    (or does not parse: import-shardings reports that, where it stands)."""
    try:
        sharding = parse(ir.StringAttr(attr).value)
    except ShardyConvertError:  # left where it is, for import-shardings to locate
        return None
    if sharding.kind is not Kind.TUPLE or j >= len(sharding.elements):
        return None
    return ir.StringAttr.get(str(sharding.elements[j]))
