"""The protobuf wire format, read and written by hand: XLA's messages the package reads (HLO
module protos, compile options, optimized programs) need a few fields each, not the protobuf
package and XLA's generated classes.

A message is a sequence of fields, each a key (a varint: field number << 3 | wire type) and a
value: a varint (wire type 0), 8 or 4 bytes (1, 5), or a length-delimited run of bytes (2: a
string, a sub-message, or a packed repeated field). Example: `08 96 01` is field 1, varint 150;
`1a 03 08 96 01` field 3, a 3-byte sub-message holding that field.
"""

from __future__ import annotations

from typing import Any, NamedTuple

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are no protobuf message; the message says what is wrong, at which byte."""


class Field(NamedTuple):
    """One field: a varint's value is an int, every other value its bytes; `raw` is the whole
    field as it was on the wire (key and value), for rewriting a message byte for byte.
    `value` is typed Any: its type follows `wire`, which the reader of a field number knows and
    a type checker cannot."""

    number: int
    wire: int
    value: Any
    raw: bytes


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the varint at `pos`: at most 10 bytes, low 7 bits
    first."""
    if pos < len(data) and data[pos] < 0x80:  # one byte: most keys and lengths
        return data[pos], pos + 1
    value = shift = 0
    for k in range(pos, min(pos + 10, len(data))):
        value |= (data[k] & 0x7F) << shift
        shift += 7
        if not data[k] & 0x80:
            return value, k + 1
    raise WireError(f"a varint at byte {pos} does not end")


def spans(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """Where every field of a message lies, in order, without copying a byte: (number, wire
    type, start of the key, start of the value, end). A varint's value is
    `varint(data, start)`, any other value `data[start:end]`. WireError, naming the byte, for
    anything malformed (field number 0, wire types 3 and 4 (groups), a field past the end)."""
    out: list[tuple[int, int, int, int, int]] = []
    pos, size = 0, len(data)
    while pos < size:
        start = pos
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError(f"field number 0 at byte {start}")
        value = pos
        if wire == VARINT:
            _, pos = varint(data, pos)
        elif wire == FIXED64:
            pos += 8
        elif wire == FIXED32:
            pos += 4
        elif wire == LENGTH:
            length, value = varint(data, pos)
            pos = value + length
        else:
            raise WireError(f"wire type {wire} at byte {start}")
        if pos > size:
            raise WireError(f"the field at byte {start} runs past the end (truncated?)")
        out.append((number, wire, start, value, pos))
    return out


def fields(data: bytes) -> list[Field]:
    """Every field of a message, in order (`spans`, with the values read). WireError, naming
    the byte, for anything malformed."""
    return [
        Field(n, w, varint(data, v)[0] if w == VARINT else data[v:end], data[k:end])
        for n, w, k, v, end in spans(data)
    ]


def ints(entries: list[Field] | list[tuple], number: int) -> list[int]:
    """The values of a repeated integer field (or of every occurrence of a single one), packed
    or not."""
    out: list[int] = []
    for entry in entries:
        n, wire, value = entry[:3]  # a Field, or a (number, wire, value) triple
        if n != number:
            continue
        if wire == VARINT:
            out.append(int(value))
            continue
        packed, pos = bytes(value), 0
        while pos < len(packed):
            item, pos = varint(packed, pos)
            out.append(item)
    return out


def encode_varint(value: int) -> bytes:
    """`value` as a varint; a negative one (an int64 field) as its 64-bit two's complement,
    ten bytes, as protobuf writes it."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: int | bytes) -> bytes:
    """One field on the wire: an int as a varint, bytes length-delimited."""
    if isinstance(value, int):
        return encode_varint(number << 3 | VARINT) + encode_varint(value)
    return encode_varint(number << 3 | LENGTH) + encode_varint(len(value)) + value
