"""A sharding read back as the user's partition spec on their mesh
(shardy_convert.sharding.partition_spec), with JAX's NamedSharding as the oracle: JAX writes
the HLO sharding of `P(...)` on a mesh the way torch_xla's `mark_sharding` does."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardy_convert.errors import ShardingValueError
from shardy_convert.sharding import parse
from shardy_convert.sharding.mesh_fit import UserMesh
from shardy_convert.sharding.partition_spec import Spec, fits, parse_spec, spec_on

ORDER = (5, 2, 7, 0, 3, 6, 1, 4)  # not an iota transpose: only a V1 list has it
MESH = UserMesh((("data", 2), ("model", 4)))


def jax_sharding(mesh: UserMesh, spec: tuple, rank: int) -> str:
    """The HLO sharding JAX gives `spec` on `mesh`, over device ids (JAX numbers mesh
    positions and keeps the device order apart: relabelled here through it)."""
    devices = np.array(jax.devices()[: mesh.size])
    grid = devices[list(mesh.ids)].reshape([size for _, size in mesh.axes])
    jmesh = Mesh(grid, tuple(name for name, _ in mesh.axes))
    s = parse(str(NamedSharding(jmesh, P(*spec))._to_xla_hlo_sharding(rank)))
    if s.is_replicated:
        return "{replicated}"
    ids = np.asarray(mesh.ids)[s.tiles.array()]
    dims = ",".join(map(str, s.tiles.dims))
    suffix = " last_tile_dim_replicate" if s.subgroups else ""
    return f"{{devices=[{dims}]{','.join(map(str, ids.ravel()))}{suffix}}}"


@pytest.mark.parametrize(
    ("sharding", "rank", "expected"),
    [
        ("{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}", 2, "('model', None)"),
        ("{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}", 2, "(None, 'model')"),
        ("{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}", 1, "('model',)"),
        ("{devices=[8,1]<=[8]}", 2, "(('data', 'model'), None)"),
        ("{devices=[2,4]<=[8]}", 2, "('data', 'model')"),
        ("", 1, "replicated"),
        ("{replicated}", 3, "replicated"),
        ("{devices=[1,1,8]<=[8] last_tile_dim_replicate}", 2, "replicated"),
        ("{manual}", 2, "manual"),
        ("{maximal device=3}", 2, "maximal:3"),
    ],
    ids=lambda v: str(v),
)
def test_torch_xla_strings_read_as_the_spec_that_marked_them(sharding, rank, expected):
    assert str(spec_on(parse(sharding), MESH, rank)) == expected


def test_a_custom_device_order_reads_on_its_own_mesh_only():
    s = parse("{devices=[4,1,2]5,3,2,6,7,1,0,4 last_tile_dim_replicate}")
    assert str(spec_on(s, UserMesh(MESH.axes, ORDER), 2)) == "('model', None)"
    assert not fits(s, MESH, 2)
    with pytest.raises(ShardingValueError, match="not a view"):
        spec_on(s, MESH, 2)


def test_a_split_axis_reads_as_its_sub_axis():
    # P("x") on a (4, 2) mesh of the same devices: dim 0 over the major half of "model".
    s = parse("{devices=[2,4]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert str(spec_on(s, MESH, 1)) == "('model:(1)2',)"


def test_another_device_count_and_tuples_have_no_spec():
    with pytest.raises(ShardingValueError, match="runs on 4 devices, the mesh has 8"):
        spec_on(parse("{devices=[4,1]<=[4]}"), MESH, 2)
    with pytest.raises(ShardingValueError, match="tuple sharding"):
        spec_on(parse("{{replicated}, {devices=[8]<=[8]}}"), MESH, 1)
    with pytest.raises(ShardingValueError, match="partially manual"):
        spec_on(parse("{devices=[2,1,4]<=[8] last_tile_dims={manual}}"), MESH, 2)


@pytest.mark.parametrize(
    "text", ["replicated", "manual", "maximal:3", "('model', None)", "(('data', 'model'),)"]
)
def test_printed_specs_parse_back(text):
    spec = parse_spec(text)
    assert str(spec) == text
    assert parse_spec(spec.as_json()) == spec


def test_a_spec_that_splits_nothing_is_replicated():
    assert parse_spec("(None, None)") == parse_spec("replicated") == Spec()
    assert parse_spec([None]).is_replicated
    assert parse_spec(["model", None]).as_json() == ["model", None]
    assert parse_spec([["data", "model"]]).as_json() == [["data", "model"]]


@pytest.mark.parametrize(
    ("value", "message"),
    [("model", "no partition spec"), ("(1, 2)", "axis name"), (3, "no partition spec")],
)
def test_bad_specs_say_what_a_spec_is(value, message):
    with pytest.raises(ShardingValueError, match=message):
        parse_spec(value)


MESHES = [
    UserMesh((("data", 2), ("model", 4))),
    UserMesh((("data", 2), ("model", 4)), ORDER),
    UserMesh((("x", 4), ("y", 2))),
    UserMesh((("a", 2), ("b", 2), ("c", 4))),
    UserMesh((("a", 2), ("b", 2), ("c", 2)), (7, 6, 5, 4, 3, 2, 1, 0)),
    UserMesh((("dp", 8),)),
]


@st.composite
def mesh_and_spec(draw):
    """A mesh and a spec on it: each axis on at most one dim, a dim's axes in any order."""
    mesh = draw(st.sampled_from(MESHES))
    rank = draw(st.integers(1, 3))
    names = [name for name, _ in mesh.axes]
    spec: list = [[] for _ in range(rank)]
    for name in draw(st.permutations(names)):
        dim = draw(st.integers(-1, rank - 1))  # -1: not used
        if dim >= 0:
            spec[dim].append(name)
    return mesh, tuple(None if not d else d[0] if len(d) == 1 else tuple(d) for d in spec)


@settings(max_examples=150, deadline=None)
@given(mesh_and_spec())
def test_every_spec_reads_back_as_itself(case):
    mesh, spec = case
    rank = len(spec)
    sharding = parse(jax_sharding(mesh, spec, rank))
    assert spec_on(sharding, mesh, rank) == parse_spec(spec)


def test_each_spec_of_a_mesh_reads_back_on_the_mesh_with_the_same_device_order_only():
    mesh, other = MESHES[1], MESHES[0]
    for spec in itertools.permutations(["data", "model", None], 2):
        sharding = parse(jax_sharding(mesh, spec, 2))
        assert spec_on(sharding, mesh, 2) == parse_spec(spec)
        assert fits(sharding, other, 2) == (sharding == parse(jax_sharding(other, spec, 2)))
