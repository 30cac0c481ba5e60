"""iota-mesh: a mesh's custom device order moves out of the module, into the device assignment
the module is compiled with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import ModuleError
from ..ir.analyses import Analyses
from ..ir.bindings import ir, sdy
from ..ir.diagnostics import format_location
from ..ir.sdy_attrs import MESH_OP
from ..ir.walker import body

STABLEHLO_MESH = "stablehlo.mesh"


@dataclass(frozen=True)
class DeviceOrder:
    """What iota-mesh returns when it took a custom order out of the meshes: partition p of
    the compiled program must run on the device the original program calls `order[p]`."""

    order: tuple[int, ...]

    def __str__(self) -> str:
        return (
            f"device order {','.join(map(str, self.order))} taken out of the mesh (compile "
            "with it as the device assignment)"
        )


@dataclass(frozen=True)
class IotaMeshPass:
    """Drops `device_ids` from every mesh with axes and returns that order (a `DeviceOrder`);
    a maximal mesh `<[], device_ids=[k]>` is renumbered to k's position in the order. XLA's
    partitioner computes some ops (gather, dots with a sharded contracting dim) wrongly on
    explicit device lists; an iota mesh compiled with the order as its device assignment is
    how JAX expresses a custom order."""

    NAME: ClassVar[str] = "iota-mesh"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> DeviceOrder | None:
        meshes = [op for op in body(module).operations if op.operation.name == MESH_OP]
        custom = [op for op in meshes if len(_mesh(op).axes) and _order(op)]
        if not custom:
            return None
        order = _order(custom[0])
        other = next((op for op in custom if _order(op) != order), None)
        if other is not None:
            where = format_location(other.location) or "unknown location"
            raise ModuleError(
                f"meshes in different device orders ({list(order)} and {list(_order(other))}):"
                " one device assignment cannot express them",
                location=f"{where}: sdy.mesh",
            )
        position = {device: p for p, device in enumerate(order)}
        for op in meshes:
            mesh = _mesh(op)
            ids = [] if len(mesh.axes) else [position.get(d, d) for d in _order(op)]
            op.operation.attributes["mesh"] = sdy.MeshAttr.get(list(mesh.axes), ids)
            _mirror_device_ids(op.operation, ids)
        return DeviceOrder(order)


def _mirror_device_ids(op: ir.Operation, ids: list[int]) -> None:
    """A mesh op may carry a copy of its mesh in a `stablehlo.mesh` dictionary: keep it in
    step (no `device_ids` entry for an iota mesh)."""
    if STABLEHLO_MESH not in op.attributes:
        return
    mirror = ir.DictAttr(op.attributes[STABLEHLO_MESH])
    kept = {mirror[i].name: mirror[i].attr for i in range(len(mirror))}
    kept.pop("device_ids", None)
    if ids:
        # an ndarray is a Buffer; numpy's stubs do not say so to this binding's
        kept["device_ids"] = ir.DenseElementsAttr.get(np.array(ids, dtype=np.int64))  # type: ignore[call-overload]
    op.attributes[STABLEHLO_MESH] = ir.DictAttr.get(kept)


def _mesh(op) -> sdy.MeshAttr:
    return sdy.MeshAttr(op.operation.attributes["mesh"])


def _order(op) -> tuple[int, ...]:
    return tuple(int(d) for d in _mesh(op).device_ids)
