"""`normalize`: one string per placement, for caches keyed on shardings (pytorch/xla#9755)."""

from __future__ import annotations

from dataclasses import replace

from .gspmd import parse
from .model import HloSharding, Kind, collapsed_kind
from .tiles import Tiles


def normalize(text: str) -> str:
    """A canonical key: two strings give the same key iff they place data the same way.

    Metadata and shard groups are dropped, every replicated spelling (`""`, `{replicated}`, a
    one-device tiling) becomes `{replicated}`, ids in a replication group are sorted, and the
    V2 form is used whenever the (sorted) grid has one: `{devices=[2,2]0,2,1,3}` and
    `{devices=[2,2]<=[2,2]T(1,0) metadata={op_name="x"}}` both give
    `{devices=[2,2]<=[2,2]T(1,0)}`.
    """
    return str(canonical(parse(text)))


def canonical(sharding: HloSharding) -> HloSharding:
    """The representative of `sharding`'s placement class (see `normalize`)."""
    if sharding.kind is Kind.TUPLE:
        return replace(sharding, elements=tuple(canonical(e) for e in sharding.elements))
    if sharding.is_replicated:
        return HloSharding(Kind.REPLICATED)
    if sharding.kind is not Kind.TILED:
        return HloSharding(sharding.kind, device=sharding.device)
    if collapsed_kind(sharding) is not None:
        return HloSharding(collapsed_kind(sharding))
    form = sharding._placement_iota()
    if form is not None:
        return HloSharding(
            Kind.TILED, Tiles._trusted(sharding.tiles.dims, *form), sharding.subgroups
        )
    grid = sharding._placement_array()
    tiles = Tiles._trusted(sharding.tiles.dims, devices=grid.tolist(), array=grid)
    return HloSharding(Kind.TILED, tiles, sharding.subgroups)
