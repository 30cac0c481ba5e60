"""import-shardings: GSPMD `mhlo.sharding` strings become one `sdy.mesh` and `sdy.sharding`s."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

from ..errors import (
    DeviceCountWarning,
    ManualInputError,
    ModuleError,
    NoShardyFormError,
    ShardyConvertError,
    ShardyConvertWarning,
    clip,
    plural,
)
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.diagnostics import format_location
from ..ir.frontend_shardings import FRONTEND, STATED, pop_stated, stated_shardings
from ..ir.sdy_attrs import MESH_OP, check_reduction_kinds, mesh_attr, replicated
from ..ir.value_attrs import edited
from ..ir.walker import (
    SDY_SHARDING,
    SHARDING,
    Site,
    body,
    func_name,
    funcs,
    join_location,
    num_partitions,
    sites,
)
from ..options import propagation_flags
from ..sharding import HloSharding, Kind, import_rules
from ..sharding.mesh import MeshPlan, maximal_mesh_name, plan_mesh
from ..sharding.mesh_fit import UserMesh, candidates, choose
from ..sharding.sdy import Mesh, TensorSharding, per_value_attr, with_stated
from ..sharding.uneven import PAD_HINT, uneven_dims

# Custom calls whose `{manual}` shardings only import-custom-calls can place: it turns them
# into `sdy.manual_computation` and needs the GSPMD strings to know the manual axes.
MANUAL_BOUNDARIES = ("SPMDFullToShardShape", "SPMDShardToFullShape")


@dataclass(frozen=True)
class MeshChoice:
    """What import-shardings returns when it had meshes to choose from (the program's,
    `meshes`, and those the module's named (V3) strings state): the one it planned on (`mesh`,
    as that mesh describes itself: `Mesh((2, 4), ('data', 'model'))`), or None where none fits
    and the mesh is inferred from the shardings (`why`: a reason per mesh)."""

    mesh: str | None
    why: str = ""

    def __str__(self) -> str:
        return f"user: {self.mesh}" if self.mesh is not None else f"inferred: {self.why}"


@dataclass(frozen=True)
class ImportShardingsPass:
    """Derives one global `sdy.mesh @mesh` from all shardings of the module (plus one
    single-device mesh per maximal device) and replaces every `mhlo.sharding` on func
    arguments, results and ops by the equivalent `sdy.sharding`. The global mesh is emitted
    unless every sharding is maximal (nothing would be placed on it);
    the manual-region custom calls keep their strings for import-custom-calls. Unannotated
    arguments and results of `@main` become closed replicated where XLA's compile options
    would not let propagation reach them (`allow_spmd_sharding_propagation_to_parameters`
    / `_to_output`: one bool for all, or one per value), and stay open otherwise. `mesh`
    (with `mesh-device-ids`, its device order) names the axes; without it, the program's own
    meshes (`meshes`, from Python) give them where the shardings fit one."""

    NAME: ClassVar[str] = "import-shardings"
    # Rewrites attributes and adds sdy.mesh ops at the top level only: import-custom-calls
    # finds the custom calls in the walk this pass made (ir/analyses.py).
    PRESERVES_ANALYSES: ClassVar[bool] = True
    num_devices: int | None = None
    fallback_devices: int | None = None
    mesh: tuple[tuple[str, int], ...] | None = None
    # With `mesh`: its device order (a torch_xla Mesh's device_ids) instead of one found.
    mesh_device_ids: tuple[int, ...] | None = None
    # The meshes the program created (torch_xla Meshes, a mesh file), most preferred first:
    # without `mesh`, the one the shardings fit (sharding/mesh_fit.py) among those the V3
    # strings state and these, else the inferred mesh; which and why is what `run` returns
    # (a MeshChoice).
    meshes: tuple[UserMesh, ...] | None = None
    # torch_xla's compile options: parameters keep their placement, outputs are propagated.
    allow_spmd_sharding_propagation_to_parameters: bool | tuple[bool, ...] = False
    allow_spmd_sharding_propagation_to_output: bool | tuple[bool, ...] = True
    # An uneven sharding (see sharding/uneven.py) is an error, not a warning.
    strict: bool = False

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> MeshChoice | None:
        found = self.check(module, analyses)
        count = self.num_devices or num_partitions(module)
        try:
            plan, choice = self.plan(module, [s for _, s in found])
        except ShardyConvertError as e:
            where = _blame(found, count, self.mesh, self.mesh_device_ids)
            raise e.located(location=where) from None
        edits: dict = {}  # each func's argument/result attributes, read and written once
        closed = self.closed_unannotated(module, edits)
        global_mesh = plan.uses_mesh or bool(closed)
        if global_mesh and not plan.device_count_known:
            warnings.warn(DeviceCountWarning(), stacklevel=2)
        _check_even(found, plan, self.strict)
        with module.context:
            _insert_meshes(module, plan, global_mesh)
            _import(module, found, plan, edits)
            _close(module, closed, edits)
            for values in edits.values():
                if values.changed:
                    values.save()
        return choice

    def closed_unannotated(
        self, module: ir.Operation, edits: dict | None = None
    ) -> list[tuple[str, int, int]]:
        """(kind, index, rank) of each unannotated ranked `@main` argument and result that
        propagation may not reach: XLA's GSPMD replicates those, Shardy would shard them.
        `edits` keeps the ValueAttrs read here for the rewrite (ir/value_attrs.py)."""
        main = _main(module)
        if main is None:
            return []
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        closed = []
        for kind, types, allowed in (
            ("arg", ftype.inputs, self.allow_spmd_sharding_propagation_to_parameters),
            ("result", ftype.results, self.allow_spmd_sharding_propagation_to_output),
        ):
            what, noun = ("parameters", "arguments") if kind == "arg" else ("output", "results")
            try:
                flags = propagation_flags(allowed, len(types), what, noun)
            except ShardyConvertError as e:
                raise e.located(location=format_location(main.location)) from None
            values = edited(edits if edits is not None else {}, main, kind, len(types))
            closed += [
                (kind, k, ir.RankedTensorType(t).rank)
                for k, t in enumerate(types)
                if not flags[k]
                and not values.has(k, SHARDING, SDY_SHARDING)
                and isinstance(t, ir.RankedTensorType)
            ]
        return closed

    def check(
        self, module: ir.Operation, analyses: Analyses | None = None
    ) -> list[tuple[Site, HloSharding]]:
        """The import rules (`sharding.import_rules`), which need only the GSPMD strings and the
        value types, before anything is rewritten; raises the first error. It runs first in
        `run`, and the convert pipeline starts with this pass: errors quote the strings as the
        user wrote them."""
        found = [(site, site.parse()) for site in sites(module, analyses=analyses)]
        facts = import_rules.ModuleFacts(
            _distinct(found),
            self.num_devices or num_partitions(module),
            "num_devices" if self.num_devices else "mhlo.num_partitions",
        )
        error = import_rules.first_error(facts)
        if error is not None:
            raise _error_class(error)(error.message, location=error.location)
        _check_num_partitions(module, self.num_devices)
        return found

    def plan(
        self, module: ir.Operation, shardings: list[HloSharding]
    ) -> tuple[MeshPlan, MeshChoice | None]:
        """The mesh plan, and which of `meshes` it is on (None when none were given)."""
        count = self.num_devices or num_partitions(module)
        hint, order, choice = self.user_mesh(shardings, count or self.fallback_devices)
        plan = plan_mesh(shardings, num_devices=count, hint=hint, order=order)
        if not plan.device_count_known and self.fallback_devices:
            plan = plan_mesh(shardings, num_devices=self.fallback_devices, hint=hint, order=order)
        return plan, choice

    def user_mesh(self, shardings: list[HloSharding], count: int | None) -> tuple:
        """(axes, device order, MeshChoice) to plan with: `mesh` as given, else the mesh the
        shardings fit among those their named (V3) strings state and `meshes` (or none, and
        why), else none."""
        meshes = candidates(shardings, self.meshes)
        if self.mesh or not meshes:
            return self.mesh, self.mesh_device_ids, None
        choice = choose(shardings, meshes, count)
        if choice.mesh is None:
            return None, None, MeshChoice(None, choice.reason())
        return choice.mesh.axes, choice.mesh.ids, MeshChoice(choice.mesh.describe())


def _distinct(found: list[tuple[Site, HloSharding]]) -> tuple[import_rules.Placed, ...]:
    """Each distinct (kind, string, value types) once, at its first site. A rule's finding at a
    sharding depends on nothing else, so the rules' first error is the same as on every site;
    a module repeats a few distinct ones on thousands of values."""
    placed: dict = {}
    for site, sharding in found:
        key = (site.kind, site.key)
        if key not in placed:
            placed[key] = site.placed(sharding)
    return tuple(placed.values())


def _check_even(found: list[tuple[Site, HloSharding]], plan: MeshPlan, strict: bool) -> None:
    """Warns (or, `strict`, raises) at each value with a dim its shard count does not divide:
    GSPMD pads it, Shardy keeps fewer axes (sharding/uneven.py), another program."""
    axes = plan.axis_sizes
    uneven: dict = {}  # (string, value types) -> [(value index, dim)], found once each
    for site, sharding in found:
        if site.kind == "module" or site.target in MANUAL_BOUNDARIES:
            continue
        types = site.value_types()
        key = site.key
        if key not in uneven:
            uneven[key] = _uneven(site, sharding, types, plan, axes)
        for k, dim in uneven[key]:
            which = f"result {k}: " if len(types) > 1 else ""
            message = f'{which}{dim} (sharding "{site.text}"): another program{PAD_HINT}'
            if strict:
                raise NoShardyFormError(message, location=site.location)
            warnings.warn(ShardyConvertWarning(message, location=site.location), stacklevel=2)


def _uneven(site: Site, sharding: HloSharding, types: list, plan: MeshPlan, axes) -> list:
    leaves = sharding.leaves() if sharding.kind is Kind.TUPLE else [sharding] * len(types)
    found = []
    for k, (leaf, value_type) in enumerate(zip(leaves, types)):
        if leaf.kind is not Kind.TILED or not isinstance(value_type, ir.RankedTensorType):
            continue
        shape = tuple(ir.RankedTensorType(value_type).shape)
        tensor = _on_type(site, leaf, value_type, plan)
        found += [(k, dim) for dim in uneven_dims(tensor, shape, axes)]
    return found


def _error_class(finding: import_rules.Finding) -> type[ModuleError]:
    if finding.code not in import_rules.NO_SHARDY_FORM:
        return ModuleError
    if finding.code == "manual-at-boundary" and finding.placed.kind == "arg":
        return ManualInputError  # compiled with GSPMD instead, it aborts: never passed through
    return NoShardyFormError


def _main(module: ir.Operation) -> ir.Operation | None:
    return next((f for f in funcs(module) if func_name(f) == "main"), None)


def _close(module: ir.Operation, closed: list[tuple[str, int, int]], edits: dict) -> None:
    """Gives each of `closed` a closed replicated sharding on the global mesh (in the same
    attribute dicts _import rewrote; the caller saves them)."""
    main = _main(module)
    for which, k, rank in closed:
        assert main is not None  # closed sites are @main's
        values = edited(edits, main, which)
        values.dict(k)[SDY_SHARDING] = replicated("mesh", rank)
        values.changed = True


def _check_num_partitions(module: ir.Operation, num_devices: int | None) -> None:
    """A device count given as an option agrees with the module's own `mhlo.num_partitions`
    (the output would otherwise carry both: a mesh of one size, partitions of another)."""
    partitions = num_partitions(module)
    if num_devices is not None and partitions is not None and partitions != num_devices:
        raise ModuleError(
            f"num_devices is {num_devices} but the module says mhlo.num_partitions = {partitions}",
            location=join_location(
                format_location(module.location), "module attribute mhlo.num_partitions"
            ),
        )


def _rank(site: Site, value_type: ir.Type | None) -> int:
    if isinstance(value_type, ir.RankedTensorType):
        return ir.RankedTensorType(value_type).rank
    if str(value_type) == "!stablehlo.token":
        return 0
    raise ModuleError(
        f'sharding "{site.text}" on a value of type {value_type}, which is not a ranked tensor',
        location=site.location,
    )


def _blame(found: list[tuple[Site, HloSharding]], count, hint, order) -> str | None:
    """Where a mesh that cannot be planned goes wrong: the first sharding whose addition (in
    walk order) makes planning fail. Tries at most 32 distinct shardings."""
    seen: dict[str, HloSharding] = {}
    for site, sharding in found:
        if import_rules.tiled_count(sharding) is None or str(sharding) in seen:
            continue
        seen[str(sharding)] = sharding
        if len(seen) > 32:
            return site.location
        try:
            plan_mesh(list(seen.values()), num_devices=count, hint=hint, order=order)
        except ShardyConvertError:
            return site.location
    return found[0][0].location if found else None


def _insert_meshes(module: ir.Operation, plan: MeshPlan, global_mesh: bool) -> None:
    """`@mesh` (unless nothing is placed on it: every sharding maximal), then one single-device
    mesh per maximal device."""
    meshes = [("mesh", plan.mesh)] if global_mesh else []
    meshes += [(maximal_mesh_name(d), Mesh((), (d,))) for d in plan.maximal]
    ip = ir.InsertionPoint.at_block_begin(body(module))
    for name, mesh in meshes:
        ir.Operation.create(
            MESH_OP,
            attributes={
                "sym_name": ir.StringAttr.get(name),
                "mesh": mesh_attr(mesh),
            },
            loc=module.location,
            ip=ip,
        )


def _import(
    module: ir.Operation, found: list[tuple[Site, HloSharding]], plan: MeshPlan, edits: dict
) -> None:
    """Each site's `sdy.sharding`, made once per distinct (string, value types, stated
    frontend sharding); arguments and results go into `edits` (the caller saves them)."""
    made: dict = {}
    for site, sharding in found:
        if site.kind == "module":
            if site.attr in module.attributes:
                del module.attributes[site.attr]
            continue
        if site.target in MANUAL_BOUNDARIES:
            continue
        values = edited(edits, site.owner, site.kind) if site.kind != "op" else None
        stated = _pop_stated(site, values)
        key = (site.kind == "op", site.key, stated)
        if key not in made:
            made[key] = ir.Attribute.parse(_sharding_text(site, sharding, plan, stated))
        if values is None:
            site.owner.attributes[SDY_SHARDING] = made[key]
            del site.owner.attributes[SHARDING]
            continue
        values.replace(site.index, SHARDING, SDY_SHARDING, made[key])
        values.changed = True


def _pop_stated(site: Site, values) -> str | None:
    """The `xla.sdy.sharding` frontend attribute beside the site's GSPMD string (Tenstorrent's
    torch_xla fork: per-dim priorities), taken off the value; None when there is none."""
    try:
        if values is None:
            return pop_stated(site.owner.attributes)
        if not values.has(site.index, FRONTEND):
            return None
        return pop_stated(values.dict(site.index))
    except ShardyConvertError as e:
        raise e.located(location=site.location) from None


def _sharding_text(site: Site, sharding: HloSharding, plan: MeshPlan, stated: str | None) -> str:
    """The `#sdy.sharding` of an argument or result, the `#sdy.sharding_per_value` of an op;
    given what the frontend attribute `stated` says of each dim (`with_stated`)."""
    if site.kind != "op":
        (value_type,) = site.value_types()
        (leaf,) = sharding.leaves()  # one: import_rules.value_types refuses a tuple here
        return _stated(site, [_on_type(site, leaf, value_type, plan)], stated)[0].attr()
    types = site.value_types()
    leaves = sharding.leaves() if sharding.kind is Kind.TUPLE else [sharding] * max(len(types), 1)
    if not types and not leaves:
        shardings = []  # `{}` on an op without results (import_rules.tuple_arity)
    elif not types:
        shardings = [_on_rank(site, leaves[0], 0, plan)]
    else:
        shardings = [_on_type(site, leaf, t, plan) for leaf, t in zip(leaves, types)]
    return per_value_attr(_stated(site, shardings, stated))


def _stated(site: Site, shardings: list[TensorSharding], stated: str | None) -> list:
    if stated is None:
        return shardings
    try:
        said = stated_shardings(stated)
        if len(said) != len(shardings):
            raise ModuleError(
                f'{STATED} "{clip(stated)}" states {plural(len(said), "sharding")} for '
                f"{plural(len(shardings), 'value')}"
            )
        return [with_stated(ts, s) for ts, s in zip(shardings, said)]
    except ShardyConvertError as e:
        raise e.located(location=site.location) from None


def _on_type(
    site: Site, sharding: HloSharding, value_type: ir.Type | None, plan: MeshPlan
) -> TensorSharding:
    return _on_rank(site, sharding, _rank(site, value_type), plan)


def _on_rank(site: Site, sharding: HloSharding, rank: int, plan: MeshPlan) -> TensorSharding:
    try:
        ts = plan.tensor_sharding(sharding, rank)
        check_reduction_kinds(ts, f'sharding "{clip(site.text)}"')
    except ShardyConvertError as e:
        raise e.located(location=site.location) from None
    return ts
