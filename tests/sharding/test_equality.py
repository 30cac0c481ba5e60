"""Semantic `==`, `hash` and `normalize`: shardings compare by placement, never as strings."""

from __future__ import annotations

import itertools

import pytest

from shardy_convert.sharding import HloSharding, Kind, SubgroupType, Tiles, normalize, parse

# Each group: spellings of one placement. Different groups are different placements.
SAME_PLACEMENT = {
    "replicated": [
        "",
        "{replicated}",
        " {replicated} ",
        "{devices=[1,1]<=[1]}",
        "{devices=[1]<=[1]}",
        "{devices=[1,2]<=[2] last_tile_dim_replicate}",
        '{replicated metadata={op_name="x"}}',
        "{replicated shard_as 2}",
    ],
    "transposed_2x2": [
        "{devices=[2,2]0,2,1,3}",
        "{devices=[2,2]<=[2,2]T(1,0)}",
        "{devices=[2,2]<=[2,2]T(1,0) shard_like 1}",
        '{devices=[2,2]0,2,1,3 metadata={op_name="a"}}',
    ],
    "identity_2x2": [
        "{devices=[2,2]0,1,2,3}",
        "{devices=[2,2]<=[4]}",
        "{devices=[2,2]<=[2,2]T(0,1)}",
    ],
    "partial_2x1x2": [
        "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        "{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}",
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
        "{devices=[2,1,2]0,1,2,3 last_tile_dims={replicated}}",
    ],
    "partial_groups_0_2_and_1_3": [
        "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}",
        "{devices=[2,1,2]2,0,3,1 last_tile_dim_replicate}",
        "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
    ],
    "manual_then_replicated": [
        "{devices=[2,2,2]<=[8] last_tile_dims={replicated, manual}}",
        "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}",
        "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dims={manual, replicated}}",
    ],
    "unreduced": [
        "{unreduced}",
        "{devices=[1,4]<=[4] last_tile_dims={unreduced}}",
        "{devices=[1,4]<=[4] last_tile_dims={manual, unreduced}}",
    ],
    "manual": ["{manual}", "{devices=[1,4]<=[4] last_tile_dims={manual}}"],
    "unknown": ["{unknown}", "{unknown shard_like 0}"],
    "maximal_3": ["{maximal device=3}", "{maximal devices=[1]3}"],
    "maximal_1": ["{maximal device=1}"],
    "rank_1_pair": ["{devices=[2]0,1}", "{devices=[2,1]0,1 last_tile_dim_replicate}"],
    "rank_2_pair": ["{devices=[2,1]0,1}"],
    "swapped_pair": ["{devices=[2]1,0}"],
    "replicate_then_manual_groups_differ": [
        "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    ],
    "empty_tuple": ["{}", "{ }"],
    "tuple_of_replicated": ["{{replicated}}", "{{devices=[1]<=[1]}}"],
    "tuple_pair": [
        "{{devices=[2,2]0,2,1,3}, {manual}}",
        "{{devices=[2,2]<=[2,2]T(1,0)}, {manual}}",
    ],
}

PAIRS_SAME = [
    (a, b) for key, group in SAME_PLACEMENT.items() for a, b in itertools.combinations(group, 2)
]
PAIRS_DIFFERENT = [
    (g1[0], g2[0]) for (_, g1), (_, g2) in itertools.combinations(SAME_PLACEMENT.items(), 2)
]


@pytest.mark.parametrize(("a", "b"), PAIRS_SAME, ids=[f"{a!r}=={b!r}" for a, b in PAIRS_SAME])
def test_spellings_of_one_placement_are_equal_hash_alike_and_normalize_alike(a, b):
    assert parse(a) == parse(b)
    assert hash(parse(a)) == hash(parse(b))
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(
    ("a", "b"), PAIRS_DIFFERENT, ids=[f"{a!r}!={b!r}" for a, b in PAIRS_DIFFERENT]
)
def test_different_placements_are_unequal_and_normalize_apart(a, b):
    assert parse(a) != parse(b)
    assert normalize(a) != normalize(b)


NORMALIZED = {
    "": "{replicated}",
    "{devices=[1,1]<=[1]}": "{replicated}",
    '{devices=[2,2]0,2,1,3 shard_as 1 metadata={op_name="x"}}': "{devices=[2,2]<=[2,2]T(1,0)}",
    "{devices=[2,1,2]2,0,3,1 last_tile_dim_replicate}": (
        "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"
    ),
    "{devices=[4]3,2,1,0}": "{devices=[4]3,2,1,0}",
    "{devices=[1,4]<=[4] last_tile_dims={manual, unreduced}}": "{unreduced}",
    "{{devices=[2]0,1}, {devices=[1]<=[1] shard_like 3}}": "{{devices=[2]<=[2]}, {replicated}}",
    "{maximal devices=[1]5}": "{maximal device=5}",
}


@pytest.mark.parametrize(("text", "key"), NORMALIZED.items(), ids=list(NORMALIZED))
def test_normalize_gives_the_canonical_key(text, key):
    assert normalize(text) == key
    assert normalize(key) == key


def test_a_retrace_cache_keyed_on_normalize_hits_for_every_replicated_spelling():
    # pytorch/xla#9755: "" and "{replicated}" are one placement; a string-keyed cache missed.
    cache = {}
    for text in SAME_PLACEMENT["replicated"]:
        cache.setdefault(normalize(text), text)
        cache.setdefault(parse(text), text)
    assert len(cache) == 2


def test_replication_group_order_is_ignored_on_unsorted_objects():
    # parse() sorts groups as XLA does; objects built directly may not be sorted.
    replicated = (SubgroupType.REPLICATED,)
    unsorted = HloSharding(Kind.TILED, Tiles((2, 2), devices=(2, 0, 3, 1)), replicated)
    assert str(unsorted) == "{devices=[2,2]2,0,3,1 last_tile_dim_replicate}"
    assert unsorted == parse("{devices=[2,2]0,2,1,3 last_tile_dim_replicate}")
    assert str(unsorted.to_v2()) == "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"


def test_manual_subgroup_order_is_not_ignored():
    manual = (SubgroupType.MANUAL,)
    a = HloSharding(Kind.TILED, Tiles((2, 2), devices=(0, 1, 2, 3)), manual)
    b = HloSharding(Kind.TILED, Tiles((2, 2), devices=(1, 0, 3, 2)), manual)
    assert a != b


def test_is_replicated_is_semantic():
    assert parse("").is_replicated
    assert parse("{devices=[1,1]<=[1]}").is_replicated
    assert HloSharding(Kind.TILED, Tiles((1, 4)), (SubgroupType.REPLICATED,)).is_replicated
    assert parse("{{replicated}, {devices=[1]<=[1]}}").is_replicated
    assert not parse("{devices=[2]0,1}").is_replicated
    assert not parse("{manual}").is_replicated
    assert not parse("{{replicated}, {manual}}").is_replicated


def test_comparing_with_a_string_is_not_equality():
    assert parse("{replicated}") != "{replicated}"


def test_big_v2_shardings_hash_and_compare_without_materializing():
    a = parse("{devices=[4096,4096]<=[4096,4096]T(1,0)}")
    b = parse("{devices=[4096,2048,2]<=[4096,4096]T(1,0) last_tile_dim_replicate}")
    assert hash(a) != hash(b)
    assert a != b
    assert normalize(str(b)) == str(b)
    assert "_array" not in a.tiles.__dict__
    assert "_array" not in b.tiles.__dict__


def test_v2_with_descending_groups_equals_its_sorted_twin():
    # Built directly (parse would sort it): groups 0,4,2,6 and 1,5,3,7.
    replicated = (SubgroupType.REPLICATED,)
    descending = HloSharding(Kind.TILED, Tiles((2, 4), (2, 2, 2), (2, 1, 0)), replicated)
    assert str(descending) == "{devices=[2,4]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}"
    sorted_twin = parse("{devices=[2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}")
    assert descending == sorted_twin
    assert hash(descending) == hash(sorted_twin)
    assert normalize(str(descending)) == str(sorted_twin.to_v2())
