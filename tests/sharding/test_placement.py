"""sharding/placement.py: the devices that hold each tile, and the tiles two shardings of one
tiling put on other devices (what `diff` prints for a placement that differs).

Properties on random V1 lists of one tiling: no tile moved exactly when the two are the same
placement, by our semantic equality and by XLA's own (`xla_client.HloSharding`, which sorts the
ids of a replication group when it parses, so its `==` is by placement too), and the tiles
reported are exactly those whose device sets, read off the lists here, differ.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib import xla_client

from shardy_convert.sharding import parse
from shardy_convert.sharding.placement import MovedTile, holders, moved_tiles


def text(data: list[int], group: int, ids: list[int]) -> str:
    dims = [*data, group] if group > 1 else data
    suffix = " last_tile_dim_replicate" if group > 1 else ""
    return f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, ids))}{suffix}}}"


@st.composite
def two_lists(draw):
    """Two V1 lists of one tiling: (data dims, group size, ids of A, ids of B). B is A with
    two ids swapped (often inside one group: the same placement) or another permutation."""
    data = draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=3))
    if math.prod(data) < 2:
        data = [*data, 2]
    group = draw(st.sampled_from([1, 1, 2, 3]))
    n = math.prod(data) * group
    a = draw(st.permutations(range(n)))
    if draw(st.booleans()):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        b = list(a)
        b[i], b[j] = b[j], b[i]
    else:
        b = draw(st.permutations(range(n)))
    return data, group, list(a), list(b)


def expected_moves(data, group, a, b) -> list[MovedTile]:
    """The tiles (row-major over `data`) whose set of ids differs, read off the two lists."""
    moves = []
    for k, index in enumerate(np.ndindex(*data)):
        x = tuple(sorted(a[k * group : (k + 1) * group]))
        y = tuple(sorted(b[k * group : (k + 1) * group]))
        if x != y:
            moves.append(MovedTile(tuple(int(i) for i in index), x, y))
    return moves


@settings(max_examples=300, deadline=None)
@given(two_lists())
def test_the_tiles_on_other_devices_are_those_the_lists_move(case):
    data, group, a, b = case
    sa, sb = text(data, group, a), text(data, group, b)
    moved = moved_tiles(parse(sa), parse(sb))
    assert moved == expected_moves(data, group, a, b)
    same = xla_client.HloSharding.from_string(sa) == xla_client.HloSharding.from_string(sb)
    assert (not moved) == same == (parse(sa) == parse(sb))


@settings(max_examples=100, deadline=None)
@given(two_lists())
def test_holders_are_each_tiles_sorted_group(case):
    data, group, a, _ = case
    found = holders(parse(text(data, group, a)))
    assert found.shape == (*data, group)
    for k, index in enumerate(np.ndindex(*data)):
        assert list(found[index]) == sorted(a[k * group : (k + 1) * group])


def test_a_swap_names_both_tiles_with_their_devices():
    moved = moved_tiles(parse("{devices=[2,2]0,1,2,3}"), parse("{devices=[2,2]0,2,1,3}"))
    assert [str(m) for m in moved] == ["tile [0,1] on 1 vs 2", "tile [1,0] on 2 vs 1"]
    grouped = moved_tiles(
        parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"),
        parse("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"),
    )
    assert [str(m) for m in grouped] == [
        "tile [0,0] on {0,1} vs {0,2}",
        "tile [1,0] on {2,3} vs {1,3}",
    ]


def test_shardings_of_other_tilings_have_no_tile_by_tile_comparison():
    tiled = parse("{devices=[2,4]<=[8]}")
    for other in (
        "{devices=[4,2]<=[8]}",
        "{replicated}",
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        "{maximal device=1}",
        "{devices=[2,2]<=[4]}",
    ):
        assert moved_tiles(tiled, parse(other)) is None, other
