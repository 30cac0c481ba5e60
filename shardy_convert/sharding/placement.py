"""Which devices hold each tile of a tiled sharding, and the tiles two shardings of one tiling
put on other devices: the evidence `diff` prints for a placement that differs.

A tile is a position in the data dims (the tile dims without the trailing subgroup dims); the
devices that hold it are the ids along the subgroup dims there, a set (ids inside one
replication group carry no order). `{devices=[2,2]0,1,2,3}` puts tile [0,1] on device 1,
`{devices=[2,2]0,2,1,3}` on device 2: `moved_tiles` of the two is tile [0,1] on 1 vs 2 and
tile [1,0] on 2 vs 1. GSPMD compiles both (V1 lists may name any order); two shardings of one
tiling and one set of subgroup types are equal exactly when no tile moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import HloSharding, Kind
from .tiles import MAX_MATERIALIZED


@dataclass(frozen=True)
class MovedTile:
    """One tile (its position in the data dims) and the devices that hold it in A and B."""

    index: tuple[int, ...]
    a: tuple[int, ...]
    b: tuple[int, ...]

    def __str__(self) -> str:
        where = ",".join(map(str, self.index))
        return f"tile [{where}] on {_devices(self.a)} vs {_devices(self.b)}"


def holders(s: HloSharding) -> np.ndarray:
    """The devices holding each tile of a tiled sharding: an int array of shape (data dims...,
    group size), each group sorted. `{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}` is
    [[[0, 2]], [[1, 3]]]: tile [0,0] on devices 0 and 2, tile [1,0] on 1 and 3."""
    grid = s.tile_assignment.array()
    data = s.data_dims
    return np.sort(grid.reshape(*data, -1), axis=-1)


def moved_tiles(a: HloSharding, b: HloSharding) -> list[MovedTile] | None:
    """The tiles `a` and `b` put on other devices, in row-major order of the tiles. None when
    they are not two tilings of the same data dims over as many devices (their texts say how
    they differ), or too big to list device by device."""
    if not (_tiled(a) and _tiled(b)) or a.data_dims != b.data_dims:
        return None
    n = a.tile_assignment.num_devices
    if n != b.tile_assignment.num_devices or n > MAX_MATERIALIZED:
        return None
    if (
        a.tile_assignment.dims != b.tile_assignment.dims
    ):  # one more subgroup dim: groups of another size
        return None
    ha, hb = holders(a), holders(b)
    differ = np.any(ha != hb, axis=-1)
    return [
        MovedTile(tuple(int(i) for i in index), _ids(ha[index]), _ids(hb[index]))
        for index in zip(*np.nonzero(differ))
    ]


def _tiled(s: HloSharding) -> bool:
    return s.kind is Kind.TILED and not s.is_replicated and len(s.data_dims) > 0


def _ids(row: np.ndarray) -> tuple[int, ...]:
    return tuple(int(d) for d in row)


def _devices(ids: tuple[int, ...]) -> str:
    """`3` for one device, `{0,4}` for a group."""
    return str(ids[0]) if len(ids) == 1 else "{" + ",".join(map(str, ids)) + "}"
