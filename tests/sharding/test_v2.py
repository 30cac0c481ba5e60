"""V1 -> V2: torch_xla's explicit device lists become the iota forms JAX prints.

The V1 lists are computed the way torch_xla 2.9 computes them (`xla_sharding.py`
`_get_tile_assignment` / `_get_group_assignment`, then XLA's `PartialTile`, which sorts each
replication group); the V2 strings are what JAX 0.10.2 prints for the same mesh and spec with
the GSPMD partitioner (checked live in `test_expected_v2_is_what_jax_prints`).
"""

from __future__ import annotations

import numpy as np
import pytest

from shardy_convert.errors import ShardingValueError
from shardy_convert.sharding import Tiles, canonical_iota, iota_form, normalize, parse


def torch_xla_v1(mesh_shape, spec, device_ids=None) -> str:
    """The sharding string torch_xla prints for `mark_sharding(t, Mesh(ids, shape), spec)`.

    `spec` holds mesh axis indices, tuples of them, or None. Example: mesh (2, 4), spec
    `(None, 1)`: the mesh transposed to (4, 2), one group per index of the tiled axis ->
    `{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}`. A spec with a None but no
    replicated mesh axis (`((0, 1), None)`) is "partial" with groups of one, which XLA drops.
    """
    ids = np.arange(np.prod(mesh_shape)) if device_ids is None else np.asarray(device_ids)
    tiled = [s for s in spec if s is not None]
    order = [a for s in tiled for a in (s if isinstance(s, tuple) else (s,))]
    missing = sorted(set(range(len(mesh_shape))) - set(order))
    tiles = ids.reshape(mesh_shape).transpose(order + missing)
    for i, s in enumerate(tiled):
        if isinstance(s, tuple):
            tiles = tiles.reshape((*tiles.shape[:i], -1, *tiles.shape[i + len(s) :]))
    if not tiled:
        return "{replicated}"
    if tiles.ndim == len(spec) and None not in spec:
        return _v1(tiles.shape, tiles.ravel())
    groups = tiles.reshape(*tiles.shape[: len(tiled)], -1)
    group_dims = [1 if s is None else tiles.shape[tiled.index(s)] for s in spec]
    members = np.sort(groups.reshape(-1, groups.shape[-1]), axis=1)
    if members.shape[1] == 1:  # XLA's PartialTile drops a replication group of one
        return _v1(group_dims, members.ravel())
    return _v1((*group_dims, members.shape[1]), members.ravel(), " last_tile_dim_replicate")


def _v1(dims, ids, suffix="") -> str:
    return "{devices=[" + ",".join(map(str, dims)) + "]" + ",".join(map(str, ids)) + suffix + "}"


X, Y = 0, 1
# mesh (x=2, y=4): spec -> (torch_xla's V1 list, JAX's V2 string)
MESH_2x4 = {
    "x_y": ((X, Y), "{devices=[2,4]0,1,2,3,4,5,6,7}", "{devices=[2,4]<=[8]}"),
    "y_x": ((Y, X), "{devices=[4,2]0,4,1,5,2,6,3,7}", "{devices=[4,2]<=[2,4]T(1,0)}"),
    "x_none": (
        (X, None),
        "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
    ),
    "y_none": (
        (Y, None),
        "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}",
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    ),
    "none_x": (
        (None, X),
        "{devices=[1,2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}",
        "{devices=[1,2,4]<=[8] last_tile_dim_replicate}",
    ),
    "none_y": (
        (None, Y),
        "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}",
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    ),
    "xy_none": (((X, Y), None), "{devices=[8,1]0,1,2,3,4,5,6,7}", "{devices=[8,1]<=[8]}"),
    "yx_none": (
        ((Y, X), None),
        "{devices=[8,1]0,4,1,5,2,6,3,7}",
        "{devices=[8,1]<=[2,4]T(1,0)}",
    ),
    "none_xy": ((None, (X, Y)), "{devices=[1,8]0,1,2,3,4,5,6,7}", "{devices=[1,8]<=[8]}"),
    "none_yx": (
        (None, (Y, X)),
        "{devices=[1,8]0,4,1,5,2,6,3,7}",
        "{devices=[1,8]<=[2,4]T(1,0)}",
    ),
}
# mesh (x=2, y=2, z=2), spec (z, (x, y))
Z_XY = ((2, (0, 1)), "{devices=[2,4]0,2,4,6,1,3,5,7}", "{devices=[2,4]<=[4,2]T(1,0)}")


@pytest.mark.parametrize(("spec", "v1", "v2"), MESH_2x4.values(), ids=MESH_2x4)
def test_torch_xla_list_on_mesh_2x4_becomes_the_v2_jax_prints(spec, v1, v2):
    assert torch_xla_v1((2, 4), spec) == v1
    sharding = parse(v1)
    assert str(sharding.to_v2()) == v2
    assert sharding == parse(v2)
    assert hash(sharding) == hash(parse(v2))
    assert normalize(v1) == normalize(v2) == v2


def test_torch_xla_list_on_mesh_2x2x2_spec_z_xy_becomes_the_v2_jax_prints():
    spec, v1, v2 = Z_XY
    assert torch_xla_v1((2, 2, 2), spec) == v1
    assert str(parse(v1).to_v2()) == v2
    assert parse(v1) == parse(v2)


@pytest.mark.parametrize(
    ("mesh_shape", "names", "spec", "v2"),
    [((2, 4), ("x", "y"), spec, v2) for spec, _, v2 in MESH_2x4.values()]
    + [((2, 2, 2), ("x", "y", "z"), Z_XY[0], Z_XY[2])],
    ids=[*MESH_2x4, "z_xy"],
)
def test_expected_v2_is_what_jax_prints(mesh_shape, names, spec, v2):
    # JAX's GSPMD lowering of NamedSharding (the same with either partitioner flag).
    from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec

    def name(s):
        return tuple(names[a] for a in s) if isinstance(s, tuple) else names[s]

    jax_spec = PartitionSpec(*(None if s is None else name(s) for s in spec))
    sharding = NamedSharding(AbstractMesh(mesh_shape, names), jax_spec)
    assert str(sharding._to_xla_hlo_sharding(len(spec))) == v2


KNOWN_PAIRS = {
    "transposed_2x2x4": (
        "{devices=[2,2,4]0,8,4,12,1,9,5,13,2,10,6,14,3,11,7,15}",
        "{devices=[2,2,4]<=[2,2,4]T(2,1,0)}",
    ),
    "transposed_4x2": ("{devices=[4,2]0,4,1,5,2,6,3,7}", "{devices=[4,2]<=[2,4]T(1,0)}"),
    "identity_list": ("{devices=[2,2]0,1,2,3}", "{devices=[2,2]<=[4]}"),
    "replication_groups_as_sets": (
        "{devices=[2,1,2]2,0,3,1 last_tile_dim_replicate}",
        "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
    ),
    "manual_and_replicated_subgroups": (
        "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dims={manual, replicated}}",
        "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}",
    ),
    "tuple_elementwise": (
        "{{devices=[2]1,0}, {devices=[2,2]0,2,1,3}, {replicated}}",
        "{{devices=[2]1,0}, {devices=[2,2]<=[2,2]T(1,0)}, {replicated}}",
    ),
}


@pytest.mark.parametrize(("v1", "v2"), KNOWN_PAIRS.values(), ids=KNOWN_PAIRS)
def test_v1_list_equals_and_converts_to_its_v2_twin(v1, v2):
    assert parse(v1) == parse(v2)
    assert str(parse(v1).to_v2()) == v2


NO_IOTA = {
    "reversed": "{devices=[4]3,2,1,0}",
    "swapped_pair": "{devices=[4]0,1,3,2}",
    "ring_order": "{devices=[2,4]0,1,2,3,7,6,5,4}",
    "does_not_start_at_zero": "{devices=[2,2]1,0,2,3}",
    # Groups {0,3},{1,2}, as sets, are the pairs of no iota of 4 ids (those give {0,1},{2,3}
    # and {0,2},{1,3}).
    "groups_of_no_iota": "{devices=[2,2]0,3,1,2 last_tile_dim_replicate}",
}


@pytest.mark.parametrize("text", NO_IOTA.values(), ids=NO_IOTA)
def test_list_without_iota_form_is_left_unchanged(text):
    sharding = parse(text)
    assert sharding.to_v2() is sharding
    assert str(sharding.to_v2()) == text
    assert sharding.tiles.to_iota() is None


def test_v2_and_non_tiled_shardings_convert_to_themselves():
    for text in ("{devices=[2,2]<=[4]}", "{replicated}", "{maximal device=2}", "{}", "{manual}"):
        assert parse(text).to_v2() is parse(text)


def test_to_v2_keeps_shard_group_and_metadata():
    s = parse('{devices=[2,2]0,2,1,3 shard_as 4 metadata={op_name="w"}}').to_v2()
    assert str(s) == '{devices=[2,2]<=[2,2]T(1,0) shard_as 4 metadata={op_name="w"}}'


# --- relabel: custom device orders ------------------------------------------------------------


def test_custom_device_order_becomes_iota_relative_to_that_order():
    order = [0, 2, 1, 3, 4, 6, 5, 7]  # torch_xla Mesh(device_ids=order, (2, 4))
    v1 = torch_xla_v1((2, 4), (None, Y), device_ids=order)
    assert v1 == "{devices=[1,4,2]0,4,2,6,1,5,3,7 last_tile_dim_replicate}"
    assert str(parse(v1).relabel(order)) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"


def test_flipped_device_order_becomes_plain_iota():
    order = list(range(8))[::-1]
    v1 = torch_xla_v1((8,), (X,), device_ids=order)
    assert v1 == "{devices=[8]7,6,5,4,3,2,1,0}"
    assert parse(v1).to_v2() is parse(v1)
    assert str(parse(v1).relabel(order)) == "{devices=[8]<=[8]}"


def test_relabel_leaves_maximal_devices_and_keyword_kinds_alone():
    s = parse("{{maximal device=1}, {replicated}, {devices=[2]1,0}}")
    assert str(s.relabel([1, 0])) == "{{maximal device=1}, {replicated}, {devices=[2]<=[2]}}"


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4]], ids=str)
def test_relabel_refuses_an_order_that_is_not_a_permutation(order):
    with pytest.raises(ShardingValueError, match=r"not a permutation of 0\.\.3"):
        parse("{devices=[4]<=[4]}").relabel(order)


# --- the iota helpers -------------------------------------------------------------------------


CANONICAL = {
    "merges_everything": ((3, 4, 5), (0, 1, 2), (60,), (0,)),
    "merges_a_consecutive_pair": ((3, 4, 5), (1, 2, 0), (3, 20), (1, 0)),
    "merges_the_major_pair": ((3, 4, 5), (2, 0, 1), (12, 5), (1, 0)),
    "keeps_a_full_reversal": ((3, 4, 5), (2, 1, 0), (3, 4, 5), (2, 1, 0)),
    "drops_ones_then_merges": ((1, 3, 1, 4, 1, 5), (4, 3, 2, 5, 1, 0), (3, 20), (1, 0)),
    "all_ones": ((1, 1), (1, 0), (1,), (0,)),
}


@pytest.mark.parametrize(
    ("reshape", "perm", "c_reshape", "c_perm"), CANONICAL.values(), ids=CANONICAL
)
def test_canonical_iota_matches_xla_examples(reshape, perm, c_reshape, c_perm):
    assert canonical_iota(reshape, perm) == (c_reshape, c_perm)


def test_iota_form_of_a_transposed_3d_arange():
    ids = np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)
    assert iota_form(ids) == ((6, 4), (1, 0))
    assert iota_form(ids.ravel().tolist()) == ((6, 4), (1, 0))


def test_only_six_orders_of_eight_devices_have_an_iota_form():
    from itertools import permutations

    found = [p for p in permutations(range(8)) if iota_form(p) is not None]
    assert len(found) == 6


def test_tiles_validate_and_canonicalize():
    assert str(Tiles((4, 2), (2, 4), (1, 0))) == "[4,2]<=[2,4]T(1,0)"
    assert str(Tiles((2, 2), (2, 1, 2), (0, 1, 2))) == "[2,2]<=[4]"
    assert Tiles((2, 2)).reshape == (4,)
    assert Tiles((2, 2), devices=(0, 2, 1, 3)).to_iota() == Tiles((2, 2), (2, 2), (1, 0))
    assert Tiles((2, 2), devices=(0, 2, 1, 3)).array().tolist() == [[0, 2], [1, 3]]
    with pytest.raises(ShardingValueError, match="need 4 device ids but 3"):
        Tiles((2, 2), devices=(0, 1, 2))
    with pytest.raises(ShardingValueError, match="not a permutation"):
        Tiles((2, 2), devices=(0, 1, 2, 2))
    with pytest.raises(ShardingValueError, match="hold 2 devices"):
        Tiles((3,), (2,))
    with pytest.raises(ShardingValueError, match="more than 16777216"):
        Tiles((4096, 4097))
