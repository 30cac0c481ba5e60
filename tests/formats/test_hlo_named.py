"""Named (V3) shardings of HLO text and protos through an XLA that cannot read them all
(`formats.hlo_named`), and the proto wire helpers under it (`formats.hlo_proto`)."""

from __future__ import annotations

import pytest
from jax._src.lib import xla_client

from shardy_convert import convert
from shardy_convert.errors import NoShardyFormError
from shardy_convert.formats import hlo, hlo_named, hlo_proto
from shardy_convert.ir.compat import single_device_arguments_refused
from shardy_convert.ir.parse import new_context, parse_module, print_module
from shardy_convert.sharding import parse

from ..conftest import TESTDATA

V3 = TESTDATA / "v3"
PROTOS = sorted(V3.glob("*.v3.hlo.pb"))

# HLO text with the forms jaxlib 0.10.2's XLA refuses (a reduction kind, single_device) and
# 0.7.1's refuses all of: each sharding is read as written on every jaxlib.
MESH = "mesh['a'=2,'b'=4], device_ids=(3,6,0,5,1,7,2,4)"
TEXT = f"""HloModule m, num_partitions=8

ENTRY main {{
  p0 = f32[8,16] parameter(0), sharding={{{MESH}, [{{'a'}}, {{'b', ?}}]}}
  p1 = f32[8,16] parameter(1), sharding={{devices=[2,4]3,6,0,5,1,7,2,4}}
  s = f32[8,16] add(p0, p1), sharding={{{MESH}, [{{'b'}}, {{}}], unreduced={{'a'}}}}
  ROOT t = (f32[8,16], f32[8,16]) tuple(s, p1),
    sharding={{{{{MESH}, [{{'a'}}, {{}}]}}, {{single_device[device_id=3]}}}}
}}
"""


def test_every_named_form_reaches_the_module_as_written():
    with new_context() as ctx:
        text = print_module(parse_module(hlo.to_stablehlo(TEXT), ctx))
    assert f"{{{MESH}, [{{'a'}}, {{'b', ?}}]}}" in text
    assert f"{{{MESH}, [{{'b'}}, {{}}], unreduced={{'a'}}}}" in text
    assert "{devices=[2,4]3,6,0,5,1,7,2,4}" in text
    assert "single_device[device_id=3]}" in text or "maximal_mesh[device_id=3]}" in text
    assert "shard_like" not in text


def test_hidden_text_marks_each_named_leaf_with_its_v2_placement():
    hidden = hlo_named.Hidden()
    out = hlo_named.hide_text(TEXT, hidden)
    assert out.count("\n") == TEXT.count("\n")  # XLA's error lines stay the file's
    assert "mesh[" not in out
    assert len(hidden.texts) == 4
    marked = {}
    for start, end in hlo_named._sharding_spans(out):
        for leaf in parse(out[start:end]).leaves():
            if leaf.shard_group is not None:
                marked[leaf.shard_group[1]] = leaf
    assert set(marked) == set(hidden.texts)
    for marker, original in hidden.texts.items():
        assert marker >= hlo_named.BASE
        assert marked[marker] == parse(original)  # shard groups aside: the same placement


@pytest.mark.parametrize("path", PROTOS, ids=lambda p: p.name)
def test_wire_format_reencodes_byte_for_byte(path):
    module, _ = hlo._unwrap(path.read_bytes())
    assert hlo_proto.encode(hlo_proto.fields(module)) == module


@pytest.mark.parametrize("path", PROTOS, ids=lambda p: p.name)
def test_named_shardings_of_a_proto_read_as_the_dumps_text(path):
    """Each instruction's named sharding, decoded, places data as XLA printed it in the text
    dump of the same module."""
    module, _ = hlo._unwrap(path.read_bytes())
    decoded: list[str] = []

    def collect(op: bytes) -> None:
        text = hlo_proto.named_text(op)
        elements = hlo_proto.tuple_elements(op)
        if text is not None:
            decoded.append(text)
        elif elements:
            decoded.append("{" + ", ".join(hlo_proto.named_text(e) or "{}" for e in elements) + "}")

    hlo_proto.rewrite_shardings(module, collect)
    dump = path.with_name(path.name.replace(".hlo.pb", ".hlo.txt")).read_text()
    printed = [dump[s:e] for s, e in hlo_named._sharding_spans(dump)]
    assert [parse(t) for t in decoded] == [parse(t) for t in printed]
    assert [parse(t).unreduced_reduction for t in decoded] == [
        parse(t).unreduced_reduction for t in printed
    ]


@pytest.mark.parametrize(
    "text",
    [
        "{replicated}",
        "{manual}",
        "{unknown}",
        "{maximal device=5}",
        "{devices=[2,4]<=[8]}",
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "{devices=[2,4]3,6,0,5,1,7,2,4}",
        "{devices=[1,2,2,2]<=[8] last_tile_dims={manual, unreduced}}",
        "{devices=[2,4]<=[8] shard_like 7300000000000005}",
    ],
)
def test_a_v2_op_sharding_written_here_is_read_by_xla_as_the_same(text):
    """XLA's own proto reader (jaxlib's OpSharding, HloSharding.from_proto) is the judge."""
    sharding = parse(text)
    proto = xla_client.OpSharding()
    proto.ParseFromString(hlo_proto.encode_sharding(sharding))
    theirs = xla_client.HloSharding.from_proto(proto)
    assert parse(str(theirs)) == sharding
    assert proto.is_shard_group == (sharding.shard_group is not None)


def test_a_tuple_op_sharding_written_here_is_read_by_xla_as_the_same():
    elements = [hlo_proto.encode_sharding(parse(t)) for t in ("{devices=[8]<=[8]}", "{manual}")]
    proto = xla_client.OpSharding()
    proto.ParseFromString(hlo_proto.encode_tuple(elements))
    theirs = xla_client.HloSharding.from_proto(proto)
    assert parse(str(theirs)) == parse("{{devices=[8]<=[8]}, {manual}}")


def test_convert_reads_the_text_on_this_jaxlib():
    # From jaxlib 0.11.2, Shardy has no form for the single-device result beside the others
    # (ir/compat.py): that leaf is refused there, located; the named ones convert everywhere.
    if single_device_arguments_refused():
        with pytest.raises(NoShardyFormError, match=r"result 1 of @main: .*single-device"):
            convert(TEXT, num_devices=8)
    text = (
        TEXT
        if not single_device_arguments_refused()
        else TEXT.replace("{single_device[device_id=3]}", "{replicated}")
    )
    converted = convert(text, num_devices=8)
    assert 'sdy.mesh @mesh = <["a"=2, "b"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>' in converted
    assert '[{"a"}, {"b", ?}]' in converted


V2_PROTOS = sorted(TESTDATA.glob("torch_xla/*.hlo.pb")) + sorted(
    TESTDATA.glob("*/*.xla_dump/*.hlo.pb")
)


@pytest.mark.parametrize("path", V2_PROTOS + PROTOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_quick_look_for_named_shardings_tells_v2_from_v3_protos(path):
    """A module without named shardings (torch_xla's, what a plugin is handed) is not walked
    field by field; every module with one is."""
    module, _ = hlo._unwrap(path.read_bytes())
    assert hlo_proto.may_hold_named(module) == (path in PROTOS)
