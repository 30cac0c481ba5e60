"""`i1` dense constants in the bit-packed hex form of older MLIR, for a parser that wants bytes.

MLIR's `DenseElementsAttr` used to store `i1` elements bit-packed: ceil(n/8) bytes, element k
in bit k % 8 (least significant first) of byte k // 8, padding bits ignored; a one-byte buffer
of 0x00 or 0xFF was a splat. Its printer writes a non-splat attribute with more elements than
the hex threshold as that buffer in hex. LLVM commit c6964b1 (llvm-project#180397, Feb 2026)
removed the special case: an `i1` now takes one byte (0x00 or 0x01), and a one-byte buffer is
a splat. torch_xla 2.9's MLIR is older than that commit, jaxlib 0.10.2's is newer, so the rotary
and attention masks of every Llama-family dump fail to parse:

    %c_2 = stablehlo.constant dense<"0x0F0F..."> : tensor<4x4x16x8xi1>   (2048 elements)
    error: elements hex data size is invalid for provided type: 'tensor<4x4x16x8xi1>'

`unpack_i1_hex` rewrites exactly those constants to one byte per element (`0x0F` ->
`0x0101010100000000`) when the running parser is the new one, before it sees the text. Only
the hex inside the one line grows: line numbers and every op's start column stay as they were.

What is left alone: hex of any other size (already one byte per element, or wrong: the parser
reports it), a one-element tensor (both layouts read its only byte alike when printed by
either MLIR), and a one-byte 0x00/0xFF splat (both layouts agree). A one-byte buffer for 2..8
elements of any other value is read the old way (packed bits): no printer writes a splat in
hex, so only an old printer (with a low hex threshold) writes that.

The other way round, jaxlib 0.7.1's MLIR is older than that commit: `pack_i1_hex` packs what
a newer MLIR printed (one byte per element) for it. `i1_hex_for_parser` does whichever the
running parser needs; the module boundary (`parse.parse_module`) and `check` call that.

StableHLO portable artifacts need nothing: jaxlib 0.10.2 reads the ones torch_xla 2.9 writes
(`xm.get_stablehlo_bytecode`) with the right values (tested).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .. import regex
from .bindings import ir

# `dense<"0xHEX"> : tensor<AxBx...xi1>` (or vector), as MLIR's printer spells it.
_HEX_I1 = regex.lazy(r'dense<"0x([0-9A-Fa-f]*)">(\s*:\s*(?:tensor|vector)<((?:\d+x)*)i1>)')


def unpack_i1_hex(text: str) -> str:
    """`text` with every bit-packed `i1` hex constant rewritten to one byte per element, if
    the running MLIR parser reads one byte per element; otherwise `text` unchanged."""
    if not parser_wants_bytes():
        return text
    return one_byte_per_element(text)


def one_byte_per_element(text: str) -> str:
    """`text` with every bit-packed `i1` hex constant rewritten to one byte per element,
    whatever the running parser reads (printed text of different jaxlibs compares this way)."""
    if "i1>" not in text or 'dense<"0x' not in text:
        return text
    return _HEX_I1().sub(_unpacked, text)


def i1_hex_for_parser(text: str) -> str:
    """`text` with every `i1` hex constant in the layout the running MLIR parser reads (the
    parser asked only where the text has such a constant)."""
    if "i1>" not in text or 'dense<"0x' not in text:
        return text
    return unpack_i1_hex(text) if parser_wants_bytes() else pack_i1_hex(text)


def pack_i1_hex(text: str) -> str:
    """`text` with every one-byte-per-element `i1` hex constant rewritten bit-packed, if the
    running MLIR parser reads packed bits (jaxlib 0.7.1); otherwise `text` unchanged."""
    if "i1>" not in text or 'dense<"0x' not in text or parser_wants_bytes():
        return text
    return _HEX_I1().sub(_packed, text)


def _packed(m: re.Match) -> str:
    """One byte per element -> packed bits (`0x0101010100000000` -> `0x0F`). Only hex of
    exactly one byte per element for two or more elements: one element reads alike in both
    layouts, and no other size is the new layout."""
    digits, type_text, dims = m.group(1), m.group(2), m.group(3)
    n = int(np.prod([int(d) for d in dims.split("x") if d], dtype=np.int64))
    if n < 2 or len(digits) != 2 * n:
        return m.group(0)
    elements = np.frombuffer(bytes.fromhex(digits), dtype=np.uint8) != 0
    packed = np.packbits(elements, bitorder="little")
    return f'dense<"0x{packed.tobytes().hex().upper()}">{type_text}'


def _unpacked(m: re.Match) -> str:
    digits, type_text, dims = m.group(1), m.group(2), m.group(3)
    n = int(np.prod([int(d) for d in dims.split("x") if d], dtype=np.int64))
    size = len(digits) // 2
    if n < 2 or len(digits) % 2 or size != (n + 7) // 8:
        return m.group(0)
    packed = np.frombuffer(bytes.fromhex(digits), dtype=np.uint8)
    if size == 1 and packed[0] in (0x00, 0xFF):
        return m.group(0)
    elements = np.unpackbits(packed, bitorder="little")[:n]
    return f'dense<"0x{elements.tobytes().hex().upper()}">{type_text}'


@functools.cache
def parser_wants_bytes() -> bool:
    """Whether jaxlib's MLIR reads `i1` hex as one byte per element (LLVM after c6964b1).

    Asked of the parser itself: two bytes for two elements are valid only in the new layout.
    """
    with ir.Context():
        try:
            ir.Attribute.parse('dense<"0x0100"> : tensor<2xi1>')
        except Exception:  # MLIRError (ValueError in older jaxlib): the packed layout
            return False
    return True
