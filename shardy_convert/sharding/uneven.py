"""Uneven shardings: a dim whose size its shard count does not divide.

GSPMD pads such a dim and keeps the tiling. Shardy's partitioner (jaxlib 0.10.2, measured by
compiling on the CPU client) keeps only the longest major prefix of the dim's axes that divides
the size, cutting the first axis that does not into its major sub-axis of size
gcd(what is left of the size, that axis):

    size 12 on {"x"} (x=8)          -> {"x":(1)4}        4 ways, not 8
    size 6 on {"data", "model"} (2, 4) -> {"data"}        gcd(3, 4) = 1 ends the walk
    size 6 on {"a", "b"} (a=4, b=3) -> {"a":(1)2}        b is dropped although 3 divides 3
    size 3 on {"a", "b"} (a=4, b=3) -> {}                replicated along the dim
    size 1 on {"x"}                 -> {}                (the 1x128 split 8 ways of the issue)

So the converted module, faithful as it is, compiles to another program. `shardy_kept`
computes what Shardy keeps; `uneven_dims` lists the dims where that differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import plural
from .sdy import AxisRef, DimSharding, TensorSharding


def axis_size(axis: AxisRef, mesh_axes: dict[str, int]) -> int:
    return mesh_axes[axis.name] if axis.size is None else axis.size


def shardy_kept(
    size: int, axes: tuple[AxisRef, ...], mesh_axes: dict[str, int]
) -> tuple[AxisRef, ...]:
    """The prefix of `axes` (a dim of `size` split over them, major first) Shardy keeps."""
    kept: list[AxisRef] = []
    left = size
    for axis in axes:
        n = axis_size(axis, mesh_axes)
        if left % n == 0:
            kept.append(axis)
            left //= n
            continue
        g = math.gcd(left, n)
        if g > 1:
            kept.append(AxisRef(axis.name, axis.pre or 1, g))
        break
    return tuple(kept)


@dataclass(frozen=True)
class UnevenDim:
    """One dim Shardy compiles differently from GSPMD: `given` axes, `kept` by Shardy."""

    dim: int
    size: int
    given: tuple[AxisRef, ...]
    kept: tuple[AxisRef, ...]
    ways: int
    kept_ways: int

    def __str__(self) -> str:
        given = DimSharding(self.given)
        if self.kept:
            shardy = f"only {DimSharding(self.kept)} ({plural(self.kept_ways, 'way')})"
        else:
            shardy = "not at all (replicated along it)"
        return (
            f"dim {self.dim} of size {self.size} is split {self.ways} ways ({given}): GSPMD pads "
            f"it, Shardy shards it {shardy}"
        )


def uneven_dims(
    sharding: TensorSharding, shape: tuple[int, ...], mesh_axes: dict[str, int]
) -> list[UnevenDim]:
    """The dims of a value of `shape` whose sharding Shardy does not keep as given. Dynamic
    dims (negative sizes) are skipped: their size is known only at run time."""
    found = []
    for k, (dim, size) in enumerate(zip(sharding.dims, shape)):
        if size < 0 or not dim.axes:
            continue
        ways = math.prod(axis_size(a, mesh_axes) for a in dim.axes)
        if size % ways == 0:
            continue
        kept = shardy_kept(size, dim.axes, mesh_axes)
        kept_ways = math.prod(axis_size(a, mesh_axes) for a in kept)
        found.append(UnevenDim(k, size, dim.axes, kept, ways, kept_ways))
    return found


# What an uneven sharding's message says to do (passes/pad_uneven.py).
PAD_HINT = " (pad-uneven, convert --pad-uneven, gives it GSPMD's padded shape)"


def padded_shape(sharding, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """GSPMD's padded global shape of a value of `shape` tiled by `sharding` (an HloSharding):
    each dim rounded up to a multiple of its tile count, as GSPMD lays it out (shard k of a
    dim of n split t ways holds rows [k*ceil(n/t), (k+1)*ceil(n/t)) of the padded dim, the
    padding at the end). None when there is nothing to pad: every dim divides, or the
    sharding is no tiling, or a dim is dynamic.

        [20, 10] on {devices=[8,1]...}  -> [24, 10]   (3 rows a device, the last 4 rows padding)
        [1, 64] on {devices=[8,1]...}   -> [8, 64]    (device 0 holds the row, 1-7 padding)
        [16, 64] on {devices=[8,1]...}  -> None
    """
    from .model import Kind

    if sharding.kind is not Kind.TILED or len(sharding.data_dims) != len(shape):
        return None
    if any(size < 0 for size in shape):
        return None
    padded = tuple(-(-size // t) * t for size, t in zip(shape, sharding.data_dims))
    return None if padded == tuple(shape) else padded
