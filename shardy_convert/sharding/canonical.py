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
    collapsed = collapsed_kind(sharding)
    if collapsed is not None:
        return HloSharding(collapsed)
    form = sharding._placement_iota()
    if form is not None:
        return HloSharding(
            Kind.TILED, Tiles._trusted(sharding.tile_assignment.dims, *form), sharding.subgroups
        )
    grid = sharding._placement_array()
    tiles = Tiles._trusted(sharding.tile_assignment.dims, devices=grid.tolist(), array=grid)
    return HloSharding(Kind.TILED, tiles, sharding.subgroups)


def device_list_spelling(text: str) -> str:
    """The placement of `text` spelled as torch_xla's built-in runtime prints it: a tiling as
    an explicit device list, each replication group ascending (XLA sorts them), the iota form
    expanded; everything else (`""`, `{replicated}`, `{manual}`, maximal, and a tiling of one
    device, `{devices=[1]<=[1]}`, which no V1 list can spell) as given.

    torch_xla writes every sharding as a V1 list and GSPMD keeps those lists, so
    `_get_xla_sharding_spec` reads `{devices=[1,8]0,1,2,3,4,5,6,7}` on the built-in runtime;
    Shardy's partitioner reports the same placement as `{devices=[1,8]<=[8]}`. User code and
    tests compare these strings.
    """
    sharding = parse(text)
    spelled = _device_list(sharding)
    return text if spelled is sharding else str(spelled)


def _device_list(sharding: HloSharding) -> HloSharding:
    """The sharding with each tiling an explicit, group-sorted device list (shard groups and
    metadata, which torch_xla does not print, dropped); itself when nothing is tiled."""
    if sharding.kind is Kind.TUPLE:
        elements = tuple(_device_list(e) for e in sharding.elements)
        if all(a is b for a, b in zip(elements, sharding.elements)):
            return sharding
        return HloSharding(Kind.TUPLE, elements=elements)
    if sharding.kind is not Kind.TILED or collapsed_kind(sharding) is not None:
        return sharding
    grid = sharding._placement_array()
    if grid.size == 1:  # a one-device tiling has no device-list form: XLA refuses [1]0
        return sharding
    tiles = Tiles._trusted(sharding.tile_assignment.dims, devices=grid.tolist(), array=grid)
    return HloSharding(Kind.TILED, tiles, sharding.subgroups)
