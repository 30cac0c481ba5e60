"""Named (V3) sharding strings: parsed, printed, placed, and refused with the column.

The properties run on strings built valid by `named_strategies`; the placement is checked
against the definition (each device's tile index per dim, computed position by position), not
against the code that computes it.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardy_convert.errors import ShardingSyntaxError, ShardingValueError, ShardyConvertError
from shardy_convert.sharding import HloSharding, Kind, SubgroupType, parse
from shardy_convert.sharding.named import NamedMesh

from .named_strategies import device_tiles, grid_tiles, named_texts

SINGLE = ("maximal_mesh", "single_device")


@settings(max_examples=300, deadline=None)
@given(named_texts(single_device_words=SINGLE))
def test_printed_text_parses_back_to_the_same_sharding(text):
    s = parse(text)
    again = parse(str(s))
    assert again == s
    assert again.named == s.named
    assert str(again) == str(s)


@settings(max_examples=300, deadline=None)
@given(named_texts())
def test_placement_is_the_v3_definition(text):
    """Every device holds the tile the V3 definition gives it, in the V2 form too."""
    s = parse(text)
    named = s.named
    # single device and keyword forms: covered by test_keyword_and_single_device
    assume(named.mesh is not None and named.dims is not None)
    rank = len(named.dims)
    want = device_tiles(named)
    got = grid_tiles(s.to_v2(), rank, named.mesh.size)
    if s.kind is not Kind.TILED:  # collapsed: nothing but the data dims to compare
        want = {d: k[:rank] for d, k in want.items()}
        got = {d: k[:rank] for d, k in got.items()}
    assert got == want


@settings(max_examples=300, deadline=None)
@given(named_texts(single_device_words=SINGLE))
def test_the_v2_rewrite_places_data_the_same_way(text):
    s = parse(text)
    v2 = s.to_v2()
    assert v2.named is None
    assert "mesh[" not in str(v2)
    back = parse(str(v2))
    assert back == s
    assert back.unreduced_reduction == s.unreduced_reduction


@pytest.mark.parametrize(
    ("text", "v2"),
    [
        ("{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}", "{devices=[2,4]<=[8]}"),
        ("{mesh['a'=2,'b'=4], [{'b'}, {'a'}]}", "{devices=[4,2]<=[2,4]T(1,0)}"),
        (
            "{mesh['a'=2,'b'=4], device_ids=(3,6,0,5,1,7,2,4), [{'a'}, {'b'}]}",
            "{devices=[2,4]3,6,0,5,1,7,2,4}",
        ),
        (
            "{mesh['a'=2,'b'=4], device_ids=([2,4]T(1,0)), [{'a'}, {'b'}]}",
            "{devices=[2,4]<=[2,4]T(1,0)}",
        ),
        ("{mesh['x'=6], [{'x':(1)2}, {'x':(2)3}]}", "{devices=[2,3]<=[6]}"),
        ("{mesh['x'=6], [{'x':(1)3}, {'x':(3)2}]}", "{devices=[3,2]<=[6]}"),
        ("{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
        (
            "{mesh['a'=2,'b'=4], [{}, {}], replicated={'a'}, manual={'b'}}",
            "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}",
        ),
        (
            "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}",
            '{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op"'
            ' op_name="MAX"}}',
        ),
        ("{mesh['a'=2,'b'=4], replicated}", "{replicated}"),
        ("{mesh['a'=2,'b'=4], manual}", "{manual}"),
        ("{mesh['a'=2,'b'=4], []}", "{replicated}"),
        ("{maximal_mesh[device_id=3]}", "{maximal device=3}"),
        ("{single_device[device_id=3]}", "{maximal device=3}"),
    ],
)
def test_v2_of_the_forms_xla_documents(text, v2):
    """The V2 each form stands for (jaxlib 0.12's `v3_to_v2_sharding()`, recorded)."""
    assert str(parse(text).to_v2()) == v2
    assert parse(text) == parse(v2)


def test_the_named_form_keeps_names_and_device_order():
    s = parse("{mesh['data'=2,'model'=4], device_ids=([2,4]T(1,0)), [{'model', ?}, {}]}")
    assert s.named.mesh == NamedMesh((("data", 2), ("model", 4)), iota=((2, 4), (1, 0)))
    assert s.named.mesh.order == (0, 4, 1, 5, 2, 6, 3, 7)
    assert [d.is_closed for d in s.named.dims] == [False, True]
    assert s.named.dims[0].axes[0].name == "model"


def test_identity_iota_device_ids_print_as_no_device_ids():
    """`([2,4]T(0,1))` is the identity: XLA's canonical form drops it."""
    s = parse("{mesh['a'=2,'b'=4], device_ids=([2,4]T(0,1)), [{'a'}, {'b'}]}")
    assert str(s) == "{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}"
    assert s.named.mesh.order is None


def test_keyword_and_single_device_forms():
    assert parse("{mesh['a'=2], unreduced}").kind is Kind.UNREDUCED
    assert parse("{mesh['a'=2], manual}").kind is Kind.MANUAL
    single = parse('{maximal_mesh[device_id=5], metadata={op_name="x"}}')
    assert single.kind is Kind.MAXIMAL
    assert single.device == 5
    assert str(single) == '{maximal_mesh[device_id=5], metadata={op_name="x"}}'


def test_reductions_are_part_of_the_placement():
    v3_max = parse("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}")
    v3_sum = parse("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}")
    v2_max = parse(
        '{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op"'
        ' op_name="MAX"}}'
    )
    assert v3_max != v3_sum
    assert v3_max == v2_max
    assert hash(v3_max) == hash(v2_max)
    assert v2_max.reduction == "max"
    assert parse("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=sum{'b'}}") == v3_sum
    # Without unreduced axes the reduction says nothing about the data.
    assert parse("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=min{}}") == parse(
        "{mesh['a'=2,'b'=4], [{'a'}, {}]}"
    )


def test_tuples_mix_named_and_v2_elements():
    s = parse(
        "{{mesh['a'=2,'b'=4], [{'a'}, {}]}, {devices=[2,4]<=[8]}, {single_device[device_id=3]}}"
    )
    assert s.kind is Kind.TUPLE
    assert [e.named is not None for e in s.elements] == [True, False, True]
    assert str(s.to_v2()) == (
        "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[2,4]<=[8]}, {maximal device=3}}"
    )


def test_manual_subgroup_of_a_named_sharding():
    s = parse("{mesh['x'=2,'y'=2], device_ids=(3,2,1,0), [{}, {'y'}], manual={'x'}}")
    assert s.subgroups == (SubgroupType.MANUAL,)
    assert s == parse("{devices=[1,2,2]3,1,2,0 last_tile_dims={manual}}")


def test_named_sharding_equals_its_relabelled_v2():
    """relabel drops the named form: the result is a V2 sharding over mesh positions."""
    s = parse("{mesh['a'=2,'b'=4], device_ids=(3,6,0,5,1,7,2,4), [{'a'}, {'b'}]}")
    relabelled = s.relabel((3, 6, 0, 5, 1, 7, 2, 4))
    assert relabelled.named is None
    assert str(relabelled) == "{devices=[2,4]<=[8]}"


@st.composite
def _v3_with_extra_space(draw):
    text = draw(named_texts())
    return text.replace(", ", draw(st.sampled_from((", ", " ,  ", ",\n", ",/* c */ "))))


@settings(max_examples=100, deadline=None)
@given(_v3_with_extra_space())
def test_whitespace_and_comments_between_tokens(text):
    assert parse(text) == parse(" ".join(text.split()).replace("/* c */", ""))


# --- errors -----------------------------------------------------------------------------------


BAD = [
    # (text, error class, message fragment, column)
    ("{mesh['a'=2,'b'=4], [{'c'}, {}]}", ShardingValueError, "axis 'c' is not an axis", 23),
    ("{mesh['a'=2,'b'=4], [{'a'}, {'a'}]}", ShardingValueError, "'a' is used twice", 30),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'a'}}", ShardingValueError, "used twice", 45),
    ("{mesh['b'=8], [{'b'}, {'b':(1)2}]}", ShardingValueError, "overlaps 'b'", 24),
    ("{mesh['b'=4], [{'b':(3)2}, {}]}", ShardingValueError, "does not split axis 'b'", 17),
    ("{mesh['b'=4], [{'b':(1)4}, {}]}", ShardingValueError, "does not split axis 'b'", 17),
    ("{mesh['b'=4], [{'b':(1)2, 'b':(2)2}, {}]}", ShardingValueError, "are one sub-axis", 27),
    (
        "{mesh['a'=2,'b'=4], [{}, {}], replicated={'b', 'a'}}",
        ShardingValueError,
        "must be in mesh order",
        48,
    ),
    ("{mesh['a'=2,'a'=4], [{'a'}, {}]}", ShardingValueError, "'a' is given twice", 13),
    ("{mesh[''=2], [{''}]}", ShardingValueError, "'' is empty", 7),
    ("{mesh['a'=0], [{}]}", ShardingValueError, "has size 0", 11),
    (
        "{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,7), [{'a'}, {'b'}]}",
        ShardingValueError,
        "identity order",
        33,
    ),
    (
        "{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6), [{'a'}, {'b'}]}",
        ShardingValueError,
        "the mesh has 8 devices but device_ids lists 7",
        33,
    ),
    (
        "{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,6), [{'a'}, {'b'}]}",
        ShardingValueError,
        "device id 6 is listed twice",
        47,
    ),
    (
        "{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,8), [{'a'}, {'b'}]}",
        ShardingValueError,
        "out of range",
        47,
    ),
    (
        "{mesh['a'=2,'b'=4], device_ids=([16]), [{'a'}, {'b'}]}",
        ShardingValueError,
        "does not hold the mesh's 8 devices",
        33,
    ),
    ("{mesh['a'=2,'b'=4], device_ids=([2,4]), [{'a'}]}", ShardingSyntaxError, "'T('", 38),
    (
        "{mesh['a'=2,'b'=4], device_ids=([2,4]T(0,0)), [{'a'}]}",
        ShardingValueError,
        "permutation",
        38,
    ),
    ("{mesh['a'=2,'b'=4], [{?, 'a'}, {}]}", ShardingSyntaxError, "'?' must come last", 25),
    ("{mesh['a'=2,'b'=4], [{'a'}p0, {}]}", ShardingSyntaxError, "',' or ']'", 27),
    (
        "{mesh['a'=2,'b'=4], [{'a'}], unreduced=prod{'b'}}",
        ShardingSyntaxError,
        "sum, max or min",
        40,
    ),
    (
        "{mesh['a'=2,'b'=4], [{'a'}], replicated={'b'}, replicated={}}",
        ShardingSyntaxError,
        "twice",
        48,
    ),
    ("{mesh['a'=2,'b'=4], [{'a'}], replicated = {'b'}}", ShardingSyntaxError, "replicated=", 30),
    ("{mesh['a'=2,'b'=4], [{'a'}], shard_as 1}", ShardingSyntaxError, "replicated=", 30),
    ("{mesh['a'=2,'b'=4], unknown}", ShardingSyntaxError, "replicated, manual or unreduced", 21),
    ("{mesh['a'=2,'b'=4], [{'a'}], }", ShardingSyntaxError, "replicated=", 30),
    ("{mesh[a=2], [{'a'}]}", ShardingSyntaxError, "in quotes", 7),
    ("{mesh['a\\'b'=2], [{}]}", ShardingSyntaxError, "must not hold quotes", 7),
    ("{maximal_mesh[device_id=-1]}", ShardingValueError, "is negative", 25),
    ("{single_device[device=1]}", ShardingSyntaxError, "device_id=", 16),
    ("{single_device[device_id=1], [{}]}", ShardingSyntaxError, "metadata=", 30),
    ("{mesh['a'=2], [{'a'}]", ShardingSyntaxError, "'}'", 22),
    (
        '{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op"'
        ' op_name="PROD"}}',
        ShardingSyntaxError,
        "SUM, MAX or MIN",
        96,
    ),
]


@pytest.mark.parametrize(("text", "cls", "fragment", "column"), BAD)
def test_malformed_named_shardings_are_located_errors(text, cls, fragment, column):
    with pytest.raises(cls) as info:
        parse(text)
    assert fragment in str(info.value)
    assert info.value.column == column, str(info.value)


def test_errors_inside_a_tuple_point_into_the_whole_string():
    with pytest.raises(ShardyConvertError) as info:
        parse("{{devices=[2]<=[2]}, {mesh['a'=2], [{'b'}]}}")
    assert info.value.column == 38


def test_a_named_sharding_has_no_named_tuple_elements_of_its_own():
    with pytest.raises(ShardingValueError):
        HloSharding(Kind.TUPLE, named=object())
