"""`HloSharding`: one GSPMD sharding as an immutable value that prints XLA's canonical text."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import ShardingValueError
from .iota import canonical_iota, iota_form
from .tiles import Tiles


class Kind(enum.Enum):
    REPLICATED = "replicated"
    MANUAL = "manual"
    UNKNOWN = "unknown"
    UNREDUCED = "unreduced"
    MAXIMAL = "maximal"
    TILED = "tiled"
    TUPLE = "tuple"


class SubgroupType(enum.Enum):
    """The type of one trailing subgroup dim (`last_tile_dims={...}`)."""

    MANUAL = "manual"
    UNREDUCED = "unreduced"
    REPLICATED = "replicated"
    MAXIMAL = "maximal"


# Kinds printed as a bare keyword: `{replicated}`, `{manual}`, ...
_KEYWORD_KINDS = (Kind.REPLICATED, Kind.MANUAL, Kind.UNKNOWN, Kind.UNREDUCED)


@dataclass(frozen=True, eq=False)
class HloSharding:
    """A GSPMD sharding. Build it with `parse()`; `str()` gives XLA's canonical text.

    `==` and `hash` are semantic (placement only): `""`, `{replicated}` and a one-device tiling
    are equal, a V1 list equals its V2 twin, ids inside one replication group are unordered, and
    metadata and shard groups are ignored. A named (V3) sharding keeps its own form in `named`
    (a `named.NamedSharding`: axis names, device order, open dims) and its placement in the other
    fields, so it equals its V2 twin. `reduction` is how unreduced parts are reduced ("max",
    "min"; None: the default sum), from V3's `unreduced=max{...}` or V2's
    `metadata={op_type="sdy::reduction_op" op_name="MAX"}`; it is part of the placement.
    """

    kind: Kind
    tiles: Tiles | None = None
    subgroups: tuple[SubgroupType, ...] = ()
    device: int | None = None
    elements: tuple[HloSharding, ...] = ()
    shard_group: tuple[str, int] | None = None
    metadata: str | None = None
    named: Any = None
    reduction: str | None = None

    def __post_init__(self):
        _check_fields(self)

    @classmethod
    def _make(cls, kind, tiles=None, subgroups=(), device=None, elements=(), shard_group=None):
        """Builds without the checks of __init__, for values this package built itself."""
        sharding = object.__new__(cls)
        sharding.__dict__.update(
            kind=kind,
            tiles=tiles,
            subgroups=subgroups,
            device=device,
            elements=elements,
            shard_group=shard_group,
            metadata=None,
            named=None,
            reduction=None,
        )
        return sharding

    # --- views ----------------------------------------------------------------------------------

    @property
    def data_dims(self) -> tuple[int, ...]:
        """Tile dims without the trailing subgroup dims: the tensor's rank."""
        dims = self.tile_assignment.dims
        return dims[: len(dims) - len(self.subgroups)]

    @property
    def tile_assignment(self) -> Tiles:
        """`tiles` of a TILED sharding, the one kind that has them."""
        if self.tiles is None:
            raise ShardingValueError(f"a {self.kind.value} sharding has no tiles")
        return self.tiles

    @property
    def num_devices(self) -> int | None:
        return self.tiles.num_devices if self.tiles is not None else None

    @property
    def is_replicated(self) -> bool:
        if self.kind is Kind.TUPLE:
            return all(e.is_replicated for e in self.elements)
        if self.kind is Kind.REPLICATED:
            return True
        if self.kind is not Kind.TILED:
            return False
        return self.tile_assignment.num_devices == 1 or collapsed_kind(self) is Kind.REPLICATED

    def leaves(self) -> list[HloSharding]:
        return list(self.elements) if self.kind is Kind.TUPLE else [self]

    # --- transforms -----------------------------------------------------------------------------

    def to_v2(self) -> HloSharding:
        """The V2 (`<=[R]T(P)`) form of a V1 list when it has one; otherwise self.

        Ids inside a replication group carry no order, so the groups are sorted before the
        search: `{devices=[2,1,2]2,0,3,1 last_tile_dim_replicate}` (groups {0,2}, {1,3}) becomes
        `{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}`. When sorted groups are no
        iota, an iota with the same groups as sets is searched (`grouped_iota_form`):
        `{devices=[2,6]0,1,3,4,6,9,2,5,7,8,10,11 last_tile_dim_replicate}` becomes
        `{devices=[2,6]<=[4,3]T(1,0) last_tile_dim_replicate}` (which XLA, sorting the groups
        again, reads back as that very V1 list). Found once per sharding (a module's few
        distinct shardings are asked for it at every step of planning its mesh).
        """
        return self._v2

    @cached_property
    def _v2(self) -> HloSharding:
        if self.named is not None:  # its placement: V1 where it lists device_ids, else V2
            return replace(self, named=None, metadata=reduction_metadata(self)).to_v2()
        if self.kind is Kind.TUPLE:
            elements = tuple(e.to_v2() for e in self.elements)
            changed = any(a is not b for a, b in zip(elements, self.elements))
            return replace(self, elements=elements) if changed else self
        if self.kind is not Kind.TILED or self.tile_assignment.is_iota:
            return self
        form = iota_form(self._placement_array())
        if form is None and self.subgroups[-1:] == (SubgroupType.REPLICATED,):
            from .iota_grouped import grouped_iota_form  # its search: rarely run (cold start)

            form = grouped_iota_form(
                self.tile_assignment.array().reshape(-1, self.tile_assignment.dims[-1])
            )
        if form is None:
            return self
        return replace(self, tiles=Tiles._trusted(self.tile_assignment.dims, *form))

    def relabel(self, order) -> HloSharding:
        """The sharding over mesh positions, where `order[i]` is the device id at position i.

        torch_xla's `Mesh(device_ids=[0, 2, 1, 3], (2, 2))` with spec `(0, 1)` prints
        `{devices=[2,2]0,2,1,3}`; relabelled by that order it is `{devices=[2,2]<=[4]}`. The
        result is V2 whenever it has an iota form. Maximal devices are not relabelled.
        """
        if self.kind is Kind.TUPLE:
            return replace(self, elements=tuple(e.relabel(order) for e in self.elements))
        if self.kind is not Kind.TILED:
            return self.to_v2()
        position = _inverse_order(order, self.tile_assignment.num_devices)
        grid = position[self.tile_assignment.array()]
        tiles = Tiles._trusted(self.tile_assignment.dims, devices=grid.ravel().tolist(), array=grid)
        return replace(self.to_v2(), tiles=tiles).to_v2()

    # --- semantic equality --------------------------------------------------------------------

    def _placement_array(self) -> np.ndarray:
        """The flat grid with each replication group sorted: one array per placement.

        `[2,2]3,1,2,0 last_tile_dim_replicate` has groups (3,1) and (2,0): `1,3,0,2`.
        """
        grid = self.tile_assignment.array()
        if self.subgroups[-1:] != (SubgroupType.REPLICATED,):
            return grid.ravel()
        return np.sort(grid.reshape(-1, grid.shape[-1]), axis=1).ravel()

    @cached_property
    def _key(self) -> tuple:
        if self.kind is Kind.TUPLE:
            return (Kind.TUPLE, tuple(e._key for e in self.elements))
        reduction = self.unreduced_reduction
        return self._placement_key if reduction is None else (*self._placement_key, reduction)

    @property
    def unreduced_reduction(self) -> str | None:
        """How this sharding's unreduced parts are reduced when that is not a sum; None when it
        is a sum or there are none (then `reduction` says nothing about the data)."""
        if self.reduction is None or self.reduction == "sum":
            return None
        unreduced = self.kind is Kind.UNREDUCED or SubgroupType.UNREDUCED in self.subgroups
        return self.reduction if unreduced and not self.is_replicated else None

    @cached_property
    def _placement_key(self) -> tuple:
        if self.is_replicated:
            return (Kind.REPLICATED,)
        if self.kind is Kind.MAXIMAL:
            return (Kind.MAXIMAL, self.device)
        if self.kind is not Kind.TILED:
            return (self.kind,)
        if collapsed_kind(self) is not None:
            return (collapsed_kind(self),)
        iota = self._placement_iota()
        form = self._placement_array().astype(np.int32).tobytes() if iota is None else iota
        return (Kind.TILED, self.tile_assignment.dims, self.subgroups, form)

    def _placement_iota(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The canonical `(reshape, perm)` of `_placement_array()`, or None if it has none.

        A V2 grid whose replication groups are already ascending is its own answer, so big V2
        shardings hash without being materialized.
        """
        if self.tile_assignment.is_iota and _groups_ascending(self.tile_assignment, self.subgroups):
            return self.tile_assignment.iota
        return iota_form(self._placement_array())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HloSharding):
            return NotImplemented
        if self is other:
            return True
        if _same_v2(self, other):
            return self.unreduced_reduction == other.unreduced_reduction
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    # --- text -----------------------------------------------------------------------------------

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"HloSharding({self._text!r})"

    @cached_property
    def _text(self) -> str:
        if self.kind is Kind.TUPLE:
            return _tuple_text(self.elements)
        if self.named is not None:  # V3: `, metadata=...` after the body
            extra = "" if self.metadata is None else f", metadata={self.metadata}"
            return "{" + str(self.named) + extra + "}"
        return "{" + _body_text(self) + _suffix_text(self) + "}"


_COLLAPSE = {
    SubgroupType.MANUAL: Kind.MANUAL,
    SubgroupType.REPLICATED: Kind.REPLICATED,
    SubgroupType.UNREDUCED: Kind.UNREDUCED,
}


def collapsed_kind(s: HloSharding) -> Kind | None:
    """The plain kind of a tiling that only has subgroups of one type and no data tiling.

    `{devices=[1,4]<=[4] last_tile_dims={unreduced}}` is `{unreduced}`. XLA collapses these when
    it parses them, but can print one (from `last_tile_dims={manual, unreduced}` on `[1,4]`,
    where the size-1 manual dim is dropped), so its text is not always a fixed point.
    """
    if s.kind is not Kind.TILED:
        return None
    return collapsed_subgroups(s.tile_assignment.dims, s.subgroups)


def collapsed_subgroups(dims: tuple[int, ...], types: tuple[SubgroupType, ...]) -> Kind | None:
    """`collapsed_kind` on raw tile dims and subgroup types."""
    if not types or types.count(types[0]) != len(types):
        return None
    if math.prod(dims[: len(dims) - len(types)]) != 1:
        return None
    return _COLLAPSE.get(types[0])


def _check_fields(s: HloSharding) -> None:
    """Each kind carries exactly its own fields."""
    tiled = s.kind is Kind.TILED
    if tiled != (s.tiles is not None):
        raise ShardingValueError(
            f"a {s.kind.value} sharding {'needs' if tiled else 'has no'} tiles"
        )
    if (s.kind is Kind.MAXIMAL) != (s.device is not None):
        raise ShardingValueError("only a maximal sharding has a device, and it must")
    if s.subgroups and (not tiled or len(s.subgroups) > len(s.tile_assignment.dims)):
        raise ShardingValueError("subgroup types need as many trailing tile dims")
    if s.elements and s.kind is not Kind.TUPLE:
        raise ShardingValueError("only a tuple sharding has elements")
    if s.named is not None and s.kind is Kind.TUPLE:
        raise ShardingValueError("a tuple sharding has no named form of its own")
    if s.reduction is not None and s.reduction not in ("sum", "max", "min"):
        raise ShardingValueError(f"unknown reduction {s.reduction!r}: sum, max or min")


def _groups_ascending(tiles: Tiles, subgroups: tuple[SubgroupType, ...]) -> bool:
    """True when a V2 grid's replication groups are known to list ids in ascending order.

    Always without replication. Otherwise when regrouping the minor reshape dims in ascending
    order (XLA's GroupMinorIotaDimsSorted) changes nothing: `[2,4]<=[2,2,2]T(1,0,2)` has groups
    `0,1,4,5` and `2,3,6,7`; `[2,4]<=[2,2,2]T(2,1,0)` has `0,4,2,6` and is not. False only
    means "materialize and sort to be sure" (XLA's own check misses some ascending grids).
    """
    if subgroups[-1:] != (SubgroupType.REPLICATED,):
        return True
    from .iota_rewrites import group_minor_sorted

    regrouped = group_minor_sorted(*tiles.iota, tiles.dims[-1])
    return regrouped is not None and canonical_iota(*regrouped) == tiles.iota


def _same_v2(a: HloSharding, b: HloSharding) -> bool:
    """Structurally identical V2 tilings: equal without materializing anything."""
    if a.kind is not Kind.TILED or b.kind is not Kind.TILED:
        return False
    return (
        a.tile_assignment.is_iota
        and a.tile_assignment == b.tile_assignment
        and a.subgroups == b.subgroups
    )


def _inverse_order(order, n: int) -> np.ndarray:
    """`position[device]` for `order[position] = device`: order (2,0,1) gives (1,2,0)."""
    order = np.asarray(order, dtype=np.int64).ravel()
    if order.size != n or order.min() < 0 or order.max() >= n:
        raise ShardingValueError(f"device order {_clip(order)} is not a permutation of 0..{n - 1}")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    if not (order[position] == np.arange(n)).all():
        raise ShardingValueError(f"device order {_clip(order)} is not a permutation of 0..{n - 1}")
    return position


def _clip(order: np.ndarray) -> str:
    ids = order.tolist()
    return str(ids) if len(ids) <= 16 else str(ids[:16])[:-1] + ", ...]"


def _tuple_text(elements) -> str:
    """`{a, b, c, d, e, /*index=5*/f}`: XLA marks every fifth element with its index."""
    parts = []
    for i, e in enumerate(elements):
        parts.append(f"/*index={i}*/{e}" if i and i % 5 == 0 else str(e))
    return "{" + ", ".join(parts) + "}"


def _body_text(s: HloSharding) -> str:
    if s.kind in _KEYWORD_KINDS:
        return s.kind.value
    if s.kind is Kind.MAXIMAL:
        return f"maximal device={s.device}"
    text = f"devices={s.tiles}"
    if s.subgroups == (SubgroupType.REPLICATED,):
        return text + " last_tile_dim_replicate"
    if s.subgroups:
        text += " last_tile_dims={" + ", ".join(t.value for t in s.subgroups) + "}"
    return text


def _suffix_text(s: HloSharding) -> str:
    text = ""
    if s.shard_group is not None:
        text += f" {s.shard_group[0]} {s.shard_group[1]}"
    if s.metadata is not None:
        text += f" metadata={s.metadata}"
    return text


REDUCTION_OP_TYPE = "sdy::reduction_op"


def reduction_metadata(s: HloSharding) -> str | None:
    """`s.metadata` with XLA's V2 spelling of a max/min reduction added (what XLA's V3ToV2
    writes: an OpMetadata entry `{op_type="sdy::reduction_op" op_name="MAX"}`)."""
    if s.reduction in (None, "sum") or (s.metadata and REDUCTION_OP_TYPE in s.metadata):
        return s.metadata
    entry = f'{{op_type="{REDUCTION_OP_TYPE}" op_name="{s.reduction.upper()}"}}'
    if not s.metadata or s.metadata == "{}":
        return entry
    if s.metadata.startswith("{{"):
        return s.metadata[:-1] + ", " + entry + "}"
    return "{" + s.metadata + ", " + entry + "}"
