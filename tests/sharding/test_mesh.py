"""The global mesh and each sharding on it (pure Python: shardy_convert.sharding.mesh)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from shardy_convert.errors import ShardingValueError
from shardy_convert.sharding import parse
from shardy_convert.sharding.export import to_hlo
from shardy_convert.sharding.mesh import Factor, breakpoints, local_mesh, plan_mesh
from shardy_convert.sharding.sdy import AxisRef
from tests.random_shardings import PROPERTY, ordered_factorizations


def sdy(text: str, rank: int, *others: str, **kw) -> str:
    plan = plan_mesh([parse(text), *map(parse, others)], **kw)
    return f"{plan.mesh} {plan.tensor_sharding(parse(text), rank)}"


def test_local_mesh_of_transposed_iota_orders_factors_by_tile_dim():
    tiles = parse("{devices=[4,2]<=[2,4]T(1,0)}").tiles
    assert local_mesh(tiles) == (Factor(0, 1, 4), Factor(1, 4, 2))


def test_local_mesh_is_none_without_common_factorization():
    assert local_mesh(parse("{devices=[2,3]<=[2,3]T(1,0)}").tiles) is None


def test_xla_lit_example_local_mesh_7_2_5_3():
    # xla/service/spmd/shardy/test/import_shardings.mlir: [6,35]<=[7,10,3]T(2,1,0).
    tiles = parse("{devices=[6,35]<=[7,10,3]T(2,1,0)}").tiles
    factors = sorted(local_mesh(tiles), key=lambda f: -f.stride)
    assert [f.size for f in factors] == [7, 2, 5, 3]


def test_breakpoints_drop_incompatible_cuts():
    a = local_mesh(parse("{devices=[2,3]<=[6]}").tiles)
    b = local_mesh(parse("{devices=[3,2]<=[6]}").tiles)
    assert breakpoints([a, b], 6) == [1, 6]
    assert breakpoints([a], 6) == [1, 3, 6]


@pytest.mark.parametrize(
    ("gspmd", "rank", "expected"),
    [
        (
            "{devices=[2,4]<=[8]}",
            2,
            '<["_axis_0"=2, "_axis_1"=4]> <@mesh, [{"_axis_0"}, {"_axis_1"}]>',
        ),
        (
            "{devices=[4,2]<=[2,4]T(1,0)}",
            2,
            '<["_axis_0"=2, "_axis_1"=4]> <@mesh, [{"_axis_1"}, {"_axis_0"}]>',
        ),
        (
            "{devices=[8,1]<=[2,4]T(1,0)}",
            2,
            '<["_axis_0"=2, "_axis_1"=4]> <@mesh, [{"_axis_1", "_axis_0"}, {}]>',
        ),
        (
            "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
            2,
            '<["_axis_0"=2, "_axis_1"=4]> <@mesh, [{}, {"_axis_1"}]>',
        ),
        ("{replicated}", 3, "<[]> <@mesh, [{}, {}, {}]>"),
        ("{unknown}", 1, "<[]> <@mesh, [{?}]>"),
        ("{maximal device=3}", 2, "<[]> <@maximal_mesh_3, []>"),
    ],
)
def test_single_sharding(gspmd, rank, expected):
    assert sdy(gspmd, rank) == expected


def test_sub_axis_orientation_pre_is_the_major_part():
    # On "a"=6 (positions q): (1)2 is q // 3 and (2)3 is q % 3 (verified by compiling).
    got = sdy("{devices=[2,3]<=[6]}", 2, "{devices=[3,2]<=[6]}")
    assert got == '<["_axis_0"=6]> <@mesh, [{"_axis_0":(1)2}, {"_axis_0":(2)3}]>'
    got = sdy("{devices=[3,2]<=[6]}", 2, "{devices=[2,3]<=[6]}")
    assert got == '<["_axis_0"=6]> <@mesh, [{"_axis_0":(1)3}, {"_axis_0":(3)2}]>'


def test_custom_device_order_becomes_device_ids():
    got = sdy("{devices=[2,4]7,6,5,4,3,2,1,0}", 2)
    assert got == (
        '<["_axis_0"=2, "_axis_1"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]> '
        '<@mesh, [{"_axis_0"}, {"_axis_1"}]>'
    )


def test_mesh_hint_names_and_sub_axes():
    plan = plan_mesh([parse("{devices=[2,4]<=[8]}")], hint=[("batch", 4), ("model", 2)])
    ts = plan.tensor_sharding(parse("{devices=[2,4]<=[8]}"), 2)
    assert str(plan.mesh) == '<["batch"=4, "model"=2]>'
    assert str(ts) == '<@mesh, [{"batch":(1)2}, {"batch":(2)2, "model"}]>'


def test_hint_that_cannot_express_a_sharding_is_an_error():
    plan = plan_mesh([parse("{devices=[3,2]<=[6]}")], hint=[("a", 2), ("b", 3)])
    with pytest.raises(ShardingValueError, match="cannot be expressed on mesh"):
        plan.tensor_sharding(parse("{devices=[3,2]<=[6]}"), 2)


def test_device_counts_must_agree():
    with pytest.raises(ShardingValueError, match="disagree"):
        plan_mesh([parse("{devices=[4]<=[4]}"), parse("{devices=[8]<=[8]}")])
    with pytest.raises(ShardingValueError, match="disagree"):
        plan_mesh([parse("{devices=[4]<=[4]}")], num_devices=8)


def test_rank_mismatch_is_an_error():
    plan = plan_mesh([parse("{devices=[2,4]<=[8]}")])
    with pytest.raises(ShardingValueError, match="has 2 tile dims but the value has rank 3"):
        plan.tensor_sharding(parse("{devices=[2,4]<=[8]}"), 3)


def test_all_replicated_uses_the_known_count():
    plan = plan_mesh([parse("{replicated}")], num_devices=8)
    assert str(plan.mesh) == '<["_axis_0"=8]>'
    assert plan.device_count_known
    assert not plan_mesh([parse("{replicated}")]).device_count_known


def test_manual_axes_of_partial_manual():
    s = parse("{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}")
    plan = plan_mesh([s])
    assert plan.manual_axes(s) == ("_axis_1",)
    assert plan.manual_axes(parse("{manual}")) == ("_axis_0", "_axis_1")


# --- property: the sdy sharding places every slice on the device the GSPMD one did ---------


@st.composite
def mesh_views(draw):
    """Several shardings that are views of one mesh (random sizes, transposes, replication,
    and optionally a custom device order), as torch_xla and JAX produce them."""
    sizes = draw(st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=4))
    n = math.prod(sizes)
    order = draw(st.permutations(range(n))) if draw(st.booleans()) else list(range(n))
    views = []
    for _ in range(draw(st.integers(1, 3))):
        perm = draw(st.permutations(range(len(sizes))))
        used = draw(st.integers(1, len(sizes)))
        cuts = (
            sorted(draw(st.sets(st.integers(1, used - 1), max_size=used - 1))) if used > 1 else []
        )
        groups = [perm[a:b] for a, b in zip([0, *cuts], [*cuts, used])]
        dims = [math.prod(sizes[p] for p in g) for g in groups]
        rest = perm[used:]
        grid = np.arange(n).reshape(sizes).transpose(perm)
        if rest:
            dims.append(math.prod(sizes[p] for p in rest))
        ids = np.asarray(order)[grid.reshape(-1)]
        tail = " last_tile_dim_replicate" if rest else ""
        views.append(
            (
                f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, ids))}{tail}}}",
                len(groups),
            )
        )
    return views


@PROPERTY
@given(mesh_views())
def test_conversion_keeps_every_slice_on_its_device(views):
    shardings = [parse(text) for text, _ in views]
    assume(all(s.num_devices > 1 for s in shardings))
    plan = plan_mesh(shardings)
    for s, (_, rank) in zip(shardings, views):
        back = to_hlo(plan.tensor_sharding(s, rank), plan.mesh)
        assert back == s, f"{s} -> {plan.tensor_sharding(s, rank)} on {plan.mesh} -> {back}"


def test_to_hlo_of_sub_axes():
    from shardy_convert.sharding.sdy import DimSharding, Mesh, TensorSharding

    ts = TensorSharding(
        "mesh", (DimSharding((AxisRef("a", 1, 2),)), DimSharding((AxisRef("a", 2, 3),)))
    )
    assert to_hlo(ts, Mesh((("a", 6),))) == parse("{devices=[2,3]<=[6]}")


def test_unreduced_subgroup_round_trips():
    s = parse("{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}")
    plan = plan_mesh([s])
    ts = plan.tensor_sharding(s, 2)
    assert str(ts) == '<@mesh, [{"_axis_0"}, {}], unreduced={"_axis_1"}>'
    assert to_hlo(ts, plan.mesh) == s


def test_shardings_of_no_common_mesh_are_an_error():
    views = [parse("{devices=[2,3]<=[6]}"), parse("{devices=[2,3]<=[2,3]T(1,0)}")]
    views.append(parse("{devices=[3,2]<=[6]}"))
    with pytest.raises(ShardingValueError, match="not views of one device mesh"):
        plan_mesh(views)


# --- sub-axes: views that split the mesh's axes differently (no common factorization) ------


@st.composite
def sub_axis_views(draw):
    """Views of one mesh of coarse axes (6, 12, 4, ...), each splitting every coarse axis into
    factors of its own choosing: `[2,3]<=[6]` beside `[3,2]<=[6]` has no common factorization,
    so the mesh keeps the coarse axis and the shardings use sub-axes `"a":(pre)size` of it."""
    coarse = draw(st.lists(st.sampled_from([4, 6, 8, 12]), min_size=1, max_size=2))
    n = math.prod(coarse)
    views = []
    for _ in range(draw(st.integers(2, 3))):
        sizes = [f for c in coarse for f in draw(st.sampled_from(ordered_factorizations(c)))]
        perm = draw(st.permutations(range(len(sizes))))
        used = draw(st.integers(1, len(sizes)))
        cuts = (
            sorted(draw(st.sets(st.integers(1, used - 1), max_size=used - 1))) if used > 1 else []
        )
        groups = [perm[a:b] for a, b in zip([0, *cuts], [*cuts, used])]
        dims = [math.prod(sizes[p] for p in g) for g in groups]
        rest = perm[used:]
        if rest:
            dims.append(math.prod(sizes[p] for p in rest))
        ids = np.arange(n).reshape(sizes).transpose(perm).reshape(-1)
        tail = " last_tile_dim_replicate" if rest else ""
        text = f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, ids))}{tail}}}"
        views.append((text, len(groups)))
    return views


@PROPERTY
@given(sub_axis_views())
def test_views_needing_sub_axes_keep_every_slice_on_its_device(views):
    shardings = [parse(text) for text, _ in views]
    plan = plan_mesh(shardings)
    for s, (_, rank) in zip(shardings, views):
        sharding = plan.tensor_sharding(s, rank)
        back = to_hlo(sharding, plan.mesh)
        assert back == s, f"{s} -> {sharding} on {plan.mesh} -> {back}"
