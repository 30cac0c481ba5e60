"""torch_xla 2.9 prints i1 constants bit-packed; jaxlib 0.10.2 reads one byte per element.

The real constants come from testdata/torch_xla/hf_llama_tp.* (HF Llama's rotary halves):
`dense<"0x0F0F..."> : tensor<4x4x16x8xi1>` is 2048 elements in 256 bytes, each byte one row
of 8 with the first 4 set (bit k of a byte is element k).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from jaxlib.mlir import ir

from shardy_convert import ShardyConvertError, convert
from shardy_convert.formats import dump
from shardy_convert.ir.legacy_i1 import parser_wants_bytes, unpack_i1_hex
from shardy_convert.ir.parse import new_context, parse_module
from tests.conftest import TESTDATA

LLAMA = TESTDATA / "torch_xla" / "hf_llama_tp.mlir"


def _elements(attr_text: str) -> np.ndarray:
    """The values jaxlib's parser reads from a dense i1 attribute, as a flat bool array."""
    with new_context():
        attr = ir.DenseIntElementsAttr(ir.Attribute.parse(attr_text))
        n = int(np.prod(attr.type.shape))
        if attr.is_splat:
            return np.full(n, ir.IntegerAttr(attr.get_splat_value()).value != 0)
        return np.array([attr[k] != 0 for k in range(n)])


def _module(constant: str, shape: str) -> str:
    return (
        f"func.func @main() -> tensor<{shape}xi1> {{\n"
        f"  %c = stablehlo.constant {constant} : tensor<{shape}xi1>\n"
        f"  return %c : tensor<{shape}xi1>\n}}\n"
    )


needs_new_parser = pytest.mark.skipif(
    not parser_wants_bytes(), reason="this jaxlib's MLIR reads i1 hex bit-packed"
)


@needs_new_parser
def test_the_running_parser_reads_one_byte_per_i1():
    """jaxlib 0.10.2's MLIR is after llvm-project#180397: the packed size is refused."""
    assert parser_wants_bytes()
    with new_context(), pytest.raises(ir.MLIRError, match="hex data size is invalid"):
        ir.Attribute.parse('dense<"0x0F0F"> : tensor<16xi1>')


@pytest.mark.parametrize(
    ("packed", "shape", "expected"),
    [
        ("0x0F0F", "16", [1, 1, 1, 1, 0, 0, 0, 0] * 2),
        ("0xF0", "2x4", [0, 0, 0, 0, 1, 1, 1, 1]),
        ("0x01", "8", [1, 0, 0, 0, 0, 0, 0, 0]),
        ("0x05", "3", [1, 0, 1]),  # padding bits are ignored
        ("0xFF01", "9", [1] * 9),  # 9 elements in 2 bytes, the last byte's first bit
        ("0xAA80", "2x5", [0, 1, 0, 1, 0, 1, 0, 1, 0, 0]),
    ],
    ids=[
        "rows-of-8",
        "2d-high-nibble",
        "one-bit",
        "padding-ignored",
        "straddles-a-byte",
        "alternating",
    ],
)
def test_packed_hex_reads_as_the_old_printer_meant(packed, shape, expected):
    text = unpack_i1_hex(f'dense<"{packed}"> : tensor<{shape}xi1>')
    np.testing.assert_array_equal(_elements(text), np.array(expected, dtype=bool))


@pytest.mark.parametrize(
    "attr",
    [
        'dense<"0x00"> : tensor<4xi1>',  # a packed splat: both layouts agree
        'dense<"0xFF"> : tensor<4xi1>',
        'dense<"0x01"> : tensor<i1>',  # one element: one byte in both layouts
        'dense<"0x0100"> : tensor<2xi1>',  # already one byte per element
        'dense<"0x0F0F0F"> : tensor<16xi1>',  # neither size: left to the parser's error
        'dense<"0x0F0F"> : tensor<16xi8>',  # not i1
        "dense<[true, false]> : tensor<2xi1>",
    ],
)
def test_other_constants_are_left_alone(attr):
    assert unpack_i1_hex(attr) == attr


def _i1_constants(text: str) -> set[tuple[str, bytes]]:
    """(type, values as bytes 0/1) of every non-splat dense i1 constant jaxlib reads in text."""
    found = re.findall(r'(dense<"0x[0-9A-F]+"> : (tensor<[0-9x]+xi1>))', unpack_i1_hex(text))
    return {(t, _elements(a).astype(np.uint8).tobytes()) for a, t in found}


def test_real_torch_xla_constants_convert_with_their_values():
    """The Llama module's four masks convert, holding the values of the packed bits."""
    text = LLAMA.read_text()
    packed = re.findall(r'dense<"0x([0-9A-F]+)"> : (tensor<[0-9x]+xi1>)', text)
    assert len(packed) == 4
    want = {
        (t, np.unpackbits(np.frombuffer(bytes.fromhex(h), np.uint8), bitorder="little").tobytes())
        for h, t in packed
    }
    assert _i1_constants(convert(text, num_devices=8)) == want


def test_real_dump_graphs_with_packed_i1_convert():
    text = (TESTDATA / "torch_xla" / "hf_llama_tp.dump").read_text()
    graphs = list(dump.graphs(text))
    assert any('dense<"0x' in g.text and "xi1>" in g.text for g in graphs)
    for g in graphs:
        assert "sdy.mesh" in convert(g.text, num_devices=8)


def test_unpacking_keeps_lines_and_op_columns():
    """An error after a rewritten constant is still reported at its own line and column."""
    body = 'stablehlo.constant dense<"0x0F0F"> : tensor<16xi1>'
    text = (
        "func.func @main() -> tensor<16xi1> {\n"
        f"  %c = {body}\n"
        "  %d = stablehlo.not %c : tensor<16xi1>\n"
        "  %e = stablehlo.bogus %d : tensor<16xi1>\n"
        "  return %d : tensor<16xi1>\n}\n"
    )
    rewritten = unpack_i1_hex(text)
    assert rewritten.count("\n") == text.count("\n")
    with new_context() as ctx, pytest.raises(ShardyConvertError) as info:
        parse_module(text, ctx)
    assert info.value.location == "4:8"


@needs_new_parser
def test_a_module_with_packed_i1_parses_where_jaxlib_alone_refuses():
    text = _module('dense<"0x0F0F"> : tensor<16xi1>'.split(" :")[0], "16")
    with new_context() as ctx:
        with pytest.raises(ir.MLIRError):
            ir.Module.parse(text, context=ctx)
        module = parse_module(text, ctx)
        constant = str(module).split("stablehlo.constant ")[1].split("\n")[0]
    np.testing.assert_array_equal(_elements(constant), [1, 1, 1, 1, 0, 0, 0, 0] * 2)


def test_an_older_parser_gets_the_text_unchanged(monkeypatch):
    """With an MLIR that still packs i1 (older jaxlib), the packed hex is what it reads."""
    import shardy_convert.ir.legacy_i1 as legacy

    monkeypatch.setattr(legacy, "parser_wants_bytes", lambda: False)
    text = 'dense<"0x0F0F"> : tensor<16xi1>'
    assert legacy.unpack_i1_hex(text) == text


@pytest.mark.parametrize(
    ("packed", "shape"),
    [("0x0F0F", "16"), ("0xF0", "2x4"), ("0x01", "8"), ("0x05", "3"), ("0xAA02", "2x5")],
)
def test_an_older_parser_gets_one_byte_per_element_hex_packed(monkeypatch, packed, shape):
    """jaxlib 0.7.1 reading what jaxlib 0.10.2 printed: the reverse of unpacking."""
    import shardy_convert.ir.legacy_i1 as legacy

    attr = f'dense<"{packed}"> : tensor<{shape}xi1>'
    monkeypatch.setattr(legacy, "parser_wants_bytes", lambda: True)
    one_byte_each = legacy.i1_hex_for_parser(attr)
    assert one_byte_each != attr
    monkeypatch.setattr(legacy, "parser_wants_bytes", lambda: False)
    assert legacy.i1_hex_for_parser(one_byte_each) == attr
    assert legacy.i1_hex_for_parser(attr) == attr  # already packed: left alone


def test_the_running_parser_reads_either_layout_through_the_module_boundary():
    """A packed constant and its one-byte-per-element twin parse to the same values."""
    packed = _module('dense<"0x0F0F">', "16")
    one_byte_each = _module(f'dense<"0x{"01" * 4}{"00" * 4}{"01" * 4}{"00" * 4}">', "16")
    with new_context() as ctx:
        a, b = (str(parse_module(t, ctx)) for t in (packed, one_byte_each))
    assert a == b
    constant = a.split("stablehlo.constant ")[1].split("\n")[0]
    np.testing.assert_array_equal(_elements(constant), [1, 1, 1, 1, 0, 0, 0, 0] * 2)
