"""What each device holds of a value: `8x16 -> 4x4 per device, 2 replicas`."""

from __future__ import annotations

import math

import numpy as np

from ...errors import plural
from ...sharding import HloSharding, Kind, SubgroupType
from .report import Shard


def shard_info(s: HloSharding, shape, num_devices: int | None) -> Shard | None:
    """The shard each device holds of a value of `shape` (None: unknown or non-tensor)."""
    if shape is None or any(d is None for d in shape):
        return None
    full = dims_text(shape)
    if s.kind is Kind.TILED and not s.is_replicated:
        return _tiled_shard(s, shape)
    if s.is_replicated:
        every = f"each of {plural(num_devices, 'device')}" if num_devices else "every device"
        return Shard(tuple(shape), 1, num_devices, False, f"{full} on {every} (replicated)")
    if s.kind is Kind.MAXIMAL:
        return Shard(tuple(shape), 1, 1, False, f"{full} on device {s.device} only")
    texts = {
        Kind.MANUAL: f"manual: each device holds its own {full} (no global tiles)",
        Kind.UNKNOWN: "unknown: left to propagation",
        Kind.UNREDUCED: f"{full} partial sums on every device (unreduced)",
    }
    return Shard(None, 1, None, False, texts.get(s.kind, s.kind.value))


def _tiled_shard(s: HloSharding, shape) -> Shard | None:
    data = s.data_dims
    if len(data) != len(shape):
        return None
    per = tuple(-(-n // d) for n, d in zip(shape, data))
    uneven = any(n % d for n, d in zip(shape, data))
    groups = s.tile_assignment.dims[len(data) :]
    group = math.prod(groups)
    text = f"{dims_text(per)} per device"
    for kind, size in zip(s.subgroups, groups):
        if size > 1:
            text += _SUBGROUP_WORDS[kind].format(size)
    if uneven:  # the global shape convert --pad-uneven gives it (passes/pad_uneven.py)
        padded = tuple(p * d for p, d in zip(per, data))
        text += f", uneven (padded to {dims_text(padded)}: convert --pad-uneven)"
    return Shard(per, math.prod(data), group, uneven, text)


_SUBGROUP_WORDS = {
    SubgroupType.REPLICATED: ", {} replicas",
    SubgroupType.MANUAL: ", {}-way manual",
    SubgroupType.UNREDUCED: ", {}-way unreduced",
    SubgroupType.MAXIMAL: ", {}-way maximal",
}


def dims_text(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def tile_devices(s: HloSharding) -> np.ndarray:
    """Shape data_dims + (devices per tile,): the sorted device ids holding each tile."""
    grid = s.tile_assignment.array()
    return np.sort(grid.reshape(*s.data_dims, -1), axis=-1)
