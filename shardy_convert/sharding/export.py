"""Shardy back to GSPMD: a `TensorSharding` on a `Mesh` as the equivalent `HloSharding`.

The inverse of `mesh.MeshPlan.tensor_sharding`, following XLA's `export_shardings.cc`: every
mesh axis is cut into the pieces the sharding's sub-axes need; the pieces in mesh order are
the iota's reshape dims; each tensor dim takes its pieces in order, the unused pieces form
one trailing replicated dim. With `device_ids`, the grid is materialized as a V1 list.

Worked example: mesh ["a"=6] and `[{"a":(1)2}, {"a":(2)3}]`: "a" is cut into pieces of 2 and 3
(reshape [2,3]); dim 0 takes piece 0, dim 1 piece 1: `{devices=[2,3]<=[6]}`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShardingValueError
from . import HloSharding, parse
from .sdy import AxisRef, Mesh, TensorSharding


def to_hlo(sharding: TensorSharding, mesh: Mesh, manual_axes: tuple[str, ...] = ()) -> HloSharding:
    """The HloSharding of `sharding` on `mesh`; `manual_axes` become a manual subgroup."""
    sizes = dict(mesh.axes)
    if not mesh.axes:
        if mesh.device_ids:
            return parse(f"{{maximal device={mesh.device_ids[0]}}}")
        return parse("{replicated}")
    pieces = _pieces(sharding, sizes, manual_axes)
    order = [(name, lo) for name, _ in mesh.axes for lo in pieces[name]]
    reshape = [pieces[name][lo] for name, lo in order]
    index = {key: k for k, key in enumerate(order)}
    perm: list[int] = []
    dims: list[int] = []
    for dim in sharding.dims:
        keys = [key for ref in dim.axes for key in _ref_pieces(ref, sizes, pieces)]
        perm.extend(index[k] for k in keys)
        dims.append(math.prod(reshape[index[k]] for k in keys))
    manual = [index[(a, lo)] for a in manual_axes for lo in pieces[a]]
    unreduced = [index[k] for ref in sharding.unreduced for k in _ref_pieces(ref, sizes, pieces)]
    rest = [k for k in range(len(order)) if k not in {*perm, *manual, *unreduced}]
    subgroups = []
    # XLA's subgroup order: manual, unreduced, replicated.
    for group, kind in ((manual, "manual"), (unreduced, "unreduced"), (rest, "replicated")):
        size = math.prod(reshape[k] for k in group)
        if size > 1:
            perm.extend(group)
            dims.append(size)
            subgroups.append(kind)
    if not any(d > 1 for d in dims[: len(sharding.dims)]) and subgroups in ([], ["replicated"]):
        return parse("{replicated}")
    return parse(_text(dims, reshape, perm, subgroups, mesh.device_ids))


def _pieces(
    sharding: TensorSharding, sizes: dict[str, int], manual_axes: tuple[str, ...]
) -> dict[str, dict[int, int]]:
    """For each axis, {major prefix size: piece size}, major first, cut at every sub-axis."""
    cuts = {name: {1, size} for name, size in sizes.items()}
    refs = [r for d in sharding.dims for r in d.axes] + list(sharding.unreduced)
    for ref in refs:
        if ref.name not in sizes:
            raise ShardingValueError(f'axis "{ref.name}" is not in the mesh')
        if ref.pre is not None:
            cuts[ref.name].update((ref.pre, ref.pre * ref.size))
    pieces: dict[str, dict[int, int]] = {}
    for name, points in cuts.items():
        chain = sorted(points)
        pieces[name] = {chain[k]: chain[k + 1] // chain[k] for k in range(len(chain) - 1)}
    del manual_axes
    return pieces


def _ref_pieces(
    ref: AxisRef, sizes: dict[str, int], pieces: dict[str, dict[int, int]]
) -> list[tuple[str, int]]:
    lo, hi = (1, sizes[ref.name]) if ref.pre is None else (ref.pre, ref.pre * ref.size)
    return [(ref.name, p) for p in sorted(pieces[ref.name]) if lo <= p < hi]


def _text(dims, reshape, perm, subgroups, device_ids) -> str:
    tail = ""
    if subgroups == ["replicated"]:
        tail = " last_tile_dim_replicate"
    elif subgroups:
        tail = f" last_tile_dims={{{', '.join(subgroups)}}}"
    dims_text = ",".join(map(str, dims))
    if device_ids is None:
        iota = f"<=[{','.join(map(str, reshape))}]"
        if len(reshape) > 1:
            iota += f"T({','.join(map(str, perm))})"
        return f"{{devices=[{dims_text}]{iota}{tail}}}"
    positions = np.arange(math.prod(reshape)).reshape(reshape).transpose(perm).reshape(-1)
    ids = np.asarray(device_ids)[positions]
    return f"{{devices=[{dims_text}]{','.join(map(str, ids))}{tail}}}"
