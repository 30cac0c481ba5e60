"""import-custom-calls: GSPMD's sharding custom calls become Shardy ops.

`@Sharding` -> `sdy.sharding_constraint`; a region between `@SPMDFullToShardShape` and
`@SPMDShardToFullShape` -> `sdy.manual_computation`, for JAX's pattern (around
`call @shmap_body`) and torch_xla's inline one (no call, local-shape constants defined before).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..errors import ModuleError, ShardyConvertError
from ..ir.analyses import Analyses
from ..ir.bindings import ir, sdy
from ..ir.diagnostics import op_location
from ..ir.parse import string_value
from ..ir.sdy_attrs import per_value, read_meshes, replicated, sharding_attr
from ..ir.walker import (
    FULL_TO_SHARD,
    SDY_SHARDING,
    SHARD_TO_FULL,
    SHARDING,
    call_target,
    op_index,
)
from ..sharding import parse
from ..sharding.mesh import MESH_NAME, MeshPlan, plan_from_mesh

# Cold start: ir/manual_regions.py is imported where a module has manual regions to build.
if TYPE_CHECKING:
    from ..ir.manual_regions import Region

_UNSPECIFIED = re.compile(r"unspecified_dims=\[([0-9, ]*)\]")


@dataclass(frozen=True)
class ImportCustomCallsPass:
    """Turns `@Sharding` custom calls into `sdy.sharding_constraint` (dims listed in
    `backend_config = "unspecified_dims=[...]"` open) and every region between
    `@SPMDFullToShardShape` and `@SPMDShardToFullShape` into an `sdy.manual_computation` whose
    manual axes are those the `{manual}` shardings name. Runs after import-shardings."""

    NAME: ClassVar[str] = "import-custom-calls"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        calls = _sharding_custom_calls(module, analyses)
        if not any(calls.values()):
            return
        with module.context:
            for target, ops in calls.items():
                for op in ops:
                    _check_custom_call(op, target)
            if calls[FULL_TO_SHARD] or calls[SHARD_TO_FULL]:
                plan = _mesh_plan(module)
                for block in _blocks_of(calls[FULL_TO_SHARD]):
                    _import_manual_regions(block, plan)
                # Forming regions consumed some @Sharding ops: collect the ones left.
                calls = _sharding_custom_calls(module, fresh=True)
                _check_no_boundaries_left(calls)
            made: dict = {}  # (sharding, backend_config) -> the constraint's sharding
            for op in calls["Sharding"]:
                _to_constraint(op, made)


def _mesh_plan(module: ir.Operation) -> MeshPlan | None:
    mesh = read_meshes(module).get(MESH_NAME)
    if mesh is None:
        return None
    return plan_from_mesh(list(mesh.axes), list(mesh.device_ids) if mesh.device_ids else None)


def _check_custom_call(op: ir.Operation, target: str) -> None:
    """The sharding custom calls take one value and return one; the manual-region boundaries
    carry their GSPMD sharding and have ranked tensor types on both sides."""
    if len(op.operands) != 1 or len(op.results) != 1:
        raise ModuleError(
            f"@{target} must take one operand and return one result, not {len(op.operands)} "
            f"and {len(op.results)}",
            location=op_location(op),
        )
    if target == "Sharding":
        if SDY_SHARDING not in op.attributes:  # import-shardings put it there, if it could
            raise ModuleError(
                "@Sharding custom call without a sharding attribute", location=op_location(op)
            )
        return
    if SHARDING not in op.attributes or string_value(op.attributes[SHARDING]) is None:
        raise ModuleError(f"@{target} without an {SHARDING} string", location=op_location(op))
    for value in (op.operands[0], op.results[0]):
        if not isinstance(value.type, ir.RankedTensorType):
            raise ModuleError(
                f"@{target} on a value of type {value.type}, which is not a ranked tensor",
                location=op_location(op),
            )


def _sharding_custom_calls(
    module: ir.Operation, analyses: Analyses | None = None, fresh: bool = False
) -> dict[str, list]:
    """The `@Sharding` and manual-boundary custom calls of the module, by target, in pre-order
    (from the walk import-shardings made, kept in `analyses`, unless `fresh`)."""
    calls = op_index(module, fresh, analyses).custom_calls
    return {t: list(calls.get(t, ())) for t in ("Sharding", FULL_TO_SHARD, SHARD_TO_FULL)}


def _blocks_of(ops: list[ir.Operation]) -> list[ir.Block]:
    """The distinct blocks holding `ops`, in first-seen order."""
    blocks: list[ir.Block] = []
    for op in ops:
        if not any(b == op.block for b in blocks):
            blocks.append(op.block)
    return blocks


def unspecified_dims(op: ir.Operation) -> frozenset[int]:
    if "backend_config" not in op.attributes:
        return frozenset()
    text = string_value(op.attributes["backend_config"])
    if text is None:
        return frozenset()
    m = _UNSPECIFIED.search(text)
    return frozenset(int(x) for x in m.group(1).split(",") if x.strip()) if m else frozenset()


def open_dims(sharding: ir.Attribute, dims: frozenset[int]) -> ir.Attribute:
    """The TensorShardingAttr with `dims` open (`{"x", ?}`), everything else kept."""
    if not dims:
        return sharding
    ts = sdy.TensorShardingAttr(sharding)
    new_dims = []
    for i, d in enumerate(ts.dimension_shardings):
        d = sdy.DimensionShardingAttr(d)
        closed = d.is_closed and i not in dims
        new_dims.append(sdy.DimensionShardingAttr.get(list(d.axes), is_closed=closed))
    return sdy.TensorShardingAttr.get(
        ts.mesh_or_ref, new_dims, list(ts.replicated_axes), list(ts.unreduced_axes)
    )


def _single_sharding(op: ir.Operation) -> ir.Attribute:
    return per_value(op.attributes[SDY_SHARDING])[0]


def _to_constraint(op: ir.Operation, made: dict) -> None:
    """Replaces a `@Sharding` custom call by an `sdy.sharding_constraint`; `made` keeps the
    sharding made for each (sharding, backend_config) pair (a model repeats a few)."""
    attrs = op.attributes
    key = (attrs[SDY_SHARDING], attrs["backend_config"] if "backend_config" in attrs else None)
    sharding = made.get(key)
    if sharding is None:
        sharding = made[key] = open_dims(_single_sharding(op), unspecified_dims(op))
    constraint = ir.Operation.create(
        "sdy.sharding_constraint",
        results=[op.results[0].type],
        operands=[op.operands[0]],
        attributes={"sharding": sharding},
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    op.results[0].replace_all_uses_with(constraint.results[0])
    op.erase()


def _check_no_boundaries_left(calls: dict[str, list[ir.Operation]]) -> None:
    for target in (FULL_TO_SHARD, SHARD_TO_FULL):
        left = calls[target]
        if left:
            raise ModuleError(
                f"@{target} outside any manual region this pass can form",
                location=op_location(left[0]),
            )


# --- manual regions -------------------------------------------------------------------------


def _import_manual_regions(block: ir.Block, plan: MeshPlan | None) -> None:
    if plan is None:
        raise ModuleError("manual region in a module without a mesh (run import-shardings first)")
    from ..ir.manual_regions import check_region, find_regions

    regions = find_regions(block)
    for region in regions:
        check_region(region)
    for region in regions:
        _build_manual_computation(region, plan)


def _build_manual_computation(region: Region, plan: MeshPlan) -> None:
    from ..ir.manual_regions import captures, check_no_escape, position_in_block

    inside = set(region.ops)
    manual_axes = _manual_axes(region, plan)
    operands, in_shardings, consumed = _inputs(region)
    returns, out_shardings, dropped = _outputs(region, plan, inside)
    constants, captured = captures(region, inside)
    check_no_escape(region, inside, dropped)
    # Values from outside (torch_xla uses replicated params inside its regions) come in as
    # extra operands, replicated: every device sees the whole value, as under GSPMD.
    operands += captured
    in_shardings += [_replicated(plan, v.type) for v in captured]
    first_exit = min(region.exits, key=position_in_block)
    mc = ir.Operation.create(
        "sdy.manual_computation",
        results=[x.results[0].type for x in region.exits],
        operands=operands,
        attributes={
            "in_shardings": sdy.TensorShardingPerValueAttr.get(in_shardings),
            "out_shardings": sdy.TensorShardingPerValueAttr.get(out_shardings),
            "manual_axes": sdy.ManualAxesAttr.get([ir.StringAttr.get(a) for a in manual_axes]),
        },
        regions=1,
        loc=region.entries[0].location,
        ip=ir.InsertionPoint(first_exit),
    )
    _fill_body(mc, region, returns, dropped, constants, captured)
    for k, exit_op in enumerate(region.exits):
        exit_op.results[0].replace_all_uses_with(mc.results[k])
    for op in region.exits + [o for o in region.ops if o in dropped] + region.entries + consumed:
        op.erase()
    for const in constants:
        if not list(const.results[0].uses):
            const.erase()


def _fill_body(mc, region: Region, returns, dropped: set, constants, captured) -> None:
    """Moves the region's ops into the manual computation's block, in their order; entries'
    results and captured values become block arguments, constants are cloned in."""
    local_types = [e.results[0].type for e in region.entries] + [v.type for v in captured]
    locs = [e.location for e in region.entries] + [mc.location] * len(captured)
    inner = mc.regions[0].blocks.append(*local_types, arg_locs=locs)
    ip = ir.InsertionPoint(inner)
    for op in region.ops:
        if op not in dropped:
            op.detach_from_parent()
            ip.insert(op)
    ir.Operation.create("sdy.return", operands=returns, loc=region.exits[0].location, ip=ip)
    # After sdy.return exists: an entry that feeds an exit directly (nothing in between) is
    # returned as is, and that use must move to the block argument too, or it would dangle
    # once the entry is erased.
    for k, entry in enumerate(region.entries):
        entry.results[0].replace_all_uses_with(inner.arguments[k])
    start = len(region.entries)
    for k, value in enumerate(captured):
        _replace_uses_within(value, inner.arguments[start + k], mc)
    for const in constants:
        clone = const.clone(ip=ir.InsertionPoint.at_block_begin(inner))
        for old, new in zip(const.results, clone.results):
            _replace_uses_within(old, new, mc)


def _replicated(plan: MeshPlan, value_type: ir.Type) -> ir.Attribute:
    rank = (
        ir.RankedTensorType(value_type).rank if isinstance(value_type, ir.RankedTensorType) else 0
    )
    return replicated("mesh", rank)


def _replace_uses_within(old: ir.Value, new: ir.Value, container: ir.Operation) -> None:
    for use in list(old.uses):
        if use.owner != container and _is_within(use.owner, container):
            use.owner.operands[use.operand_number] = new


def _is_within(op, container: ir.Operation) -> bool:
    op = op.operation
    while op is not None:
        if op == container:
            return True
        parent = op.parent
        op = None if parent is None else parent.operation
    return False


def _manual_axes(region: Region, plan: MeshPlan) -> list[str]:
    axes: set[str] = set()
    for entry in region.entries:
        text = string_value(entry.attributes[SHARDING])
        try:
            axes.update(plan.manual_axes(parse(text)))
        except ShardyConvertError as e:
            raise e.located(location=op_location(entry)) from None
    if not axes:
        raise ModuleError(
            "@SPMDFullToShardShape without a manual sharding",
            location=op_location(region.entries[0]),
        )
    names = [span.name for span in plan.spans]
    return sorted(axes, key=names.index)


def _inputs(region: Region) -> tuple[list[ir.Value], list[ir.Attribute], list[ir.Operation]]:
    """For each entry: the global value, its sharding, and a consumed `@Sharding` (JAX)."""
    from ..ir.manual_regions import producer

    operands, shardings, consumed = [], [], []
    for entry in region.entries:
        value = entry.operands[0]
        made_by = producer(value)
        if (
            made_by is not None
            and call_target(made_by) == "Sharding"
            and len(list(value.uses)) == 1
        ):
            shardings.append(open_dims(_single_sharding(made_by), unspecified_dims(made_by)))
            operands.append(made_by.operands[0])
            consumed.append(made_by)
            continue
        sharding = _known_sharding(value)
        if sharding is None:
            raise ModuleError(
                "the value entering this manual region has no sharding to take its "
                "in_sharding from",
                location=op_location(entry),
            )
        shardings.append(open_dims(sharding, unspecified_dims(entry)))
        operands.append(value)
    return operands, shardings, consumed


def _known_sharding(value: ir.Value) -> ir.Attribute | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        func = owner.owner.operation
        if func.name != "func.func" or "arg_attrs" not in func.attributes:
            return None
        attrs = ir.DictAttr(
            ir.ArrayAttr(func.attributes["arg_attrs"])[ir.BlockArgument(value).arg_number]
        )
        return attrs[SDY_SHARDING] if SDY_SHARDING in attrs else None
    if SDY_SHARDING not in owner.attributes:
        return None
    result_number = ir.OpResult(value).result_number
    return per_value(owner.attributes[SDY_SHARDING])[result_number]


def _check_adds_nothing(op: ir.Operation) -> None:
    """A `@Sharding` before `@SPMDShardToFullShape` is dropped (JAX and torch_xla write the
    manual sharding there, which the manual computation's body already has); one that shards
    a dim over a free axis says more, which has no place in the region's form: an error."""
    sharding = sdy.TensorShardingAttr(_single_sharding(op))
    for dim in sharding.dimension_shardings:
        if len(sdy.DimensionShardingAttr(dim).axes):
            raise ModuleError(
                f"the @Sharding before @SPMDShardToFullShape shards a dim ({sharding}): "
                "a manual region's result takes only its manual sharding there",
                location=op_location(op),
            )


def _outputs(region: Region, plan: MeshPlan, inside: set) -> tuple[list[ir.Value], list, set]:
    """For each exit: the local value to return, the out sharding; `@Sharding`s to drop."""
    from ..ir.manual_regions import producer

    returns, shardings, dropped = [], [], set()
    for exit_op in region.exits:
        value = exit_op.operands[0]
        made_by = producer(value)
        if (
            made_by is not None
            and made_by in inside
            and call_target(made_by) == "Sharding"
            and len(list(value.uses)) == 1
        ):
            _check_adds_nothing(made_by)
            dropped.add(made_by)
            value = made_by.operands[0]
        returns.append(value)
        rank = ir.RankedTensorType(exit_op.results[0].type).rank
        text = string_value(exit_op.attributes[SHARDING])
        try:
            out = sharding_attr(plan.tensor_sharding(parse(text), rank))
        except ShardyConvertError as e:
            raise e.located(location=op_location(exit_op)) from None
        shardings.append(open_dims(out, unspecified_dims(exit_op)))
    return returns, shardings, dropped
