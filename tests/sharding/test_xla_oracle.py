"""Differential tests against XLA's own C++ parser, `jax._src.lib.xla_client.HloSharding`.

That parser aborts the process on some inputs and silently accepts invalid ones, so it only
sees strings generated as valid (`tests/random_shardings.py`), and only methods that
cannot abort are called (no `get_axis_sizes`, no `is_tile_assignment_iota`).
jaxlib's `str()` never prints metadata, so our text is compared with metadata stripped.
We follow the newest XLA: an XLA without unreduced shardings (jaxlib 0.7.1) parses
`last_tile_dims={unreduced}` but neither collapses nor reports it, so strings with unreduced
parts are only compared where XLA has them (`HAS_UNREDUCED`).
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from jax._src.lib import xla_client

from shardy_convert.sharding import HloSharding, Kind, SubgroupType, parse
from shardy_convert.sharding.model import collapsed_kind
from tests.random_shardings import random_sharding

SEEDS = range(8)
STRINGS_PER_SEED = 500  # 4,000 strings in all


def xla(text: str):
    return xla_client.HloSharding.from_string(text)


def without_metadata(s: HloSharding) -> HloSharding:
    if s.kind is Kind.TUPLE:
        return dataclasses.replace(s, elements=tuple(without_metadata(e) for e in s.elements))
    return dataclasses.replace(s, metadata=None)


def without_shard_group(s: HloSharding) -> HloSharding:
    if s.kind is Kind.TUPLE:
        return dataclasses.replace(s, elements=tuple(without_shard_group(e) for e in s.elements))
    return dataclasses.replace(s, shard_group=None, metadata=None)


# Whether this XLA knows unreduced shardings (`HloSharding.is_unreduced`; jaxlib 0.7.1 does not).
HAS_UNREDUCED = hasattr(xla_client.HloSharding, "is_unreduced")


def generated(seed: int) -> list[str]:
    rng = random.Random(seed)
    strings = [random_sharding(rng) for _ in range(STRINGS_PER_SEED)]
    if HAS_UNREDUCED:
        return strings
    return [s for s in strings if not unreduced(parse(s))]


def unreduced(s: HloSharding) -> bool:
    return any(
        leaf.kind is Kind.UNREDUCED or SubgroupType.UNREDUCED in leaf.subgroups
        for leaf in s.leaves()
    )


needs_unreduced = pytest.mark.skipif(
    not HAS_UNREDUCED, reason="this XLA has no unreduced shardings"
)


@pytest.mark.parametrize("seed", SEEDS)
def test_canonical_text_matches_xla(seed):
    for text in generated(seed):
        assert str(without_metadata(parse(text))) == str(xla(text)), text


@pytest.mark.parametrize("seed", SEEDS)
def test_device_grid_and_kind_match_xla(seed):
    for text in generated(seed):
        ours, theirs = parse(text), xla(text)
        if ours.kind is Kind.TUPLE:
            pairs = zip(ours.elements, theirs.tuple_elements(), strict=True)
        else:
            pairs = [(ours, theirs)]
        for o, t in pairs:
            assert_same_leaf(o, t, text)


def assert_same_leaf(ours: HloSharding, theirs, text: str) -> None:
    assert (ours.kind is Kind.REPLICATED) == theirs.is_replicated(), text
    assert (ours.kind is Kind.MANUAL) == theirs.is_manual(), text
    assert (ours.kind is Kind.UNKNOWN) == theirs.is_unknown(), text
    if HAS_UNREDUCED:
        assert (ours.kind is Kind.UNREDUCED) == theirs.is_unreduced(), text
    if ours.kind is Kind.MAXIMAL:
        assert theirs.tile_assignment_devices() == [ours.device], text
    if ours.kind is not Kind.TILED:
        return
    assert list(theirs.tile_assignment_dimensions()) == list(ours.tiles.dims), text
    assert list(theirs.tile_assignment_devices()) == ours.tiles.array().ravel().tolist(), text
    lone_replicated = ours.subgroups == (SubgroupType.REPLICATED,)
    assert theirs.replicate_on_last_tile_dim() == lone_replicated, text
    types = [t.name for t in theirs.subgroup_types()]
    assert types == ([] if lone_replicated else [t.name for t in ours.subgroups]), text


@pytest.mark.parametrize("seed", SEEDS)
def test_xla_reads_our_text_and_our_v2_text_back_to_the_same_sharding(seed):
    """XLA's == here too, except where XLA's own text is not a fixed point (see below)."""
    for text in generated(seed):
        ours = without_metadata(parse(text))
        for printed in (str(ours), str(ours.to_v2())):
            assert str(xla(printed)) == str(parse(printed)), (text, printed)
            assert parse(printed) == ours, (text, printed)
            if not any(collapsed_kind(leaf) for leaf in ours.leaves()):
                assert xla(printed) == xla(text), (text, printed)


@needs_unreduced
def test_xla_text_is_not_always_a_fixed_point_and_neither_is_ours():
    # XLA drops the size-1 manual dim and prints an unreduced subgroup over all devices, which
    # it collapses to {unreduced} when reading it back. We print what XLA prints, both times.
    text = "{devices=[1,4]<=[4] last_tile_dims={manual, unreduced}}"
    once = "{devices=[4]<=[4] last_tile_dims={unreduced}}"
    assert str(xla(text)) == str(parse(text)) == once
    assert str(xla(once)) == str(parse(once)) == "{unreduced}"
    assert parse(text) == parse(once) == parse("{unreduced}")


def variants(text: str, rng: random.Random) -> list[str]:
    """Strings likely to be equal to `text`: XLA's own V1 grid, our V2, and a random other."""
    theirs = xla(text)
    ours = parse(text)
    out = [str(ours.to_v2()), random_sharding(rng, metadata=False)]
    if ours.kind is Kind.TILED and ours.num_devices > 1:
        ids = ",".join(map(str, theirs.tile_assignment_devices()))
        head = "{devices=[" + ",".join(map(str, ours.tiles.dims)) + "]" + ids
        out.append(head + str(ours)[str(ours).index(" ") :] if ours.subgroups else head + "}")
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_equality_verdicts_agree_with_xla_where_xla_is_semantic(seed):
    """XLA's == is structural where ours is semantic; they must agree except in those places.

    XLA calls a one-device tiling different from {replicated}, and a tiling whose only subgroup
    spans all devices different from the plain kind (see the fixed-point test above).
    """
    rng = random.Random(1000 + seed)
    for text in generated(seed):
        a = without_shard_group(parse(text))
        for other in variants(text, rng):
            b = without_shard_group(parse(other))
            xla_equal = xla(str(a)) == xla(str(b))
            if xla_equal or not only_semantically_equal(a, b):
                assert (a == b) == xla_equal, (text, other)
            assert (a == b) == (hash(a) == hash(b)) or a != b, (text, other)


def only_semantically_equal(a: HloSharding, b: HloSharding) -> bool:
    """True where XLA's structural == is known to differ from placement equality."""
    if a.kind is Kind.TUPLE or b.kind is Kind.TUPLE:
        if a.kind is not b.kind or len(a.elements) != len(b.elements):
            return False
        return any(only_semantically_equal(x, y) for x, y in zip(a.elements, b.elements))
    return any(s.kind is Kind.TILED and (s.is_replicated or collapsed_kind(s)) for s in (a, b))
