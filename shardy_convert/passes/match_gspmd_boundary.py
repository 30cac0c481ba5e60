"""match-gspmd-boundary: GSPMD's shardings for @main's open arguments and results, pinned as
`mhlo.sharding` before the module is converted, so the Shardy program's boundary is GSPMD's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Self

from ..errors import ShardyConvertError
from ..formats.boundary_cache import gspmd_boundary
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.value_attrs import ValueAttrs
from ..ir.walker import SDY_SHARDING, SHARDING, func_name, funcs
from ..sharding import HloSharding, Kind, parse
from ..sharding.mesh import plan_mesh
from .import_shardings import ImportShardingsPass


@dataclass(frozen=True)
class BoundaryOutcome:
    """What the pass did to one module (what its `run` returns): `pinned` of `open` values got
    GSPMD's sharding; where some did not, `reason` says why (they stay open, for Shardy's
    propagation to decide)."""

    open: int = 0
    pinned: int = 0
    seconds: float = 0.0  # GSPMD's compile (0 when cached or not needed)
    reason: str | None = None

    def __str__(self) -> str:
        text = f"{self.pinned} of {self.open} open values pinned; {self.seconds:.3f} s"
        return text if self.reason is None else f"{text}; {self.reason}"


@dataclass(frozen=True)
class CompilesAsImported:
    """The options of a pass that compiles the module with GSPMD as import-shardings will read
    it (the GSPMD matchers): the import's device count, mesh and propagation flags, and the
    plugin's own compile options, if any. Flat fields, each a pass option in pipeline text."""

    num_devices: int | None = None
    fallback_devices: int | None = None
    mesh: tuple[tuple[str, int], ...] | None = None
    allow_spmd_sharding_propagation_to_parameters: bool | tuple[bool, ...] = False
    allow_spmd_sharding_propagation_to_output: bool | tuple[bool, ...] = True
    compile_options: bytes | None = None  # the plugin's CompileOptionsProto, if any

    def like(self, importer: ImportShardingsPass) -> Self:
        """This pass compiling the module as `importer` will read it: its device count, mesh
        and propagation options (how convert() and the plugin put it before the import)."""
        return replace(
            self,
            num_devices=importer.num_devices,
            fallback_devices=importer.fallback_devices,
            mesh=importer.mesh,
            allow_spmd_sharding_propagation_to_parameters=(
                importer.allow_spmd_sharding_propagation_to_parameters
            ),
            allow_spmd_sharding_propagation_to_output=(
                importer.allow_spmd_sharding_propagation_to_output
            ),
        )

    def strict_importer(self) -> ImportShardingsPass:
        """The import this pass compiles for, refusing uneven shardings."""
        return ImportShardingsPass(
            num_devices=self.num_devices,
            fallback_devices=self.fallback_devices,
            mesh=self.mesh,
            allow_spmd_sharding_propagation_to_parameters=(
                self.allow_spmd_sharding_propagation_to_parameters
            ),
            allow_spmd_sharding_propagation_to_output=self.allow_spmd_sharding_propagation_to_output,
            strict=True,
        )


@dataclass(frozen=True)
class MatchGspmdBoundaryPass(CompilesAsImported):
    """Compiles the module with GSPMD on jaxlib's CPU client (the device count and propagation
    options of the conversion, or the plugin's own compile options) and writes the sharding
    GSPMD chose for each open `@main` argument and result (unannotated, propagation allowed)
    as its `mhlo.sharding`. Where XLA does not compile the module or a sharding has no faithful
    Shardy form, those values stay open; the `BoundaryOutcome` it returns says so, it never fails
    on it."""

    NAME: ClassVar[str] = "match-gspmd-boundary"
    boundary_cache: str | None = None  # a directory for GSPMD's choices, if any

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> BoundaryOutcome:
        return self.match(module)

    def match(self, module: ir.Operation) -> BoundaryOutcome:
        # The import's checks first: XLA aborts on some malformed shardings, and a module the
        # conversion refuses gets the conversion's own located error.
        importer = self.strict_importer()
        found = importer.check(module)
        values = self._open_values(module, importer)
        if not values:
            return BoundaryOutcome()
        count = self._device_count(module, [s for _, s in found])
        if count is None or count == 1:
            return BoundaryOutcome(len(values), reason="nothing to match on one device")
        try:
            boundary = gspmd_boundary(
                module_bytecode(module),
                count,
                compile_options=self.compile_options,
                propagate_to_parameters=self.allow_spmd_sharding_propagation_to_parameters,
                propagate_to_output=self.allow_spmd_sharding_propagation_to_output,
                cache_dir=self.boundary_cache,
            )
        except ShardyConvertError as e:
            return BoundaryOutcome(len(values), reason=e.message)
        pins, skipped = _pins(values, boundary, count)
        seconds = boundary.seconds
        if not pins:
            return BoundaryOutcome(len(values), 0, seconds, skipped[0] if skipped else None)
        _write(module, pins)
        problem = self._trial(module)
        if problem is not None:
            _write(module, pins, remove=True)
            return BoundaryOutcome(len(values), 0, seconds, problem)
        reason = f"{len(skipped)} kept open: {skipped[0]}" if skipped else None
        return BoundaryOutcome(len(values), len(pins), seconds, reason)

    def _open_values(self, module: ir.Operation, importer: ImportShardingsPass) -> list:
        """(kind, index, type) of each ranked @main value with no sharding that propagation
        may reach: the unannotated ones import-shardings does not close."""
        main = next((f for f in funcs(module) if func_name(f) == "main"), None)
        if main is None:
            return []
        closed = {(kind, k) for kind, k, _ in importer.closed_unannotated(module)}
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        found = []
        for kind, types in (("arg", ftype.inputs), ("result", ftype.results)):
            values = ValueAttrs(main, kind, len(types))
            found += [
                (kind, k, ir.RankedTensorType(t))
                for k, t in enumerate(types)
                if isinstance(t, ir.RankedTensorType)
                and (kind, k) not in closed
                and not values.has(k, SHARDING, SDY_SHARDING)
            ]
        return found

    def _device_count(self, module: ir.Operation, shardings: list[HloSharding]) -> int | None:
        count = device_count(module, shardings, self.num_devices, self.mesh)
        return count if count is not None else self.fallback_devices

    def _trial(self, module: ir.Operation) -> str | None:
        """Why import-shardings refuses the module with the pins (a mesh of the user's that
        cannot express one, shardings with no common mesh), None if it takes it."""
        copy = module.clone()
        try:
            self.strict_importer().run(copy)
        except ShardyConvertError as e:
            return f"GSPMD's shardings have no Shardy form here: {e.message}"
        finally:
            copy.erase()
        return None


# The options a GSPMD-compiling pass shares with import-shardings (it compiles the module as
# the import will read it), by field name.
def device_count(
    module: ir.Operation,
    shardings: list[HloSharding],
    num_devices: int | None,
    mesh: tuple[tuple[str, int], ...] | None,
) -> int | None:
    """The devices the module runs on, as the import will plan its mesh (`num_devices`, else
    the module's `mhlo.num_partitions`, else what its shardings say); None when nothing says."""
    from ..ir.walker import num_partitions

    count = num_devices or num_partitions(module)
    plan = plan_mesh(shardings, num_devices=count, hint=mesh)
    return plan.mesh.size if plan.device_count_known else None


def module_bytecode(module: ir.Operation) -> bytes:
    import io

    buffer = io.BytesIO()
    module.write_bytecode(buffer)
    return buffer.getvalue()


def _pins(values: list, boundary, count: int) -> tuple[list, list[str]]:
    """(kind, index, GSPMD string) for each open value whose GSPMD sharding has a faithful
    Shardy form; and why each other one stays open."""
    pins, skipped = [], []
    for kind, k, rtype in values:
        chosen = boundary.parameters if kind == "arg" else boundary.outputs
        what = f"{'argument' if kind == 'arg' else 'result'} {k} of @main"
        if k >= len(chosen):
            skipped.append(f"GSPMD's program has no sharding for {what}")
            continue
        why = _unpinnable(chosen[k], tuple(rtype.shape), count)
        if why is None:
            pins.append((kind, k, chosen[k]))
        else:
            skipped.append(f"{what}: GSPMD's {chosen[k]!r} {why}")
    return pins, skipped


def _unpinnable(text: str, shape: tuple[int, ...], count: int) -> str | None:
    """Why GSPMD's sharding of a value cannot be pinned faithfully, None if it can."""
    try:
        sharding = parse(text)
    except ShardyConvertError as e:
        return f"does not parse: {e.message}"
    if sharding.kind in (Kind.REPLICATED, Kind.MAXIMAL):
        return None
    if sharding.kind is not Kind.TILED:
        return f"is {sharding.kind.name.lower()}"
    if sharding.num_devices != count:
        return f"spans {sharding.num_devices} devices, not {count}"
    dims = sharding.data_dims
    if len(dims) != len(shape):
        return f"has {len(dims)} dims for a value of rank {len(shape)}"
    if any(size >= 0 and size % ways for size, ways in zip(shape, dims)):
        return "is uneven (GSPMD pads it, Shardy would shard it less: another program)"
    return None


def _write(module: ir.Operation, pins: list, remove: bool = False) -> None:
    main = next(f for f in funcs(module) if func_name(f) == "main")
    for kind in ("arg", "result"):
        mine = [(k, text) for which, k, text in pins if which == kind]
        if not mine:
            continue
        values = ValueAttrs(main, kind)
        for k, text in mine:
            if remove:
                values.dict(k).pop(SHARDING, None)
            else:
                values.dict(k)[SHARDING] = ir.StringAttr.get(text)
        values.save()
