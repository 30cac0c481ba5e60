"""One global Shardy mesh for all GSPMD shardings of a module, and each sharding on it.

Pure Python + numpy, no MLIR. The rules follow XLA's StableHLO importer
(`xla/service/spmd/shardy/stablehlo_round_trip/stablehlo_import.cc`) where it works, and
go past it where it aborts:

* Positions, not device ids: a sharding's iota form numbers mesh positions. When the module's
  V1 lists are in a custom device order (torch_xla `Mesh(device_ids, ...)`), the lists are
  relabelled through one common order and that order becomes the mesh's `device_ids`.
* Each tiled sharding splits the positions 0..N-1 into factors; a factor of size s whose
  position stride is t covers the "stride range" [t, t*s). The global axes are the gaps between
  the breakpoints {t, t*s} of all factors. XLA requires those breakpoints to form a divisibility
  chain and aborts otherwise ({devices=[2,3]<=[6]} next to {devices=[3,2]<=[6]}); we keep only
  the breakpoints compatible with every other one, so the axis becomes coarser and the factors
  turn into sub-axes `"a":(pre)size`, which Shardy accepts whenever pre*size divides the axis.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import NoCommonMeshError, ShardingValueError, plural
from . import HloSharding, Kind, SubgroupType, Tiles
from .sdy import AxisRef, DimSharding, Mesh, TensorSharding

MESH_NAME = "mesh"


@dataclass(frozen=True)
class Factor:
    """One factor of a tile dim: `size` positions apart by `stride` (in position order)."""

    tile_dim: int
    stride: int
    size: int


@dataclass(frozen=True)
class Span:
    """A mesh axis as a stride range [lo, hi) of positions; hi / lo == size."""

    name: str
    lo: int
    hi: int

    @property
    def size(self) -> int:
        return self.hi // self.lo


def local_mesh(tiles: Tiles) -> tuple[Factor, ...] | None:
    """The common factorization of an iota's tile dims and its transposed reshape dims.

    Worked example: P('y','x') on mesh x=2, y=4 is `[4,2]<=[2,4]T(1,0)`. Reshape dims R=[2,4]
    have position strides [4,1]; transposed by P=(1,0) they read sizes S=[4,2], strides [1,4].
    Walking D=[4,2] against S=[4,2] gives Factor(tile_dim=0, stride=1, size=4) and
    Factor(tile_dim=1, stride=4, size=2): tile dim 0 runs over the minor 4 positions.
    Returns None when the two sequences share no factorization (XLA aborts there:
    `[2,3]<=[2,3]T(1,0)` has D=[2,3] and S=[3,2]).
    """
    reshape, perm = tiles.iota
    strides = [math.prod(reshape[r + 1 :]) for r in range(len(reshape))]
    sizes = [reshape[p] for p in perm]
    s_strides = [strides[p] for p in perm]
    factors: list[Factor] = []
    i, j = 0, 0
    rem_d = tiles.dims[0] if tiles.dims else 1
    rem_s = sizes[0]
    while i < len(tiles.dims) and j < len(sizes):
        if rem_d == 1 or rem_s == 1:
            i, rem_d = (i + 1, _at(tiles.dims, i + 1)) if rem_d == 1 else (i, rem_d)
            j, rem_s = (j + 1, _at(sizes, j + 1)) if rem_s == 1 else (j, rem_s)
            continue
        f = min(rem_d, rem_s)
        if rem_d % f or rem_s % f:
            return None
        rem_d, rem_s = rem_d // f, rem_s // f
        factors.append(Factor(i, s_strides[j] * rem_s, f))
    return tuple(factors)


def _at(seq: Sequence[int], k: int) -> int:
    return seq[k] if k < len(seq) else 1


def breakpoints(factor_sets: Iterable[Sequence[Factor]], n: int) -> list[int]:
    """Stride breakpoints shared by all shardings, as an increasing divisibility chain.

    Example: local meshes [2,4] and [4,2] of 8 positions give {1,2,4,8}; the chain is kept
    whole. [2,3] and [3,2] of 6 give {1,2,3,6}; 2 and 3 divide neither way, so both go and
    one axis of 6 remains.
    """
    points = {1, n}
    for factors in factor_sets:
        for f in factors:
            points.update((f.stride, f.stride * f.size))
    return sorted(p for p in points if all(p % q == 0 or q % p == 0 for q in points))


def spans_from_breakpoints(chain: Sequence[int], names: Sequence[str] | None = None) -> list[Span]:
    """Mesh axes, major first, from a breakpoint chain [1, ..., N]."""
    gaps = [(chain[k], chain[k + 1]) for k in range(len(chain) - 1)][::-1]
    names = names or [f"_axis_{k}" for k in range(len(gaps))]
    return [Span(name, lo, hi) for name, (lo, hi) in zip(names, gaps)]


def spans_from_sizes(axes: Sequence[tuple[str, int]]) -> list[Span]:
    """Mesh axes, major first, from names and sizes (a `--mesh` hint)."""
    spans, hi = [], math.prod(size for _, size in axes)
    for name, size in axes:
        spans.append(Span(name, hi // size, hi))
        hi //= size
    return spans


def factor_refs(factor: Factor, spans: Sequence[Span]) -> list[AxisRef] | None:
    """The (sub-)axes, major first, that cover one factor; None if the mesh cannot.

    On axis "a" = [lo, hi) the part [x, y) of the factor is `"a":(hi // y)(y // x)`: pre is the
    size of the more major part of "a". Example: "a"=6 (lo=1, hi=6) and a factor of size 2 at
    stride 3 covers [3, 6): `"a":(1)2`.
    """
    refs = []
    for span in spans:
        x, y = max(factor.stride, span.lo), min(factor.stride * factor.size, span.hi)
        if x >= y:
            continue
        if x % span.lo or span.hi % y or y % x:
            return None
        size = y // x
        refs.append(
            AxisRef(span.name) if size == span.size else AxisRef(span.name, span.hi // y, size)
        )
    return refs


def merge_refs(refs: Sequence[AxisRef], sizes: dict[str, int]) -> tuple[AxisRef, ...]:
    """Joins adjacent sub-axes of one axis ("a":(1)2, "a":(2)3 -> "a"), as Shardy requires."""
    out: list[AxisRef] = []
    for ref in refs:
        last = out[-1] if out else None
        if last is None or last.name != ref.name or last.pre is None or ref.pre is None:
            out.append(ref)
            continue
        # sub-axes: pre and size are both set
        assert last.size is not None
        assert ref.size is not None
        if ref.pre != last.pre * last.size:
            out.append(ref)
            continue
        size = last.size * ref.size
        out[-1] = (
            AxisRef(ref.name) if size == sizes[ref.name] else AxisRef(ref.name, last.pre, size)
        )
    return tuple(out)


def find_device_order(tiled: Sequence[HloSharding], n: int) -> tuple[int, ...] | None:
    """A mesh order in which every tiled sharding has an iota form with a local mesh.

    None when the identity order already works; NoCommonMeshError when no order does.
    Otherwise devices are sorted by their tile coordinates in each sharding (data dims
    only: ids inside a replication group carry no order), the first sharding most
    significant. For a torch_xla mesh (2,4) with device_ids=[7,6,...,0] and a sharding
    ('x','y'), device 7 sits at tile (0,0), so the order starts 7, 6, ... and relabelling
    by it turns every list into an iota.
    """
    if all(_has_local_mesh(s) for s in tiled):
        return None
    keys: list[np.ndarray] = []
    for s in tiled:
        grid = s.tile_assignment.array()
        data_rank = len(s.data_dims)
        coords = np.indices(grid.shape).reshape(len(grid.shape), -1)[:data_rank]
        key = np.empty((data_rank, n), dtype=np.int64)
        key[:, grid.reshape(-1)] = coords
        keys.extend(key)
    # np.lexsort sorts by the last key first; device id breaks the remaining ties.
    order = tuple(int(d) for d in np.lexsort([np.arange(n), *keys[::-1]]))
    if not all(_has_local_mesh(s.relabel(order)) for s in tiled):
        raise NoCommonMeshError(
            "the shardings of this module are not views of one device mesh: "
            + ", ".join(f'"{s}"' for s in tiled[:4])
        )
    return order


def _has_local_mesh(s: HloSharding) -> bool:
    tiles = s.to_v2().tile_assignment
    return tiles.is_iota and local_mesh(tiles) is not None


@dataclass(frozen=True)
class MeshPlan:
    """The global mesh of a module and the rule mapping each HloSharding onto it."""

    mesh: Mesh
    spans: tuple[Span, ...]
    order: tuple[int, ...] | None = None
    maximal: tuple[int, ...] = ()
    device_count_known: bool = True
    # Whether any sharding is placed on the global mesh (not all of them maximal, each on a
    # mesh of its one device): without, the module needs no `@mesh` and no device count.
    uses_mesh: bool = True

    @property
    def axis_sizes(self) -> dict[str, int]:
        return {s.name: s.size for s in self.spans}

    def tensor_sharding(self, s: HloSharding, rank: int, name: str = MESH_NAME) -> TensorSharding:
        """`s` on this mesh for a value of the given rank (not for tuples). Cached: a module
        repeats a few distinct shardings on thousands of values. The key holds `s.named`:
        shardings equal by placement differ in their V3 form (names, open dims)."""
        return _tensor_sharding(self, s, s.named, rank, name)

    def _tensor_sharding(self, s: HloSharding, rank: int, name: str) -> TensorSharding:
        named = s.named
        if named is None or named.mesh is None:
            return self._placed(s, rank, name)
        from .named import on_own_mesh, same_mesh  # V3 shardings only (cold start)

        if same_mesh(named.mesh, self.mesh.axes, self.order):
            own = on_own_mesh(named, rank, name)  # its own axes, as written
            if own is not None:
                return own
        placed = self._placed(s, rank, name)
        if named.dims is None or len(named.dims) != rank:
            return placed
        return placed.opened(frozenset(k for k, d in enumerate(named.dims) if not d.is_closed))

    def _placed(self, s: HloSharding, rank: int, name: str) -> TensorSharding:
        """`s` on this mesh by its placement alone (V1/V2, or V3 on another mesh)."""
        if s.kind is Kind.MAXIMAL:
            return TensorSharding(maximal_mesh_name(s.device))  # type: ignore[arg-type]  # MAXIMAL: set
        if s.kind is Kind.UNKNOWN:
            return TensorSharding(name, (DimSharding(is_closed=False),) * rank)
        if s.kind is Kind.UNREDUCED:
            axes = self._all_axes()
            return TensorSharding(name, (DimSharding(),) * rank, (), axes, s.unreduced_reduction)
        if s.kind is not Kind.TILED or s.is_replicated:
            return TensorSharding(name, (DimSharding(),) * rank)
        return self._tiled(s, rank, name)

    def manual_axes(self, s: HloSharding) -> tuple[str, ...]:
        """Mesh axes a `{manual}` / `last_tile_dims={manual, ...}` sharding makes manual."""
        if s.kind is Kind.MANUAL:
            return tuple(span.name for span in self.spans)
        if s.kind is not Kind.TILED:
            return ()
        refs = self._subgroup_refs(s, SubgroupType.MANUAL)
        if any(r.pre is not None for r in refs):
            raise ShardingValueError(f'manual subgroup of "{s}" splits a mesh axis')
        return tuple(r.name for r in refs)

    def _all_axes(self) -> tuple[AxisRef, ...]:
        return tuple(AxisRef(span.name) for span in self.spans)

    def _tiled(self, s: HloSharding, rank: int, name: str) -> TensorSharding:
        data_rank = len(s.data_dims)
        if data_rank != rank:
            raise ShardingValueError(
                f'sharding "{s}" has {data_rank} tile dims but the value has rank {rank}'
            )
        by_dim = self._refs_by_tile_dim(s)
        dims = tuple(DimSharding(by_dim[d]) for d in range(rank))
        unreduced = _mesh_sorted(self._subgroup_refs(s, SubgroupType.UNREDUCED), self.spans)
        return TensorSharding(name, dims, (), unreduced, s.unreduced_reduction)

    def _subgroup_refs(self, s: HloSharding, kind: SubgroupType) -> tuple[AxisRef, ...]:
        by_dim = self._refs_by_tile_dim(s)
        data_rank = len(s.data_dims)
        refs: list[AxisRef] = []
        for k, sub in enumerate(s.subgroups):
            if sub is kind:
                refs.extend(by_dim[data_rank + k])
        return tuple(refs)

    def _refs_by_tile_dim(self, s: HloSharding) -> list[tuple[AxisRef, ...]]:
        return _refs_by_tile_dim(self, s)

    def axes_of(self, s: HloSharding) -> list[tuple[AxisRef, ...]]:
        """The (sub-)axes of each tile dim of a tiled sharding (data dims, then subgroups);
        ShardingValueError when this mesh cannot express it."""
        return _refs_by_tile_dim(self, s)


@functools.lru_cache(maxsize=4096)
def _tensor_sharding(plan: MeshPlan, s: HloSharding, _named, rank: int, name: str):
    return plan._tensor_sharding(s, rank, name)


@functools.lru_cache(maxsize=4096)
def _refs_by_tile_dim(plan: MeshPlan, s: HloSharding) -> list[tuple[AxisRef, ...]]:
    tiles = (s.relabel(plan.order) if plan.order else s).to_v2().tile_assignment
    factors = local_mesh(tiles) if tiles.is_iota else None
    if factors is None:
        raise ShardingValueError(f'sharding "{s}" is not a view of the module\'s device mesh')
    grouped: list[list[AxisRef]] = [[] for _ in tiles.dims]
    for f in factors:
        refs = factor_refs(f, plan.spans)
        if refs is None:
            raise ShardingValueError(
                f'sharding "{s}" cannot be expressed on mesh {plan.mesh}: a tile factor of size '
                f"{f.size} crosses an axis boundary"
            )
        grouped[f.tile_dim].extend(refs)
    return [merge_refs(refs, plan.axis_sizes) for refs in grouped]


def _mesh_sorted(refs: Sequence[AxisRef], spans: Sequence[Span]) -> tuple[AxisRef, ...]:
    index = {span.name: k for k, span in enumerate(spans)}
    return tuple(sorted(refs, key=lambda r: (index[r.name], r.pre or 1)))


def maximal_mesh_name(device: int) -> str:
    return f"maximal_mesh_{device}"


def plan_from_mesh(axes: Sequence[tuple[str, int]], device_ids: Sequence[int] | None) -> MeshPlan:
    """The plan of an existing `sdy.mesh` (axes major first, optional device order)."""
    order = tuple(device_ids) if device_ids else None
    return MeshPlan(Mesh(tuple(axes), order), tuple(spans_from_sizes(axes)), order)


def plan_mesh(
    shardings: Iterable[HloSharding],
    *,
    num_devices: int | None = None,
    hint: Sequence[tuple[str, int]] | None = None,
    order: Sequence[int] | None = None,
) -> MeshPlan:
    """The global mesh for a module's shardings.

    `num_devices` is the count the caller knows (`--num-devices`, `mhlo.num_partitions`, the
    other graphs of a dump); tiled shardings must agree with it. With `hint` (`--mesh
    batch=2,model=4`) the user's axis names, order and sizes are used as given. `order` (with
    `hint`: a torch_xla `Mesh`'s `device_ids`, the device at each mesh position, row-major)
    is the device order to use instead of one found from the shardings; a sharding that is no
    view of that order fails when it is placed (`tensor_sharding`, `axes_of`).
    """
    leaves = {leaf for s in shardings for leaf in s.leaves()}
    tiled = sorted((s for s in leaves if s.kind is Kind.TILED and not s.is_replicated), key=str)
    maximal = tuple(
        sorted({s.device for s in leaves if s.kind is Kind.MAXIMAL and s.device is not None})
    )
    counted = _device_count(tiled, num_devices, hint)
    n = counted or 1
    if order is not None:
        order = _checked_order(order, n)
    elif tiled:
        order = find_device_order(tiled, n)
    if hint:
        spans = spans_from_sizes(hint)
    else:
        relabelled = [(s.relabel(order) if order else s).to_v2().tile_assignment for s in tiled]
        # find_device_order made every one a view: each has a local mesh
        chain = breakpoints((local_mesh(t) for t in relabelled), n)  # type: ignore[misc]
        spans = spans_from_breakpoints(chain)
    axes = tuple((span.name, span.size) for span in spans)
    mesh = Mesh(axes, order if order and order != tuple(range(n)) else None)
    uses_mesh = not leaves or any(s.kind is not Kind.MAXIMAL for s in leaves)
    known = counted is not None
    return MeshPlan(
        mesh, tuple(spans), order, maximal, device_count_known=known, uses_mesh=uses_mesh
    )


def _checked_order(order: Sequence[int], n: int) -> tuple[int, ...] | None:
    """A given device order as a tuple, None for the identity; it must order all n devices."""
    order = tuple(int(d) for d in order)
    if sorted(order) != list(range(n)):
        shown = ", ".join(map(str, order[:16])) + (", ..." if len(order) > 16 else "")
        raise ShardingValueError(
            f"device order [{shown}] is no order of {plural(n, 'device')} 0..{n - 1}"
        )
    return None if order == tuple(range(n)) else order


def _device_count(
    tiled: Sequence[HloSharding], num_devices: int | None, hint: Sequence[tuple[str, int]] | None
) -> int | None:
    counts = sorted({s.tile_assignment.num_devices for s in tiled})
    if len(counts) > 1:
        examples = ", ".join(
            f'"{next(s for s in tiled if s.num_devices == c)}" ({plural(c, "device")})'
            for c in counts
        )
        raise ShardingValueError(f"shardings disagree on the device count: {examples}")
    known = {"the shardings": counts[0]} if counts else {}
    if num_devices is not None:
        known["the device count"] = num_devices
    if hint:
        known["the mesh " + ",".join(f"{a}={n}" for a, n in hint)] = math.prod(n for _, n in hint)
    if len(set(known.values())) > 1:
        said = ", ".join(
            f"{who} say{'s' if who != 'the shardings' else ''} {n}" for who, n in known.items()
        )
        raise ShardingValueError(f"device counts disagree: {said}")
    return next(iter(known.values()), None)
