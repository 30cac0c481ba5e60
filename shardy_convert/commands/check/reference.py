"""The unpartitioned reference: the GSPMD original with its shardings removed, for one device.

When GSPMD and Shardy disagree, or agree on a value XLA computed wrongly, this is what tells
which side is right. It exists only where a sharding carries no meaning of its own: a manual
region (`@SPMDFullToShardShape` ... `@SPMDShardToFullShape`, `{manual}`) is per-device code
whose shapes are the shards', so such a program has no single-device form (None); nor has one
that draws random numbers, nor one that asks which partition or replica it runs on (its
values are the partition's by design).

Also here: the Shardy result on the identity device order (its meshes without `device_ids`).
Device order moves shards between devices, never values, so if that program matches the
reference where the custom order does not, the partitioner is what is wrong.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir.bindings import ir
from ...ir.ops import find_ops
from ...ir.parse import new_context, parse_module, print_module
from ...ir.sdy_attrs import MANUAL_COMPUTATION, MESH_OP, mesh_attr, mesh_from_attr
from ...ir.walker import SHARDING, call_target, sites

MANUAL_TARGETS = frozenset({"SPMDFullToShardShape", "SPMDShardToFullShape"})
# Random numbers drawn by a partitioned program need not be those drawn on one device (a
# tiled `rng` draws each shard on its own device).
RANDOM_OPS = frozenset({"stablehlo.rng", "stablehlo.rng_bit_generator"})
WHERE_OPS = frozenset({"stablehlo.partition_id", "stablehlo.replica_id"})
# Module attributes that describe the partitioning, not the computation.
_MODULE_ATTRS = (
    "mhlo.num_partitions",
    "mhlo.spmd_parameters_shardings",
    "mhlo.spmd_output_sharding",
)
_VALUE_ATTRS = ("arg_attrs", "res_attrs")


def unpartitioned(text: str | bytes) -> tuple[str | None, str]:
    """(the one-device program, "") or (None, why there is none)."""
    with new_context() as ctx:
        return strip_partitioning(parse_module(text, ctx))


def strip_partitioning(module: ir.Module) -> tuple[str | None, str]:
    """`unpartitioned` of a parsed module, which it changes into the one-device program (where
    there is one; untouched where not)."""
    calls = find_ops(module.operation, lambda op: call_target(op) is not None)
    manual = any("manual" in site.text for site in sites(module.operation))
    if manual or any(call_target(op) in MANUAL_TARGETS for op in calls):
        return None, "manual regions"
    if find_ops(module.operation, lambda op: op.name in RANDOM_OPS):
        return None, "random numbers"
    if find_ops(module.operation, lambda op: op.name in WHERE_OPS):
        return None, "partition or replica ids"
    for op in calls:
        if call_target(op) == "Sharding":  # an identity that only carries a sharding
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    for op in find_ops(module.operation, lambda op: SHARDING in op.attributes):
        del op.attributes[SHARDING]
    for func in find_ops(module.operation, lambda op: op.name == "func.func"):
        _drop_value_shardings(func)
    for name in _MODULE_ATTRS:
        if name in module.operation.attributes:
            del module.operation.attributes[name]
    return print_module(module), ""


def _drop_value_shardings(func: ir.Operation) -> None:
    for name in _VALUE_ATTRS:
        if name not in func.attributes:
            continue
        dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes[name])]
        func.attributes[name] = ir.ArrayAttr.get(
            [
                ir.DictAttr.get(
                    {d[i].name: d[i].attr for i in range(len(d)) if d[i].name != SHARDING}
                )
                for d in dicts
            ]
        )


def identity_order(text: str | bytes) -> str | None:
    """The Shardy module with every mesh on the identity device order; None when no mesh has
    a custom order or the program has manual computations (per-device code may depend on
    device order)."""

    with new_context() as ctx:
        module = parse_module(text, ctx)
        if find_ops(module.operation, lambda op: op.name == MANUAL_COMPUTATION):
            return None
        changed = False
        for op in find_ops(module.operation, lambda op: op.name == MESH_OP):
            mesh = mesh_from_attr(op.attributes["mesh"])
            if not mesh.axes or mesh.device_ids is None:
                continue
            op.attributes["mesh"] = mesh_attr(replace(mesh, device_ids=None))
            if "stablehlo.mesh" in op.attributes:  # the same mesh for plugins, with its order
                del op.attributes["stablehlo.mesh"]
            changed = True
        return print_module(module) if changed else None
