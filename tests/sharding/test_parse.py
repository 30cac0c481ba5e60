"""Parsing and printing GSPMD sharding strings: every form XLA reads, printed as XLA prints it.

Each expected text below is what jaxlib 0.10.2's `xla_client.HloSharding.from_string(s)` prints
(checked with it; `test_xla_oracle.py` re-checks thousands of generated strings live).
"""

from __future__ import annotations

import pytest

from shardy_convert.errors import ShardingSyntaxError, ShardingValueError, ShardyConvertError
from shardy_convert.sharding import HloSharding, Kind, SubgroupType, parse

# (input, XLA's printed text)
FORMS = {
    "replicated": ("{replicated}", "{replicated}"),
    "manual": ("{manual}", "{manual}"),
    "unknown": ("{unknown}", "{unknown}"),
    "unreduced": ("{unreduced}", "{unreduced}"),
    "maximal_device": ("{maximal device=3}", "{maximal device=3}"),
    "maximal_devices_list_spelling": ("{maximal devices=[1]3}", "{maximal device=3}"),
    "v1_list": ("{devices=[2,4]0,1,2,3,4,5,6,7}", "{devices=[2,4]0,1,2,3,4,5,6,7}"),
    "v1_list_kept_in_custom_order": ("{devices=[4,2]0,4,1,5,2,6,3,7}",) * 2,
    "v2_plain_iota": ("{devices=[2,4]<=[8]}", "{devices=[2,4]<=[8]}"),
    "v2_transposed_iota": ("{devices=[4,2]<=[2,4]T(1,0)}", "{devices=[4,2]<=[2,4]T(1,0)}"),
    "v2_identity_transpose_canonicalized": ("{devices=[4]<=[2,2]T(0,1)}", "{devices=[4]<=[4]}"),
    "v2_size_one_reshape_dim_dropped": ("{devices=[2]<=[2,1]T(1,0)}", "{devices=[2]<=[2]}"),
    "v2_consecutive_perm_merged": (
        "{devices=[60]<=[3,4,5]T(1,2,0)}",
        "{devices=[60]<=[3,20]T(1,0)}",
    ),
    "v2_one_device_tiling_kept": ("{devices=[1,1]<=[1]}", "{devices=[1,1]<=[1]}"),
    "last_tile_dim_replicate": (
        "{devices=[1,4,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}",
        "{devices=[1,4,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}",
    ),
    "replication_group_ids_sorted": (
        "{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}",
        "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
    ),
    "trailing_size_one_replication_dim_dropped": (
        "{devices=[2,1]0,1 last_tile_dim_replicate}",
        "{devices=[2]0,1}",
    ),
    "replication_over_everything_is_replicated": (
        "{devices=[1,2]<=[2] last_tile_dim_replicate}",
        "{replicated}",
    ),
    "one_tile_dim_replicated_is_replicated": (
        "{devices=[2]0,1 last_tile_dim_replicate}",
        "{replicated}",
    ),
    "lone_replicated_subgroup_prints_as_last_tile_dim_replicate": (
        "{devices=[2,1,2]0,1,2,3 last_tile_dims={replicated}}",
        "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
    ),
    "subgroup_spanning_everything_collapses": (
        "{devices=[1,1,4]<=[4] last_tile_dims={replicated}}",
        "{replicated}",
    ),
    "manual_subgroup_spanning_everything_is_manual": (
        "{devices=[1,4]<=[4] last_tile_dims={manual}}",
        "{manual}",
    ),
    "unreduced_subgroup_spanning_everything_is_unreduced": (
        "{devices=[1,4]<=[4] last_tile_dims={unreduced}}",
        "{unreduced}",
    ),
    "subgroups_reordered_manual_first_by_iota_transpose": (
        "{devices=[2,2,2]<=[8] last_tile_dims={replicated, manual}}",
        "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}",
    ),
    "subgroups_reordered_on_a_transposed_iota": (
        "{devices=[2,2,2]<=[2,2,2]T(2,0,1) last_tile_dims={replicated, manual}}",
        "{devices=[2,2,2]<=[2,2,2]T(2,1,0) last_tile_dims={manual, replicated}}",
    ),
    "subgroups_reordered_on_a_v1_list": (
        "{devices=[2,2,2]0,1,2,3,4,5,6,7 last_tile_dims={replicated, manual}}",
        "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dims={manual, replicated}}",
    ),
    "same_type_subgroups_merged": (
        "{devices=[2,1,2,2]<=[8] last_tile_dims={replicated, replicated}}",
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
    ),
    "size_one_subgroup_dropped": (
        "{devices=[2,2,1]<=[4] last_tile_dims={manual, replicated}}",
        "{devices=[2,2]<=[4] last_tile_dims={manual}}",
    ),
    "empty_last_tile_dims": ("{devices=[2,2]<=[4] last_tile_dims={}}", "{devices=[2,2]<=[4]}"),
    "maximal_subgroup": (
        "{devices=[2,2]<=[4] last_tile_dims={maximal}}",
        "{devices=[2,2]<=[4] last_tile_dims={maximal}}",
    ),
    "unreduced_subgroup": (
        "{devices=[2,2]<=[4] last_tile_dims={unreduced}}",
        "{devices=[2,2]<=[4] last_tile_dims={unreduced}}",
    ),
    "partial_v2_stays_v2_when_groups_are_a_minor_reshape_dim": (
        "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
        "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
    ),
    # A partial V2 whose groups are split across its reshape dims prints as the sorted V1
    # list: test_grouped_v2.py's test_what_xla_prints_for_a_grouped_iota_comes_back_to_it.
    "shard_as": ("{devices=[2]0,1 shard_as 3}", "{devices=[2]0,1 shard_as 3}"),
    "shard_like": ("{replicated shard_like 2}", "{replicated shard_like 2}"),
    "attributes_in_any_order": (
        "{last_tile_dim_replicate shard_as 1 devices=[2,2]<=[4]}",
        "{devices=[2,2]<=[4] last_tile_dim_replicate shard_as 1}",
    ),
    "whitespace_and_comments_between_tokens": (
        " { devices= [2] 0 , /* c */ 1 } ",
        "{devices=[2]0,1}",
    ),
    "leading_zeros": ("{devices=[2]00,01}", "{devices=[2]0,1}"),
    "empty_string_is_replicated": ("", "{replicated}"),
    "empty_tuple": ("{}", "{}"),
    "empty_tuple_with_space": ("{ }", "{}"),
    "one_element_tuple": ("{{replicated}}", "{{replicated}}"),
    "tuple_with_index_comments": (
        "{/*index=0*/{replicated}, {manual}, {maximal device=1}, {unknown}, {unreduced},"
        " /*index=5*/{devices=[2]0,1}}",
        "{{replicated}, {manual}, {maximal device=1}, {unknown}, {unreduced},"
        " /*index=5*/{devices=[2]0,1}}",
    ),
}


@pytest.mark.parametrize(("text", "expected"), FORMS.values(), ids=FORMS.keys())
def test_form_prints_as_xla_prints_it(text, expected):
    assert str(parse(text)) == expected


# Metadata is kept verbatim (jaxlib's str() never prints it, so there is no oracle for it).
METADATA = {
    "single": '{devices=[2]0,1 metadata={op_name="jit(f)/x" source_file="a.py" source_line=3}}',
    "list": '{replicated metadata={{op_name="a"}, {op_type="b"}}}',
    "braces_and_escaped_quotes_in_strings": r'{manual metadata={op_name="a}{\"b"}}',
    "comma_separated_fields": '{devices=[2]0,1 metadata={op_name="a", op_type="b"}}',
    "empty": "{unknown metadata={}}",
    "profile_type_list": "{devices=[2]0,1 metadata={profile_type={1,2} stack_frame_id=4}}",
    "after_shard_group": "{devices=[2]0,1 shard_like 1 metadata={op_name='single-quoted'}}",
}


@pytest.mark.parametrize("text", METADATA.values(), ids=METADATA.keys())
def test_metadata_is_kept_verbatim_and_printed_last(text):
    sharding = parse(text)
    raw = text[text.index("metadata=") + len("metadata=") : -1]
    assert sharding.metadata == raw
    assert str(sharding).endswith(f" metadata={raw}}}")
    assert parse(str(sharding)).metadata == raw


def test_metadata_is_printed_after_the_shard_group():
    text = '{metadata={op_name="m"} shard_as 2 devices=[2,2]<=[4] last_tile_dim_replicate}'
    expected = '{devices=[2,2]<=[4] last_tile_dim_replicate shard_as 2 metadata={op_name="m"}}'
    assert str(parse(text)) == expected


def test_parsed_fields_describe_a_partially_replicated_v1_list():
    s = parse("{devices=[1,4,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}")
    assert s.kind is Kind.TILED
    assert s.tiles.dims == (1, 4, 2)
    assert s.tiles.devices == (0, 2, 4, 6, 1, 3, 5, 7)
    assert not s.tiles.is_iota
    assert s.subgroups == (SubgroupType.REPLICATED,)
    assert s.data_dims == (1, 4)
    assert s.num_devices == 8


def test_parsed_fields_describe_a_v2_with_subgroups_and_shard_group():
    s = parse("{devices=[2,2,2]<=[8] last_tile_dims={replicated, manual} shard_like 7}")
    assert s.tiles.reshape == (2, 2, 2)
    assert s.tiles.perm == (0, 2, 1)
    assert s.tiles.devices is None
    assert s.subgroups == (SubgroupType.MANUAL, SubgroupType.REPLICATED)
    assert s.data_dims == (2,)
    assert s.shard_group == ("shard_like", 7)


def test_v2_grid_is_not_materialized_by_parsing():
    s = parse("{devices=[4096,4096]<=[4096,4096]T(1,0)}")
    assert "_array" not in s.tiles.__dict__
    assert s.num_devices == 4096 * 4096
    assert str(s) == "{devices=[4096,4096]<=[4096,4096]T(1,0)}"


def test_tuple_elements_and_leaves():
    s = parse("{{replicated}, {devices=[2]0,1 shard_as 1}, {maximal device=1}}")
    assert s.kind is Kind.TUPLE
    assert [e.kind for e in s.leaves()] == [Kind.REPLICATED, Kind.TILED, Kind.MAXIMAL]
    assert s.elements[2].device == 1
    assert parse("{manual}").leaves() == [parse("{manual}")]


def test_parse_returns_the_cached_object_for_the_same_string():
    text = "{devices=[2,2]0,2,1,3 last_tile_dims={manual}}"
    assert parse(text) is parse(text)


def test_sixty_five_thousand_device_list_parses_and_prints_back():
    ids = [(i % 256) * 256 + i // 256 for i in range(65536)]
    text = "{devices=[256,256]" + ",".join(map(str, ids)) + "}"
    s = parse(text)
    assert s.tiles.devices[:3] == (0, 256, 512)
    assert str(s) == text
    assert str(s.to_v2()) == "{devices=[256,256]<=[256,256]T(1,0)}"


# --- errors ------------------------------------------------------------------------------------

# (text, error class, message fragment, 1-based column)
ERRORS = {
    "short_device_list": (
        "{devices=[2,2]0,1,2}",
        ShardingValueError,
        "tile dims [2, 2] need 4 device ids but 3 are listed",
        15,
    ),
    "long_device_list": (
        "{devices=[2]0,1,2}",
        ShardingValueError,
        "need 2 device ids but 3 are listed",
        13,
    ),
    "duplicate_id": (
        "{devices=[2,2]0,1,2,2}",
        ShardingValueError,
        "device id 2 is listed twice",
        21,
    ),
    "out_of_range_id": (
        "{devices=[2,2]0,1,4,2}",
        ShardingValueError,
        "device id 4 is out of range [0, 4)",
        19,
    ),
    "negative_id": ("{devices=[2]-1,0}", ShardingValueError, "device id -1 is out of range", 13),
    "one_device_list": (
        "{devices=[1]0}",
        ShardingValueError,
        "must have more than one device",
        13,
    ),
    "iota_product_mismatch": (
        "{devices=[3]<=[2]}",
        ShardingValueError,
        "iota reshape dims [2] hold 2 devices but the tile dims [3] need 3",
        15,
    ),
    "transpose_not_a_permutation": (
        "{devices=[4]<=[2,2]T(0,0)}",
        ShardingValueError,
        "T(0, 0) is not a permutation of 0..1",
        20,
    ),
    "transpose_after_one_reshape_dim": (
        "{devices=[4]<=[4]T(0)}",
        ShardingSyntaxError,
        "'T(...)' is only allowed after more than one iota reshape dim",
        18,
    ),
    "missing_transpose_after_several_reshape_dims": (
        "{devices=[2,2]<=[2,2]}",
        ShardingSyntaxError,
        "expected 'T(' after several iota reshape dims",
        22,
    ),
    "both_last_tile_forms": (
        "{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}",
        ShardingSyntaxError,
        "'last_tile_dims' conflicts with 'last_tile_dim_replicate'",
        45,
    ),
    "more_subgroup_types_than_tile_dims": (
        "{devices=[2,2]<=[4] last_tile_dims={manual, replicated, unreduced}}",
        ShardingValueError,
        "3 last tile dim types but only 2 tile dims",
        21,
    ),
    "absurd_size_refused_before_allocating": (
        "{devices=[65536,65536]0,1}",
        ShardingValueError,
        "describe 4294967296 devices, more than 16777216",
        10,
    ),
    "zero_tile_dim": ("{devices=[2,0]<=[1]}", ShardingValueError, "must all be positive", 10),
    "conflicting_kinds": (
        "{replicated manual}",
        ShardingSyntaxError,
        "'manual' conflicts with 'replicated'",
        13,
    ),
    "repeated_attribute": (
        "{devices=[2]0,1 devices=[2]1,0}",
        ShardingSyntaxError,
        "'devices' is given twice",
        17,
    ),
    "device_and_devices": (
        "{maximal device=1 devices=[1]1}",
        ShardingSyntaxError,
        "'devices' conflicts with 'device'",
        19,
    ),
    "maximal_without_device": (
        "{maximal}",
        ShardingValueError,
        "maximal shardings should have exactly one device assigned",
        2,
    ),
    "maximal_with_two_devices": (
        "{maximal devices=[2]0,1}",
        ShardingValueError,
        "exactly one device",
        10,
    ),
    "negative_maximal_device": ("{maximal device=-1}", ShardingValueError, "negative", 17),
    "replicated_with_devices": (
        "{replicated devices=[2]0,1}",
        ShardingValueError,
        "replicated shardings should not have any devices assigned",
        13,
    ),
    "last_tile_dims_on_manual": (
        "{manual last_tile_dim_replicate}",
        ShardingSyntaxError,
        "a manual sharding has no last tile dims",
        9,
    ),
    "tiled_without_devices": (
        "{shard_as 1}",
        ShardingValueError,
        "a tiled sharding needs 'devices=[...]'",
        1,
    ),
    "unknown_attribute": ("{devices=[2]0,1 foo}", ShardingSyntaxError, "'foo'", 17),
    "space_before_equals": (
        "{devices =[2]0,1}",
        ShardingSyntaxError,
        "expected '=' right after 'devices'",
        9,
    ),
    "unknown_subgroup_type": (
        "{devices=[2,2]<=[4] last_tile_dims={other}}",
        ShardingSyntaxError,
        "expected manual, maximal, replicated or unreduced",
        37,
    ),
    "trailing_comma_in_list": ("{devices=[2]0,1,}", ShardingSyntaxError, "expected", 17),
    "hex_id": ("{devices=[2]0x0,1}", ShardingSyntaxError, "expected a device id", 13),
    "unterminated": ("{devices=[2]0,1", ShardingSyntaxError, "expected '}'", 16),
    "text_after_sharding": ("{replicated}x", ShardingSyntaxError, "unexpected text after", 13),
    "trailing_comma_in_tuple": (
        "{{replicated}, }",
        ShardingSyntaxError,
        "'{' to start a tuple element",
        16,
    ),
    "nested_tuple": ("{{{replicated}}}", ShardingSyntaxError, "nested tuple", 2),
    "unknown_metadata_field": (
        '{devices=[2]0,1 metadata={foo="x"}}',
        ShardingSyntaxError,
        "unknown metadata field 'foo'",
        27,
    ),
    "metadata_field_twice": (
        '{devices=[2]0,1 metadata={op_name="a" op_name="b"}}',
        ShardingSyntaxError,
        "metadata field 'op_name' is given twice",
        39,
    ),
    "metadata_int_field_given_a_string": (
        '{devices=[2]0,1 metadata={source_line="3"}}',
        ShardingSyntaxError,
        "an integer for metadata field 'source_line'",
        39,
    ),
    "unterminated_metadata_string": (
        '{devices=[2]0,1 metadata={op_name="abc}}',
        ShardingSyntaxError,
        "expected a quoted string",
        35,
    ),
    "negative_shard_group": ("{manual shard_as -1}", ShardingValueError, "negative", 9),
    "not_a_sharding": ("devices=[2]0,1", ShardingSyntaxError, "expected '{'", 1),
}


@pytest.mark.parametrize(("text", "error", "message", "column"), ERRORS.values(), ids=ERRORS)
def test_error_quotes_the_string_and_points_at_the_column(text, error, message, column):
    with pytest.raises(error) as info:
        parse(text)
    assert isinstance(info.value, ShardyConvertError)
    assert message in str(info.value)
    assert f'at column {column} of "{text}"' in str(info.value)
    assert info.value.column == column


def test_syntax_error_draws_a_caret_under_the_column():
    with pytest.raises(ShardingSyntaxError) as info:
        parse("{devices=[2]0,1 foo}")
    assert str(info.value).endswith('\n  "{devices=[2]0,1 foo}"\n                   ^')


def test_hloSharding_checks_its_fields():
    with pytest.raises(ShardingValueError, match="needs tiles"):
        HloSharding(Kind.TILED)
    with pytest.raises(ShardingValueError, match="maximal"):
        HloSharding(Kind.MAXIMAL)
    with pytest.raises(ShardingValueError, match="subgroup"):
        HloSharding(Kind.REPLICATED, subgroups=(SubgroupType.MANUAL,))
