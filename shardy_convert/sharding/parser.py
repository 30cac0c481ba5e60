"""A strict parser for XLA's HloSharding text (`hlo_parser.cc` `ParseSharding`).

It accepts every form XLA prints or parses, and rejects what XLA silently accepts or aborts on:
short or long device lists, duplicate or out-of-range ids, iota sizes that disagree, a `T(...)`
that is not a permutation, both last-tile forms at once, repeated or conflicting attributes.
Errors quote the string and point at the column.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from ..errors import ShardingSyntaxError, ShardingValueError
from .iota import canonical_iota, is_permutation
from .model import HloSharding, Kind, SubgroupType
from .tiles import MAX_DEVICES, MAX_MATERIALIZED, MAX_RANK, Tiles
from .xla_rules import subgroup

# XLA's lexer skips whitespace, `/* ... */` and `// ...` comments between tokens.
_SKIP = re.compile(r"(?:\s+|/\*.*?\*/|//[^\n]*)*", re.S)
_INT = re.compile(r"-?[0-9]+(?![A-Za-z0-9_])")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A run of integers separated by commas: the bulk of a V1 device list, matched in one go.
_INT_RUN = re.compile(r"-?[0-9]+(?:[ \t\r\n]*,[ \t\r\n]*-?[0-9]+)*(?![A-Za-z0-9_])")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)

_KINDS = {
    "replicated": Kind.REPLICATED,
    "maximal": Kind.MAXIMAL,
    "manual": Kind.MANUAL,
    "unknown": Kind.UNKNOWN,
    "unreduced": Kind.UNREDUCED,
}
_SUBGROUP_TYPES = {t.value: t for t in SubgroupType}
# OpMetadata fields XLA's ParseMetadata accepts, by the kind of value each takes.
_METADATA_INT = {"source_line", "source_end_line", "source_column", "source_end_column"}
_METADATA_INT |= {"stack_frame_id"}
_METADATA_STR = {"op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name"}
_METADATA_STR |= {"metadata_payload"}
_METADATA_LIST = {"profile_type"}


@functools.lru_cache(maxsize=8192)
def parse(text: str) -> HloSharding:
    """Parses one `mhlo.sharding` string; `""` is `{replicated}` (an empty OpSharding proto).

    Strict: raises `ShardingSyntaxError` (with the column) for text XLA would not read and
    `ShardingValueError` for text that describes no placement. Cached on the string, since the
    result is immutable and big modules repeat the same few strings.
    """
    return _parse_fast(text) or _parse_full(text)


# The forms front-ends print (torch_xla's V1 lists, JAX's V2), matched by one regex. Anything
# else, and anything that fails a check here, goes through the full parser, which reports errors.
_FAST = re.compile(
    r"\{devices=\[([0-9,]+)\](?:<=\[([0-9,]+)\](?:T\(([0-9,]+)\))?|([0-9,]+))"
    r"( last_tile_dim_replicate)?\}"
)
_FAST_KINDS = {"": Kind.REPLICATED, **{"{" + k + "}": v for k, v in _KINDS.items()}}
_FAST_KINDS.pop("{maximal}")


def _parse_fast(text: str) -> HloSharding | None:
    kind = _FAST_KINDS.get(text)
    if kind is not None:
        return HloSharding._make(kind)
    m = _FAST.fullmatch(text)
    if m is None or _has_empty_item(m) or max(len(m[1]), len(m[2] or "")) > 4 * MAX_RANK:
        return None
    dims = _ints(m[1])
    n = math.prod(dims)
    if min(dims) < 1 or n > MAX_MATERIALIZED or len(dims) > MAX_RANK:
        return None
    tiles = _fast_v1(dims, n, m[4]) if m[4] else _fast_v2(dims, n, m[2], m[3])
    if tiles is None:
        return None
    return subgroup(tiles, (SubgroupType.REPLICATED,) if m[5] else ())


def _has_empty_item(m: re.Match) -> bool:
    """An empty item in one of `_FAST`'s `[0-9,]+` groups: `1,,2`, `,1` or `1,`."""
    for group in m.groups()[:4]:
        if group and (group[0] == "," or group[-1] == "," or ",," in group):
            return True
    return False


def _ints(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(",")))


def _fast_v1(dims, n: int, text: str) -> Tiles | None:
    if len(text) < 4096:
        ids = _ints(text)
        if n < 2 or len(ids) != n or sorted(ids) != list(range(n)):
            return None
        return Tiles._trusted(dims, devices=ids)
    ids = _id_array(text)
    if ids is None or ids.size != n or not is_permutation(ids):
        return None
    return Tiles._trusted(dims, devices=ids.tolist(), array=ids)


def _id_array(text: str) -> np.ndarray | None:
    """Digits-and-commas text as an int64 array, vectorized (~4 ms for 65,536 ids).

    Horner's rule over digit positions instead of numbers: step j reads digit j of every
    number at once (`value = value*10 + digit`), so the loop runs at most 9 times. For
    `"12,3"`: starts (0, 3), lengths (2, 1); j=0 gives (1, 3), j=1 gives (12, 3).
    """
    digits = np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64) - ord("0")
    ends = np.append(np.flatnonzero(digits < 0), digits.size)  # commas, then the end
    starts = np.append(0, ends[:-1] + 1)
    lengths = ends - starts
    if lengths.min() < 1 or lengths.max() > 9:  # `1,,2`, or beyond 2**24: the full parser
        return None
    values = np.zeros(ends.size, dtype=np.int64)
    for j in range(int(lengths.max())):
        live = lengths > j
        values = np.where(live, values * 10 + digits[np.where(live, starts + j, 0)], values)
    return values


def _fast_v2(dims, n: int, reshape_text: str, perm_text: str | None) -> Tiles | None:
    reshape = _ints(reshape_text)
    perm = _ints(perm_text) if perm_text else (0,)
    if (len(reshape) > 1) != (perm_text is not None) or math.prod(reshape) != n:
        return None
    if min(reshape) < 1 or len(reshape) > MAX_RANK or sorted(perm) != list(range(len(reshape))):
        return None
    return Tiles._trusted(dims, *canonical_iota(reshape, perm))


def _parse_full(text: str) -> HloSharding:
    cur = _Cursor(text)
    if cur.at_end():
        return HloSharding(Kind.REPLICATED)
    cur.expect("{", "'{' to start the sharding")
    if cur.peek() in ("{", "}"):
        sharding = _tuple(cur)
    else:
        sharding = _single(cur)
    if not cur.at_end():
        raise cur.error("unexpected text after the sharding")
    return sharding


class _Cursor:
    """The text and a position; every method skips whitespace and comments first."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip(self) -> int:
        self.pos = _SKIP.match(self.text, self.pos).end()
        return self.pos

    def at_end(self) -> bool:
        return self.skip() >= len(self.text)

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def eat(self, token: str) -> bool:
        if self.text.startswith(token, self.skip()):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str) -> None:
        if not self.eat(token):
            raise self.error(f"expected {what}")

    def integer(self, what: str = "an integer") -> int:
        m = _INT.match(self.text, self.skip())
        if m is None:
            raise self.error(f"expected {what}")
        value = int(m.group())
        if abs(value) >= 2**63:  # XLA's lexer reads int64
            raise self.error(f"{m.group()} does not fit in 64 bits")
        self.pos = m.end()
        return value

    def word(self) -> str | None:
        m = _WORD.match(self.text, self.skip())
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def error(self, message: str, pos: int | None = None) -> ShardingSyntaxError:
        pos = self.pos if pos is None else pos
        return ShardingSyntaxError(message, self.text, pos + 1)

    def value_error(self, message: str, pos: int) -> ShardingValueError:
        """A well-formed but impossible value; quotes the text and names the column too."""
        shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        error = ShardingValueError(f'{message} at column {pos + 1} of "{shown}"')
        error.text, error.column = self.text, pos + 1
        return error


# --- tuples ------------------------------------------------------------------------------------


def _tuple(cur: _Cursor) -> HloSharding:
    """`{` already read; `{}` or `{{...}, {...}}` (flat: XLA has no nested tuple text)."""
    elements = []
    if not cur.eat("}"):
        while True:
            start = cur.skip()
            cur.expect("{", "'{' to start a tuple element")
            if cur.peek() == "{":
                raise cur.error("nested tuple shardings are not allowed", start)
            elements.append(_single(cur))
            if cur.eat("}"):
                break
            cur.expect(",", "',' or '}' after a tuple element")
    return HloSharding(Kind.TUPLE, elements=tuple(elements))


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

    def mark(self, cur: _Cursor, name: str, pos: int, group: str | None = None) -> None:
        """Records an attribute; XLA lets a repeat silently win, we refuse it."""
        group = group or name
        if group in self.seen:
            earlier = self.seen[group][1]
            how = "is given twice" if earlier == name else f"conflicts with '{earlier}'"
            raise cur.error(f"'{name}' {how}", pos)
        self.seen[group] = (pos, name)

    def pos(self, group: str) -> int:
        return self.seen[group][0]


def _single(cur: _Cursor) -> HloSharding:
    """`{` already read: attributes in any order up to `}`, then XLA's construction."""
    items = _Items(cur.pos - 1)
    while not cur.eat("}"):
        if cur.at_end():
            raise cur.error("expected '}' to end the sharding")
        _item(cur, items)
    return _build(cur, items)


def _item(cur: _Cursor, items: _Items) -> None:
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
    items.kind = _KINDS[name]


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
    items.tiles = _tile_assignment(cur)


def _last_tile_dims(cur, items, name, pos):
    items.mark(cur, name, pos, "last tile dims")
    cur.expect("{", "'{' to start the last_tile_dims list")
    types = []
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
    start = cur.skip()
    cur.expect("{", "'{' after 'metadata='")
    if cur.peek() == "{":
        _metadata_list(cur)
    else:
        _metadata_fields(cur)
    items.metadata = cur.text[start : cur.pos]


_KEYWORDS = {
    **dict.fromkeys(_KINDS, _kind_keyword),
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


# --- metadata ----------------------------------------------------------------------------------


def _metadata_list(cur: _Cursor) -> None:
    """`{{op_name="a"}, {op_name="b"}}` with the outer `{` read."""
    while True:
        cur.expect("{", "'{' to start one metadata entry")
        _metadata_fields(cur)
        if cur.eat("}"):
            return
        cur.expect(",", "',' or '}' in the metadata list")


def _metadata_fields(cur: _Cursor) -> None:
    """`op_name="x" source_line=3, profile_type={1}}` up to and including the closing `}`.

    Fields are separated by spaces or one comma; each may appear once (as in XLA).
    """
    seen: set[str] = set()
    if cur.eat("}"):
        return
    while True:
        pos = cur.skip()
        key = cur.word()
        if key is None or not cur.text.startswith("=", cur.pos):
            raise cur.error("expected a metadata field like op_name=", pos)
        if key in seen:
            raise cur.error(f"metadata field '{key}' is given twice", pos)
        seen.add(key)
        cur.pos += 1
        _metadata_value(cur, key, pos)
        if cur.eat("}"):
            return
        if cur.at_end():
            raise cur.error("expected '}' to end metadata")
        cur.eat(",")


def _metadata_value(cur: _Cursor, key: str, pos: int) -> None:
    if key in _METADATA_INT:
        cur.integer(f"an integer for metadata field '{key}'")
    elif key in _METADATA_STR:
        _string(cur, key)
    elif key in _METADATA_LIST:
        _int_braces(cur, key)
    else:
        raise cur.error(f"unknown metadata field '{key}'", pos)


def _string(cur: _Cursor, key: str) -> None:
    m = _STRING.match(cur.text, cur.skip())
    if m is None:
        raise cur.error(f"expected a quoted string for metadata field '{key}'")
    cur.pos = m.end()


def _int_braces(cur: _Cursor, key: str) -> None:
    cur.expect("{", f"'{{' for metadata field '{key}'")
    if cur.eat("}"):
        return
    _int_list(cur, f"an integer in metadata field '{key}'")
    cur.expect("}", f"'}}' to end metadata field '{key}'")


# --- tile assignments --------------------------------------------------------------------------


def _int_list(cur: _Cursor, what: str, limit: int | None = None) -> list[int]:
    """Comma-separated integers; more than `limit` of them is an error (read no further)."""
    start = cur.skip()
    values = [cur.integer(what)]
    while cur.eat(","):
        values.append(cur.integer(what))
        if limit is not None and len(values) > limit:
            raise cur.value_error(f"more than {limit} {what}s", start)
    return values


def _tile_assignment(cur: _Cursor) -> tuple:
    """`[d0,d1]` then either `<=[r0,r1]T(p0,p1)` or an explicit id list.

    Sizes are checked before the list is read, so `[65536,65536]` fails without allocating.
    """
    dims_pos = cur.skip()
    cur.expect("[", "'[' to start the tile dims")
    dims = tuple(_int_list(cur, "tile dim", MAX_RANK))
    cur.expect("]", "']' to end the tile dims")
    _check_sizes(cur, dims, dims_pos, "tile dims")
    if cur.eat("<="):
        reshape, perm = _iota(cur, dims)
        return dims, reshape, perm, None, dims_pos
    list_pos = cur.skip()
    return dims, None, None, _device_list(cur), list_pos


def _check_sizes(cur: _Cursor, dims, pos: int, what: str) -> None:
    if any(d < 1 for d in dims):
        raise cur.value_error(f"{what} {list(dims)} must all be positive", pos)
    if math.prod(dims) > MAX_DEVICES:
        raise cur.value_error(
            f"{what} {list(dims)} describe {math.prod(dims)} devices, more than {MAX_DEVICES}",
            pos,
        )


def _iota(cur: _Cursor, dims) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`[r0,...]` and, only when there are several reshape dims, `T(p0,...)` (as XLA)."""
    pos = cur.skip()
    cur.expect("[", "'[' to start the iota reshape dims")
    reshape = tuple(_int_list(cur, "iota reshape dim", MAX_RANK))
    cur.expect("]", "']' to end the iota reshape dims")
    _check_sizes(cur, reshape, pos, "iota reshape dims")
    if math.prod(reshape) != math.prod(dims):
        raise cur.value_error(
            f"iota reshape dims {list(reshape)} hold {math.prod(reshape)} devices but the tile "
            f"dims {list(dims)} need {math.prod(dims)}",
            pos,
        )
    t_pos = cur.skip()
    if len(reshape) == 1:
        if cur.text.startswith("T", t_pos) and cur.text.startswith("(", t_pos + 1):
            raise cur.error("'T(...)' is only allowed after more than one iota reshape dim")
        return reshape, (0,)
    if not (cur.eat("T") and cur.text.startswith("(", cur.pos)):
        raise cur.error("expected 'T(' after several iota reshape dims", t_pos)
    cur.pos += 1
    perm = tuple(_int_list(cur, "iota transpose dim", MAX_RANK))
    cur.expect(")", "')' to end the iota transpose")
    if sorted(perm) != list(range(len(reshape))):
        raise cur.value_error(f"T{perm} is not a permutation of 0..{len(reshape) - 1}", t_pos)
    return reshape, perm


def _device_list(cur: _Cursor) -> np.ndarray:
    """Reads `i0,i1,...` as runs of integers (fast for 65,536 ids), comments allowed between."""
    start = cur.skip()
    runs = []
    while True:
        m = _INT_RUN.match(cur.text, cur.skip())
        if m is None:
            raise cur.error("expected a device id")
        cur.pos = m.end()
        runs.append(m.group())
        if not cur.eat(","):
            break
    try:
        return np.array(",".join(runs).split(","), dtype=np.int64)
    except OverflowError:
        raise cur.error("a device id does not fit in 64 bits", start) from None


def _check_device_list(cur: _Cursor, dims, devices: np.ndarray, pos: int) -> None:
    n = math.prod(dims)
    if devices.size != n:
        raise cur.value_error(
            f"tile dims {list(dims)} need {n} device ids but {devices.size} are listed", pos
        )
    bad = np.flatnonzero((devices < 0) | (devices >= n))
    if bad.size:
        k = int(bad[0])
        raise cur.value_error(
            f"device id {devices[k]} is out of range [0, {n})", _nth_int(cur.text, pos, k)
        )
    counts = np.bincount(devices, minlength=n)
    if (counts != 1).any():
        dup = int(np.flatnonzero(counts > 1)[0])
        k = int(np.flatnonzero(devices == dup)[1])
        raise cur.value_error(f"device id {dup} is listed twice", _nth_int(cur.text, pos, k))


def _nth_int(text: str, pos: int, k: int) -> int:
    """Position of the k-th integer of the list starting at `pos` (for error columns)."""
    for i, m in enumerate(_INT.finditer(text, pos)):
        if i == k:
            return m.start()
    return pos


# --- construction ------------------------------------------------------------------------------


def _build(cur: _Cursor, items: _Items) -> HloSharding:
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
    return _with_extras(sharding, items.shard_group, items.metadata)


def _with_extras(sharding: HloSharding, shard_group, metadata) -> HloSharding:
    return HloSharding(
        sharding.kind,
        sharding.tiles,
        sharding.subgroups,
        sharding.device,
        shard_group=shard_group,
        metadata=metadata,
    )


def _check_attributes(cur: _Cursor, items: _Items, kind: Kind) -> None:
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


def _maximal_device(cur: _Cursor, items: _Items) -> int:
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


def _tiled(cur: _Cursor, items: _Items) -> HloSharding:
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
        _check_device_list(cur, dims, devices, pos)
        tiles = Tiles._trusted(dims, devices=devices.tolist(), array=devices)
    try:
        return subgroup(tiles, types)
    except ShardingValueError as e:  # a grid too big to list (Tiles.array)
        raise cur.value_error(e.message, pos) from None
