"""`device_list_spelling`: a placement spelled as torch_xla's built-in runtime prints it (the
plugin wrapper's `_get_xla_sharding_spec`), checked on examples and against XLA's parser."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib import xla_client

from shardy_convert.sharding import parse
from shardy_convert.sharding.canonical import device_list_spelling

from ..random_shardings import random_sharding
from .test_xla_oracle import without_shard_group


@pytest.mark.parametrize(
    ("shardy", "built_in"),
    [
        ("{devices=[1,8]<=[8]}", "{devices=[1,8]0,1,2,3,4,5,6,7}"),
        ("{devices=[4,2]<=[2,4]T(1,0)}", "{devices=[4,2]0,4,1,5,2,6,3,7}"),
        (
            "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
            "{devices=[2,1,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}",
        ),
        (
            "{devices=[2,1,2]3,1,2,0 last_tile_dim_replicate}",
            "{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}",
        ),
        ("{{devices=[2]<=[2]}, {replicated}}", "{{devices=[2]0,1}, {replicated}}"),
        ("{devices=[1,8]0,1,2,3,4,5,6,7}", "{devices=[1,8]0,1,2,3,4,5,6,7}"),
    ],
    ids=["row-iota", "transposed-iota", "partially-replicated", "groups-sorted", "tuple", "v1"],
)
def test_a_tiling_reads_as_gspmds_device_list(shardy, built_in):
    assert device_list_spelling(shardy) == built_in


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{replicated}",
        "{manual}",
        "{maximal device=3}",
        "{devices=[1]<=[1]}",
        "{devices=[1,1]<=[1]}",
    ],
)
def test_what_is_no_tiling_is_left_as_torch_xla_wrote_it(text):
    assert device_list_spelling(text) == text


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_spelling_keeps_the_placement_and_has_no_iota(rng: random.Random):
    text = random_sharding(rng, metadata=False)
    spelled = device_list_spelling(text)
    assert parse(spelled) == parse(text)
    if spelled != text:  # a tiling (collapsed ones read as given): an explicit list
        # (a one-device tiling stays as given, in a tuple too and with its shard_as/like
        # mark: no V1 list spells it)
        one_device = r"\{devices=\[1(?:,1)*\]<=\[1\](?: [^{}]*)?\}"
        assert "<=" not in re.sub(one_device, "", spelled)
    assert device_list_spelling(spelled) == spelled
    # XLA's own parser reads the list as the same placement (its == also compares shard
    # groups, which torch_xla does not print: left out on both sides)
    ours, original = (str(without_shard_group(parse(t))) for t in (spelled, text))
    assert xla_client.HloSharding.from_string(ours) == xla_client.HloSharding.from_string(original)
