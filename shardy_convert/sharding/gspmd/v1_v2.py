"""One V1/V2 sharding (`{devices=[...]...}`, the kind keywords) of XLA's HloSharding text
(`hlo_parser.cc` `ParseSingleSharding`): its attributes in any order, then XLA's construction.

It accepts every form XLA prints or parses, and rejects what XLA silently accepts or aborts on:
short or long device lists, duplicate or out-of-range ids, iota sizes that disagree, a `T(...)`
that is not a permutation, both last-tile forms at once, repeated or conflicting attributes.
"""

from __future__ import annotations

import math

from ...errors import ShardingValueError
from ..iota import canonical_iota
from ..model import HloSharding, Kind, SubgroupType
from ..tiles import Tiles
from ..xla_rules import subgroup
from .lexer import KINDS, Cursor
from .metadata import metadata
from .tile_assignment import check_device_list, tile_assignment

_SUBGROUP_TYPES = {t.value: t for t in SubgroupType}


# --- one sharding ------------------------------------------------------------------------------


class _Items:
    """What one `{...}` said, with the position of each attribute for error messages."""

    def __init__(self, start: int):
        self.start = start  # the opening `{`
        self.seen: dict[str, tuple[int, str]] = {}
        self.kind: Kind | None = None
        self.device: int | None = None
        self.tiles: tuple | None = None  # (dims, reshape, perm, devices, devices_pos)
        self.types: tuple[SubgroupType, ...] | None = None
        self.shard_group: tuple[str, int] | None = None
        self.metadata: str | None = None
        self.reduction: str | None = None

    def mark(self, cur: Cursor, name: str, pos: int, group: str | None = None) -> None:
        """Records an attribute; XLA lets a repeat silently win, we refuse it."""
        group = group or name
        if group in self.seen:
            earlier = self.seen[group][1]
            how = "is given twice" if earlier == name else f"conflicts with '{earlier}'"
            raise cur.error(f"'{name}' {how}", pos)
        self.seen[group] = (pos, name)

    def pos(self, group: str) -> int:
        return self.seen[group][0]


def single(cur: Cursor) -> HloSharding:
    """`{` already read: attributes in any order up to `}`, then XLA's construction."""
    items = _Items(cur.pos - 1)
    while not cur.eat("}"):
        if cur.at_end():
            raise cur.error("expected '}' to end the sharding")
        _item(cur, items)
    return _build(cur, items)


def _item(cur: Cursor, items: _Items) -> None:
    pos = cur.skip()
    name = cur.word()
    if name is None:
        raise cur.error("unexpected character in sharding")
    if cur.text.startswith("=", cur.pos):
        cur.pos += 1
        handler = _ATTRIBUTES.get(name)
    elif name in _ATTRIBUTES:
        raise cur.error(f"expected '=' right after '{name}'")
    else:
        handler = _KEYWORDS.get(name)
    if handler is None:
        raise cur.error(f"unknown sharding attribute '{name}'", pos)
    handler(cur, items, name, pos)


def _kind_keyword(cur, items, name, pos):
    items.mark(cur, name, pos, "kind")
    items.kind = KINDS[name]


def _last_tile_dim_replicate(cur, items, name, pos):
    items.mark(cur, name, pos, "last tile dims")
    items.types = (SubgroupType.REPLICATED,)


def _shard_group(cur, items, name, pos):
    items.mark(cur, name, pos, "shard group")
    items.shard_group = (name, cur.integer(f"a shard group id after '{name}'"))
    if items.shard_group[1] < 0:
        raise cur.value_error(f"shard group id {items.shard_group[1]} is negative", pos)


def _device(cur, items, name, pos):
    items.mark(cur, name, pos, "devices")
    value_pos = cur.skip()
    items.device = cur.integer("an integer after 'device='")
    if items.device < 0:
        raise cur.value_error(f"device id {items.device} is negative", value_pos)


def _devices(cur, items, name, pos):
    items.mark(cur, name, pos, "devices")
    items.tiles = tile_assignment(cur)


def _last_tile_dims(cur, items, name, pos):
    items.mark(cur, name, pos, "last tile dims")
    cur.expect("{", "'{' to start the last_tile_dims list")
    types: list[SubgroupType] = []
    while not types or cur.eat(","):
        if not types and cur.peek() == "}":
            break
        type_pos = cur.skip()
        word = cur.word()
        if word not in _SUBGROUP_TYPES:
            raise cur.error("expected manual, maximal, replicated or unreduced", type_pos)
        types.append(_SUBGROUP_TYPES[word])
    cur.expect("}", "'}' to end the last_tile_dims list")
    items.types = tuple(types)


def _metadata(cur, items, name, pos):
    items.mark(cur, name, pos)
    items.metadata, items.reduction = metadata(cur)


_KEYWORDS = {
    **dict.fromkeys(KINDS, _kind_keyword),
    "last_tile_dim_replicate": _last_tile_dim_replicate,
    "shard_as": _shard_group,
    "shard_like": _shard_group,
}
_ATTRIBUTES = {
    "device": _device,
    "devices": _devices,
    "last_tile_dims": _last_tile_dims,
    "metadata": _metadata,
}


# --- construction ------------------------------------------------------------------------------


def _build(cur: Cursor, items: _Items) -> HloSharding:
    """XLA's construction step of ParseSingleSharding, plus the checks XLA skips."""
    kind = items.kind or Kind.TILED
    _check_attributes(cur, items, kind)
    if kind is Kind.MAXIMAL:
        sharding = HloSharding(Kind.MAXIMAL, device=_maximal_device(cur, items))
    elif kind is Kind.TILED:
        sharding = _tiled(cur, items)
    else:
        sharding = HloSharding(kind)
    if items.shard_group is None and items.metadata is None:
        return sharding
    return _with_extras(sharding, items)


def _with_extras(sharding: HloSharding, items: _Items) -> HloSharding:
    return HloSharding(
        sharding.kind,
        sharding.tiles,
        sharding.subgroups,
        sharding.device,
        shard_group=items.shard_group,
        metadata=items.metadata,
        reduction=items.reduction,
    )


def _check_attributes(cur: Cursor, items: _Items, kind: Kind) -> None:
    seen = items.seen
    if kind is not Kind.TILED and "last tile dims" in seen:
        raise cur.error(
            f"a {kind.value} sharding has no last tile dims", items.pos("last tile dims")
        )
    if kind in (Kind.MAXIMAL, Kind.TILED) or "devices" not in seen:
        return
    raise cur.value_error(
        f"{kind.value} shardings should not have any devices assigned", items.pos("devices")
    )


def _maximal_device(cur: Cursor, items: _Items) -> int:
    """`device=N`, or XLA's other spelling `devices=[1]N`."""
    if items.device is not None:
        return items.device
    tiles = items.tiles
    if tiles is None or tiles[3] is None or tiles[3].size != 1 or math.prod(tiles[0]) != 1:
        pos = items.pos("devices" if "devices" in items.seen else "kind")
        raise cur.value_error("maximal shardings should have exactly one device assigned", pos)
    if tiles[3][0] < 0:
        raise cur.value_error(f"device id {tiles[3][0]} is negative", tiles[4])
    return int(tiles[3][0])


def _tiled(cur: Cursor, items: _Items) -> HloSharding:
    if items.tiles is None:
        raise cur.value_error("a tiled sharding needs 'devices=[...]'", items.start)
    dims, reshape, perm, devices, pos = items.tiles
    types = items.types or ()
    if len(types) > len(dims):
        raise cur.value_error(
            f"{len(types)} last tile dim types but only {len(dims)} tile dims",
            items.pos("last tile dims"),
        )
    if devices is None:
        tiles = Tiles._trusted(dims, *canonical_iota(reshape, perm))
    else:
        if devices.size <= 1:
            raise cur.value_error(
                "non-maximal shardings must have more than one device assigned", pos
            )
        check_device_list(cur, dims, devices, pos)
        tiles = Tiles._trusted(dims, devices=devices.tolist(), array=devices)
    try:
        return subgroup(tiles, types)
    except ShardingValueError as e:  # a grid too big to list (Tiles.array)
        raise cur.value_error(e.message, pos) from None
