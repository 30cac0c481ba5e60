"""import-shardings: GSPMD `mhlo.sharding` strings become one `sdy.mesh` and `sdy.sharding`s."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

from jaxlib.mlir import ir

from shardy_convert.errors import ShardyConvertError, ShardyConvertWarning
from shardy_convert.sharding import HloSharding, Kind, SubgroupType
from shardy_convert.sharding.mesh import MeshPlan, maximal_mesh_name, plan_mesh
from shardy_convert.sharding.sdy import Mesh, TensorSharding, per_value_attr
from shardy_convert.walker import SHARDING, Site, ValueAttrs, body, sites

# Custom calls whose `{manual}` shardings only import-custom-calls can place: it turns them
# into `sdy.manual_computation` and needs the GSPMD strings to know the manual axes.
MANUAL_BOUNDARIES = ("SPMDFullToShardShape", "SPMDShardToFullShape")
SDY_SHARDING = "sdy.sharding"


@dataclass(frozen=True)
class ImportShardingsPass:
    """Derives one global `sdy.mesh @mesh` from all shardings of the module (plus one
    single-device mesh per maximal device) and replaces every `mhlo.sharding` on func
    arguments, results and ops by the equivalent `sdy.sharding`. A mesh is always emitted;
    the manual-region custom calls keep their strings for import-custom-calls."""

    NAME: ClassVar[str] = "import-shardings"
    num_devices: int | None = None
    fallback_devices: int | None = None
    mesh: tuple[tuple[str, int], ...] | None = None

    def run(self, module: ir.Operation) -> None:
        found = [(site, site.parse()) for site in sites(module)]
        _check_no_manual_at_boundary(found)
        plan = self.plan(module, [s for _, s in found])
        with module.context:
            _insert_meshes(module, plan)
            _import(module, found, plan)

    def plan(self, module: ir.Operation, shardings: list[HloSharding]) -> MeshPlan:
        count = self.num_devices or _num_partitions(module)
        plan = plan_mesh(shardings, num_devices=count, hint=self.mesh)
        if not plan.device_count_known and self.fallback_devices:
            plan = plan_mesh(shardings, num_devices=self.fallback_devices, hint=self.mesh)
        if not plan.device_count_known:
            warnings.warn(
                "no sharding, mhlo.num_partitions or --num-devices says how many devices this "
                "module runs on; emitting a 1-device mesh",
                ShardyConvertWarning,
                stacklevel=2,
            )
        return plan


def _num_partitions(module: ir.Operation) -> int | None:
    attr = (
        module.attributes["mhlo.num_partitions"]
        if "mhlo.num_partitions" in module.attributes
        else None
    )
    return None if attr is None else ir.IntegerAttr(attr).value


def _check_no_manual_at_boundary(found: list[tuple[Site, HloSharding]]) -> None:
    for site, sharding in found:
        if site.kind in ("arg", "result") and any(_is_manual(leaf) for leaf in sharding.leaves()):
            raise ShardyConvertError(
                f'a manual value ("{site.text}") crosses the function boundary; Shardy has no '
                "form for it (a manual computation's operands and results are global)",
                location=site.location,
            )


def _is_manual(s: HloSharding) -> bool:
    return s.kind is Kind.MANUAL or SubgroupType.MANUAL in s.subgroups


def _insert_meshes(module: ir.Operation, plan: MeshPlan) -> None:
    meshes = [("mesh", plan.mesh)] + [(maximal_mesh_name(d), Mesh((), (d,))) for d in plan.maximal]
    ip = ir.InsertionPoint.at_block_begin(body(module))
    for name, mesh in meshes:
        ir.Operation.create(
            "sdy.mesh",
            attributes={
                "sym_name": ir.StringAttr.get(name),
                "mesh": ir.Attribute.parse(f"#sdy.mesh{mesh}"),
            },
            loc=module.location,
            ip=ip,
        )


def _import(module: ir.Operation, found: list[tuple[Site, HloSharding]], plan: MeshPlan) -> None:
    attrs: dict[str, ir.Attribute] = {}
    edits: dict[tuple[int, str], ValueAttrs] = {}

    def attr(text: str) -> ir.Attribute:
        if text not in attrs:
            attrs[text] = ir.Attribute.parse(text)
        return attrs[text]

    for site, sharding in found:
        if site.kind == "module":
            if site.attr in module.attributes:
                del module.attributes[site.attr]
            continue
        if site.kind == "op":
            _import_op(site, sharding, plan, attr)
            continue
        values = edits.setdefault((id(site.owner), site.kind), ValueAttrs(site.owner, site.kind))
        entry = values.dicts[site.index]
        entry[SDY_SHARDING] = attr(_value_sharding(site, sharding, plan).attr())
        entry.pop(SHARDING, None)
    for values in edits.values():
        values.save()


def _value_sharding(site: Site, sharding: HloSharding, plan: MeshPlan) -> TensorSharding:
    (value_type,) = site.value_types()
    leaves = sharding.leaves()
    if len(leaves) != 1:
        raise ShardyConvertError(
            f'tuple sharding "{site.text}" on a single value', location=site.location
        )
    return _on_type(site, leaves[0], value_type, plan)


def _import_op(site: Site, sharding: HloSharding, plan: MeshPlan, attr) -> None:
    op = site.owner
    if _call_target(op) in MANUAL_BOUNDARIES:
        return
    types = site.value_types()
    leaves = sharding.leaves() if sharding.kind is Kind.TUPLE else [sharding] * max(len(types), 1)
    if sharding.kind is Kind.TUPLE and len(leaves) != len(types):
        raise ShardyConvertError(
            f'tuple sharding "{site.text}" has {len(leaves)} elements but the op has '
            f"{len(types)} results",
            location=site.location,
        )
    if not types:
        shardings = [_on_rank(site, leaves[0], 0, plan)]
    else:
        shardings = [_on_type(site, leaf, t, plan) for leaf, t in zip(leaves, types)]
    op.attributes[SDY_SHARDING] = attr(per_value_attr(shardings))
    del op.attributes[SHARDING]


def _on_type(
    site: Site, sharding: HloSharding, value_type: ir.Type, plan: MeshPlan
) -> TensorSharding:
    if isinstance(value_type, ir.RankedTensorType):
        return _on_rank(site, sharding, ir.RankedTensorType(value_type).rank, plan)
    if str(value_type) == "!stablehlo.token":
        return _on_rank(site, sharding, 0, plan)
    raise ShardyConvertError(
        f'sharding "{site.text}" on a value of type {value_type}, which is not a ranked tensor',
        location=site.location,
    )


def _on_rank(site: Site, sharding: HloSharding, rank: int, plan: MeshPlan) -> TensorSharding:
    try:
        return plan.tensor_sharding(sharding, rank)
    except ShardyConvertError as e:
        raise e.located(location=site.location) from None


def _call_target(op: ir.Operation) -> str | None:
    if op.name != "stablehlo.custom_call":
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value
