"""What the plugin wrapper does to one program: read it (a portable artifact, MLIR, or an HLO
module proto), convert it to Shardy for the partitions its compile options ask for, and set
the options to the Shardy partitioner; a custom device order leaves the mesh for the device
assignment; the mesh is the one of the program's own meshes its shardings fit (`meshes`, from
mesh_recorder.py), else inferred. `wrapper.Session` calls `convert` once per distinct program
and reads what it found (`ProgramReport`) from its answer, or from its error (`ProgramError`)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import NoShardyFormError, ShardyConvertError, plural
from . import compile_options

if TYPE_CHECKING:
    from ..passes.import_shardings import MeshChoice
    from ..passes.match_gspmd_boundary import BoundaryOutcome

# Run on every program the plugin receives, before it is converted (GSPMD strings in and out).
GSPMD_AS_MEANT = ("lift-callee-shardings", "pad-uneven")


@dataclass(frozen=True)
class ProgramReport:
    """What converting one program found: the dump directory's index line, the counters and
    the log are written from it."""

    devices: int | None = None  # partitions x replicas of its compile
    module: str | None = None  # its module's name (SyncTensorsGraph.22)
    shardy: bool = False  # it carried Shardy already: nothing was converted
    mesh: str = ""  # the global Shardy mesh it was converted on (`<["data"=2, "model"=4]>`)
    # where XLA would compile what is handed over with GSPMD, not Shardy (ir/gspmd_fallback)
    gspmd_fallback: tuple[str, ...] = ()
    choice: MeshChoice | None = None  # which of the program's meshes, when it was given some
    boundary: BoundaryOutcome | None = None  # what match-gspmd-boundary did, when asked

    @property
    def name(self) -> str:
        """How messages name the program: `graph SyncTensorsGraph.22`."""
        return "the program" if self.module is None else f"graph {self.module}"


@dataclass(frozen=True)
class Converted:
    """The answer for the real plugin, and what the conversion found (`report`)."""

    program: bytes
    format: bytes
    options: bytes
    # int32s: which caller partition each compiled partition is (0, 1, ... when the same: the
    # wrapper relabels the compiled shardings into explicit device lists either way)
    order: bytes
    report: ProgramReport

    @property
    def answer(self) -> tuple[bytes, bytes, bytes, bytes]:
        """(program, format, options, order), as the C wrapper takes it."""
        return self.program, self.format, self.options, self.order


class ProgramError(ShardyConvertError):
    """A program that could not be converted, with what was found of it first (`report`: its
    name and device count, for the dump's index line)."""

    def __init__(self, error: ShardyConvertError | str, report: ProgramReport):
        if isinstance(error, ShardyConvertError):
            message, location = error.message, error.location
        else:
            message, location = error, None
        super().__init__(message, location=location)
        self.report = report
        # compiled unconverted, with GSPMD, the process would die (errors.ManualInputError)
        self.passthrough_aborts = getattr(error, "passthrough_aborts", False)


def convert(
    code: bytes,
    form: str,
    options: bytes,
    *,
    emit: str = "portable",
    match_gspmd_boundary: bool = False,
    boundary_cache: str | None = None,
    meshes: tuple = (),
    match_gspmd_propagation: bool = False,
    plugin_version: str = "",
) -> Converted:
    """`code` (a PJRT program of format "mlir" or "hlo") converted to Shardy for the
    partitions `options` ask for, the options set to the Shardy partitioner. A custom device
    order leaves the mesh for the device assignment (passes/iota_mesh.py): the answer's
    `order` says which of the caller's partitions each partition of the compiled program is.
    With `match_gspmd_boundary`, @main's open values get GSPMD's shardings (compiled with the
    program's own options; its choices kept in `boundary_cache`, a directory, if given).
    With `match_gspmd_propagation`, GSPMD's decisions inside the program too, pinned where
    Shardy's propagation departs from them (passes/match_gspmd_propagation.py; it implies the
    boundary's). `meshes` are the program's own meshes (the mesh is the one its shardings
    fit). `plugin_version`: the newest StableHLO version the plugin reads, where it says
    (`wrapper.wrapped_plugin_version`), for a program that came as no portable artifact.
    Raises a ProgramError naming the graph."""
    opts = compile_options.decode(options)
    report = ProgramReport(devices=opts.num_partitions * opts.num_replicas)
    try:
        matchers = _matchers(options, match_gspmd_boundary, match_gspmd_propagation, boundary_cache)
        out, order, report = _convert_mlir(
            _as_mlir(code, form), opts, report, emit, matchers, meshes, plugin_version
        )
        if order is None:
            # The caller's own order, given all the same: the wrapper then hands the caller
            # the compiled shardings as GSPMD spells them, explicit device lists
            # (optimized_program.py) where Shardy's partitioner writes iota forms; torch_xla
            # prints what it reads (`_get_xla_sharding_spec`).
            identity = range(opts.num_partitions * opts.num_replicas)
            order_bytes = struct.pack(f"<{len(identity)}i", *identity)
            return Converted(out, b"mlir", compile_options.rewrite(options), order_bytes, report)
        return Converted(out, b"mlir", *_in_order(options, opts, order), report)
    except ProgramError:
        raise
    except ShardyConvertError as e:
        raise ProgramError(e, report) from None


def convert_program(
    code: bytes, form: str, options: bytes, *, emit: str = "portable", meshes: tuple = ()
) -> tuple[bytes, bytes, bytes, bytes]:
    """(program, format, options, order) for the real plugin: `convert(...).answer`."""
    return convert(code, form, options, emit=emit, meshes=meshes).answer


def _as_mlir(code: bytes, form: str) -> bytes:
    if form in ("hlo", "hlo_with_config"):  # an HloModuleProto(WithConfig): formats/hlo.py
        from ..formats import hlo  # MLIR: not at import (the wrapper stays light)

        return hlo.to_stablehlo(code)
    if form != "mlir":
        raise ShardyConvertError(
            f"cannot convert a program of format {form!r} (mlir, hlo or hlo_with_config)"
        )
    return code


def _in_order(options: bytes, opts, order: tuple[int, ...]) -> tuple[bytes, bytes]:
    """(options with the mesh's order as their device assignment, the order as int32s)."""
    assignment = opts.device_assignment or tuple(range(opts.num_partitions))
    if len(order) == 1 < len(assignment):
        raise NoShardyFormError(
            f"the program is placed whole on device {order[0]}: this jaxlib's Shardy compiles "
            "that as one partition on the device (as JAX does since 0.11.2), and the caller "
            f"runs {len(assignment)} partitions"
        )
    if len(order) != len(assignment):
        raise ShardyConvertError(
            f"the mesh orders {plural(len(order), 'device')}, the compile assigns {len(assignment)}"
        )
    devices = [assignment[k] for k in order]
    return compile_options.rewrite(options, devices=devices), struct.pack(f"<{len(order)}i", *order)


def _matchers(options: bytes, boundary: bool, propagation: bool, cache: str | None) -> tuple:
    """The passes that compile the program with GSPMD before it is converted (its own compile
    options): match-gspmd-boundary, and match-gspmd-propagation after it."""
    if not (boundary or propagation):
        return ()
    from ..passes.match_gspmd_boundary import MatchGspmdBoundaryPass

    matchers: tuple = (MatchGspmdBoundaryPass(compile_options=options, boundary_cache=cache),)
    if propagation:
        from ..passes.match_gspmd_propagation import MatchGspmdPropagationPass

        matchers += (MatchGspmdPropagationPass(compile_options=options),)
    return matchers


def _convert_mlir(
    code: bytes,
    opts: compile_options.CompileOptions,
    report: ProgramReport,
    emit: str,
    matchers: tuple,
    meshes: tuple,
    plugin_version: str,
) -> tuple[bytes, tuple[int, ...] | None, ProgramReport]:
    from ..formats import module as formats
    from ..ir.parse import pooled_context

    form = formats.detect(code)
    version = (
        formats.portable_version(code) if form == "portable" else _target_version(plugin_version)
    )
    with pooled_context() as ctx:
        mod = formats.load(code, ctx, trusted=True)
        report = replace(report, module=_module_name(mod))
        try:
            order, report = _to_shardy(mod, opts, report, matchers, meshes)
            if report.shardy:  # a conversion's post-condition rules them out
                report = replace(report, gspmd_fallback=_fallback_sites(mod))
            out = formats.save(mod, emit, version)
        except ShardyConvertError as e:
            devices = report.devices  # set from the compile options (convert)
            assert devices is not None
            message = (
                f"cannot convert {report.name} for the Shardy partitioner "
                f"({plural(devices, 'device')}): {e}"
            )
            error = ProgramError(message, report)
            error.passthrough_aborts = getattr(e, "passthrough_aborts", False)
            raise error from None
    return (out if isinstance(out, bytes) else out.encode()), order, report


def _to_shardy(
    mod,
    opts: compile_options.CompileOptions,
    report: ProgramReport = ProgramReport(),
    matchers: tuple = (),
    meshes: tuple = (),
) -> tuple[tuple[int, ...] | None, ProgramReport]:
    """Converts in place; returns the device order taken out of the mesh, if any, and the
    report with what the passes found. `matchers` (`_matchers`) run before the import."""
    from ..converter import ConvertRequest, convert_module, is_shardy
    from ..passes import pipeline
    from ..passes.import_shardings import ImportShardingsPass, MeshChoice
    from ..passes.iota_mesh import DeviceOrder
    from ..passes.single_device_program import OnOneDevice

    if is_shardy(mod.operation):
        return None, replace(report, shardy=True)
    # strict: an uneven sharding (Shardy would compile another program) is refused, so the
    # plugin never gets a program known to compute differently; passthrough compiles the
    # original with GSPMD instead. import-shardings closes unannotated values.
    importer = ImportShardingsPass(
        num_devices=opts.num_partitions * opts.num_replicas,
        meshes=meshes or None,
        allow_spmd_sharding_propagation_to_parameters=opts.propagate_to_parameters,
        allow_spmd_sharding_propagation_to_output=opts.propagate_to_output,
        strict=True,
    )
    # What torch_xla meant, in GSPMD's own terms, first: shardings where the executable's
    # parameters are (lift-callee-shardings), uneven tilings in GSPMD's padded layout
    # (pad-uneven), so that Shardy compiles for the buffers torch_xla holds (an uneven sharding
    # with no padded form is refused, naming the value); then the matchers, on that program.
    request = ConvertRequest(importer, (*pipeline.build(GSPMD_AS_MEANT), *matchers))
    found = convert_module(mod, request)
    boundary = None
    if request.runs("match-gspmd-boundary"):
        from ..passes.match_gspmd_boundary import BoundaryOutcome

        boundary = found.of(BoundaryOutcome)
    order = pipeline.run(mod, pipeline.build(["iota-mesh"]), verify_each=False).of(DeviceOrder)
    # single-device-program's one partition on device k: k goes to the options, as
    # iota-mesh's order does
    placed = order or found.of(OnOneDevice)
    report = replace(report, mesh=_mesh_text(mod), choice=found.of(MeshChoice), boundary=boundary)
    return (None if placed is None else placed.order), report


def passthrough_program(code: bytes, form: str, options: bytes) -> tuple[bytes, ...]:
    """What the plugin compiles, with GSPMD, for a program that is not converted
    (`on_error="passthrough"`): the program with its callees' shardings on `@main`
    (lift-callee-shardings: torch_xla's parameters are laid out so), in the form it came in;
    the program itself where nothing moves or it cannot be read."""
    unchanged = (code, form.encode(), options, b"")
    if form != "mlir":  # an HloModuleProto: its entry computation has the shardings
        return unchanged
    from ..formats import module as formats
    from ..ir.parse import pooled_context
    from ..passes.lift_callee_shardings import lift

    try:
        with pooled_context() as ctx:
            mod = formats.load(code, ctx, trusted=True)
            if not lift(mod.operation):
                return unchanged
            kind = formats.detect(code)
            version = formats.portable_version(code) if kind == "portable" else None
            out = formats.save(mod, kind, version)
    except Exception:  # the program as it came, never worse than before (a bug of ours)
        return unchanged
    return (out if isinstance(out, bytes) else out.encode()), form.encode(), options, b""


def _fallback_sites(mod) -> tuple[str, ...]:
    """Where the program handed to the plugin makes XLA compile it with GSPMD's propagation
    although the options ask for Shardy (ir/gspmd_fallback.py, XLA's own predicate). Never
    after a conversion (its post-condition); a program that was Shardy already may. Read on
    the Shardy module before it is saved: the round-trip export keeps every site exempt."""
    from ..ir.gspmd_fallback import fallback_sites

    return tuple(str(site) for site in fallback_sites(mod.operation))


def _mesh_text(mod) -> str:
    """The global mesh `<["data"=2, "model"=4]>` of a converted module ("" if none)."""
    from ..ir.sdy_attrs import read_meshes

    mesh = read_meshes(mod.operation).get("mesh")
    return "" if mesh is None else str(mesh)


def _module_name(mod) -> str | None:
    from ..ir.bindings import ir

    attr = mod.operation.attributes
    return ir.StringAttr(attr["sym_name"]).value if "sym_name" in attr else None


def _target_version(plugin_version: str) -> str:
    """StableHLO version of the portable artifact made from a program that came as none (an
    HLO proto, MLIR text or bytecode): the newest both jaxlib and the plugin (`plugin_version`,
    its PJRT attribute) know, as a framework targets its plugin; where the plugin does not
    say, the oldest jaxlib writes, which every plugin of its generation reads."""
    from ..formats.module import version_number
    from ..ir.bindings import stablehlo

    low, high = stablehlo.get_minimum_version(), stablehlo.get_current_version()
    try:
        number = version_number(plugin_version)
    except ValueError:  # "": not known
        return low
    if number < version_number(low):
        return low  # older than jaxlib writes: the oldest it does
    return plugin_version if number < version_number(high) else high
