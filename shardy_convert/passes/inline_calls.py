"""inline-calls: every `func.call` replaced by a copy of the callee's body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.ops import clone_body, find_ops
from ..ir.walker import callee, func_name, funcs

# Calls nested deeper than this (recursion) are left in place.
MAX_DEPTH = 64


@dataclass(frozen=True)
class InlineCallsPass:
    """Replaces every `func.call` of a func the module defines (not just declares) by a copy
    of the callee's body, to a depth of 64 (stablehlo registers no inliner interface in
    jaxlib, so MLIR's `inline` pass leaves them). Callees stay; `symbol-dce` removes the
    private ones."""

    NAME: ClassVar[str] = "inline-calls"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        by_name = {func_name(f): f for f in funcs(module) if len(f.regions[0].blocks)}
        with module.context:
            for _ in range(MAX_DEPTH):
                calls = find_ops(module, lambda op: _calls_one_of(op, by_name))
                if not calls:
                    return
                for call in calls:
                    _inline(call, by_name[callee(call)])


def _calls_one_of(op: ir.Operation, by_name: dict) -> bool:
    return op.name == "func.call" and callee(op) in by_name


def _inline(call: ir.Operation, func: ir.Operation) -> None:
    results = clone_body(func, list(call.operands), ir.InsertionPoint(call))
    for old, new in zip(call.results, results):
        old.replace_all_uses_with(new)
    call.erase()
