"""single-device-program: a program placed whole on one device, in the form JAX lowers it to
since jaxlib 0.11.2: one partition on an empty mesh, the device in the device assignment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import NoShardyFormError
from ..ir import compat
from ..ir.analyses import Analyses
from ..ir.bindings import ir, sdy
from ..ir.diagnostics import format_location, op_location
from ..ir.sdy_attrs import MESH_OP, per_value, replicated
from ..ir.value_attrs import ValueAttrs, value_types_of
from ..ir.walker import SDY_SHARDING, body, func_name, funcs, join_location
from ..sharding.sdy import Mesh

# Cold start: what only a single-device program runs (the rewrite, the file's record of its
# device) is imported where it runs; every conversion runs the check.

EMPTY_MESH = "empty_mesh"
NUM_PARTITIONS = "mhlo.num_partitions"


@dataclass(frozen=True)
class OnOneDevice:
    """What single-device-program returns when it made a program one partition: the device
    `device` it was placed on, which the compile must run that partition on (`order`, the
    device assignment; a file written records it: formats/device_order.py)."""

    device: int

    @property
    def order(self) -> tuple[int, ...]:
        return (self.device,)

    def __str__(self) -> str:  # as iota-mesh's DeviceOrder says it: opt's notes unchanged
        return (
            f"device order {self.device} taken out of the mesh (compile with it as the device "
            "assignment)"
        )


@dataclass(frozen=True)
class SingleDeviceProgramPass:
    """Where this jaxlib's Shardy refuses a single-device sharding on a function argument
    (0.11.2 on, `compat.single_device_arguments_refused`), or `always`: a program whose every
    sharding is on the maximal mesh `<[], device_ids=[k]>` of one device k becomes what JAX
    lowers a single-device placement to: `sdy.mesh @empty_mesh = <[]>`, each sharding closed
    replicated on it, `mhlo.num_partitions = 1` (where the module says a count); k is returned
    as `OnOneDevice`, the device to compile on.
    A single-device sharding on an argument or result of a program that places other values
    elsewhere has no such form: a NoShardyFormError."""

    NAME: ClassVar[str] = "single-device-program"
    always: bool = False

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> OnOneDevice | None:
        meshes = [op for op in body(module).operations if op.operation.name == MESH_OP]
        single = {_name(op): d for op in meshes if (d := _device(op)) is not None}
        if not single or not (self.always or compat.single_device_arguments_refused()):
            return None
        if len(single) < len(meshes) or len(set(single.values())) > 1:
            _check_signatures(module, single)
            return None
        device = next(iter(single.values()))
        with module.context:
            _rewrite(module, meshes[0])
        return OnOneDevice(device)


def _rewrite(module: ir.Operation, mesh_op) -> None:
    """Every sharding of the module (on the one maximal mesh) closed replicated on the empty
    mesh that `mesh_op` becomes; the device leaves for the device assignment."""
    from ..ir.ops import find_ops
    from .iota_mesh import STABLEHLO_MESH

    mesh_op = mesh_op.operation
    mesh_op.attributes["sym_name"] = ir.StringAttr.get(EMPTY_MESH)
    mesh_op.attributes["mesh"] = sdy.MeshAttr.get([], [])
    if STABLEHLO_MESH in mesh_op.attributes:  # as JAX 0.12 prints it: `{axes = []}`
        mesh_op.attributes[STABLEHLO_MESH] = ir.DictAttr.get({"axes": ir.ArrayAttr.get([])})
    for func in funcs(module):
        for kind in ("arg", "result"):
            _rewrite_signature(func, kind)
        for op in find_ops(func, lambda op: _sharded(op)):
            _rewrite_op(op)
    if NUM_PARTITIONS in module.attributes:  # a module that says no count still says none
        module.attributes[NUM_PARTITIONS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)


def one_partition_as_placed(module: ir.Operation, meshes: dict[str, Mesh]) -> dict[str, Mesh]:
    """For export: `meshes` with the empty mesh of this pass's form (one partition, device k
    recorded in the file: formats/device_order.py) as the single-device mesh of k, so every
    value on it exports as GSPMD's `{maximal device=k}`; the module's count becomes k + 1
    (device k of a count it no longer knows) and the record goes. Other modules: `meshes` as
    given."""
    from ..formats import device_order

    attrs = module.attributes
    if any(m.axes or m.device_ids for m in meshes.values()):
        return meshes
    order = device_order.read(module)
    if order is None or len(order) != 1:
        return meshes
    device_order.take(module)
    if NUM_PARTITIONS in attrs:
        attrs[NUM_PARTITIONS] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), order[0] + 1)
    return {name: Mesh((), (order[0],)) for name in meshes}


def _rewrite_signature(func: ir.Operation, kind: str) -> None:
    types = value_types_of(func, kind)
    values = ValueAttrs(func, kind, len(types))
    for k, t in enumerate(types):
        if values.has(k, SDY_SHARDING):
            values.dict(k)[SDY_SHARDING] = replicated(EMPTY_MESH, _rank(t))
            values.changed = True
    if values.changed:
        values.save()


def _sharded(op: ir.Operation) -> bool:
    return SDY_SHARDING in op.attributes or op.name in ("sdy.sharding_constraint", "sdy.reshard")


def _rewrite_op(op: ir.Operation) -> None:
    """An op's `sdy.sharding` (one per result), or a constraint's or reshard's `sharding`."""
    if SDY_SHARDING in op.attributes:
        count = len(per_value(op.attributes[SDY_SHARDING]))
        shardings = [replicated(EMPTY_MESH, _rank(r.type)) for r in op.results][:count]
        op.attributes[SDY_SHARDING] = sdy.TensorShardingPerValueAttr.get(shardings)
    if "sharding" in op.attributes:
        op.attributes["sharding"] = replicated(EMPTY_MESH, _rank(op.results[0].type))


def _check_signatures(module: ir.Operation, single: dict[str, int]) -> None:
    """A single-device sharding on a function boundary beside other placements: Shardy refuses
    it on an argument, XLA drops it from a result (the value would not stay on its device)."""
    for func in funcs(module):
        for kind in ("arg", "result"):
            values = ValueAttrs(func, kind)
            for k in range(values.count):
                if not values.has(k, SDY_SHARDING):
                    continue
                mesh = _mesh_name(values.dict(k)[SDY_SHARDING])
                if mesh in single:
                    _refuse(func, kind, k, single[mesh])


def _refuse(func: ir.Operation, kind: str, k: int, device: int) -> None:
    where = join_location(format_location(func.location), f"{kind} {k} of @{func_name(func)}")
    raise NoShardyFormError(
        f'"{{maximal device={device}}}" on a function '
        f"{'argument' if kind == 'arg' else kind} of a program that places "
        "other values on other devices: this jaxlib's Shardy refuses a single-device sharding "
        "on arguments and XLA drops it from results (since jaxlib 0.11.2); only a program "
        "placed whole on one device has a single-device form (one partition)",
        location=where or op_location(func),
    )


def _name(op) -> str:
    return ir.StringAttr(op.operation.attributes["sym_name"]).value


def _device(op) -> int | None:
    """k of a maximal mesh `<[], device_ids=[k]>`; None for any other mesh."""
    mesh = sdy.MeshAttr(op.operation.attributes["mesh"])
    ids = list(mesh.device_ids)
    return int(ids[0]) if not len(mesh.axes) and len(ids) == 1 else None


def _mesh_name(attr: ir.Attribute) -> str:
    """The mesh a `#sdy.sharding<@name, ...>` names (an inlined mesh: "")."""
    text = str(attr)
    start = text.find("<@")
    return text[start + 2 :].split(",", 1)[0].strip() if start >= 0 else ""


def _rank(t: ir.Type) -> int:
    return ir.RankedTensorType(t).rank if isinstance(t, ir.RankedTensorType) else 0
