"""Which of the user's meshes a module's shardings fit.

torch_xla knows the mesh a program was written for: `Mesh(device_ids, (2, 4), ("data",
"model"))`. Its shardings reach us as V1 device lists; the mesh is recovered from them, its axes
named `_axis_0`, `_axis_1`, ... (mesh.py). A user's mesh can stand in for that inferred mesh
when every sharding of the module is a view of it: relabelled through the mesh's device order
(position k of the row-major mesh holds device `device_ids[k]`), each tiled sharding is an iota
whose tile factors map onto the mesh's axes, whole or as sub-axes `"a":(pre)size`, and a
manual subgroup covers whole axes. Example: on `Mesh([5,2,7,0,3,6,1,4], (2, 4), ("data",
"model"))` the spec `("model", None)` prints `{devices=[4,1,2]5,3,2,6,7,1,0,4
last_tile_dim_replicate}`; relabelled it is `[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate`,
dim 0 on `"model"`. The same list on the (4, 2) mesh of the same order needs sub-axes
(`{"x":(2)2, "y"}`), and on another device order it is no view at all.

Pure Python + numpy, no MLIR.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ShardingValueError, plural
from . import HloSharding, Kind, SubgroupType
from .mesh import plan_mesh
from .sdy import Mesh


@dataclass(frozen=True)
class UserMesh(Mesh):
    """A mesh the user made: axis names and sizes, major first, and its device order
    (`device_ids[k]` is the device at row-major position k; None means 0, 1, 2, ...).
    `label` says where it came from, for messages (`Mesh((2, 4), ('data', 'model'))`)."""

    label: str = ""

    @property
    def ids(self) -> tuple[int, ...]:
        """The device at each position: `device_ids`, or 0, 1, 2, ..."""
        return self.device_ids if self.device_ids is not None else tuple(range(self.size))

    @property
    def order(self) -> tuple[int, ...] | None:
        """The device order, None when it is the identity."""
        ids = self.device_ids
        return None if ids is None or ids == tuple(range(len(ids))) else ids

    def __str__(self) -> str:
        axes = ", ".join(f'"{name}"={size}' for name, size in self.axes)
        order = self.order
        ids = "" if order is None else f", device_ids=[{', '.join(map(str, order))}]"
        return f"<[{axes}]{ids}>"

    def describe(self) -> str:
        return self.label or str(self)


@dataclass(frozen=True)
class Choice:
    """The mesh picked for a module (None: none fits, the mesh is inferred), the sub-axes and
    the axis references (sub-axes included) its shardings take on it, and why each candidate
    that does not fit was passed over."""

    mesh: UserMesh | None
    sub_axes: int = 0
    refs: int = 0
    rejected: tuple[tuple[UserMesh, str], ...] = ()

    def reason(self) -> str:
        """One line saying why no mesh was picked (empty when one was)."""
        if self.mesh is not None:
            return ""
        return "; ".join(f"{mesh.describe()}: {why}" for mesh, why in self.rejected)


def program_meshes(shardings: Iterable[HloSharding]) -> tuple[UserMesh, ...]:
    """The meshes a module's named (V3) shardings state (their axis names, sizes and device
    order), each once, in the order they first appear: `mesh['data'=2,'model'=4]` of
    `{mesh['data'=2,'model'=4], [{'data'}, {}]}`. Several of them follow the rules of several
    user meshes (`choose`): the one every sharding of the module fits is the module's mesh."""
    found: dict = {}
    for s in shardings:
        for leaf in s.leaves():
            mesh = leaf.named.mesh if leaf.named is not None else None
            if mesh is not None and (mesh.axes, mesh.order) not in found:
                found[mesh.axes, mesh.order] = UserMesh(mesh.axes, mesh.order, f"V3 {mesh}")
    return tuple(found.values())


def candidates(
    shardings: Iterable[HloSharding], meshes: Sequence[UserMesh] | None
) -> tuple[UserMesh, ...]:
    """The meshes to choose from, most preferred first: those the module's V3 shardings state
    (the module's own word), then the program's (`meshes`: torch_xla Meshes, a mesh file)."""
    return program_meshes(shardings) + tuple(meshes or ())


def _fit(
    shardings: list[HloSharding], mesh: UserMesh, num_devices: int | None
) -> tuple[tuple[int, int], str | None]:
    """((sub-axes, axis references) used, None) when every sharding fits, else (_, why not)."""
    if num_devices is not None and mesh.size != num_devices:
        return (0, 0), f"{plural(mesh.size, 'device')}, the program runs on {num_devices}"
    try:
        plan = plan_mesh(shardings, num_devices=num_devices, hint=mesh.axes, order=mesh.ids)
        sub_axes = count = 0
        for leaf in _tiled_leaves(shardings):
            refs = [r for dim in plan.axes_of(leaf) for r in dim]
            sub_axes += sum(r.pre is not None for r in refs)
            count += len(refs)
            if SubgroupType.MANUAL in leaf.subgroups:
                plan.manual_axes(leaf)
    except ShardingValueError as e:
        return (0, 0), e.message
    return (sub_axes, count), None


def _tiled_leaves(shardings: Sequence[HloSharding]) -> list[HloSharding]:
    leaves = {leaf for s in shardings for leaf in s.leaves()}
    return sorted((s for s in leaves if s.kind is Kind.TILED and not s.is_replicated), key=str)


def choose(
    shardings: Iterable[HloSharding],
    meshes: Sequence[UserMesh],
    num_devices: int | None = None,
) -> Choice:
    """The mesh of `meshes` that every sharding fits, the one on which they read simplest:
    the fewest sub-axes, then the fewest axis references; ties go to the earlier mesh (the
    program's first). Examples, identity device order: `[2,4]<=[8]` fits a (2, 4) and a
    (4, 2) mesh, the second only with sub-axes: (2, 4). `[8,1]<=[8]` fits an (8,) mesh as
    `{"a"}` and a (2, 4) mesh as `{"x", "y"}`: (8,)."""
    shardings = list(shardings)
    best: tuple[tuple[int, int], UserMesh] | None = None
    rejected = []
    for mesh in meshes:
        score, why = _fit(shardings, mesh, num_devices)
        if why is not None:
            rejected.append((mesh, why))
        elif best is None or score < best[0]:
            best = (score, mesh)
    if best is None:
        return Choice(None, rejected=tuple(rejected))
    (sub_axes, refs), mesh = best
    return Choice(mesh, sub_axes, refs, tuple(rejected))
