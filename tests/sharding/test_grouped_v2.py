"""V1 -> V2 for partially replicated lists whose sorted groups are no iota (`grouped_iota_form`).

XLA's PartialTile writes every replication group sorted. On meshes mixing factors the sorted
list is often no iota although an iota with the same groups (as sets) exists; `to_v2` searches
for it. XLA's own parser is the oracle: it reads our V2 string and the V1 list as equal.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax._src.lib import xla_client

import shardy_convert.sharding.iota_grouped as iota_module
from shardy_convert.sharding import parse
from shardy_convert.sharding.iota import iota_array
from shardy_convert.sharding.iota_grouped import grouped_iota_form
from tests.random_shardings import PROPERTY, ordered_factorizations


def v1_text(dims, ids) -> str:
    joined = ",".join(map(str, ids))
    return "{devices=[" + ",".join(map(str, dims)) + "]" + joined + " last_tile_dim_replicate}"


def sorted_groups(grid: np.ndarray, g: int) -> np.ndarray:
    """The grid as XLA's PartialTile writes it: every replication group ascending."""
    return np.sort(grid.reshape(-1, g), axis=1).ravel()


def assert_same_by_xla(v1: str, v2: str) -> None:
    """XLA's == (which sorts groups when it reads both) says the two strings are one sharding."""
    assert xla_client.HloSharding.from_string(v1) == xla_client.HloSharding.from_string(v2)


ISSUE_CASES = {
    "12_devices_3x2_groups_of_2": (
        "{devices=[3,2,2]0,4,1,8,5,9,2,6,3,10,7,11 last_tile_dim_replicate}",
        "{devices=[3,2,2]<=[3,4]T(1,0) last_tile_dim_replicate}",
    ),
    "18_devices_groups_of_9": (
        "{devices=[2,1,9]0,1,3,6,7,9,12,13,15,2,4,5,8,10,11,14,16,17 last_tile_dim_replicate}",
        "{devices=[2,1,9]<=[3,2,3]T(2,1,0) last_tile_dim_replicate}",
    ),
    # What XLA itself prints for `{devices=[2,6]<=[4,3]T(1,0) last_tile_dim_replicate}`
    # (test_what_xla_prints_for_a_grouped_iota_comes_back_to_it).
    "xla_materialized_groups_of_6": (
        "{devices=[2,6]0,1,3,4,6,9,2,5,7,8,10,11 last_tile_dim_replicate}",
        "{devices=[2,6]<=[4,3]T(1,0) last_tile_dim_replicate}",
    ),
}


@pytest.mark.parametrize(("v1", "v2"), ISSUE_CASES.values(), ids=ISSUE_CASES)
def test_sorted_groups_find_their_iota_form(v1, v2):
    converted = parse(v1).to_v2()
    assert str(converted) == v2
    assert converted.tiles.is_iota
    assert converted == parse(v1)
    assert_same_by_xla(v1, v2)


def test_what_xla_prints_for_a_grouped_iota_comes_back_to_it():
    """XLA prints an iota whose replication groups are split across its reshape dims as the
    sorted V1 list; `parse` prints it so too, and `to_v2` finds the iota again."""
    v1, v2 = ISSUE_CASES["xla_materialized_groups_of_6"]
    assert str(xla_client.HloSharding.from_string(v2)) == v1
    assert str(parse(v2)) == v1
    assert str(parse(v1).to_v2()) == v2


@st.composite
def grouped_iotas(draw):
    """(tile dims, reshape, perm) of an iota of at most 64 devices with a replication group."""
    n = draw(st.integers(4, 64).filter(lambda n: len(ordered_factorizations(n)) > 1))
    reshape = draw(st.sampled_from(ordered_factorizations(n)))
    perm = draw(st.permutations(range(len(reshape))))
    g = draw(st.sampled_from([d for d in range(2, n) if n % d == 0]))
    tiles = draw(st.sampled_from(ordered_factorizations(n // g)))
    return (*tiles, g), reshape, tuple(perm)


@PROPERTY
@given(grouped_iotas())
def test_every_grouped_iota_written_with_sorted_groups_comes_back_as_an_iota(case):
    dims, reshape, perm = case
    g = dims[-1]
    grid = iota_array(dims, reshape, perm)
    v1 = v1_text(dims, sorted_groups(grid, g))
    converted = parse(v1).to_v2()
    assert converted.tiles.is_iota, v1
    assert converted == parse(v1)
    assert np.array_equal(sorted_groups(converted.tiles.array(), g), sorted_groups(grid, g))
    assert_same_by_xla(v1, str(converted))


@pytest.mark.parametrize("n", range(2, 25))
def test_every_factorization_of_n_devices_and_every_group_size(n):
    """Exhaustive up to 24 devices: every reshape, every transpose, every group size."""
    for reshape in ordered_factorizations(n):
        for perm in itertools.permutations(range(len(reshape))):
            flat = iota_array((n,), reshape, perm)
            for g in (d for d in range(2, n + 1) if n % d == 0):
                groups = np.sort(flat.reshape(-1, g), axis=1)
                form = grouped_iota_form(groups)
                assert form is not None, (reshape, perm, g)
                found = np.sort(iota_array((n,), *form).reshape(-1, g), axis=1)
                assert np.array_equal(found, groups), (reshape, perm, g, form)


@pytest.mark.parametrize(("n", "g"), [(6, 2), (6, 3), (8, 2), (8, 4), (12, 2), (12, 3), (12, 4)])
def test_a_form_is_found_exactly_when_brute_force_finds_one(n, g):
    """Random groupings of n devices: found iff some iota has those groups (brute force)."""
    reachable = set()
    for reshape in ordered_factorizations(n):
        for perm in itertools.permutations(range(len(reshape))):
            flat = iota_array((n,), reshape, perm)
            reachable.add(np.sort(flat.reshape(-1, g), axis=1).tobytes())
    rng = np.random.default_rng(n * 100 + g)
    hits = 0
    for k in range(200):
        ids = rng.permutation(n)
        if k % 3:  # an iota's groups, in its order or (k % 3 == 2) in a random group order
            reshape = ordered_factorizations(n)[rng.integers(len(ordered_factorizations(n)))]
            flat = iota_array((n,), reshape, rng.permutation(len(reshape))).reshape(-1, g)
            ids = (flat if k % 3 == 1 else flat[rng.permutation(n // g)]).ravel()
        groups = np.sort(ids.reshape(-1, g), axis=1)
        form = grouped_iota_form(groups)
        assert (form is not None) == (groups.tobytes() in reachable), groups.tolist()
        hits += form is not None
    assert 0 < hits < 200


def test_the_search_gives_up_within_its_budget(monkeypatch):
    v1, _ = ISSUE_CASES["18_devices_groups_of_9"]
    monkeypatch.setattr(iota_module, "SEARCH_BUDGET", 1)
    # A sharding of its own (parse keeps one per string, and each keeps its V2 form).
    assert str(parse.__wrapped__(v1).to_v2()) == v1


def test_helpers_cover_every_factorization():
    assert sorted(ordered_factorizations(12)) == sorted(
        [(12,), (2, 6), (6, 2), (3, 4), (4, 3), (2, 2, 3), (2, 3, 2), (3, 2, 2)]
    )
    assert math.prod(ordered_factorizations(60)[-1]) == 60
