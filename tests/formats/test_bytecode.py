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
    _, start, _ = _section_at(bytes(data), 1)
    count, first = bytecode.varint(bytes(data), start)
    assert count == 4
    data[first] = 0xFF  # the first dialect's name: string 127 of a few dozen
    with pytest.raises(BytecodeError, match="string 127 of"):
        dialects(bytes(data))


def _section_at(data: bytes, wanted: int) -> tuple[int, int, int]:
    """(position of its id byte, of its bytes, their length) of section `wanted` of MLIR
    bytecode, found by the test's own walk (no alignment in the sections it looks for)."""
    pos = data.index(b"\x00", len(bytecode.MAGIC)) + 1  # past the producer
    while True:
        length, start = bytecode.varint(data, pos + 1)
        if data[pos] & 0x7F == wanted:
            return pos, start, length
        pos = start + length


def _with_versioned_first_dialect(data: bytes, payload: bytes) -> bytes:
    """`data` with a version of `payload` on its first dialect, as MLIR's writer puts one: the
    entry's flag set and a section of id 7 after it."""
    at, start, length = _section_at(data, 1)
    section = data[start : start + length]
    _, first = bytecode.varint(section, 0)
    entry, after = bytecode.varint(section, first)
    assert not entry & 1
    version = b"\x07" + _prefix_varint(len(payload)) + payload
    section = section[:first] + _prefix_varint(entry | 1) + version + section[after:]
    return data[: at + 1] + _prefix_varint(len(section)) + section + data[start + length :]


@pytest.mark.parametrize("payload", [b"", b"\x01", b"\x01\x05\x07", b"\x01" + b"\x03" * 200])
def test_a_dialect_with_its_version_is_stepped_over(payload):
    """MLIR's reader as the oracle: it reads the module with the version in place (builtin
    reads a varint from it, 0 here, older than its own, and leaves the rest; a version of 200
    bytes has a length of two; jaxlib 0.7.1's MLIR refuses a version for builtin, after
    reading the section), and the names are the same."""
    plain = _written(MODULE)
    data = _with_versioned_first_dialect(plain, payload)
    refused = _mlir_refuses(data)
    assert refused is None or "Dialect does not support versioning" in refused  # 0.7.1
    assert dialects(data) == dialects(plain)


def _mlir_refuses(data: bytes) -> str | None:
    """MLIR's reader on `data`: None where it reads the module whole, else its message."""
    with new_context() as ctx:
        try:
            text = str(parse_module(data, ctx))
        except ShardyConvertError as e:
            return str(e)
    assert "stablehlo.add" in text
    return None


def test_a_bytecode_version_newer_than_the_reader_knows_is_a_bytecode_error():
    data = bytearray(_written(MODULE))
    assert bytecode.varint(bytes(data), 4) == (6, 5)
    data[4] = _prefix_varint(7)[0]
    with pytest.raises(BytecodeError, match="version 7"):
        dialects(bytes(data))


def test_a_dialect_section_that_ends_inside_its_dialects_is_a_bytecode_error():
    plain = _written(MODULE, 0)
    at, start, length = _section_at(plain, 1)
    section = plain[start : start + length]
    count, first = bytecode.varint(section, 0)
    short = _prefix_varint(count + 40) + section[first:]
    data = plain[: at + 1] + _prefix_varint(len(short)) + short + plain[start + length :]
    with pytest.raises(BytecodeError):
        dialects(data)


def test_a_dialect_named_only_by_a_type_is_listed():
    only_type = """
    module {
      func.func @main(%t: !stablehlo.token) -> !stablehlo.token {
        return %t : !stablehlo.token
      }
    }
    """
    assert sorted(dialects(_written(only_type))) == ["builtin", "func", "stablehlo"]


def test_mentions_finds_a_dialect_by_name_or_by_its_syntax_in_the_bytes():
    plain = _written(MODULE)
    assert bytecode.mentions(plain, "sdy")
    assert not bytecode.mentions(plain, "mhlo")  # `mhlo.sharding`-like names are not syntax
    for syntax in (b"#mhlo.x", b"!mhlo.x", b"#mhlo<x>"):
        assert bytecode.mentions(plain + syntax, "mhlo")  # where a textual attribute holds it
    assert bytecode.mentions(compat.hlo_to_stablehlo(GELU_PROTO.read_bytes()), "mhlo")


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


def test_the_header_names_the_version_and_the_producer():
    """What `formats.module.producer` and `detect` read: MLIR's writer, or StableHLO's for a
    portable artifact."""
    version, producer, first = bytecode.header(_written(MODULE, 4))
    assert (version, first) == (4, len(bytecode.MAGIC) + 1 + len(producer) + 1)
    assert producer.startswith("MLIR")
    artifact = compat.serialize_portable_artifact(
        MODULE.replace('sdy.mesh @mesh = <["x"=2]>', ""), "1.0.0"
    )
    assert bytecode.header(artifact)[1] == "StableHLO_v1.0.0"
    assert formats.producer(artifact) == "StableHLO_v1.0.0"
    assert formats.producer(b"ML\xefR\x0dno end") is None
