"""Shardy (`sdy`) sharding values as plain data, printed in the dialect's text form.

Pure Python: the MLIR boundary turns `str(x)` into an attribute with `ir.Attribute.parse`.
Sub-axis orientation (measured by compiling on the CPU client): in `"a":(pre)size`, `pre` is the
product of the MORE MAJOR part of axis `a`. On `"a"=6` with q the position in mesh order,
`"a":(1)2` is q // 3 and `"a":(2)3` is q % 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import ShardingValueError, plural


@dataclass(frozen=True)
class AxisRef:
    """A mesh axis, or the sub-axis `name:(pre)size` of it."""

    name: str
    pre: int | None = None
    size: int | None = None

    def __str__(self) -> str:
        if self.pre is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.pre}){self.size}'


@dataclass(frozen=True)
class DimSharding:
    """The axes one tensor dim is split over, major first; open dims may take more axes.
    `priority` (`{"x"}p1`: lower goes first) orders Shardy's propagation of user shardings."""

    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None

    def __str__(self) -> str:
        inner = ", ".join(str(a) for a in self.axes)
        if self.is_closed:
            text = f"{{{inner}}}"
        else:
            text = f"{{{inner}, ?}}" if inner else "{?}"
        return text if self.priority is None else f"{text}p{self.priority}"


@dataclass(frozen=True)
class TensorSharding:
    """`<@mesh, [dims], replicated={...}, unreduced={...}>`, the body of `#sdy.sharding`.
    `reduction` ("max", "min"; None: the default sum) is how the unreduced axes are reduced,
    printed `unreduced=max{...}` (Shardy's reduction kinds, 2026-07)."""

    mesh: str
    dims: tuple[DimSharding, ...] = ()
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    reduction: str | None = None

    def __str__(self) -> str:
        text = f"<@{self.mesh}, [{', '.join(str(d) for d in self.dims)}]"
        if self.replicated:
            text += f", replicated={{{', '.join(str(a) for a in self.replicated)}}}"
        if self.unreduced:
            op = self.reduction if self.reduction not in (None, "sum") else ""
            text += f", unreduced={op}{{{', '.join(str(a) for a in self.unreduced)}}}"
        return text + ">"

    @property
    def reduction_kind(self) -> str | None:
        """The reduction Shardy must be told (max, min), None for a sum or no unreduced axes."""
        return self.reduction if self.unreduced and self.reduction not in (None, "sum") else None

    def attr(self) -> str:
        """The `#sdy.sharding<...>` attribute text."""
        return f"#sdy.sharding{self}"

    def opened(self, dims: tuple[int, ...] | frozenset[int]) -> TensorSharding:
        """The same sharding with the given dims open (`@Sharding` `unspecified_dims`)."""
        new = tuple(
            replace(d, is_closed=False) if i in dims else d for i, d in enumerate(self.dims)
        )
        return replace(self, dims=new)


def with_stated(ts: TensorSharding, stated: TensorSharding) -> TensorSharding:
    """`ts` given what `stated` (a Shardy sharding written beside the GSPMD string, on
    placeholder axes maybe) says of each dim that no GSPMD string can: its priority, and that
    it is open. Axes come from the GSPMD string, which is the placement.

    `<@mesh, [{"_axis_0"}, {}]>` with `<@mesh, [{"mesh_idx_0"}p0, {?}p1]>` stated:
    `<@mesh, [{"_axis_0"}p0, {?}p1]>`. A closed dim on no axis keeps no priority (Shardy
    refuses one there: nothing on it to propagate): with `[{}p0, {}p1]` stated, `[{"_axis_0"}p0,
    {}]`.
    """
    if len(stated.dims) != len(ts.dims):
        raise ShardingValueError(
            f"the Shardy sharding stated beside it, {stated.attr()}, has "
            f"{plural(len(stated.dims), 'dim')} but the value has rank {len(ts.dims)}"
        )
    dims = []
    for d, s in zip(ts.dims, stated.dims):
        closed = d.is_closed and s.is_closed
        priority = None if closed and not d.axes else s.priority
        dims.append(replace(d, is_closed=closed, priority=priority))
    return replace(ts, dims=tuple(dims))


def per_value_attr(shardings: list[TensorSharding]) -> str:
    """`#sdy.sharding_per_value<[...]>` for an op's results."""
    return f"#sdy.sharding_per_value<[{', '.join(str(s) for s in shardings)}]>"


@dataclass(frozen=True)
class Mesh:
    """`<["a"=2, "b"=4], device_ids=[...]>`; `device_ids` None means iota order. The one core
    of the package's meshes: a mesh a user made (`mesh_fit.UserMesh`, with where it came
    from) and a mesh of XLA's named shardings (`named.NamedMesh`, with its iota order) are
    this mesh with one field more."""

    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...] | None = None

    @property
    def size(self) -> int:
        return math.prod(size for _, size in self.axes)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.axes)

    def __str__(self) -> str:
        axes = ", ".join(f'"{name}"={size}' for name, size in self.axes)
        if self.device_ids is None:
            return f"<[{axes}]>"
        return f"<[{axes}], device_ids=[{', '.join(map(str, self.device_ids))}]>"
