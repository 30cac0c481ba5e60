"""The protobuf wire format by hand (`formats.protowire`), as the HLO readers, the compile
options and the optimized-program relabelling share it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_convert.formats import protowire


def test_the_documented_example():
    assert protowire.fields(b"\x08\x96\x01") == [protowire.Field(1, 0, 150, b"\x08\x96\x01")]
    (outer,) = protowire.fields(b"\x1a\x03\x08\x96\x01")
    assert (outer.number, outer.wire, outer.value) == (3, protowire.LENGTH, b"\x08\x96\x01")


# Messages as (field number, value) lists: ints are varints, bytes length-delimited (past 127
# bytes, a length of two bytes).
MESSAGES = st.lists(
    st.tuples(
        st.integers(1, 2**29 - 1),
        st.one_of(st.integers(0, 2**64 - 1), st.binary(max_size=300)),
    ),
    max_size=8,
)


@given(MESSAGES)
def test_fields_read_back_what_field_writes(entries):
    data = b"".join(protowire.field(n, v) for n, v in entries)
    found = protowire.fields(data)
    assert [(f.number, f.value) for f in found] == entries
    assert b"".join(f.raw for f in found) == data


def test_repeated_ints_packed_or_not():
    packed = protowire.field(4, b"".join(protowire.encode_varint(v) for v in (3, 300, 0)))
    single = protowire.field(4, 7) + protowire.field(5, 1)
    assert protowire.ints(protowire.fields(packed + single), 4) == [3, 300, 0, 7]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x08", "a varint at byte 1 does not end"),
        (b"\x08" + b"\xff" * 10, "a varint at byte 1 does not end"),
        (b"\x00\x01", "field number 0 at byte 0"),
        (b"\x0b", "wire type 3 at byte 0"),
        (b"\x0a\x05ab", "the field at byte 0 runs past the end"),
        (b"\x09\x00", "the field at byte 0 runs past the end"),
        (b"\x0d\x00", "the field at byte 0 runs past the end"),
    ],
)
@pytest.mark.parametrize("read", [protowire.fields, protowire.spans])
def test_malformed_bytes_say_where(data, message, read):
    with pytest.raises(protowire.WireError, match=message):
        read(data)


@given(MESSAGES)
def test_spans_say_where_each_field_lies(entries):
    data = b"".join(protowire.field(n, v) for n, v in entries)
    spans = protowire.spans(data)
    assert [n for n, *_ in spans] == [n for n, _ in entries]
    keys = [k for _, _, k, _, _ in spans]
    ends = [end for *_, end in spans]
    assert keys == [0, *ends][: len(keys)]
    assert [0, *ends][-1] == len(data)
    for (_, wire, _, value, end), (_, written) in zip(spans, entries):
        if wire == protowire.VARINT:
            assert protowire.varint(data, value) == (written, end)
        else:
            assert data[value:end] == written


@given(st.integers(0, 2**64 - 1), st.binary(max_size=3))
def test_a_varint_reads_back_at_any_position(value, before):
    data = before + protowire.encode_varint(value) + b"\x01"
    assert protowire.varint(data, len(before)) == (value, len(data) - 1)
