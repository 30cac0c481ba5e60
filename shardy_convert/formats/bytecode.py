"""MLIR bytecode's header, string and dialect sections, read by hand: which dialects a module
uses, without parsing it in a context (where a dialect the context does not know is an error).

The format (https://mlir.llvm.org/docs/BytecodeFormat/): the magic `ML\\xefR`, the version (a
varint), the producer (a NUL-terminated string), then sections, in the order the writer chose
(jaxlib's writes the dialect section first and the string section after the IR). A section is
an id byte (the high bit: an alignment follows), its length (a varint), the alignment and 0xCB
padding where the bit is set, then its bytes. The string section (id 0) holds the number of
strings, their lengths in reverse order (each counting its NUL), then the strings; the dialect
section (id 1) the number of dialects, then one varint per dialect: the index of its name among
the strings, shifted left by one over a flag saying the dialect's version follows (from version
1 on), the version being a section of its own (id 7); then the op names, which this reader
leaves alone.

Varints are MLIR's "PrefixVarInt": the number of trailing zero bits of the first byte is the
number of bytes that follow; the value is the rest, little-endian. A first byte of 0 is followed
by the whole 64-bit value. Example: `07` is 3; `02 01` is 64 (0x0102 >> 2).
"""

from __future__ import annotations

import itertools

from ..ir.parse import BYTECODE_MAGIC as MAGIC

_STRINGS, _DIALECTS, _DIALECT_VERSION = 0, 1, 7
_NEWEST = 6  # the newest bytecode version read here (jaxlib 0.7.1 to 0.12.0.1 write 6)
_PADDING = 0xCB
_VERSIONED_DIALECTS = 1  # the bytecode version from which a dialect may carry its version
_ONE_BYTE = bytes(range(1, 256, 2))  # a varint of one byte: its lowest bit set


class BytecodeError(ValueError):
    """Bytes that are no MLIR bytecode this reader understands; says what, at which byte."""


def dialects(data: bytes) -> tuple[str, ...]:
    """The dialects the dialect section of `data` (MLIR bytecode) names, in its order: those
    of its ops and of the attributes and types the writer numbered. An attribute or type of a
    dialect that has no bytecode form of its own is written as text, and what is nested in it
    is not numbered: a dialect named only there is not listed (`mentions` finds it).
    BytecodeError for anything malformed, and for a version newer than this reader knows."""
    version, sections = _sections(data, (_STRINGS, _DIALECTS))
    if version > _NEWEST:
        raise BytecodeError(f"bytecode version {version}: this reader knows up to {_NEWEST}")
    if len(sections) < 2:
        raise BytecodeError("no string or dialect section")
    strings = _Strings(sections[_STRINGS])
    section = sections[_DIALECTS]
    count, pos = varint(section, 0)
    names: list[str] = []
    for _ in range(count):
        entry, pos = varint(section, pos)
        if version >= _VERSIONED_DIALECTS:
            entry, versioned = entry >> 1, entry & 1
            if versioned:
                pos = _past_version(section, pos)
        names.append(strings[entry])
    if pos > len(section):
        raise BytecodeError("the dialect section ends inside its dialects")
    return tuple(names)


def mentions(data: bytes, dialect: str) -> bool:
    """Whether `data` (MLIR bytecode) may use `dialect`: it is named in the dialect section,
    or its attribute or type syntax (`#mhlo.`, `!mhlo<`) is anywhere in the bytes, where an
    attribute written as text holds it. Never False for a module that uses the dialect;
    BytecodeError as `dialects`."""
    if dialect in dialects(data):
        return True
    name = dialect.encode()
    return any(sigil + name + end in data for sigil in (b"#", b"!") for end in (b".", b"<"))


def _past_version(section: bytes, pos: int) -> int:
    """The position after the dialect version at `pos`: a section of id 7 (the writer puts no
    alignment on it; one that has one is not read)."""
    if pos >= len(section) or section[pos] != _DIALECT_VERSION:
        raise BytecodeError(f"no dialect version section at byte {pos} of the dialect section")
    length, pos = varint(section, pos + 1)
    return pos + length


def varint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it) of the PrefixVarInt at `pos`."""
    if pos >= len(data):
        raise BytecodeError(f"a varint at byte {pos}, past the end ({len(data)} bytes)")
    first = data[pos]
    extra = 8 if first == 0 else (first & -first).bit_length() - 1
    end = pos + 1 + extra
    if end > len(data):
        raise BytecodeError(f"the varint at byte {pos} runs past the end")
    if first == 0:
        return int.from_bytes(data[pos + 1 : end], "little"), end
    return int.from_bytes(data[pos:end], "little") >> (extra + 1), end


def header(data: bytes) -> tuple[int, str, int]:
    """(bytecode version, producer, position of the first section) of MLIR bytecode: the
    producer is `MLIR23.0.0git` for MLIR's writer, `StableHLO_v1.13.3` for a portable
    artifact's. BytecodeError if there is none."""
    if not data.startswith(MAGIC):
        raise BytecodeError("no MLIR bytecode magic")
    version, pos = varint(data, len(MAGIC))
    end = data.find(b"\0", pos)
    if end < 0:
        raise BytecodeError(f"the producer at byte {pos} does not end")
    return version, data[pos:end].decode("ascii", "replace"), end + 1


def _sections(data: bytes, wanted: tuple[int, ...]) -> tuple[int, dict[int, bytes]]:
    """(bytecode version, {section id: its bytes}) for the sections of `wanted`, read up to
    the last of them; the others are stepped over, not copied (the IR is the largest)."""
    version, _, pos = header(data)
    sections: dict[int, bytes] = {}
    while pos < len(data):
        start, byte = pos, data[pos]
        length, pos = varint(data, pos + 1)
        if byte & 0x80:
            alignment, pos = varint(data, pos)
            pos = _skip_padding(data, pos, alignment)
        if pos + length > len(data):
            raise BytecodeError(f"the section at byte {start} runs past the end")
        if byte & 0x7F in wanted:
            sections[byte & 0x7F] = data[pos : pos + length]
            if len(sections) == len(wanted):
                break
        pos += length
    return version, sections


def _skip_padding(data: bytes, pos: int, alignment: int) -> int:
    if alignment < 1 or alignment & (alignment - 1):
        raise BytecodeError(f"alignment {alignment} at byte {pos} is no power of two")
    end = -(-pos // alignment) * alignment
    if end > len(data) or any(b != _PADDING for b in data[pos:end]):
        raise BytecodeError(f"no padding at byte {pos}")
    return end


class _Strings:
    """The string section, each string decoded when it is asked for: a module has hundreds
    (every op, attribute and symbol name), a dialect section names a few."""

    def __init__(self, section: bytes):
        count, pos = varint(section, 0)
        chunk = section[pos : pos + count]
        if len(chunk) == count and not chunk.translate(None, _ONE_BYTE):  # the usual case
            lengths = [b >> 1 for b in chunk]
            pos += count
        else:
            lengths = []
            for _ in range(count):
                length, pos = varint(section, pos)
                lengths.append(length)
        lengths.reverse()
        self._section, self._lengths, self._start = section, lengths, pos
        self._offsets: list[int] | None = None

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < len(self._lengths):
            raise BytecodeError(f"string {index} of {len(self._lengths)}")
        if self._offsets is None:
            self._offsets = list(itertools.accumulate(self._lengths, initial=self._start))
        start, end = self._offsets[index], self._offsets[index + 1]
        if self._lengths[index] < 1 or end > len(self._section) or self._section[end - 1]:
            raise BytecodeError(f"string {index} of the string section is malformed")
        return self._section[start : end - 1].decode("utf-8", "replace")
