"""`Tiles`: an HloSharding tile assignment, V1 (explicit ids) or V2 (iota), immutable."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ShardingValueError
from ..options import MAX_DEVICES
from .iota import canonical_iota, iota_array, iota_form, is_permutation

# An iota grid is listed id by id (`array()`) only up to this size: ~8 MB of ids, a few
# seconds of work. Bigger V2 shardings are fine as long as nothing needs their list: a
# 70-byte string must not cost gigabytes (`[2,6291456]<=[4194304,3]T(1,0)
# last_tile_dim_replicate` needs its groups sorted: 2.4 GB, 33 s, before this limit).
MAX_MATERIALIZED = 2**20
# numpy arrays have at most 64 dims; no tensor has more sharded dims.
MAX_RANK = 64


@dataclass(frozen=True)
class Tiles:
    """The device grid of a tiled sharding, `dims` including the subgroup dims.

    V2 (`reshape`/`perm` set, kept canonical as XLA's `IotaTileAssignment::Create` does):
    `Tiles((4, 2), (2, 4), (1, 0))` prints `[4,2]<=[2,4]T(1,0)`. V1 (`devices` set, row-major
    over `dims`): `Tiles((4, 2), devices=(0, 4, 1, 5, 2, 6, 3, 7))`, the same grid. With neither,
    the plain iota `[dims]<=[N]`. The grid is materialized only when `array()` is called.
    """

    dims: tuple[int, ...]
    reshape: tuple[int, ...] | None = None
    perm: tuple[int, ...] | None = None
    devices: tuple[int, ...] | None = None

    def __post_init__(self):
        _set(self, "dims", _check_dims(self.dims, "tile dims"))
        if self.devices is not None:
            self._init_v1()
        else:
            self._init_v2()

    def _init_v1(self):
        if self.reshape is not None or self.perm is not None:
            raise ShardingValueError("a tile assignment has either `devices` or `reshape`/`perm`")
        devices = tuple(int(d) for d in self.devices or ())
        _check_v1(self.dims, np.asarray(devices, dtype=np.int64))
        _set(self, "devices", devices)

    def _init_v2(self):
        reshape = (math.prod(self.dims),) if self.reshape is None else self.reshape
        reshape = _check_dims(reshape, "iota reshape dims")
        perm = tuple(range(len(reshape))) if self.perm is None else tuple(map(int, self.perm))
        _check_iota(self.dims, reshape, perm)
        reshape, perm = canonical_iota(reshape, perm)
        _set(self, "reshape", reshape)
        _set(self, "perm", perm)

    @classmethod
    def _trusted(cls, dims, reshape=None, perm=None, devices=None, array=None) -> Tiles:
        """Builds without validation, for values this package has already checked."""
        tiles = object.__new__(cls)
        # Writing __dict__ directly: the frozen dataclass's __setattr__ is for users, not us.
        tiles.__dict__.update(
            dims=tuple(dims),
            reshape=None if reshape is None else tuple(reshape),
            perm=None if perm is None else tuple(perm),
            devices=None if devices is None else tuple(devices),
        )
        if array is not None:
            array = array.reshape(tiles.dims)
            array.flags.writeable = False
            tiles.__dict__["_array"] = array
        return tiles

    @property
    def is_iota(self) -> bool:
        return self.devices is None

    @property
    def iota(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """`(reshape, perm)` of a V2 grid (`is_iota`)."""
        if self.reshape is None or self.perm is None:
            raise ShardingValueError(f"tile assignment {self} is a device list, not an iota")
        return self.reshape, self.perm

    @property
    def device_list(self) -> tuple[int, ...]:
        """`devices` of a V1 grid (not `is_iota`)."""
        if self.devices is None:
            raise ShardingValueError(f"tile assignment {self} is an iota, not a device list")
        return self.devices

    @property
    def num_devices(self) -> int:
        return math.prod(self.dims)

    def array(self) -> np.ndarray:
        """The grid as a read-only int64 array of shape `dims` (built once, then cached)."""
        cached = self.__dict__.get("_array")
        if cached is None:
            if self.is_iota and self.num_devices > MAX_MATERIALIZED:
                raise ShardingValueError(
                    f"tile assignment {self} would have to be listed device by device, and it "
                    f"has {self.num_devices} devices, more than {MAX_MATERIALIZED}"
                )
            if self.is_iota:
                cached = iota_array(self.dims, *self.iota)
            else:
                cached = np.asarray(self.devices, dtype=np.int64).reshape(self.dims)
            cached.flags.writeable = False
            self.__dict__["_array"] = cached
        return cached

    def reshaped(self, dims: tuple[int, ...]) -> Tiles:
        """The same flat device order over other tile dims (XLA's TileAssignment::Reshape)."""
        if self.is_iota:
            return Tiles._trusted(dims, self.reshape, self.perm)
        return Tiles._trusted(dims, devices=self.devices, array=self.__dict__.get("_array"))

    def to_iota(self) -> Tiles | None:
        """V1 -> V2 when the list is a transpose of a reshaped arange; self when already V2."""
        if self.is_iota:
            return self
        form = iota_form(self.array())
        return None if form is None else Tiles._trusted(self.dims, *form)

    def __str__(self) -> str:
        head = "[" + ",".join(map(str, self.dims)) + "]"
        if not self.is_iota:
            return head + ",".join(map(str, self.device_list))
        reshape, perm = self.iota
        body = "<=[" + ",".join(map(str, reshape)) + "]"
        if len(reshape) > 1:
            body += "T(" + ",".join(map(str, perm)) + ")"
        return head + body


def _set(obj, name, value):
    object.__setattr__(obj, name, value)


def _check_dims(dims, what: str) -> tuple[int, ...]:
    dims = tuple(int(d) for d in dims)
    if not dims:
        raise ShardingValueError(f"{what} are empty")
    if len(dims) > MAX_RANK:
        raise ShardingValueError(f"{len(dims)} {what}, more than {MAX_RANK}")
    if any(d < 1 for d in dims):
        raise ShardingValueError(f"{what} {list(dims)} must all be positive")
    if math.prod(dims) > MAX_DEVICES:
        raise ShardingValueError(
            f"{what} {list(dims)} describe {math.prod(dims)} devices, more than {MAX_DEVICES}"
        )
    return dims


def _check_iota(dims, reshape, perm) -> None:
    if math.prod(reshape) != math.prod(dims):
        raise ShardingValueError(
            f"iota reshape dims {list(reshape)} hold {math.prod(reshape)} devices but the tile "
            f"dims {list(dims)} need {math.prod(dims)}"
        )
    if sorted(perm) != list(range(len(reshape))):
        raise ShardingValueError(
            f"iota transpose T{tuple(perm)} is not a permutation of 0..{len(reshape) - 1}"
        )


def _check_v1(dims, devices: np.ndarray) -> None:
    n = math.prod(dims)
    if devices.size != n:
        raise ShardingValueError(
            f"tile dims {list(dims)} need {n} device ids but {devices.size} are listed"
        )
    if not is_permutation(devices):
        raise ShardingValueError(f"device ids are not a permutation of 0..{n - 1}")
