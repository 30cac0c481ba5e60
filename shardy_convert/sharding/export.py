"""Shardy back to GSPMD: a `TensorSharding` on a `Mesh` as the equivalent `HloSharding`.

The inverse of `mesh.MeshPlan.tensor_sharding`, following XLA's `export_shardings.cc`: a
Shardy sharding on its mesh is a named (V3) sharding, placed as `named.placement` places one
(every mesh axis cut into the pieces the sub-axes need, each tensor dim taking its pieces in
order, the unused pieces one trailing replicated dim), in its V2 form where it has one.

Worked example: mesh ["a"=6] and `[{"a":(1)2}, {"a":(2)3}]`: "a" is cut into pieces of 2 and 3
(reshape [2,3]); dim 0 takes piece 0, dim 1 piece 1: `{devices=[2,3]<=[6]}`.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ShardingValueError
from . import HloSharding, parse
from .model import reduction_metadata
from .named import NamedMesh, NamedSharding, placement
from .sdy import AxisRef, DimSharding, Mesh, TensorSharding


def to_hlo(sharding: TensorSharding, mesh: Mesh, manual_axes: tuple[str, ...] = ()) -> HloSharding:
    """The HloSharding of `sharding` on `mesh`; `manual_axes` become a manual subgroup. A
    max/min reduction of unreduced axes is XLA's V2 metadata entry for it."""
    if not mesh.axes:
        if mesh.device_ids:
            return parse(f"{{maximal device={mesh.device_ids[0]}}}")
        return parse("{replicated}")
    sizes = dict(mesh.axes)
    for ref in [r for d in sharding.dims for r in d.axes] + list(sharding.unreduced):
        if ref.name not in sizes:
            raise ShardingValueError(f'axis "{ref.name}" is not in the mesh')
    named = NamedSharding(
        NamedMesh(tuple(mesh.axes), tuple(mesh.device_ids) if mesh.device_ids else None),
        tuple(DimSharding(d.axes) for d in sharding.dims),
        unreduced=sharding.unreduced,
        manual=tuple(AxisRef(a) for a in manual_axes),
        reduction=sharding.reduction or "sum",
    )
    placed = placement(named).to_v2()
    if sharding.reduction_kind is None:
        return placed
    placed = replace(placed, reduction=sharding.reduction_kind)
    return replace(placed, metadata=reduction_metadata(placed))
