"""Named (V3) shardings on Shardy meshes: the meshes they state are candidates under
mesh_fit's rules, each is written as it is on its own mesh and by its placement on another;
what a frontend attribute states beside a GSPMD string (`with_stated`). No MLIR."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings

from shardy_convert.errors import ShardingValueError
from shardy_convert.sharding import parse
from shardy_convert.sharding.export import to_hlo
from shardy_convert.sharding.mesh import plan_mesh
from shardy_convert.sharding.mesh_fit import UserMesh, candidates, choose, program_meshes
from shardy_convert.sharding.sdy import AxisRef, DimSharding, TensorSharding, with_stated

from .named_strategies import named_texts

ORDER = (3, 6, 0, 5, 1, 7, 2, 4)
DATA_MODEL = f"mesh['data'=2,'model'=4], device_ids=({','.join(map(str, ORDER))})"


def test_program_meshes_are_the_distinct_v3_meshes_in_order():
    shardings = [
        parse("{devices=[2,4]<=[8]}"),
        parse(f"{{{DATA_MODEL}, [{{'data'}}, {{}}]}}"),
        parse(f"{{{{{DATA_MODEL}, [{{'model'}}]}}, {{mesh['x'=8], [{{'x'}}]}}}}"),
        parse(f"{{{DATA_MODEL}, replicated}}"),
    ]
    meshes = program_meshes(shardings)
    assert [m.axes for m in meshes] == [(("data", 2), ("model", 4)), (("x", 8),)]
    assert meshes[0].device_ids == ORDER
    assert meshes[1].device_ids is None
    assert meshes[0].describe() == f"V3 {DATA_MODEL}"


def test_v3_meshes_come_before_the_programs_meshes():
    user = UserMesh((("u", 8),), label="user mesh")
    found = candidates([parse("{mesh['a'=8], [{'a'}]}")], [user])
    assert [m.axes for m in found] == [(("a", 8),), (("u", 8),)]


def test_the_mesh_every_sharding_fits_is_chosen():
    """`[{'a'}]` on 'a'=8 fits ['p'=2,'q'=4] whole (`{"p", "q"}`); `[{'p'}, {'q'}]` needs
    sub-axes of 'a': ['p'=2,'q'=4] is chosen."""
    shardings = [parse("{mesh['p'=2,'q'=4], [{'p'}, {'q'}]}"), parse("{mesh['a'=8], [{'a'}, {}]}")]
    choice = choose(shardings, program_meshes(shardings), 8)
    assert choice.mesh.axes == (("p", 2), ("q", 4))


def _plan(named_text: str):
    s = parse(named_text)
    mesh = s.named.mesh
    return plan_mesh([s], hint=mesh.axes, order=mesh.order), s


def test_on_its_own_mesh_a_v3_sharding_is_written_as_it_is():
    plan, s = _plan(f"{{{DATA_MODEL}, [{{'model', ?}}, {{}}], replicated={{'data'}}}}")
    assert str(plan.mesh) == '<["data"=2, "model"=4], device_ids=[3, 6, 0, 5, 1, 7, 2, 4]>'
    assert str(plan.tensor_sharding(s, 2)) == '<@mesh, [{"model", ?}, {}], replicated={"data"}>'


def test_on_another_mesh_it_is_placed_and_keeps_its_open_dims():
    s = parse("{mesh['a'=2,'b'=4], [{'b', ?}, {'a'}]}")
    plan = plan_mesh([s])  # the inferred mesh: axes _axis_0, _axis_1
    assert str(plan.tensor_sharding(s, 2)) == '<@mesh, [{"_axis_1", ?}, {"_axis_0"}]>'


def test_reductions_reach_the_shardy_sharding():
    plan, s = _plan("{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced=max{'b'}}")
    assert str(plan.tensor_sharding(s, 2)) == '<@mesh, [{"a"}, {}], unreduced=max{"b"}>'
    v2 = parse(
        '{devices=[2,1,4]<=[8] last_tile_dims={unreduced} metadata={op_type="sdy::reduction_op"'
        ' op_name="MIN"}}'
    )
    assert str(plan.tensor_sharding(v2, 2)) == '<@mesh, [{"a"}, {}], unreduced=min{"b"}>'
    keyword = parse("{mesh['a'=2,'b'=4], unreduced=max}")
    assert str(plan.tensor_sharding(keyword, 1)) == '<@mesh, [{}], unreduced=max{"a", "b"}>'


def test_a_v3_sharding_of_another_rank_is_placed_by_its_placement():
    plan, s = _plan("{mesh['a'=2,'b'=4], [{}, {}]}")  # replicated: no rank of its own
    assert str(plan.tensor_sharding(s, 3)) == "<@mesh, [{}, {}, {}]>"


# --- with_stated ------------------------------------------------------------------------------


def _ts(*dims: DimSharding) -> TensorSharding:
    return TensorSharding("mesh", dims)


X, Y = AxisRef("_axis_0"), AxisRef("_axis_1")


@pytest.mark.parametrize(
    ("ts", "stated", "want"),
    [
        (
            _ts(DimSharding((X,)), DimSharding((Y,))),
            _ts(DimSharding((AxisRef("mesh_idx_0"),), priority=0), DimSharding(priority=1)),
            '<@mesh, [{"_axis_0"}p0, {"_axis_1"}p1]>',
        ),
        (
            _ts(DimSharding((X,)), DimSharding()),
            _ts(DimSharding(priority=2), DimSharding(is_closed=False, priority=0)),
            '<@mesh, [{"_axis_0"}p2, {?}p0]>',
        ),
        (  # a closed dim on no axis keeps no priority (Shardy refuses one there)
            _ts(DimSharding((X,)), DimSharding()),
            _ts(DimSharding(priority=0), DimSharding(priority=1)),
            '<@mesh, [{"_axis_0"}p0, {}]>',
        ),
        (  # open in the GSPMD import stays open
            _ts(DimSharding((X,), is_closed=False)),
            _ts(DimSharding(priority=3)),
            '<@mesh, [{"_axis_0", ?}p3]>',
        ),
    ],
)
def test_with_stated_takes_priorities_and_open_dims(ts, stated, want):
    assert str(with_stated(ts, stated)) == want


def test_with_stated_of_another_rank_is_an_error():
    with pytest.raises(ShardingValueError, match="has 1 dim but the value has rank 2"):
        with_stated(_ts(DimSharding(), DimSharding()), _ts(DimSharding(priority=0)))


@settings(max_examples=200, deadline=None)
@given(named_texts())
def test_export_of_a_v3_sharding_on_its_own_mesh_places_data_as_it(text):
    """Shardy back to GSPMD (`export.to_hlo`) inverts the import on the V3 string's own mesh:
    the same placement and reduction (manual axes aside: a manual computation says them)."""
    s = parse(text)
    named = s.named
    assume(named.mesh is not None and named.dims is not None and not named.manual)
    plan = plan_mesh([s], hint=named.mesh.axes, order=named.mesh.order)
    back = to_hlo(plan.tensor_sharding(s, len(named.dims)), plan.mesh)
    assert back == s
    assert back.unreduced_reduction == s.unreduced_reduction


def test_shardings_equal_by_placement_keep_their_own_v3_form():
    """`{'model', ?}` and `{'model'}` place data alike (equal HloShardings) but are different
    Shardy shardings: the mesh plan's cache must not hand one the other's."""
    plan, closed = _plan(f"{{{DATA_MODEL}, [{{'model'}}, {{}}]}}")
    opened = parse(f"{{{DATA_MODEL}, [{{'model', ?}}, {{}}]}}")
    assert closed == opened
    assert str(plan.tensor_sharding(closed, 2)) == '<@mesh, [{"model"}, {}]>'
    assert str(plan.tensor_sharding(opened, 2)) == '<@mesh, [{"model", ?}, {}]>'
