"""MLIR bytecode read by hand (`formats.bytecode`): the dialects a module uses, as the HLO
reader asks it whether XLA's importer left mhlo ops that need `mhlo_to_stablehlo`. Oracles:
MLIR's own writer (every bytecode version it writes), MLIR's reader (the dialects of the ops
it parses), and `mhlo_to_stablehlo` itself (on every HLO program of testdata/, skipping it
where no mhlo is left changes no byte)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import bytecode, hlo
from shardy_convert.formats import module as formats
from shardy_convert.formats.bytecode import BytecodeError, dialects
from shardy_convert.ir.bindings import ir
from shardy_convert.ir.compat import walk
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.xla import compat
from tests.conftest import TESTDATA, manifest

MODULE = """
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
HLO_KINDS = ("xla_hlo_text", "xla_hlo_proto", "torch_xla_hlo_proto")
HLO_PROGRAMS = sorted(e["path"] for e in manifest() if e["kind"] in HLO_KINDS)
GELU_PROTO = TESTDATA / "torch_xla" / "tp_mlp_train.hlo.pb"  # the GELU's erf stays mhlo


def _written(text: str, version: int | None = None) -> bytes:
    with new_context() as ctx:
        out = io.BytesIO()
        parse_module(text, ctx).operation.write_bytecode(out, desired_version=version)
        return out.getvalue()


def _prefix_varint(value: int) -> bytes:
    """MLIR's PrefixVarInt, written from the format's description (not the reader's code):
    n extra bytes are marked by n trailing zero bits, then a 1, in the first byte."""
    for extra in range(8):
        if value < 1 << (7 * (extra + 1)):
            return ((value << (extra + 1)) | (1 << extra)).to_bytes(extra + 1, "little")
    return b"\x00" + value.to_bytes(8, "little")


def test_the_documented_varints():
    assert bytecode.varint(b"\x07", 0) == (3, 1)
    assert bytecode.varint(b"\x02\x01", 0) == (64, 2)
    assert bytecode.varint(b"\xff\x00" + b"\x01" * 8, 1) == (0x0101010101010101, 10)


@given(st.integers(0, 2**64 - 1), st.binary(max_size=3))
def test_varints_read_back_as_mlir_writes_them(value, before):
    data = before + _prefix_varint(value) + b"\x99"
    assert bytecode.varint(data, len(before)) == (value, len(data) - 1)


@pytest.mark.parametrize("version", [0, 1, 5, 6, None])
def test_the_dialects_of_each_bytecode_version_mlir_writes(version):
    """Version 0 names dialects without the versioned-dialect flag of later versions."""
    found = dialects(_written(MODULE, version))
    assert sorted(found) == ["builtin", "func", "sdy", "stablehlo"]


def test_strings_longer_than_a_one_byte_length():
    """A string of 127 bytes or more has a length of two bytes or more."""
    long = MODULE.replace("@main", "@" + "f" * 300)
    assert sorted(dialects(_written(long))) == ["builtin", "func", "sdy", "stablehlo"]


def test_a_dialect_name_past_the_strings_is_a_bytecode_error():
    data = bytearray(_written(MODULE, 0))  # version 0: the dialect entries are plain indices
    pos = data.index(b"\x00", len(bytecode.MAGIC)) + 1  # past the producer
    while data[pos] & 0x7F != 1:  # to the dialect section (no alignment in these two)
        length, after = bytecode.varint(bytes(data), pos + 1)
        pos = after + length
    _, start = bytecode.varint(bytes(data), pos + 1)
    count, first = bytecode.varint(bytes(data), start)
    assert count == 4
    data[first] = 0xFF  # the first dialect's name: string 127 of a few dozen
    with pytest.raises(BytecodeError, match="string 127 of"):
        dialects(bytes(data))


def test_a_dialect_named_only_by_an_attribute_is_listed():
    only_attribute = """
    module {
      func.func @main(%a: tensor<4xf32>) -> tensor<4xf32>
          attributes {direction = #stablehlo<comparison_direction EQ>} {
        return %a : tensor<4xf32>
      }
    }
    """
    assert sorted(dialects(_written(only_attribute))) == ["builtin", "func", "stablehlo"]


@pytest.mark.parametrize("path", HLO_PROGRAMS)
def test_the_importers_dialects_are_those_mlirs_reader_finds(path):
    """Where mhlo is listed, MLIR's reader refuses the module for it (the context has no
    mhlo); elsewhere the dialects of every op it parses back are listed."""
    imported = compat.hlo_to_stablehlo(_proto(path))
    found = dialects(imported)
    with new_context() as ctx:
        if "mhlo" in found:
            with pytest.raises(ShardyConvertError, match="dialect 'mhlo'"):
                formats.load(imported, ctx, trusted=True)
            return
        module = parse_module(imported, ctx)
        ops: set[str] = set()

        def visit(op):
            ops.add(op.name.split(".")[0])
            return ir.WalkResult.ADVANCE

        walk(module.operation, visit)
    assert ops <= set(found)
    assert {"builtin", "func", "stablehlo"} <= ops


def _proto(path: str) -> bytes:
    """The HloModuleProto XLA's importer is handed for the program at `path`."""
    data = (TESTDATA / path).read_bytes()
    if hlo.kind(data) == hlo.TEXT:  # as hlo.to_stablehlo reads it (older XLAs: no metadata)
        return compat.hlo_text_to_proto(hlo._without_debug_info(hlo._as_str(data)))
    return hlo._module_proto(data)[0]


def test_torch_xlas_gelu_leaves_mhlo_and_still_reads():
    imported = compat.hlo_to_stablehlo(GELU_PROTO.read_bytes())
    assert "mhlo" in dialects(imported)
    legal = hlo.to_stablehlo(GELU_PROTO.read_bytes())
    assert "mhlo" not in dialects(legal)
    assert b"mhlo.erf" in legal


@pytest.mark.parametrize("path", HLO_PROGRAMS)
def test_skipping_mhlo_to_stablehlo_changes_no_byte(path):
    data = (TESTDATA / path).read_bytes()
    read = hlo.to_stablehlo(data)
    assert compat.mhlo_to_stablehlo(read) == read


def test_bytecode_the_reader_does_not_understand_takes_the_second_step(monkeypatch):
    def unreadable(data):
        raise BytecodeError("not understood")

    monkeypatch.setattr(bytecode, "dialects", unreadable)
    assert hlo._uses_mhlo(compat.hlo_to_stablehlo(GELU_PROTO.read_bytes()))
    monkeypatch.undo()
    assert not hlo._uses_mhlo(_written(MODULE))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "magic"),
        (b"module {}", "magic"),
        (b"ML\xefR", "past the end"),
        (b"ML\xefR\x0dMLIR", "producer"),
        (b"ML\xefR\x0dMLIR\x00", "no string or dialect section"),
        (b"ML\xefR\x0dMLIR\x00\x00\x09ab", "runs past the end"),
        (b"ML\xefR\x0dMLIR\x00\x80\x03\x07", "no power of two"),
    ],
)
def test_malformed_bytecode_is_a_bytecode_error(data, message):
    with pytest.raises(BytecodeError, match=message):
        dialects(data)


def test_every_cut_of_real_bytecode_is_an_answer_or_a_bytecode_error():
    data = _written(MODULE)
    for end in range(len(data)):
        try:
            found = dialects(data[:end])
        except BytecodeError:
            continue
        assert set(found) <= {"builtin", "func", "sdy", "stablehlo"}


@given(st.binary(max_size=64))
def test_any_bytes_after_the_magic_are_an_answer_or_a_bytecode_error(tail):
    try:
        dialects(bytecode.MAGIC + tail)
    except BytecodeError:
        pass
