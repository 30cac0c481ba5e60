"""XLA's sharding constructors (`hlo_sharding.cc`): the normalization done while parsing.

XLA never prints what it read: `HloSharding::Subgroup` and `PartialTile` collapse, merge,
reorder and sort. These functions do the same so that `str(parse(s))` is XLA's text.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .model import HloSharding, Kind, SubgroupType, collapsed_subgroups
from .tiles import Tiles

# XLA's kOrderedTypes restricted to the subgroup types: merged subgroup dims come in this order.
_ORDER = (
    SubgroupType.MAXIMAL,
    SubgroupType.MANUAL,
    SubgroupType.UNREDUCED,
    SubgroupType.REPLICATED,
)


def subgroup(tiles: Tiles, types: tuple[SubgroupType, ...]) -> HloSharding:
    """XLA's `HloSharding::Subgroup(tiles, types)`.

    Example: `[2,2,2]<=[8] last_tile_dims={replicated, manual}` -> the subgroup dims are
    reordered MANUAL first by transposing tile dims (0,1,2) -> (0,2,1):
    `[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}`.
    """
    if not types:
        return HloSharding._make(Kind.TILED, tiles)
    data_rank = len(tiles.dims) - len(types)
    collapsed = collapsed_subgroups(tiles.dims, types)
    if collapsed is not None:
        return HloSharding._make(collapsed)
    by_type, removed = _dims_by_type(tiles.dims, types, data_rank)
    merging = bool(removed) or len(by_type) > 1
    merging = merging or any(len(dims) > 1 for dims in by_type.values())
    if not merging:
        return _create(tiles, types)
    perm = list(range(data_rank))
    merged_shape = list(tiles.dims[:data_rank])
    merged_types = []
    for t in _ORDER:
        if t in by_type:
            perm += by_type[t]
            merged_shape.append(math.prod(tiles.dims[d] for d in by_type[t]))
            merged_types.append(t)
    merged = transpose(tiles, perm + removed, tuple(merged_shape))
    return _create(merged, tuple(merged_types))


def _dims_by_type(dims, types, data_rank) -> tuple[dict[SubgroupType, list[int]], list[int]]:
    """Subgroup tile dims per type, and the size-1 subgroup dims that XLA drops."""
    by_type: dict[SubgroupType, list[int]] = {}
    removed = []
    for i, t in enumerate(types):
        d = data_rank + i
        if dims[d] == 1:
            removed.append(d)
        else:
            by_type.setdefault(t, []).append(d)
    return by_type, removed


def transpose(tiles: Tiles, perm: list[int], new_dims: tuple[int, ...]) -> Tiles:
    """Tile dims transposed by `perm` then reshaped to `new_dims`; stays V2 where XLA does."""
    if tiles.is_iota:
        from .iota_rewrites import transpose_iota  # V2 grids only (cold start)

        moved = transpose_iota(tiles.dims, *tiles.iota, perm)
        if moved is not None:
            return Tiles._trusted(new_dims, moved[1], moved[2])
    grid = np.ascontiguousarray(tiles.array().transpose(perm)).reshape(new_dims)
    return Tiles._trusted(new_dims, devices=grid.ravel().tolist(), array=grid)


def _create(tiles: Tiles, types: tuple[SubgroupType, ...]) -> HloSharding:
    """The `create_sharding` lambda of XLA's Subgroup."""
    if types == (SubgroupType.REPLICATED,):
        return partial_tile(tiles)
    if types == (SubgroupType.MANUAL,) and tiles.num_devices == tiles.dims[-1]:
        return HloSharding._make(Kind.MANUAL)
    if types and types[-1] is SubgroupType.REPLICATED:
        partial = partial_tile(tiles)
        return HloSharding._make(Kind.TILED, partial.tiles, types)
    return HloSharding._make(Kind.TILED, tiles, types)


def partial_tile(tiles: Tiles) -> HloSharding:
    """XLA's `HloSharding::PartialTile`: the last tile dim is a replication group.

    One dim, or a group spanning everything, is `{replicated}`; a group of 1 is dropped; ids in
    a group are sorted. V2 stays V2 when the group is the minor reshape dim, or when the minor
    reshape dims can be regrouped in ascending order (`group_minor_sorted`); otherwise XLA
    materializes the sorted list: `[2,6]<=[4,3]T(1,0)` prints `[2,6]0,1,3,4,6,9,2,5,7,8,10,11`.
    """
    dims, group = tiles.dims, tiles.dims[-1]
    if len(dims) == 1 or group == tiles.num_devices:
        return HloSharding._make(Kind.REPLICATED)
    if group == 1:
        return HloSharding._make(Kind.TILED, tiles.reshaped(dims[:-1]))
    replicated = (SubgroupType.REPLICATED,)
    if tiles.is_iota:
        reshape, perm = tiles.iota
        if reshape[perm[-1]] == group:
            return HloSharding._make(Kind.TILED, tiles, replicated)
        from .iota_rewrites import group_minor_sorted  # V2 grids only (cold start)

        regrouped = group_minor_sorted(reshape, perm, group)
        if regrouped is not None:
            return HloSharding._make(Kind.TILED, Tiles(dims, *map(tuple, regrouped)), replicated)
    return HloSharding._make(Kind.TILED, _sort_groups(tiles, group), replicated)


def _sort_groups(tiles: Tiles, group: int) -> Tiles:
    """The ids of each consecutive run of `group` ids sorted: `1,0,3,2` by 2 is `0,1,2,3`."""
    if tiles.devices is not None and tiles.num_devices <= 1024:
        ids = tiles.devices
        rows = [sorted(ids[i : i + group]) for i in range(0, len(ids), group)]
        return Tiles._trusted(tiles.dims, devices=itertools.chain.from_iterable(rows))
    grid = np.sort(tiles.array().reshape(-1, group), axis=1).reshape(tiles.dims)
    return Tiles._trusted(tiles.dims, devices=grid.ravel().tolist(), array=grid)
