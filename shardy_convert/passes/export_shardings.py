"""export-shardings: Shardy back to GSPMD, the reverse of import (XLA's stablehlo export).

`sdy.sharding` -> `mhlo.sharding` strings (V2; a V1 list on a mesh with `device_ids`),
`sdy.sharding_constraint` -> `@Sharding`, `sdy.manual_computation` -> JAX's GSPMD encoding
(`@Sharding` + `@SPMDFullToShardShape` per operand, the body inlined, `@Sharding` +
`@SPMDShardToFullShape` per result); then the `sdy.mesh` ops are erased.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ModuleError
from ..ir import compat
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.diagnostics import op_location
from ..ir.ops import find_ops
from ..ir.sdy_attrs import (
    MANUAL_COMPUTATION,
    MESH_OP,
    Exported,
    export_sharding,
    lexical_manual_axes,
    manual_axes_from_attr,
    per_value,
    read_meshes,
    sharding_from_attr,
)
from ..ir.value_attrs import ValueAttrs
from ..ir.walker import SDY_SHARDING, SHARDING, body, callee, func_name, funcs
from ..sharding.export import to_hlo
from ..sharding.sdy import DimSharding, Mesh, TensorSharding
from .single_device_program import one_partition_as_placed

CONSTRAINT = "sdy.sharding_constraint"
# The sdy ops this pass removes; any other sdy op (the imported form's sdy.data_flow_edge,
# sdy.constant, collectives, ...) has no GSPMD spelling here and is an error.
_HANDLED = {MANUAL_COMPUTATION, CONSTRAINT, MESH_OP, "sdy.return"}


@dataclass(frozen=True)
class ExportShardingsPass:
    """Replaces every `sdy.sharding` on func arguments, results and ops by the equivalent
    `mhlo.sharding` string, `sdy.sharding_constraint` by `@Sharding` (open dims listed in
    `unspecified_dims`) and `sdy.manual_computation` by the `@SPMDFullToShardShape` /
    `@SPMDShardToFullShape` custom calls around its inlined body; erases the `sdy.mesh` ops."""

    NAME: ClassVar[str] = "export-shardings"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        meshes = read_meshes(module)
        if not meshes:
            return
        _check_exportable(module)
        with module.context:
            meshes = one_partition_as_placed(module, meshes)
            context = manual_contexts(module)
            for func in funcs(module):
                _export_func(func, meshes, context.get(func_name(func), ()))
            for op in list(body(module).operations):
                if op.operation.name == MESH_OP:
                    op.operation.erase()


# --- one sharding as a GSPMD string ---------------------------------------------------------


def manual_sharding(rank: int, mesh: Mesh, manual: tuple[str, ...]) -> str:
    """The sharding of a local value manual over `manual`: `{manual}` when every axis is."""
    local = TensorSharding("", (DimSharding(),) * rank)
    names = [name for name, _ in mesh.axes]
    return str(to_hlo(local, mesh, tuple(a for a in names if a in set(manual))))


# --- manual context: which axes are manual where ------------------------------------------


def manual_contexts(module: ir.Operation) -> dict[str, tuple[str, ...]]:
    """The manual axes every func runs under, from its call sites (roots: none).

    JAX's GSPMD lowering calls `@shmap_body` inside the manual region; the shardings in that
    body are local to the region and must carry the manual subgroup when exported. A func
    called under two different sets of manual axes has no one GSPMD form: an error.
    """
    by_name = {func_name(f): f for f in funcs(module)}
    calls = {name: [(c, callee(c), axes) for c, axes in _calls(f)] for name, f in by_name.items()}
    called = {target for found in calls.values() for _, target, _ in found}
    context: dict[str, tuple[str, ...]] = {name: () for name in by_name if name not in called}
    work = list(context)
    while work:
        caller = work.pop()
        for call, target, axes in calls[caller]:
            if target not in by_name:
                continue
            inner = _union(context[caller], axes)
            if target not in context:
                context[target] = inner
                work.append(target)
            elif context[target] != inner:
                raise ModuleError(
                    f"@{target} is called under different manual axes "
                    f"({{{', '.join(context[target])}}} and {{{', '.join(inner)}}})",
                    location=op_location(call),
                )
    return context


def _calls(func: ir.Operation) -> Iterator[tuple[ir.Operation, tuple[str, ...]]]:
    for call in find_ops(func, lambda op: op.name == "func.call"):
        yield call, lexical_manual_axes(call)


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(x for x in b if x not in a)


# --- the rewrite ----------------------------------------------------------------------------


def _check_exportable(module: ir.Operation) -> None:
    """Fail before touching anything: sdy ops this pass cannot spell in GSPMD."""
    bad = find_ops(module, lambda op: op.name.startswith("sdy.") and op.name not in _HANDLED)
    if bad:
        raise ModuleError(
            f"{bad[0].name} has no GSPMD form (export the front-end form JAX emits, not "
            "Shardy's imported form)",
            location=op_location(bad[0]),
        )


def _export_func(func: ir.Operation, meshes: dict[str, Mesh], outer: tuple[str, ...]) -> None:
    for kind in ("arg", "result"):
        _export_values(func, kind, meshes, outer)
    sharded, constraints, computations = _collect(func)
    for op in sharded:
        _export_op_sharding(op, meshes, _union(outer, lexical_manual_axes(op)))
    for op in constraints:
        _constraint_to_custom_call(op, meshes, _union(outer, lexical_manual_axes(op)))
    # Innermost first: an inner computation's outer axes are read before the outer one goes.
    for op in reversed(computations):
        _expand_manual_computation(op, meshes, _union(outer, lexical_manual_axes(op)))


def _export_values(func: ir.Operation, kind: str, meshes, manual: tuple[str, ...]) -> None:
    values = ValueAttrs(func, kind)
    for k in range(values.count):
        if values.has(k, SDY_SHARDING):
            entry = values.dict(k)
            text = export_sharding(entry.pop(SDY_SHARDING), meshes, manual).text
            entry[SHARDING] = ir.StringAttr.get(text)
            values.changed = True
    if values.changed:
        values.save()


def _collect(func: ir.Operation) -> tuple[list, list, list]:
    """Ops carrying `sdy.sharding`, constraints and manual computations, in pre-order."""
    sharded, constraints, computations = [], [], []

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        if op.name == CONSTRAINT:
            constraints.append(op)
        elif op.name == MANUAL_COMPUTATION:
            computations.append(op)
        if op != func and SDY_SHARDING in op.attributes:
            sharded.append(op)
        return ir.WalkResult.ADVANCE

    compat.walk(func, visit, ir.WalkOrder.PRE_ORDER)
    return sharded, constraints, computations


def _export_op_sharding(op: ir.Operation, meshes, manual: tuple[str, ...]) -> None:
    """One result: a single string; several: a tuple `{a, b}` (XLA's per-result form)."""
    shardings = per_value(op.attributes[SDY_SHARDING])
    texts = [export_sharding(s, meshes, manual).text for s in shardings]
    op.attributes[SHARDING] = ir.StringAttr.get(
        texts[0] if len(texts) == 1 else "{" + ", ".join(texts) + "}"
    )
    del op.attributes[SDY_SHARDING]


def custom_call(
    target: str, operand: ir.Value, result: ir.Type, exported: Exported, loc, ip
) -> ir.Operation:
    """`stablehlo.custom_call @target(operand) {backend_config, mhlo.sharding}`."""
    return ir.Operation.create(
        "stablehlo.custom_call",
        results=[result],
        operands=[operand],
        attributes={
            "call_target_name": ir.StringAttr.get(target),
            "backend_config": ir.StringAttr.get(exported.backend_config),
            SHARDING: ir.StringAttr.get(exported.text),
        },
        loc=loc,
        ip=ip,
    )


def _constraint_to_custom_call(op: ir.Operation, meshes, manual: tuple[str, ...]) -> None:
    exported = export_sharding(op.attributes["sharding"], meshes, manual)
    call = custom_call(
        "Sharding", op.operands[0], op.results[0].type, exported, op.location, ir.InsertionPoint(op)
    )
    op.results[0].replace_all_uses_with(call.results[0])
    op.erase()


def _expand_manual_computation(op: ir.Operation, meshes, outer: tuple[str, ...]) -> None:
    """JAX's GSPMD form of a shard_map, in front of `op`; then `op` is erased.

    Per operand: `@Sharding` (in sharding, outer axes manual) -> `@SPMDFullToShardShape`
    (manual over outer + own axes); the body ops; per result: `@Sharding` (manual) ->
    `@SPMDShardToFullShape` (out sharding). Open dims go to `unspecified_dims` of both calls.
    """
    inner = _union(outer, manual_axes_from_attr(op.attributes["manual_axes"]))
    ins = per_value(op.attributes["in_shardings"])
    outs = per_value(op.attributes["out_shardings"])
    block = op.regions[0].blocks[0]
    ip, loc = ir.InsertionPoint(op), op.location
    for k, arg in enumerate(block.arguments):
        full = export_sharding(ins[k], meshes, outer)
        local = _manual(ins[k], arg.type, meshes, inner, full.open_dims)
        held = custom_call("Sharding", op.operands[k], op.operands[k].type, full, loc, ip)
        entry = custom_call("SPMDFullToShardShape", held.results[0], arg.type, local, loc, ip)
        arg.replace_all_uses_with(entry.results[0])
    returned: list[ir.Value] = []
    for inner_op in list(block.operations):
        if inner_op.operation.name == "sdy.return":
            returned = list(inner_op.operands)
            continue
        inner_op.operation.move_before(op)
    for k, value in enumerate(returned):
        full = export_sharding(outs[k], meshes, outer)
        local = _manual(outs[k], value.type, meshes, inner, full.open_dims)
        held = custom_call("Sharding", value, value.type, local, loc, ip)
        exit_op = custom_call(
            "SPMDShardToFullShape", held.results[0], op.results[k].type, full, loc, ip
        )
        op.results[k].replace_all_uses_with(exit_op.results[0])
    op.erase()


def _manual(attr, value_type: ir.Type, meshes, manual, open_dims) -> Exported:
    _, mesh = sharding_from_attr(attr, meshes)
    rank = ir.RankedTensorType(value_type).rank
    return Exported(manual_sharding(rank, mesh, manual), open_dims)
