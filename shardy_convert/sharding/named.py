"""XLA's named (V3) shardings as plain data: a mesh with its own axis names and device order,
and Shardy-like dim shardings over it (`hlo/ir/named_sharding.h`, `mesh_and_axis.h`).

`{mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'data'}, {'model'}]}` puts tile
(i, j) on the device at mesh position (data=i, model=j): position 4*i + j holds device
`device_ids[4*i + j]`. Its placement is the V1 list `{devices=[2,4]3,6,0,5,1,7,2,4}`, which is
what `placement` computes and what jaxlib's `HloSharding.v3_to_v2_sharding()` gives.

Pure Python + numpy. The rules each `check_*` function states are those XLA verifies (most of
them with a CHECK that aborts the process: overlapping axes, unsorted axis lists, a device list
that is no permutation); the parser (`gspmd/v3.py`) calls them with the column to blame.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .iota import canonical_iota, iota_array
from .model import HloSharding, Kind, SubgroupType
from .sdy import AxisRef, DimSharding, Mesh, TensorSharding
from .tiles import Tiles
from .xla_rules import subgroup, transpose

# The reduction kinds of unreduced axes, as V3 text writes them (`unreduced=max{'x'}`) and
# Shardy does (`unreduced=max{"x"}`); XLA's OpSharding proto and V2 metadata spell them
# upper-case (`op_name="MAX"`). Sum is the default and is not printed.
REDUCTIONS = ("sum", "max", "min")
# Single-device spellings: jaxlib 0.10.2 reads `maximal_mesh[...]`, 0.12 prints `single_device`.
SINGLE_DEVICE_WORDS = ("maximal_mesh", "single_device")


@dataclass(frozen=True)
class NamedMesh(Mesh):
    """`mesh['a'=2,'b'=4]` and its device order: `device_ids` as listed (the device at each
    row-major mesh position; never the identity), or `iota`, the canonical `([R]T(P))` form
    with more than one reshape dim; neither: devices 0, 1, 2, ... in mesh order."""

    iota: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    @property
    def order(self) -> tuple[int, ...] | None:
        """The device at each mesh position; None for the identity (0, 1, 2, ...)."""
        if self.device_ids is not None:
            return self.device_ids
        if self.iota is not None:
            reshape, perm = self.iota
            return tuple(int(d) for d in iota_array((self.size,), reshape, perm))
        return None

    def index(self, name: str) -> int:
        return next(k for k, (axis, _) in enumerate(self.axes) if axis == name)

    def __str__(self) -> str:
        text = "mesh[" + ",".join(f"{quote(name)}={size}" for name, size in self.axes) + "]"
        if self.device_ids is not None:
            return text + ", device_ids=(" + ",".join(map(str, self.device_ids)) + ")"
        if self.iota is not None:
            reshape, perm = self.iota
            return text + f", device_ids=([{_ints(reshape)}]T({_ints(perm)}))"
        return text


def mesh_with_iota(axes, reshape: Sequence[int], perm: Sequence[int]) -> NamedMesh:
    """A mesh whose order is written `device_ids=([R]T(P))`, kept in XLA's canonical form:
    `([2,4]T(0,1))` is the identity, printed without `device_ids`."""
    reshape, perm = canonical_iota(reshape, perm)
    return NamedMesh(tuple(axes), iota=(reshape, perm) if len(reshape) > 1 else None)


@dataclass(frozen=True)
class NamedSharding:
    """One V3 leaf. On a mesh: `dims` (None for the keyword forms `{mesh[...], replicated}`,
    `manual`, `unreduced`, which `keyword` names) and the axes listed `replicated={...}`,
    `unreduced={...}` (reduced by `reduction`) and `manual={...}`, each in mesh order. Without a
    mesh: one device, `{single_device[device_id=3]}` (`word` keeps the spelling read)."""

    mesh: NamedMesh | None
    dims: tuple[DimSharding, ...] | None = None
    keyword: str | None = None
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    manual: tuple[AxisRef, ...] = ()
    reduction: str = "sum"
    device: int | None = None
    word: str = "single_device"

    def __str__(self) -> str:
        """XLA's V3 text without the braces and metadata (see `HloSharding.__str__`)."""
        if self.mesh is None:
            return f"{self.word}[device_id={self.device}]"
        if self.dims is None:
            op = f"={self.reduction}" if self.reduction != "sum" else ""
            return f"{self.mesh}, {self.keyword}{op}"
        text = f"{self.mesh}, [{', '.join(dim_text(d) for d in self.dims)}]"
        for name, refs in (("replicated", self.replicated), ("unreduced", self.unreduced)):
            if refs:
                op = self.reduction if name == "unreduced" and self.reduction != "sum" else ""
                text += f", {name}={op}{{{', '.join(axis_text(r) for r in refs)}}}"
        if self.manual:
            text += f", manual={{{', '.join(axis_text(r) for r in self.manual)}}}"
        return text

    @property
    def all_unreduced(self) -> tuple[AxisRef, ...]:
        """The unreduced axes, those of `{mesh[...], unreduced}` included."""
        if self.keyword == "unreduced":
            assert self.mesh is not None  # `{mesh[...], unreduced}` has its mesh
            return tuple(AxisRef(name) for name, _ in self.mesh.axes)
        return self.unreduced


def quote(name: str) -> str:
    return f"'{name}'"


def axis_text(ref: AxisRef) -> str:
    """`'x'` or the sub-axis `'x':(2)4`."""
    if ref.pre is None:
        return quote(ref.name)
    return f"{quote(ref.name)}:({ref.pre}){ref.size}"


def dim_text(dim: DimSharding) -> str:
    inner = ", ".join(axis_text(r) for r in dim.axes)
    if dim.is_closed:
        return "{" + inner + "}"
    return "{" + inner + ", ?}" if inner else "{?}"


def _ints(values: Iterable[int]) -> str:
    return ",".join(map(str, values))


# --- the rules XLA verifies -----------------------------------------------------------------


def check_axis(ref: AxisRef, mesh: NamedMesh) -> str | None:
    """Why `ref` names no (sub-)axis of `mesh`; None when it does. A sub-axis `(pre)size` of
    an axis of size n needs size > 1, size < n and pre * size dividing n."""
    sizes = mesh.sizes
    if ref.name not in sizes:
        names = ", ".join(quote(a) for a, _ in mesh.axes) or "none"
        return f"axis {quote(ref.name)} is not an axis of the mesh (its axes: {names})"
    if ref.pre is None or ref.size is None:  # a whole axis (both are set, or neither)
        return None
    n = sizes[ref.name]
    if ref.pre < 1 or ref.size < 2 or ref.size >= n or n % (ref.pre * ref.size):
        return (
            f"sub-axis {axis_text(ref)} does not split axis {quote(ref.name)} of size {n} (it "
            "needs a size above 1 and below the axis size, and pre-size times size dividing it)"
        )
    return None


def span(ref: AxisRef, sizes: dict[str, int]) -> tuple[int, int]:
    """The part of its axis `ref` covers as [pre, pre * size): the whole axis is [1, n)."""
    if ref.pre is None or ref.size is None:  # a whole axis (both are set, or neither)
        return 1, sizes[ref.name]
    return ref.pre, ref.pre * ref.size


def overlap(a: AxisRef, b: AxisRef, sizes: dict[str, int]) -> bool:
    """Whether `a` and `b` cannot both be used (XLA's CanCoexistWithoutOverlap, negated): they
    share part of one axis, or leave a gap between them that is no sub-axis of it."""
    if a.name != b.name:
        return False
    (a_lo, a_hi), (b_lo, b_hi) = span(a, sizes), span(b, sizes)
    if a.pre is None or b.pre is None or (a_hi > b_lo and b_hi > a_lo):
        return True
    return max(a_lo, b_lo) % min(a_hi, b_hi) != 0


def mergeable(a: AxisRef, b: AxisRef) -> bool:
    """`'x':(1)2, 'x':(2)2` in a row: XLA wants them written as one (sub-)axis."""
    return (
        a.name == b.name
        and a.pre is not None
        and a.size is not None
        and b.pre is not None
        and a.pre * a.size == b.pre
    )


def mesh_order(ref: AxisRef, mesh: NamedMesh) -> tuple[int, int]:
    """The sort key of an axis list (`replicated={...}` etc.): mesh order, then pre-size."""
    return mesh.index(ref.name), ref.pre or 1


# --- placement -------------------------------------------------------------------------------


def placement(named: NamedSharding) -> HloSharding:
    """The V2/V1 sharding that places data as `named` does (XLA's V3ToV2Sharding).

    Each axis is cut at every sub-axis boundary any reference uses; the mesh, reshaped into
    those pieces (mesh order, major first), is transposed to [the pieces of dim 0, of dim 1,
    ..., of `manual`, of `unreduced`, every other piece] and reshaped to one tile dim per group.
    Example: mesh ['a'=2, 'b'=4], `[{'b'}, {}]`: pieces a=2, b=4; dim 0 takes b, the rest is a:
    transpose (1, 0) -> `{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}`.
    """
    if named.mesh is None:
        return HloSharding._make(Kind.MAXIMAL, device=named.device)
    if named.dims is None:
        return HloSharding._make(Kind(named.keyword))
    pieces = _pieces(named)
    if not pieces:  # a mesh of one device
        return HloSharding._make(Kind.REPLICATED)
    groups = [list(d.axes) for d in named.dims] + [list(named.manual), list(named.unreduced)]
    chosen = [_piece_indices(refs, pieces, named.mesh) for refs in groups]
    used = {k for group in chosen for k in group}
    rest = [k for k in range(len(pieces)) if k not in used]
    perm = [k for group in chosen for k in group] + rest
    sizes = [p[2] for p in pieces]
    dims = [math.prod(sizes[k] for k in group) for group in [*chosen, rest]]
    types = (SubgroupType.MANUAL, SubgroupType.UNREDUCED, SubgroupType.REPLICATED)
    grid = transpose(_mesh_tiles(named.mesh, tuple(sizes)), perm, tuple(dims))
    return subgroup(grid, types)


def _pieces(named: NamedSharding) -> list[tuple[str, int, int]]:
    """(axis, pre, size) of every piece, in mesh order: each axis cut at the boundaries of all
    references to it. Axis 'x'=8 referenced as 'x':(1)2 and 'x':(4)2: pieces (1)2, (2)2, (4)2."""
    assert named.mesh is not None  # a sharding on a mesh
    assert named.dims is not None
    sizes = named.mesh.sizes
    cuts: dict[str, set[int]] = {name: {1, n} for name, n in named.mesh.axes}
    every = [r for d in named.dims for r in d.axes]
    for ref in [*every, *named.replicated, *named.unreduced, *named.manual]:
        cuts[ref.name].update(span(ref, sizes))
    pieces = []
    for name, _ in named.mesh.axes:
        points = sorted(cuts[name])
        pieces += [(name, lo, hi // lo) for lo, hi in itertools.pairwise(points)]
    return pieces


def _piece_indices(refs: list[AxisRef], pieces, mesh: NamedMesh) -> list[int]:
    """The pieces `refs` cover, major first: each reference's pieces in mesh order."""
    sizes = mesh.sizes
    found = []
    for ref in refs:
        lo, hi = span(ref, sizes)
        found += [
            k for k, (name, pre, _) in enumerate(pieces) if name == ref.name and lo <= pre < hi
        ]
    return found


def _mesh_tiles(mesh: NamedMesh, piece_sizes: tuple[int, ...]) -> Tiles:
    """The device at each mesh position, over the pieces' shape."""
    dims = piece_sizes or (1,)
    if mesh.device_ids is not None:
        return Tiles._trusted(dims, devices=mesh.device_ids)
    reshape, perm = mesh.iota if mesh.iota is not None else ((mesh.size,), (0,))
    return Tiles._trusted(dims, reshape, perm)


# --- on its own Shardy mesh ------------------------------------------------------------------


def on_own_mesh(named: NamedSharding, rank: int, mesh_name: str) -> TensorSharding | None:
    """`named` on a Shardy mesh with its own axes and device order: its dims (open or closed),
    `replicated` and `unreduced` axes and reduction as written; None when the dims are not
    the value's rank (then only the placement says where data goes). Manual axes are not
    part of a Shardy sharding: the manual computation around the value says them."""
    if named.dims is None:
        dims = (DimSharding(),) * rank
        unreduced = named.all_unreduced
        return TensorSharding(mesh_name, dims, (), unreduced, _reduction(named, unreduced))
    if len(named.dims) != rank:
        return None
    dims = tuple(DimSharding(d.axes, d.is_closed) for d in named.dims)
    reduction = _reduction(named, named.unreduced)
    return TensorSharding(mesh_name, dims, named.replicated, named.unreduced, reduction)


def _reduction(named: NamedSharding, unreduced) -> str | None:
    return named.reduction if unreduced and named.reduction != "sum" else None


def same_mesh(named: NamedMesh, axes, order) -> bool:
    """Whether a Shardy mesh (axes, device order or None for the identity) is `named`'s."""
    return tuple(axes) == named.axes and (order or None) == named.order
