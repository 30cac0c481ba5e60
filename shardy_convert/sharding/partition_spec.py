"""A sharding as the user wrote it: torch_xla's partition spec on one of the user's meshes.

torch_xla's `xs.mark_sharding(t, mesh, ("model", None))` reaches XLA as a device list; this
reads such a list back as the spec on the user's mesh, by the same mapping import-shardings
uses to place it on a Shardy mesh (`MeshPlan.tensor_sharding`). Example: on
`Mesh(range(8), (2, 4), ("data", "model"))`, `{devices=[4,1,2]0,4,1,5,2,6,3,7
last_tile_dim_replicate}` is `('model', None)`: dim 0 in 4 tiles along "model", each held by
the 2 devices of a "data" column. A dim over several axes prints as a tuple, major first
(`(('data', 'model'), None)`), a split axis as its Shardy sub-axis (`'model:(1)2'`), and a
sharding that splits nothing as `replicated`.

Pure Python + numpy, no MLIR.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from ..errors import ShardingValueError, clip
from . import HloSharding, Kind, SubgroupType
from .mesh import MeshPlan, plan_from_mesh
from .mesh_fit import UserMesh
from .sdy import AxisRef

REPLICATED = "replicated"


@dataclass(frozen=True)
class Spec:
    """A partition spec: per tensor dim the mesh axes it is split over, major first (an empty
    tuple: not split). `dims` is None for a sharding that splits nothing (`replicated`), so
    `(None, None)` and `{replicated}` are one Spec. `other` names the shardings no partition
    spec writes: `manual`, `maximal:K` (all on device K)."""

    dims: tuple[tuple[str, ...], ...] | None = None
    other: str | None = None

    def __post_init__(self):
        if self.dims is not None and not any(self.dims):
            object.__setattr__(self, "dims", None)

    @property
    def is_replicated(self) -> bool:
        return self.dims is None and self.other is None

    def __str__(self) -> str:
        """`('model', None)`, `(('data', 'model'),)`, `replicated`, `manual`, `maximal:3`:
        how torch_xla's spec reads in Python, so the text parses back (`parse_spec`)."""
        if self.other is not None:
            return self.other
        if self.dims is None:
            return REPLICATED
        items = [_dim_text(axes) for axes in self.dims]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def as_json(self) -> str | list:
        """`"replicated"` (or `"manual"`, `"maximal:3"`), else one item per dim: null, an
        axis name, or a list of axis names (major first)."""
        if self.other is not None or self.dims is None:
            return str(self)
        return [None if not axes else axes[0] if len(axes) == 1 else list(axes) for axes in self]

    def __iter__(self):
        return iter(self.dims or ())


def _dim_text(axes: tuple[str, ...]) -> str:
    if not axes:
        return "None"
    if len(axes) == 1:
        return repr(axes[0])
    return "(" + ", ".join(map(repr, axes)) + ")"


def spec_on(sharding: HloSharding, mesh: UserMesh, rank: int) -> Spec:
    """`sharding` of a tensor of `rank` dims as a spec on `mesh` (in its device order);
    ShardingValueError when it is no view of that mesh (another device count or order, a
    tile that crosses an axis) or has no spec (a tuple, a partially manual tiling)."""
    if sharding.kind is Kind.TUPLE:
        raise ShardingValueError(f'tuple sharding "{clip(sharding, 60)}" has no partition spec')
    if sharding.kind is Kind.MANUAL:
        return Spec(other="manual")
    if sharding.kind is Kind.MAXIMAL:
        return Spec(other=f"maximal:{sharding.device}")
    if sharding.kind is not Kind.TILED or sharding.is_replicated:
        return Spec()
    if sharding.num_devices != mesh.size:
        raise ShardingValueError(
            f'"{clip(sharding, 60)}" runs on {sharding.num_devices} devices, the mesh has '
            f"{mesh.size}"
        )
    if any(sub is not SubgroupType.REPLICATED for sub in sharding.subgroups):
        raise ShardingValueError(f'"{clip(sharding, 60)}" is partially manual: no partition spec')
    placed = _plan(mesh).tensor_sharding(sharding, rank)
    return Spec(tuple(tuple(_axis_name(ref) for ref in dim.axes) for dim in placed.dims))


def _axis_name(ref: AxisRef) -> str:
    return ref.name if ref.pre is None else f"{ref.name}:({ref.pre}){ref.size}"


@functools.lru_cache(maxsize=64)
def _plan(mesh: UserMesh) -> MeshPlan:
    return plan_from_mesh(mesh.axes, mesh.order)


def fits(sharding: HloSharding, mesh: UserMesh, rank: int) -> bool:
    """Whether `sharding` reads as a spec on `mesh`."""
    try:
        spec_on(sharding, mesh, rank)
    except ShardingValueError:
        return False
    return True


def parse_spec(value: object) -> Spec:
    """A spec as a policy or a JSON report writes it: `"replicated"` (or `"manual"`,
    `"maximal:3"`), the text `str(Spec)` prints (`"('model', None)"`), or a list of dims
    (null, an axis name, a list of names). ShardingValueError saying what is wrong."""
    if isinstance(value, str):
        text = value.strip()
        if text in (REPLICATED, "manual") or (text.startswith("maximal:") and text[8:].isdigit()):
            return Spec(other=None if text == REPLICATED else text)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise ShardingValueError(
                f"{clip(repr(text), 60)} is no partition spec: write it as Python does, "
                'e.g. "(\'model\', None)", or "replicated"'
            ) from None
    if not isinstance(value, (list, tuple)):
        raise ShardingValueError(f"{clip(repr(value), 60)} is no partition spec")
    return Spec(tuple(_parsed_dim(item) for item in value))


def _parsed_dim(item: object) -> tuple[str, ...]:
    if item is None:
        return ()
    if isinstance(item, str):
        return (item,)
    if isinstance(item, (list, tuple)) and item and all(isinstance(a, str) for a in item):
        return tuple(item)
    raise ShardingValueError(
        f"a spec dim is None, an axis name or a tuple of names, not {clip(repr(item), 40)}"
    )
