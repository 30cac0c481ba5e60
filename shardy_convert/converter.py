"""`convert()`: one StableHLO module with GSPMD shardings in, the Shardy module out."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .errors import (
    ShardyConvertError,
    ShardyConvertNote,
    ShardyConvertWarning,
    WrittenAsItIs,
    check_choice,
    in_file,
)
from .formats import hlo
from .formats import meshes as mesh_file
from .formats import module as formats
from .ir.analyses import Analyses
from .ir.bindings import ir
from .ir.diagnostics import verify
from .ir.gspmd_fallback import check_no_gspmd_left
from .ir.parse import has_locations, new_context, pooled_context
from .ir.pipeline import run_pipeline
from .ir.sdy_attrs import has_meshes, is_shardy
from .ir.walker import Mentions
from .options import cache_dir, parse_device_ids, parse_mesh
from .passes import pipeline
from .passes.import_shardings import ImportShardingsPass, MeshChoice
from .passes.pipeline import import_round_trip

if TYPE_CHECKING:
    from .passes.match_gspmd_boundary import BoundaryOutcome
    from .passes.match_gspmd_propagation import PropagationOutcome


@dataclass(frozen=True)
class ConvertRequest:
    """One conversion, as `convert()`, the command line, `check`, the hook and the plugin ask
    for it: the passes that carry its options (`importer`, the conversion's import-shardings;
    `before`, pass instances run first, in order, on the GSPMD module: lift-callee-shardings,
    pad-uneven, match-gspmd-boundary, match-gspmd-propagation; the matchers compile with the
    importer's device count, mesh and propagation options) and what becomes of the result
    (see `convert`)."""

    importer: ImportShardingsPass = field(default_factory=ImportShardingsPass)
    before: tuple = ()
    emit: str | None = None
    target_version: str | None = None
    imported: bool = False
    validate: bool = False

    @property
    def imports_shardy(self) -> bool:
        """Whether Shardy's import pipeline runs on the result (`imported`, or on a copy with
        `validate`): the post-condition is checked before it."""
        return self.imported or self.validate

    @property
    def pipeline(self) -> pipeline.Pipeline:
        return pipeline.conversion(self.importer, self.before)

    def runs(self, name: str) -> bool:
        """Whether the pass named `name` (`match-gspmd-boundary`) runs before the import."""
        return any(step.NAME == name for step in self.before)

    def taking(self, name: str) -> tuple[tuple, ConvertRequest]:
        """The `before` passes named `name`, and this request without them."""
        taken = tuple(step for step in self.before if step.NAME == name)
        rest = tuple(step for step in self.before if step.NAME != name)
        return taken, replace(self, before=rest)

    def run(self, module: str | bytes) -> str | bytes:
        """`convert()` as the command line runs it: a module written as it came says so."""
        return _convert(module, self, say_as_it_is=True)

    def convert(self, module: str | bytes) -> str | bytes:
        """`convert()` of `module` as this request asks: an already-Shardy module comes back
        as it came, without a word (the library's callers, the hook among them)."""
        return _convert(module, self)

    def for_input(self, fallback_devices: int | None, meshes: tuple | None) -> ConvertRequest:
        """For one input of a batch: the device count its dump's graphs agree on (for graphs
        that say none) and its meshes (a mesh file's), unless a mesh is named."""
        importer = self.importer
        if fallback_devices is not None:
            importer = replace(importer, fallback_devices=fallback_devices)
        if meshes is not None and not importer.mesh:
            importer = replace(importer, meshes=meshes)
        return replace(self, importer=importer)


def convert(
    module: str | bytes,
    *,
    mesh: Sequence[tuple[str, int]] | str | object | None = None,
    device_ids: Sequence[int] | str | None = None,
    meshes: Sequence[object] | str | os.PathLike | None = None,
    num_devices: int | None = None,
    fallback_devices: int | None = None,
    emit: str | None = None,
    target_version: str | None = None,
    imported: bool = False,
    validate: bool = False,
    allow_spmd_sharding_propagation_to_parameters: bool | Sequence[bool] = False,
    allow_spmd_sharding_propagation_to_output: bool | Sequence[bool] = True,
    strict: bool = False,
    match_gspmd_boundary: bool = False,
    boundary_cache: str | os.PathLike | bool | None = None,
    filename: str | None = None,
    pad_uneven: bool = False,
    match_gspmd_propagation: bool = False,
) -> str | bytes:
    """Converts a GSPMD module (MLIR text, bytecode or portable artifact; or XLA's HLO text or
    module proto, `formats.hlo`, which comes back as MLIR text by default) to Shardy.

    mesh: axis names and sizes to use, major first (`[("batch", 2), ("model", 4)]` or
        `"batch=2,model=4"`), or a torch_xla `Mesh` (names, sizes and device order); default
        `_axis_0`, `_axis_1`, ... derived from the shardings. A sharding the mesh cannot
        express is an error.
    device_ids: with a `mesh` of names and sizes, its device order (the device at each
        row-major position, as in torch_xla's `Mesh(device_ids, ...)`); default the order the
        shardings imply.
    meshes: the meshes the program created (torch_xla `Mesh`es, `UserMesh`es, or the path of
        a mesh file, formats/meshes.py): the mesh is the one every sharding fits (the fewest
        sub-axes; sharding/mesh_fit.py); where none does, the inferred mesh, with a
        ShardyConvertWarning saying why. Ignored when `mesh` is given.
    num_devices: the device count; the module's shardings must agree with it.
    fallback_devices: the device count to use only when nothing in the module says (the
        other graphs of the same dump).
    emit: "text", "bytecode" or "portable" (a StableHLO portable artifact, Shardy in its
        round-trip form); default the input's own form.
    target_version: StableHLO version of a portable output; default the input artifact's
        version, else the newest this jaxlib writes.
    imported: emit Shardy's fully imported form (after `sdy-import-pipeline`) instead of
        the front-end form JAX emits and XLA compiles.
    validate: also run Shardy's whole `sdy-import-pipeline` on a copy of the result and
        verify that (the CLI and the tests do; it costs about a third of a parse+print, so
        the library and the hook leave it to the caller). Shardy's verifiers check the
        output's sdy attributes and ops either way.
    allow_spmd_sharding_propagation_to_parameters, allow_spmd_sharding_propagation_to_output:
        XLA's compile options of the same names (one bool for all, or one per argument /
        result of @main). Where propagation is not allowed, an unannotated @main argument or
        result becomes closed replicated, as GSPMD compiles it; where it is, it stays open
        for Shardy to propagate into. Defaults: what torch_xla compiles with (parameters not
        allowed, outputs allowed).
    strict: an uneven sharding (a dim of a value its shard count does not divide: GSPMD pads
        it, Shardy shards it less or not at all, another program) is a NoShardyFormError
        instead of a ShardyConvertWarning.
    match_gspmd_boundary: compile the module with GSPMD first (jaxlib's CPU client, the
        device count and propagation options above) and pin the shardings GSPMD chose for
        the open @main arguments and results (unannotated, propagation allowed), so the
        Shardy program takes and returns what GSPMD's does: torch_xla then traces and
        compiles the programs it compiles on GSPMD. Costs one GSPMD compile per distinct
        module (seconds; cached in memory). Where XLA does not compile the module or a
        chosen sharding has no faithful Shardy form, those values stay open for Shardy's
        propagation, with a ShardyConvertWarning.
    match_gspmd_propagation: compile the module with GSPMD and, round by round, its Shardy
        conversion (jaxlib's CPU client, the device count and propagation options above),
        and pin GSPMD's decision as a sharding constraint on each value where Shardy's
        propagation departs from GSPMD's (passes/match_gspmd_propagation.py), so that Shardy
        compiles GSPMD's program; GSPMD's boundary is matched too (it implies
        match_gspmd_boundary). Costs GSPMD's compiles and a Shardy compile per round.
        Values it cannot pin (no Shardy form) stay as Shardy decides them, with a
        ShardyConvertWarning naming them.
    boundary_cache: also keep GSPMD's choices in this directory across processes (True:
        the user cache dir, `~/.cache/shardy-convert/gspmd-boundary`).
    filename: the module's file name, for messages: `str(e)` reads `model.mlir:1:17: arg 0
        of @main: ...` (`e.file`), as the command line prints it; so do warnings.
    pad_uneven: give every uneven tiling GSPMD's padded global shape first
        (passes/pad_uneven.py): @main's arguments (and annotated results) take the padded
        shape, so the program takes the per-device buffers GSPMD's does (what torch_xla
        holds); an uneven sharding with no padded form is an error naming the value.

    Raises ShardyConvertError (located) on bad input; never returns a half-converted module.
    A module that already carries Shardy (natively, or in the round-trip form of a portable
    artifact) is returned unchanged when no other form is asked for.
    """
    request = ConvertRequest(
        ImportShardingsPass(
            num_devices=num_devices,
            fallback_devices=fallback_devices,
            **_mesh_options(mesh, device_ids, meshes),
            allow_spmd_sharding_propagation_to_parameters=_flags(
                allow_spmd_sharding_propagation_to_parameters
            ),
            allow_spmd_sharding_propagation_to_output=_flags(
                allow_spmd_sharding_propagation_to_output
            ),
            strict=strict,
        ),
        before_import(
            pad_uneven=pad_uneven,
            match_gspmd_boundary=match_gspmd_boundary,
            match_gspmd_propagation=match_gspmd_propagation,
            boundary_cache=boundary_cache,
        ),
        emit=emit,
        target_version=target_version,
        imported=imported,
        validate=validate,
    )
    return in_file(filename, lambda: _convert(module, request))


def _convert(
    module: str | bytes, request: ConvertRequest, say_as_it_is: bool = False
) -> str | bytes:
    """`convert()` of `module` as `request` asks; `say_as_it_is`: warn (WrittenAsItIs) when
    an already-Shardy module comes back as it came (the library's callers, the hook among
    them, get such modules back unchanged without a word)."""
    form = formats.detect(formats.check_type(module))
    emit = request.emit or form
    check_choice("emit", emit, formats.FORMS, ShardyConvertError)
    target_version = request.target_version
    if target_version is not None:
        formats.check_version(target_version)
        if emit != "portable":
            _ignored("target_version", "the output is not a portable artifact")
    # An already-Shardy input comes back as it is unless another form or version is asked
    # (HLO comes back as MLIR).
    as_it_is = target_version is None and hlo.kind(module) is None
    if form == "portable":
        as_it_is = target_version in (None, formats.portable_version(module))
        target_version = target_version or formats.portable_version(module)
    with pooled_context() as ctx:
        mod = formats.load(module, ctx)
        if is_shardy(mod.operation):
            importer = request.importer
            given = {"mesh": importer.mesh, "num_devices": importer.num_devices}
            for name in (n for n, v in {**given, "imported": request.imported}.items() if v):
                _ignored(name, "the module already carries Shardy")
            if form == emit and as_it_is:
                if say_as_it_is:
                    _passed_through("it already carries Shardy shardings", "already Shardy")
                return module
            return _same_type(
                formats.save(mod, emit, target_version, has_locations(module)), module
            )
        out = _converted(mod, module, request, emit, target_version)
        return _same_type(out, module)


def _converted(
    mod: ir.Module, module: str | bytes, request: ConvertRequest, emit: str, target: str | None
) -> str | bytes:
    """`mod`, parsed from `module`, converted and written in the form `emit`. Unless Shardy's
    import runs on it (convert_module checks first then), the pipeline's post-condition is
    checked on the module as written: the written form tells whether there is any `@Sharding`
    call to look for among the ops."""
    later = not request.imports_shardy
    found = convert_module(mod, request, mentions=formats.mentions(module), check=not later)
    _warn_found(request, found)
    _record_placement(mod, found)
    out = formats.save(mod, emit, target, has_locations(module))
    if later:
        check_no_gspmd_left(mod.operation, saved=out)
    return out


def _warn_found(request: ConvertRequest, found: pipeline.PipelineResult) -> None:
    """The warnings of what the passes found: a mesh inferred where meshes were given, GSPMD's
    boundary or propagation not matched everywhere (their passes' modules are imported by
    now, where they ran)."""
    _warn_inferred(found.of(MeshChoice))
    if request.runs("match-gspmd-boundary"):
        from .passes.match_gspmd_boundary import BoundaryOutcome

        _warn_boundary(found.of(BoundaryOutcome))
    if request.runs("match-gspmd-propagation"):
        from .passes.match_gspmd_propagation import PropagationOutcome

        _warn_propagation(found.of(PropagationOutcome))


def before_import(
    *,
    pad_uneven: bool = False,
    match_gspmd_boundary: bool = False,
    match_gspmd_propagation: bool = False,
    boundary_cache: str | os.PathLike | bool | None = None,
) -> tuple:
    """`ConvertRequest.before` for convert()'s options of these names (and the command
    line's): pad-uneven, then the matchers (the pinned propagation implies the boundary's),
    each imported only when asked for (GSPMD's compile machinery: cold start)."""
    pad, boundary, propagation, cache = (
        pad_uneven,
        match_gspmd_boundary,
        match_gspmd_propagation,
        boundary_cache,
    )
    steps: tuple = ()
    if pad:
        from .passes.pad_uneven import PadUnevenPass

        steps += (PadUnevenPass(),)
    if boundary or propagation:
        from .passes.match_gspmd_boundary import MatchGspmdBoundaryPass

        steps += (MatchGspmdBoundaryPass(boundary_cache=cache_dir(cache)),)
    if propagation:
        from .passes.match_gspmd_propagation import MatchGspmdPropagationPass

        steps += (MatchGspmdPropagationPass(),)
    return steps


def _warn_propagation(outcome: PropagationOutcome | None) -> None:
    if outcome is None or outcome.complete:
        return
    warnings.warn(
        f"GSPMD's propagation is not matched everywhere: {outcome}", ShardyConvertWarning, 2
    )


def _mesh_options(mesh, device_ids, meshes) -> dict:
    """import-shardings' fields of convert's mesh arguments."""
    if mesh is not None and not isinstance(mesh, (str, list, tuple)):
        user = mesh_file.as_user_mesh(mesh)
        return {"mesh": user.axes, "mesh_device_ids": user.ids}
    options: dict[str, Any] = {
        "mesh": parse_mesh(mesh),
        "mesh_device_ids": parse_device_ids(device_ids),
    }
    if isinstance(meshes, (str, os.PathLike)):
        options["meshes"] = mesh_file.read(meshes)
    elif meshes is not None:
        options["meshes"] = tuple(mesh_file.as_user_mesh(m) for m in meshes)
    return options


def _warn_inferred(choice: MeshChoice | None) -> None:
    if choice is not None and choice.mesh is None:
        warnings.warn(
            "the shardings fit none of the given meshes, the mesh is inferred from them: "
            f"{choice.why}",
            ShardyConvertWarning,
            stacklevel=4,
        )


def _warn_boundary(outcome: BoundaryOutcome | None) -> None:
    """match-gspmd-boundary's BoundaryOutcome, where it left values open."""
    if outcome is not None and outcome.reason is not None:
        warnings.warn(
            f"GSPMD's boundary: {outcome.pinned} of {outcome.open} open values pinned; "
            f"{outcome.reason}",
            ShardyConvertWarning,
            stacklevel=4,
        )


def _passed_through(why: str, state: str) -> None:
    """A command that had nothing to do says so (one warning), rather than write its input
    back as if it had converted it."""
    warnings.warn(WrittenAsItIs(why, state), stacklevel=3)


def _ignored(option: str, why: str) -> None:
    warnings.warn(f"{option} ignored: {why}", ShardyConvertWarning, stacklevel=4)


def _same_type(result: str | bytes, original: str | bytes) -> str | bytes:
    """Text comes back as `str` for `str` text and as UTF-8 `bytes` for `bytes` text (text
    asked of bytecode or a portable artifact is `str`)."""
    text_bytes = isinstance(original, bytes) and formats.detect(original) == "text"
    return result.encode() if text_bytes and isinstance(result, str) else result


def _flags(value: bool | Sequence[bool]) -> bool | tuple[bool, ...]:
    """A bool, or a sequence of bools as a tuple (hashable, like every pass option)."""
    return value if isinstance(value, bool) else tuple(bool(v) for v in value)


def _save_like(mod: ir.Module, original: str | bytes) -> str | bytes:
    """Prints `mod` in the form (and portable version) `original` came in."""
    form = formats.detect(original)
    version = formats.portable_version(original) if form == "portable" else None
    return _same_type(formats.save(mod, form, version, has_locations(original)), original)


def to_v2(module: str | bytes) -> str | bytes:
    """Only rewrites V1 device lists into V2 iota form; the module stays GSPMD."""
    with new_context() as ctx:
        mod = formats.load(module, ctx)
        if is_shardy(mod.operation):
            _passed_through(
                "it carries Shardy shardings, no GSPMD string to rewrite", "already Shardy"
            )
            return module
        pipeline.run(mod, pipeline.build(["v1-to-v2"]))
        return _save_like(mod, module)


def to_gspmd(module: str | bytes, *, emit: str | None = None) -> str | bytes:
    """Exports a Shardy module (text, bytecode, or a portable artifact in Shardy's round-trip
    form) back to GSPMD `mhlo.sharding` (V2; V1 on meshes with `device_ids`) and the GSPMD
    custom calls; a module without Shardy shardings is returned as it is (HLO as MLIR)."""
    form = formats.detect(formats.check_type(module))
    emit = emit or form
    check_choice("emit", emit, formats.FORMS, ShardyConvertError)
    version = formats.portable_version(module) if form == "portable" else None
    with new_context() as ctx:
        mod = formats.load(module, ctx)
        import_round_trip(mod)
        if not has_meshes(mod.operation):
            _passed_through(
                "it carries no Shardy sharding (GSPMD already, or none)", "already GSPMD"
            )
            if emit == form and hlo.kind(module) is None:  # HLO is written as MLIR
                return module
        pipeline.run(mod, pipeline.build(["export-shardings"]))
        return _same_type(formats.save(mod, emit, version, has_locations(module)), module)


@dataclass(frozen=True)
class V2Request:
    """`v2` of a batch: `to_v2` of each graph."""

    emit = None  # the input's own form

    def run(self, module: str | bytes) -> str | bytes:
        return to_v2(module)


@dataclass(frozen=True)
class ToGspmdRequest:
    """`to-gspmd` of a batch: `to_gspmd` of each graph, in the form `emit`."""

    emit: str | None = None

    def run(self, module: str | bytes) -> str | bytes:
        return to_gspmd(module, emit=self.emit)


def run_passes(module: str | bytes, passes: str | list[str] | pipeline.Pipeline) -> str | bytes:
    """Runs a pipeline of project and registered Shardy passes (`pipeline.parse`'s steps, or
    what it parses: a list of pass names, or a pipeline string like mlir-opt's,
    `builtin.module(import-shardings{num-devices=8}, sdy-close-shardings)`) and prints the
    result, like mlir-opt / sdy_opt; what a pass found (its result: iota-mesh's device order,
    match-gspmd-boundary's outcome) is a ShardyConvertNote, as MLIR prints pass statistics.
    Nothing is verified beyond what MLIR verifies after each pass."""
    steps = pipeline.parse(passes) if isinstance(passes, (str, list)) else passes
    with new_context() as ctx:
        mod = formats.load(formats.check_type(module), ctx, program=False)
        found = pipeline.run(mod, steps)
        for name, result in found.found:
            warnings.warn(ShardyConvertNote(f"{name}: {result}"), stacklevel=2)
        _record_placement(mod, found)
        return _save_like(mod, module)


def _record_placement(mod: ir.Module, found: pipeline.PipelineResult) -> None:
    """A program single-device-program made one partition says no more where it runs: the
    file written keeps its device (formats/device_order.py)."""
    from .passes.single_device_program import OnOneDevice

    placed = found.of(OnOneDevice)
    if placed is not None:  # what records it imported only then
        from .formats import device_order

        device_order.write(mod.operation, placed.order)


def convert_module(
    mod: ir.Module,
    request: ConvertRequest = ConvertRequest(),
    mentions: Mentions | None = None,
    check: bool = True,
) -> pipeline.PipelineResult:
    """Runs the conversion pipeline (`request.pipeline`) on a parsed module, in place, and
    returns what its passes found (import-shardings' `MeshChoice` when it was given meshes,
    match-gspmd-boundary's `BoundaryOutcome` when it ran). The module is verified once, after the
    project's Python passes and before Shardy's C++ passes see it (run_pipeline does that);
    with `request.validate`, Shardy's import also runs on a copy, which is verified; with
    `request.imported`, on the module itself. `mentions`: those of the text `mod` was parsed
    from (formats.mentions), if it is unchanged since: the walk for the sharded ops and custom
    calls stops once it has found that many (match-gspmd-boundary changes the module: the
    run's analyses are forgotten after it). `check`: the pipeline's post-condition
    (`check_no_gspmd_left`); False leaves it to the caller, who must run it before handing the
    module on (convert() runs it on the module as written)."""
    given = None if mentions is None else {("mentions", mod.operation): mentions}
    found = pipeline.run(mod, request.pipeline, verify_each=False, analyses=Analyses(given))
    if check or request.imports_shardy:  # before Shardy's import sees it
        check_no_gspmd_left(mod.operation)
    if request.imported:
        run_pipeline(mod, [pipeline.SDY_IMPORT], verify_each=False)
        verify(mod.operation, "Shardy's import pipeline made a module that does not verify")
    elif request.validate:
        copy = mod.operation.clone()
        try:
            run_pipeline(copy, [pipeline.SDY_IMPORT], verify_each=False)
            verify(copy, "Shardy's import pipeline rejects the converted module")
        finally:
            copy.erase()
    return found
