"""The MLIR boundary for Shardy attributes: `#sdy.mesh`, `#sdy.sharding`,
`#sdy.sharding_per_value` and `#sdy<manual_axes>` read into the plain dataclasses of
`sharding/sdy.py`, and built from them (`mesh_attr`, `sharding_attr`, `replicated`: the
dataclasses print the dialect's text, parsed here once).

The passes, `inspect`, `check` and the plugin read and build Shardy through these functions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from jaxlib.mlir import ir

from ..errors import ModuleError
from ..sharding.sdy import AxisRef, DimSharding, Mesh, TensorSharding
from . import compat
from .bindings import sdy
from .parse import string_value
from .walker import body, sites

MESH_OP = "sdy.mesh"
MANUAL_COMPUTATION = "sdy.manual_computation"
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def mesh_attr(mesh: Mesh) -> ir.Attribute:
    """`#sdy.mesh<["a"=2, "b"=4]>` (with `device_ids` when the mesh has them)."""
    return ir.Attribute.parse(f"#sdy.mesh{mesh}")


def sharding_attr(sharding: TensorSharding) -> ir.Attribute:
    """`#sdy.sharding<@mesh, [...]>`."""
    check_reduction_kinds(sharding, f"sharding {sharding.attr()}")
    return ir.Attribute.parse(sharding.attr())


def check_reduction_kinds(sharding: TensorSharding, what: str) -> None:
    """ModuleError (the caller locates it) when `sharding` reduces its unreduced axes with max
    or min and this jaxlib's Shardy cannot say so (`unreduced=max{...}` came after it)."""
    kind = sharding.reduction_kind
    if kind is None or compat.has_reduction_kinds():
        return
    raise ModuleError(
        f"{what} reduces its unreduced axes with {kind}: Shardy writes that "
        f"`unreduced={kind}{{...}}`, which the sdy dialect of jaxlib {compat.jaxlib_version()} "
        "cannot (Shardy's reduction kinds came later; jaxlib 0.12.0.1 has them)"
    )


def replicated(mesh: str, rank: int) -> ir.Attribute:
    """`#sdy.sharding<@mesh, [{}, {}]>`: every dim closed and on no axis."""
    return sharding_attr(TensorSharding(mesh, (DimSharding(),) * rank))


def mesh_from_attr(attr: ir.Attribute) -> Mesh:
    """`#sdy.mesh<["a"=2, "b"=4], device_ids=[...]>` as a Mesh."""
    mesh = sdy.MeshAttr(attr)
    axes = tuple((sdy.MeshAxisAttr(a).name, sdy.MeshAxisAttr(a).size) for a in mesh.axes)
    return Mesh(axes, tuple(mesh.device_ids) or None)


def axis_from_attr(attr: ir.Attribute) -> AxisRef:
    """`"a"` or the sub-axis `"a":(2)4` as an AxisRef."""
    ref = sdy.AxisRefAttr(attr)
    sub = ref.sub_axis_info
    if sub is None:
        return AxisRef(ref.name)
    sub = sdy.SubAxisInfoAttr(sub)
    return AxisRef(ref.name, sub.pre_size, sub.size)


def dim_from_attr(attr: ir.Attribute) -> DimSharding:
    d = sdy.DimensionShardingAttr(attr)
    return DimSharding(tuple(axis_from_attr(a) for a in d.axes), d.is_closed, d.priority)


def sharding_from_attr(attr: ir.Attribute, meshes: dict[str, Mesh]) -> tuple[TensorSharding, Mesh]:
    """A `#sdy.sharding` (named or inline mesh) as a TensorSharding and the Mesh it is on; an
    inline mesh is named "". ModuleError when it names a mesh not in `meshes`.

    Dim priorities (`{"x"}p1`) are kept in the dims (they steer propagation only and have no
    GSPMD spelling); the reduction of unreduced axes where this jaxlib's Shardy has one."""
    ts = sdy.TensorShardingAttr(attr)
    ref = ts.mesh_or_ref
    if isinstance(ref, ir.FlatSymbolRefAttr):
        name = ref.value
        if name not in meshes:
            raise ModuleError(f"sharding {attr} names no sdy.mesh of this module")
        mesh = meshes[name]
    else:
        name, mesh = "", mesh_from_attr(ref)
    sharding = TensorSharding(
        name,
        tuple(dim_from_attr(d) for d in ts.dimension_shardings),
        tuple(axis_from_attr(a) for a in ts.replicated_axes),
        tuple(axis_from_attr(a) for a in ts.unreduced_axes),
        compat.reduction_of(ts),
    )
    return sharding, mesh


def per_value(attr: ir.Attribute) -> list[ir.Attribute]:
    """The `#sdy.sharding`s of a `#sdy.sharding_per_value<[...]>`, one per result."""
    return list(sdy.TensorShardingPerValueAttr(attr).shardings)


def manual_axes_from_attr(attr: ir.Attribute) -> tuple[str, ...]:
    """`#sdy<manual_axes{"x", "y"}>` -> ("x", "y") (jaxlib binds no accessor for it)."""
    return tuple(_QUOTED.findall(str(attr)))


def read_meshes(module: ir.Operation) -> dict[str, Mesh]:
    """Every `sdy.mesh` op of the module, by symbol name, in module order."""
    meshes: dict[str, Mesh] = {}
    for child in body(module).operations:
        op = child.operation
        if op.name == MESH_OP:
            name = string_value(op.attributes["sym_name"])
            assert name is not None  # sdy.mesh's verifier holds sym_name a StringAttr
            meshes[name] = mesh_from_attr(op.attributes["mesh"])
    return meshes


def lexical_manual_axes(op: ir.Operation) -> tuple[str, ...]:
    """Manual axes of the `sdy.manual_computation`s around `op` inside its func, outermost
    first."""
    axes: tuple[str, ...] = ()
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == MANUAL_COMPUTATION:
            inner = manual_axes_from_attr(parent.attributes["manual_axes"])
            axes = inner + tuple(a for a in axes if a not in inner)
        parent = parent.parent
    return axes


# --- one sharding as a GSPMD string ---------------------------------------------------------


@dataclass(frozen=True)
class Exported:
    """One exported sharding: its `mhlo.sharding` text and its open dims."""

    text: str
    open_dims: tuple[int, ...]

    @property
    def backend_config(self) -> str:
        """`unspecified_dims=[0,1]` as JAX writes it on `@Sharding`; "" when all are closed."""
        if not self.open_dims:
            return ""
        return f"unspecified_dims=[{','.join(map(str, self.open_dims))}]"


def export_sharding(
    attr: ir.Attribute, meshes: dict[str, Mesh], manual: Iterable[str] = ()
) -> Exported:
    """The GSPMD string of a `#sdy.sharding` inside a region manual over `manual` axes.

    On mesh ["x"=2, "y"=4] with manual {"x"}: `[{}, {"y"}]` ->
    `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}` (dim 1 on y, then the x group).
    """
    sharding, mesh = sharding_from_attr(attr, meshes)
    names = [name for name, _ in mesh.axes]
    manual_axes = tuple(a for a in names if a in set(manual))
    return _exported(sharding, mesh, manual_axes)


@functools.lru_cache(maxsize=4096)
def _exported(sharding: TensorSharding, mesh: Mesh, manual_axes: tuple[str, ...]) -> Exported:
    """export_sharding's answer, once a process per sharding: a program's values share a few
    shardings, and the plugin's programs share them from one compile to the next."""
    from ..sharding.export import to_hlo  # and the V3 shardings it imports (cold start)

    hlo = to_hlo(sharding, mesh, manual_axes)
    open_dims = tuple(k for k, d in enumerate(sharding.dims) if not d.is_closed)
    return Exported(str(hlo), open_dims)


def is_shardy(module: ir.Operation) -> bool:
    """True when the module already carries Shardy: an `sdy.mesh` and no `mhlo.sharding`
    strings, or the round-trip form (`xla.sdy.meshes` frontend attribute)."""
    if has_round_trip_meshes(module):
        return True
    return has_meshes(module) and next(sites(module), None) is None


def has_meshes(module: ir.Operation) -> bool:
    """Whether the module defines an `sdy.mesh`."""
    return any(op.operation.name == MESH_OP for op in body(module).operations)


def has_round_trip_meshes(module: ir.Operation) -> bool:
    """Whether the module carries Shardy's round-trip form (a portable artifact's): meshes in
    the `xla.sdy.meshes` frontend attribute."""
    if "mhlo.frontend_attributes" not in module.attributes:
        return False
    attrs = module.attributes["mhlo.frontend_attributes"]
    return isinstance(attrs, ir.DictAttr) and "xla.sdy.meshes" in attrs
