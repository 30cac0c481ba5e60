"""Properties of the sharding algebra (hypothesis, derandomized so every run is the same)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import lru_cache

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from jax._src.lib import xla_client

from shardy_convert.errors import ShardyConvertError
from shardy_convert.sharding import Kind, SubgroupType, iota_form, normalize, parse
from shardy_convert.sharding.iota import canonical_iota, iota_array
from tests.random_shardings import (
    PROPERTY,
    factorization,
    iota_text,
    ordered_factorizations,
    random_sharding,
)


def xla_text(text: str) -> str:
    return str(xla_client.HloSharding.from_string(text))


SUFFIXES = {
    "": 0,
    " last_tile_dim_replicate": 1,
    " last_tile_dims={manual}": 1,
    " last_tile_dims={replicated, manual}": 2,
    " last_tile_dims={unreduced, replicated}": 2,
}


@st.composite
def iotas(draw):
    """(tile dims, reshape, perm, subgroup suffix) of a random, possibly non-canonical iota."""
    reshape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4).filter(_small))
    perm = draw(st.permutations(range(len(reshape))))
    dims = factorization(math.prod(reshape), draw(st.randoms(use_true_random=False)))
    suffix = draw(st.sampled_from(list(SUFFIXES)))
    dims = [1] * (SUFFIXES[suffix] - len(dims)) + dims
    return dims, reshape, list(perm), suffix


def _small(reshape) -> bool:
    return 2 <= math.prod(reshape) <= 512


def v1_text(dims, ids, suffix) -> str:
    return "{devices=[" + ",".join(map(str, dims)) + "]" + ",".join(map(str, ids)) + suffix + "}"


def v2_text(dims, reshape, perm, suffix) -> str:
    return "{devices=[" + ",".join(map(str, dims)) + "]" + iota_text(reshape, perm) + suffix + "}"


@PROPERTY
@given(iotas())
def test_random_iota_written_as_v1_converts_to_the_same_grid_and_xla_text(iota):
    dims, reshape, perm, suffix = iota
    grid = iota_array(dims, reshape, perm)
    v1, v2 = v1_text(dims, grid.ravel(), suffix), v2_text(dims, reshape, perm, suffix)
    converted = parse(v1).to_v2()
    assert converted == parse(v2)
    if converted.kind is Kind.TILED:
        assert np.array_equal(converted._placement_array(), parse(v2)._placement_array())
    expected = xla_text(v2)
    if "<=" in expected or converted.kind is not Kind.TILED:
        assert str(converted) == expected
    else:
        # XLA's PartialTile materialized sorted groups. They may still have an iota form
        # (`[1,4,3]<=[3,2,2]T(1,0,2)`: groups 0,1,4 | 5,8,9 | ...) that XLA reads back and,
        # again, prints as that sorted V1 list.
        assert xla_text(str(converted)) == str(parse(v1)) == expected


@PROPERTY
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4).filter(_small), st.data())
def test_iota_form_inverts_iota_array(reshape, data):
    perm = data.draw(st.permutations(range(len(reshape))))
    ids = iota_array((math.prod(reshape),), reshape, perm)
    form = iota_form(ids)
    assert form == canonical_iota(reshape, perm)
    assert np.array_equal(iota_array((ids.size,), *form), ids)


@lru_cache
def all_iota_orders(n: int) -> frozenset[tuple[int, ...]]:
    """Every flat order `arange(n).reshape(R).transpose(P)`, by brute force over R and P."""
    orders = set()
    for reshape in ordered_factorizations(n):
        for perm in itertools.permutations(range(len(reshape))):
            orders.add(tuple(iota_array((n,), reshape, perm).tolist()))
    return frozenset(orders)


@PROPERTY
@given(st.integers(2, 12).flatmap(lambda n: st.permutations(range(n))))
def test_a_list_has_an_iota_form_exactly_when_brute_force_finds_one(ids):
    ids = tuple(ids)
    form = iota_form(ids)
    assert (form is not None) == (ids in all_iota_orders(len(ids)))
    sharding = parse(v1_text([len(ids)], ids, ""))
    if form is None:
        assert sharding.to_v2() is sharding
    else:
        assert tuple(iota_array((len(ids),), *form).tolist()) == ids
        assert str(sharding.to_v2()) == v2_text([len(ids)], *form, "")


strings = st.randoms(use_true_random=False).map(random_sharding)


@PROPERTY
@given(strings)
def test_printing_and_parsing_back_is_the_same_sharding(text):
    s = parse(text)
    once = str(s)
    assert parse(once) == s
    assert str(without_metadata(parse(once))) == xla_text(once)
    twice = str(parse(once))
    assert str(parse(twice)) == twice  # a fixed point after at most two rounds, as XLA's text


def without_metadata(s):
    if s.kind is Kind.TUPLE:
        return replace(s, elements=tuple(without_metadata(e) for e in s.elements))
    return replace(s, metadata=None)


@PROPERTY
@given(strings)
def test_v2_form_is_the_same_sharding_and_parses_back_to_itself(text):
    s = parse(text)
    v2 = s.to_v2()
    assert v2 == s
    assert hash(v2) == hash(s)
    assert parse(str(v2)) == v2
    assert normalize(str(v2)) == normalize(text)


@PROPERTY
@given(strings, st.randoms(use_true_random=False))
def test_relabel_by_a_random_order_then_back_is_the_identity(text, rng):
    s = parse(text)
    sizes = {leaf.num_devices for leaf in s.leaves() if leaf.kind is Kind.TILED}
    assume(len(sizes) <= 1)
    n = max(sizes, default=1)
    order = rng.sample(range(n), n)
    moved = s.relabel(order)
    assert moved.relabel(np.argsort(order)) == s
    for before, after in zip(s.leaves(), moved.leaves()):
        if before.kind is Kind.TILED:
            # position p now stands for device order[p]: mapping back gives the old placement
            back = np.asarray(order)[after.tiles.array()]
            assert np.array_equal(_rows(before, before.tiles.array()), _rows(before, back))


def _rows(s, grid):
    """The grid as rows, each replication group sorted (its order carries no meaning)."""
    size = grid.shape[-1] if s.subgroups[-1:] == (SubgroupType.REPLICATED,) else 1
    return np.sort(grid.reshape(-1, size), axis=1)


@PROPERTY
@given(
    strings,
    st.sampled_from(["v2", "v1", "shuffled_groups", "other"]),
    st.randoms(use_true_random=False),
)
def test_normalize_agrees_with_equality(a, how, rng):
    b = respelled(a, how, rng)
    assert (normalize(a) == normalize(b)) == (parse(a) == parse(b))
    assert normalize(normalize(a)) == normalize(a)
    if how != "other":
        assert normalize(a) == normalize(b)


def respelled(text: str, how: str, rng) -> str:
    """Another spelling of the same placement (or, for "other", an unrelated sharding)."""
    s = parse(text)
    if how == "other":
        return random_sharding(rng)
    if how == "v2" or s.kind is not Kind.TILED or s.num_devices == 1:
        return str(s.to_v2())
    grid = s.tiles.array().reshape(-1, s.tiles.dims[-1]).copy()
    if how == "shuffled_groups" and s.subgroups[-1:] == (SubgroupType.REPLICATED,):
        for row in grid:
            rng.shuffle(row)
    suffix = str(s)[str(s).find(" ") : -1] if " " in str(s) else ""
    return v1_text(s.tiles.dims, grid.ravel(), suffix)


GRAMMAR_PIECES = [
    *"{}[](),=<T 0123456789-/*\"'\\\n",
    "devices=",
    "device=",
    "maximal ",
    "replicated",
    "last_tile_dim_replicate",
    "last_tile_dims={",
    "shard_as 1",
    "metadata={",
    "op_name=",
    "<=[",
    "T(",
    "99999999999999999999",
]


@PROPERTY
@given(
    strings,
    st.lists(
        st.tuples(st.integers(0, 400), st.sampled_from(GRAMMAR_PIECES), st.integers(0, 3)),
        max_size=4,
    ),
)
def test_any_damaged_string_parses_or_raises_a_shardy_convert_error(text, edits):
    for at, piece, cut in edits:
        text = text[:at] + piece + text[at + cut :]
    error = parse_error(text)
    if error is None:
        assert parse(str(parse(text))) == parse(text)
    else:
        assert f'of "{text[:20]}' in error


def parse_error(text: str) -> str | None:
    """The message of the ShardyConvertError that parse raises, None when it parses."""
    try:
        parse(text)
    except ShardyConvertError as error:
        return str(error)
    return None
