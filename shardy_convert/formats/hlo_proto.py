"""The protobuf wire format of XLA's HLO protos, as far as this package reads and writes it.

Decoding any message into (field number, wire type, value) triples (`fields`), encoding them
back (`encode`), and the parts of `xla_data.proto` the named-sharding path needs: an
HloInstructionProto's `sharding` (field 40), an OpSharding's `named_sharding` (field 14, a
NamedShardingProto) read into its V3 text, and a V2 OpSharding written from an HloSharding.
No protobuf package: these are a few fields, and the input is validated as it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..sharding import HloSharding, Kind, SubgroupType
from . import protowire

_COMPUTATIONS, _INSTRUCTIONS, _SHARDING = 3, 2, 40  # module, computation, instruction fields
# OpSharding fields and enum values (xla_data.proto).
_TYPE, _TILE_DIMS, _TILE_DEVICES, _TUPLE, _REPLICATE_LAST = 1, 3, 4, 5, 6
_LAST_TILE_DIMS, _IOTA_RESHAPE, _IOTA_PERM = 8, 9, 10
_IS_SHARD_GROUP, _SHARD_GROUP_ID, _SHARD_GROUP_TYPE, _NAMED = 11, 12, 13, 14
_TYPES = {
    Kind.REPLICATED: 0,
    Kind.MAXIMAL: 1,
    Kind.TUPLE: 2,
    Kind.TILED: 3,
    Kind.MANUAL: 4,
    Kind.UNKNOWN: 5,
    Kind.UNREDUCED: 6,
}
_SUBGROUPS = {
    SubgroupType.REPLICATED: 0,
    SubgroupType.MAXIMAL: 1,
    SubgroupType.MANUAL: 4,
    SubgroupType.UNREDUCED: 6,
}
_REDUCTIONS = {1: "max", 2: "min"}  # NamedShardingProto.reduction_op (0: sum)

# (field number, wire type, value): protowire's fields without their raw bytes, which
# re-encoding an edited message does not need.
Field = tuple[int, int, Any]  # a varint's value an int, any other bytes (protowire.Field)


def fields(data: bytes) -> list[Field]:
    """(field number, wire type, value) of each field of a protobuf message: an int for
    varints, bytes for the rest. protowire.WireError (a ValueError), naming the byte, for
    anything malformed."""
    return [(f.number, f.wire, f.value) for f in protowire.fields(data)]


def encode(entries: list[Field]) -> bytes:
    """The message of these fields, in this order (what `fields` decoded, edited)."""
    out = bytearray()
    for number, wire, value in entries:
        out += protowire.encode_varint(number << 3 | wire)
        if wire == protowire.VARINT:
            out += protowire.encode_varint(value)
        elif wire == protowire.LENGTH:
            out += protowire.encode_varint(len(value)) + value
        else:
            out += value
    return bytes(out)


def _packed(values) -> bytes:
    return b"".join(protowire.encode_varint(int(v)) for v in values)


ints = protowire.ints  # a repeated integer field, packed or not


def _one(entries: list[Field], number: int, default=None):
    found = [v for n, _, v in entries if n == number]
    return found[-1] if found else default


# --- the shardings of a module -------------------------------------------------------------


# An instruction's `sharding` (field 40: tag bytes c2 02, then its length) that is named: its
# first field is `named_sharding` (field 14: tag `r`), or it is a tuple (`type: TUPLE`, 08 02)
# whose first element is. XLA's serializer writes fields in number order, and a named
# OpSharding has no other: a regex over the bytes tells a module without any (what torch_xla
# hands a plugin) before a field-by-field walk, which costs ~0.7 ms per KB.
_NAMED_SHARDING = re.compile(
    rb"\xc2\x02[\x80-\xff]{0,9}[\x00-\x7f](?:r|\x08\x02\*[\x80-\xff]{0,9}[\x00-\x7f]r)"
)


def may_hold_named(module: bytes) -> bool:
    """Whether an HloModuleProto (as XLA serializes one) may hold a named OpSharding."""
    return _NAMED_SHARDING.search(module) is not None


def rewrite_shardings(module: bytes, fn: Callable[[bytes], bytes | None]) -> bytes:
    """The HloModuleProto with each instruction's OpSharding `op` replaced by `fn(op)` (None:
    kept); the bytes unchanged when nothing is."""
    entries, changed = fields(module), False
    for k, (n, wire, value) in enumerate(entries):
        if n != _COMPUTATIONS or wire != 2:
            continue
        new = _rewrite_computation(value, fn)
        if new is not None:
            entries[k], changed = (n, wire, new), True
    return encode(entries) if changed else module


def _rewrite_computation(computation: bytes, fn) -> bytes | None:
    entries, changed = fields(computation), False
    for k, (n, wire, value) in enumerate(entries):
        if n != _INSTRUCTIONS or wire != 2:
            continue
        inner = fields(value)
        for j, (m, w, op) in enumerate(inner):
            new = fn(op) if m == _SHARDING and w == 2 else None
            if new is not None:
                inner[j], changed = (m, w, new), True
                entries[k] = (n, wire, encode(inner))
    return encode(entries) if changed else None


def tuple_elements(op: bytes) -> list[bytes]:
    entries = fields(op)
    if _one(entries, _TYPE, 0) != _TYPES[Kind.TUPLE]:
        return []
    return [v for n, w, v in entries if n == _TUPLE and w == 2]


def named_text(op: bytes) -> str | None:
    """The V3 text of an OpSharding's `named_sharding` (field 14); None when it has none."""
    named = _one(fields(op), _NAMED)
    if not isinstance(named, bytes):
        return None
    entries = fields(named)
    axes, order = _mesh(_one(entries, 2, b""))
    if not axes:
        ids = order or [0]
        return f"{{maximal_mesh[device_id={ids[0]}]}}"
    names = [name for name, _ in axes]
    text = "{mesh[" + ",".join(f"'{a}'={s}" for a, s in axes) + "]" + _order_text(order)
    dims = [_dim_text(fields(d), names) for n, w, d in entries if n == 3 and w == 2]
    text += ", [" + ", ".join(dims) + "]"
    lists = [("replicated", 4), ("unreduced", 5), ("manual", 7)]
    for word, number in lists:
        refs = [_ref_text(fields(r), names) for n, w, r in entries if n == number and w == 2]
        if refs:
            op_word = _REDUCTIONS.get(_one(entries, 8, 0), "") if word == "unreduced" else ""
            text += f", {word}={op_word}{{{', '.join(refs)}}}"
    return text + "}"


def _mesh(mesh: bytes) -> tuple[list[tuple[str, int]], list[int] | str | None]:
    """A MeshProto's (axes, device order): ids as a list, `([R]T(P))` text, or None."""
    entries = fields(mesh)
    axes = []
    for n, w, axis in entries:
        if n == 1 and w == 2:
            a = fields(axis)
            axes.append((bytes(_one(a, 1, b"")).decode("utf-8"), _one(a, 2, 0)))
    iota = _one(entries, 3)
    if isinstance(iota, bytes):
        t = fields(iota)
        reshape, perm = ints(t, 1), ints(t, 2)
        return axes, f"([{','.join(map(str, reshape))}]T({','.join(map(str, perm))}))"
    return axes, ints(entries, 2) or None


def _order_text(order) -> str:
    if order is None:
        return ""
    if isinstance(order, str):
        return f", device_ids={order}" if "T(" in order else ""
    return ", device_ids=(" + ",".join(map(str, order)) + ")"


def _ref_text(ref: list[Field], names: list[str]) -> str:
    index = _one(ref, 1, 0)
    if index >= len(names):
        raise ValueError(f"axis index {index} of a mesh with {len(names)} axes")
    sub = _one(ref, 2)
    if not isinstance(sub, bytes):
        return f"'{names[index]}'"
    s = fields(sub)
    return f"'{names[index]}':({_one(s, 1, 0)}){_one(s, 2, 0)}"


def _dim_text(dim: list[Field], names: list[str]) -> str:
    refs = [_ref_text(fields(r), names) for n, w, r in dim if n == 1 and w == 2]
    if _one(dim, 2, 0):
        return "{" + ", ".join(refs) + "}"
    return "{" + ", ".join([*refs, "?"]) + "}"


# --- writing a V2 OpSharding ---------------------------------------------------------------


def encode_sharding(s: HloSharding) -> bytes:
    """A V2 OpSharding for one (non-tuple) sharding, with its shard group."""
    entries: list[Field] = []
    if _TYPES[s.kind]:
        entries.append((_TYPE, 0, _TYPES[s.kind]))
    if s.kind is Kind.MAXIMAL:
        entries += [(_TILE_DIMS, 2, _packed([1])), (_TILE_DEVICES, 2, _packed([s.device]))]
    if s.kind is Kind.TILED:
        entries += _tiles(s)
    if s.shard_group is not None:
        like = s.shard_group[0] == "shard_like"
        entries += [(_IS_SHARD_GROUP, 0, 1), (_SHARD_GROUP_ID, 0, s.shard_group[1])]
        entries.append((_SHARD_GROUP_TYPE, 0, int(like)))
    return encode(entries)


def _tiles(s: HloSharding) -> list[Field]:
    tiles = s.tile_assignment
    out: list[Field] = [(_TILE_DIMS, 2, _packed(tiles.dims))]
    if tiles.is_iota:
        reshape, perm = tiles.iota
        out += [(_IOTA_RESHAPE, 2, _packed(reshape)), (_IOTA_PERM, 2, _packed(perm))]
    else:
        out.append((_TILE_DEVICES, 2, _packed(tiles.device_list)))
    if s.subgroups == (SubgroupType.REPLICATED,):
        out.append((_REPLICATE_LAST, 0, 1))
    elif s.subgroups:
        out.append((_LAST_TILE_DIMS, 2, _packed(_SUBGROUPS[t] for t in s.subgroups)))
    return out


def encode_tuple(elements: list[bytes]) -> bytes:
    return encode([(_TYPE, 0, _TYPES[Kind.TUPLE]), *((_TUPLE, 2, e) for e in elements)])
