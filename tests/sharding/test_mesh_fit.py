"""Which user mesh a module's shardings fit (pure Python: shardy_convert.sharding.mesh_fit)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardy_convert.sharding import parse
from shardy_convert.sharding.export import to_hlo
from shardy_convert.sharding.mesh import plan_mesh
from shardy_convert.sharding.mesh_fit import UserMesh, choose


def misfit(shardings, mesh: UserMesh, num_devices: int | None = None) -> str | None:
    """Why `choose` rejects `mesh` for `shardings` (its only candidate); None if it takes it."""
    choice = choose(shardings, [mesh], num_devices)
    return None if choice.mesh is not None else choice.rejected[0][1]


ORDER = (5, 2, 7, 0, 3, 6, 1, 4)  # not an iota transpose: no V2 string has it


def torch_xla_sharding(mesh: UserMesh, spec: tuple) -> str:
    """The V1 string torch_xla's `mark_sharding(t, mesh, spec)` writes: the logical mesh
    (device_ids reshaped) transposed so that each dim's axes come first, in spec order, the
    unused axes last as a replicated dim (`xla_sharding._get_tile_assignment`)."""
    names = [name for name, _ in mesh.axes]
    shape = [size for _, size in mesh.axes]
    ids = np.asarray(mesh.device_ids or range(mesh.size))
    dims = [(d,) if isinstance(d, str) else tuple(d or ()) for d in spec]
    used = [names.index(a) for d in dims for a in d]
    rest = [k for k in range(len(names)) if k not in used]
    grid = ids.reshape(shape).transpose(used + rest)
    tiles = [math.prod(shape[names.index(a)] for a in d) for d in dims]
    tail = ""
    if rest:
        tiles.append(math.prod(shape[k] for k in rest))
        tail = " last_tile_dim_replicate"
    if math.prod(tiles[: len(dims)]) == 1:
        return "{replicated}"
    devices = ",".join(str(int(i)) for i in grid.reshape(-1))
    return f"{{devices=[{','.join(map(str, tiles))}]{devices}{tail}}}"


def test_docstring_example_custom_order_spec_lands_on_its_named_axis():
    mesh = UserMesh((("data", 2), ("model", 4)), ORDER)
    s = parse(torch_xla_sharding(mesh, ("model", None)))
    assert s == parse("{devices=[4,1,2]5,3,2,6,7,1,0,4 last_tile_dim_replicate}")
    assert misfit([s], mesh) is None
    plan = plan_mesh([s], hint=mesh.axes, order=mesh.ids)
    assert str(plan.mesh) == '<["data"=2, "model"=4], device_ids=[5, 2, 7, 0, 3, 6, 1, 4]>'
    assert str(plan.tensor_sharding(s, 2)) == '<@mesh, [{"model"}, {}]>'
    flipped = UserMesh((("x", 4), ("y", 2)), ORDER)
    assert misfit([s], flipped) is None
    plan = plan_mesh([s], hint=flipped.axes, order=flipped.ids)
    assert str(plan.tensor_sharding(s, 2)) == '<@mesh, [{"x":(2)2, "y"}, {}]>'
    other = UserMesh((("data", 2), ("model", 4)))
    assert "not a view" in misfit([s], other)


def test_a_mesh_of_another_device_count_does_not_fit():
    mesh = UserMesh((("data", 2), ("model", 4)))
    assert misfit([parse("{replicated}")], mesh, num_devices=4) == (
        "8 devices, the program runs on 4"
    )
    assert misfit([parse("{devices=[4]<=[4]}")], mesh) is not None


def test_replicated_programs_fit_every_mesh_of_their_size():
    mesh = UserMesh((("data", 2), ("model", 4)), ORDER)
    assert misfit([parse("{replicated}"), parse("{maximal device=3}")], mesh, 8) is None


def test_a_manual_subgroup_must_cover_whole_axes():
    s = parse("{devices=[2,1,4]<=[8] last_tile_dims={manual}}")
    assert misfit([s], UserMesh((("a", 2), ("b", 4)))) is None
    assert misfit([s], UserMesh((("a", 2), ("b", 2), ("c", 2)))) is None
    assert "splits a mesh axis" in misfit([s], UserMesh((("a", 8),)))


def test_choose_prefers_the_mesh_without_sub_axes_then_the_first():
    s = parse("{devices=[2,4]<=[8]}")
    wide = UserMesh((("x", 4), ("y", 2)), label="wide")
    exact = UserMesh((("data", 2), ("model", 4)), label="exact")
    same = UserMesh((("a", 2), ("b", 4)), label="same")
    choice = choose([s], [wide, exact, same], 8)
    assert choice.mesh is exact
    assert choice.sub_axes == 0
    assert choice.reason() == ""
    assert choose([s], [wide], 8).sub_axes == 2
    flat = parse("{devices=[8,1]<=[8]}")
    line = UserMesh((("a", 8),), label="line")
    assert choose([flat], [exact, line], 8).mesh is line
    assert choose([parse("{replicated}")], [exact, line], 8).mesh is exact


def test_choose_says_why_no_mesh_fits():
    s = parse("{devices=[2,3]<=[6]}")
    meshes = [UserMesh((("a", 3), ("b", 2)), label="Mesh((3, 2))"), UserMesh((("c", 8),))]
    choice = choose([s], meshes, 6)
    assert choice.mesh is None
    reason = choice.reason()
    assert reason.startswith("Mesh((3, 2)): ")
    assert "crosses an axis boundary" in reason
    assert '<["c"=8]>: 8 devices, the program runs on 6' in reason


def test_a_device_order_of_the_wrong_devices_is_an_error():
    mesh = UserMesh((("a", 2), ("b", 2)), (0, 1, 2, 2))
    assert "no order of 4 devices" in misfit([parse("{devices=[2,2]<=[4]}")], mesh)


@st.composite
def meshes_and_specs(draw):
    """A torch_xla mesh (2-3 axes, random device order) and partition specs on it: each dim
    one axis, a tuple of axes, or None; unused axes replicated."""
    shape = draw(st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=3))
    n = math.prod(shape)
    names = [f"ax{k}" for k in range(len(shape))]
    ids = draw(st.one_of(st.just(tuple(range(n))), st.permutations(range(n)).map(tuple)))
    mesh = UserMesh(tuple(zip(names, shape)), ids)
    specs = []
    for _ in range(draw(st.integers(1, 4))):
        perm = draw(st.permutations(names))
        used = draw(st.integers(0, len(names)))
        rank = draw(st.integers(1, 3))
        cut = sorted(draw(st.lists(st.integers(0, used), min_size=rank - 1, max_size=rank - 1)))
        bounds = [0, *cut, used]
        spec = tuple(tuple(perm[a:b]) or None for a, b in itertools.pairwise(bounds))
        specs.append(spec)
    return mesh, specs


@settings(max_examples=200, deadline=None, derandomize=True)
@given(meshes_and_specs())
def test_torch_xla_shardings_fit_their_mesh_and_land_on_the_named_axes(case):
    mesh, specs = case
    texts = [torch_xla_sharding(mesh, spec) for spec in specs]
    shardings = [parse(t) for t in texts]
    choice = choose(shardings, [UserMesh((("other", mesh.size),), label="1-D"), mesh], mesh.size)
    plan = plan_mesh(shardings, hint=mesh.axes, order=mesh.ids)
    assert misfit(shardings, mesh, mesh.size) is None
    for s, spec in zip(shardings, specs):
        got = plan.tensor_sharding(s, len(spec))
        names = [tuple(a.name for a in d.axes) for d in got.dims]
        assert names == [tuple(d or ()) for d in spec], (str(s), str(got))
        assert all(a.pre is None for d in got.dims for a in d.axes)
        assert to_hlo(got, plan.mesh) == s
    assert choice.mesh is mesh or choice.sub_axes == 0


@st.composite
def another_mesh(draw, mesh: UserMesh) -> UserMesh:
    """A mesh of `mesh`'s devices in another shape: its sizes' prime factors grouped anew,
    in `mesh`'s device order, or in one of the orders its own axes transposed give."""
    factors = [p for _, size in mesh.axes for p in _primes(size)]
    order = draw(st.permutations(factors))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(order) - 1)), max_size=2)))
    bounds = [0, *[c for c in cuts if c < len(order)], len(order)]
    shape = [math.prod(order[a:b]) for a, b in itertools.pairwise(bounds) if b > a]
    ids = np.array(mesh.ids).reshape([size for _, size in mesh.axes])
    ids = ids.transpose(draw(st.permutations(range(ids.ndim)))).ravel()
    names = [f"t{k}" for k in range(len(shape))]
    return UserMesh(tuple(zip(names, shape)), tuple(int(i) for i in ids))


def _primes(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@settings(max_examples=200, deadline=None, derandomize=True)
@given(meshes_and_specs(), st.data())
def test_a_mesh_that_fits_keeps_every_slice_on_its_device(case, data):
    # Shardings of one mesh put on another of its devices: where `misfit` says they fit, each
    # converted sharding exported back on the chosen mesh is the same placement.
    mesh, specs = case
    target = data.draw(another_mesh(mesh))
    shardings = [parse(torch_xla_sharding(mesh, spec)) for spec in specs]
    assume(misfit(shardings, target, mesh.size) is None)
    plan = plan_mesh(shardings, hint=target.axes, order=target.ids)
    for s, spec in zip(shardings, specs):
        assert to_hlo(plan.tensor_sharding(s, len(spec)), plan.mesh) == s


@pytest.mark.parametrize(
    ("shape", "spec", "expected"),
    [
        ((4, 2), ("x", None), '<@mesh, [{"x"}, {}]>'),
        ((4, 2), (("x", "y"), None), '<@mesh, [{"x", "y"}, {}]>'),
        ((4, 2), (("y", "x"), None), '<@mesh, [{"y", "x"}, {}]>'),
        ((2, 2, 2), ("z", "x"), '<@mesh, [{"z"}, {"x"}]>'),
    ],
)
def test_specs_of_a_custom_order(shape, spec, expected):
    names = ("x", "y", "z")[: len(shape)]
    mesh = UserMesh(tuple(zip(names, shape)), ORDER)
    s = parse(torch_xla_sharding(mesh, spec))
    plan = plan_mesh([s], hint=mesh.axes, order=mesh.ids)
    assert str(plan.tensor_sharding(s, len(spec))) == expected
