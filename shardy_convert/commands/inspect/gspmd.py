"""Reading a GSPMD module: every `mhlo.sharding` (walker order) with its V2 and Shardy forms on
the graph's one global mesh, as import-shardings would place it."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import ModuleError, ShardyConvertError
from ...ir.bindings import ir
from ...ir.frontend_shardings import STATED, stated_at, stated_shardings
from ...ir.walker import Site, call_target, func_name, funcs, num_partitions, sites
from ...passes.import_custom_calls import unspecified_dims
from ...sharding import HloSharding, Kind, import_rules
from ...sharding.mesh import MESH_NAME, MeshPlan, maximal_mesh_name, plan_mesh
from ...sharding.mesh_fit import candidates, choose
from ...sharding.sdy import Mesh, TensorSharding, with_stated
from .audit import device_order, rule_findings
from .reader import Reader, op_label, type_info, v2_text
from .report import Diagnostic, Value
from .shards import shard_info


class GspmdReader(Reader):
    def read(self) -> None:
        found = [(site, site.parse()) for site in sites(self.module)]
        partitions = num_partitions(self.module)
        self.plan = self._plan([s for _, s in found], partitions)
        placed, values = [], {}
        for site, sharding in found:
            placed.append(site.placed(sharding))
            values[id(placed[-1])] = self._site(site, sharding)
        facts = import_rules.ModuleFacts(tuple(placed), partitions)
        self.result.findings += rule_findings(facts, values)
        self.unannotated_args(
            "mhlo.sharding",
            "GSPMD replicates it and convert closes it replicated, as torch_xla compiles it "
            "(--propagate-to-parameters leaves it open to Shardy's propagation)",
        )
        self._manual_escapes({s.owner: s for s, _ in found if s.kind == "op"})

    def _manual_escapes(self, op_sites: dict) -> None:
        """`@main` returning a value a `{manual}` op produced (torch_xla returns live manual
        tensors): a manual computation's results are global, so Shardy has no form for it."""
        for k, op, where in _main_returned_producers(self.module):
            site = op_sites.get(op)
            if site is None or not import_rules.is_manual(site.parse()):
                continue
            self.result.findings.append(
                Diagnostic(
                    "error",
                    "manual-at-boundary",
                    f'@main returns a manual value ("{site.text}") as result {k}; Shardy has no '
                    "form for it (a manual computation's results are global)",
                    self.location(where),
                    f"result {k}",
                )
            )

    def _plan(self, shardings: list[HloSharding], partitions: int | None) -> MeshPlan | None:
        try:
            hint, order = self._user_mesh(shardings, partitions or self.fallback)
            plan = plan_mesh(shardings, num_devices=partitions, hint=hint, order=order)
            source = "mhlo.num_partitions" if partitions else "shardings"
            if not plan.device_count_known and self.fallback:
                plan = plan_mesh(shardings, num_devices=self.fallback, hint=hint, order=order)
                source = "other graphs of the dump"
        except ShardyConvertError as e:
            self.finding("error", "no-mesh", f"no Shardy mesh for this graph: {e.message}")
            return None
        self._describe(plan, source)
        return plan

    def _user_mesh(self, shardings: list[HloSharding], count: int | None) -> tuple:
        """(axes, device order) of the program's mesh the shardings fit (those its V3 strings
        state, then a mesh file's), as convert picks it (import-shardings); (None, None) when
        there are none or none fits (a finding)."""
        meshes = candidates(shardings, self.meshes)
        if not meshes:
            return None, None
        choice = choose(shardings, meshes, count)
        if choice.mesh is None:
            self.finding(
                "warning",
                "no-recorded-mesh",
                f"the shardings fit none of the program's meshes, the mesh is inferred: "
                f"{choice.reason()}",
            )
            return None, None
        self.result.mesh_from = choice.mesh.describe()
        return choice.mesh.axes, choice.mesh.ids

    def _describe(self, plan: MeshPlan, source: str) -> None:
        """The meshes convert emits (no `@mesh` when every sharding is maximal: nothing is
        placed on it, and nothing needs the device count) and the device count."""
        result = self.result
        result.meshes = [(MESH_NAME, str(plan.mesh))] if plan.uses_mesh else []
        result.meshes += [(maximal_mesh_name(d), str(Mesh((), (d,)))) for d in plan.maximal]
        if plan.device_count_known:
            result.num_devices, result.device_count_from = plan.mesh.size, source
            return
        if not plan.uses_mesh:
            return
        self.finding(
            "warning",
            "no-device-count",
            "no sharding is tiled and there is no mhlo.num_partitions: nothing says how many "
            "devices this graph runs on (convert emits a mesh with no axes unless given "
            "--num-devices)",
        )

    def _site(self, site: Site, sharding: HloSharding) -> list[Value]:
        """The values one sharding describes (one per tuple element), added to the graph."""
        types = site.value_types()
        leaves = sharding.leaves() if sharding.kind is Kind.TUPLE else [sharding] * len(types)
        if not types or (sharding.kind is Kind.TUPLE and len(leaves) != len(types)):
            leaves, types = [sharding], [None]  # reported as tuple-mismatch
        values = []
        for k, (leaf, value_type) in enumerate(zip(leaves, types)):
            given = site.text if leaf is sharding else str(leaf)
            values.append(self._value(site, k, leaf, value_type, given))
            self.add_value(values[-1])
        return values

    def _value(self, site: Site, k: int, leaf: HloSharding, value_type, given: str) -> Value:
        shape, dtype, type_text = type_info(value_type)
        value = Value(
            name=_site_name(site, k, self.asm),
            func=site.func_name,
            kind=site.kind,
            op=op_label(site.owner) if site.kind == "op" else None,
            location=self._site_location(site),
            type=type_text,
            shape=shape,
            dtype=dtype,
            sharding=given,
            gspmd=str(leaf),
            v2=v2_text(leaf),
            hlo=leaf,
            num_devices=self.result.num_devices,
            mesh=self.result.meshes[0][1] if self.result.meshes else None,
        )
        value.shard = shard_info(leaf, shape, value.num_devices)
        value.sdy = self._sdy(site, leaf, value, k)
        return value

    def _site_location(self, site: Site) -> str | None:
        if site.kind == "arg":
            return self.location(site.owner.regions[0].blocks[0].arguments[site.index].location)
        if site.kind == "module":
            return None
        return self.location(site.owner.location)

    def _sdy(self, site: Site, leaf: HloSharding, value: Value, k: int) -> str | None:
        if self.plan is None or leaf.kind is Kind.TUPLE:
            return None
        rank = _rank(leaf, value.shape)
        if leaf.kind is Kind.TILED and not leaf.is_replicated and len(leaf.data_dims) != rank:
            return None  # reported as rank-mismatch
        try:
            ts = _with_stated(site, k, self.plan.tensor_sharding(leaf, rank))
            manual = self.plan.manual_axes(leaf)
        except ShardyConvertError as e:
            self.finding("error", "no-sdy-form", e.message, value)
            return None
        if site.kind == "op":
            ts = ts.opened(unspecified_dims(site.owner) if call_target(site.owner) else ())
        if not manual:
            return str(ts)
        axes = "manual_axes={" + ", ".join(f'"{a}"' for a in manual) + "}"
        # A manual value lives inside an sdy.manual_computation; fully manual, it has no dims.
        return axes if leaf.kind is Kind.MANUAL else f"{ts} {axes}"

    def audit_value(self, value: Value) -> None:
        super().audit_value(value)
        found = device_order(value, self.plan)
        if found is not None:
            self.finding("warning", *found, value)


def _with_stated(site: Site, k: int, ts: TensorSharding) -> TensorSharding:
    """`ts` with the priorities and open dims of the `xla.sdy.sharding` frontend attribute
    beside the GSPMD string (Tenstorrent's fork), as import-shardings gives them."""
    stated = stated_at(site.owner, site.kind, site.index)
    if stated is None:
        return ts
    said = stated_shardings(stated)
    if k >= len(said):
        raise ModuleError(f'{STATED} "{stated}" states no sharding for value {k} here')
    return with_stated(ts, said[k])


def _main_returned_producers(module: ir.Operation) -> Iterator[tuple[int, ir.Operation, object]]:
    """(result index, producing op, return location) for each value `@main` returns that an op
    produced."""
    for func in funcs(module):
        if func_name(func) != "main" or not len(func.regions[0].blocks):
            continue
        ops = func.regions[0].blocks[0].operations
        terminator = ops[len(ops) - 1]
        for k, operand in enumerate(terminator.operands):
            if isinstance(operand.owner, ir.Operation | ir.OpView):
                yield k, operand.owner.operation, terminator.location


def _site_name(site: Site, k: int, asm: ir.AsmState) -> str:
    if site.kind == "arg":
        return f"%arg{site.index}"
    if site.kind == "result":
        return f"result {site.index}"
    if site.kind == "module":
        return f"{site.attr}[{site.index}]"
    results = site.owner.results
    return results[k].get_name(asm) if len(results) > k else site.owner.name


def _rank(leaf: HloSharding, shape) -> int:
    if shape is not None:
        return len(shape)
    return len(leaf.data_dims) if leaf.kind is Kind.TILED else 0
