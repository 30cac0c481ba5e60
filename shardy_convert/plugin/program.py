"""What the plugin wrapper does to one program: read it (a portable artifact, MLIR, or an HLO
module proto), convert it to Shardy for the partitions its compile options ask for, and set
the options to the Shardy partitioner; a custom device order leaves the mesh for the device
assignment; the mesh is the one of the program's own meshes its shardings fit (`meshes`, from
mesh_recorder.py), else inferred. `wrapper.Session` calls `convert_program` once per distinct
program."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ShardyConvertError, plural
from . import compile_options


@dataclass(frozen=True)
class Matching:
    """match-gspmd-boundary for the plugin's programs: GSPMD's boundary pinned (compiled with
    the program's own options), its choices kept in `cache` (a directory) if given; each
    program's outcome goes to `report(graph name, Outcome)`."""

    cache: str | None = None
    report: Callable | None = None


def convert_program(
    code: bytes,
    form: str,
    options: bytes,
    *,
    emit: str = "portable",
    matching: Matching | None = None,
    meshes: tuple = (),
    facts: dict | None = None,
) -> tuple[bytes, bytes, bytes, bytes]:
    """(program, format, options, order) for the real plugin: `code` (a PJRT program of
    format "mlir" or "hlo") converted to Shardy for the partitions `options` ask for, the
    options set to the Shardy partitioner. A custom device order leaves the mesh for the
    device assignment (passes/iota_mesh.py): `order` (int32s) says which of the caller's
    partitions each partition of the compiled program is, b"" when they are the same.
    With `matching`, @main's open values get GSPMD's shardings (passes/match_gspmd_boundary).
    `meshes` are the program's own meshes (the mesh is the one its shardings fit); `facts`,
    if given, gets the program's `module` name, `devices`, its Shardy `mesh` and `mesh_from`
    (user: the mesh of `meshes` picked, inferred: why none fits, shardy: it was Shardy
    already, "": no meshes were given). Raises ShardyConvertError naming the graph."""
    opts = compile_options.parse(options)
    facts = {} if facts is None else facts
    facts["devices"] = opts.num_partitions * opts.num_replicas
    if form in ("hlo", "hlo_with_config"):  # an HloModuleProto(WithConfig): formats/hlo.py
        from ..formats import hlo  # MLIR: not at import (the wrapper stays light)

        code = hlo.to_stablehlo(code)
    elif form != "mlir":
        raise ShardyConvertError(
            f"cannot convert a program of format {form!r} (mlir, hlo or hlo_with_config)"
        )
    raw = options if matching else None
    out, order = _convert_mlir(code, opts, emit, raw, matching, meshes, facts)
    if order is None:
        return out, b"mlir", compile_options.rewrite(options), b""
    assignment = opts.device_assignment or tuple(range(opts.num_partitions))
    if len(order) != len(assignment):
        raise ShardyConvertError(
            f"the mesh orders {plural(len(order), 'device')}, the compile assigns {len(assignment)}"
        )
    devices = [assignment[k] for k in order]
    new_options = compile_options.rewrite(options, devices=devices)
    return out, b"mlir", new_options, struct.pack(f"<{len(order)}i", *order)


def _convert_mlir(
    code: bytes,
    opts: compile_options.CompileOptions,
    emit: str,
    raw: bytes | None = None,
    matching: Matching | None = None,
    meshes: tuple = (),
    facts: dict | None = None,
) -> tuple[bytes, tuple[int, ...] | None]:
    from ..formats import module as formats

    facts = {} if facts is None else facts

    form = formats.detect(code)
    version = formats.portable_version(code) if form == "portable" else _plugin_version()
    num_devices = opts.num_partitions * opts.num_replicas
    from ..ir.parse import thread_context

    with thread_context() as ctx:
        mod = formats.load(code, ctx, trusted=True)
        name = _module_name(mod)
        facts["module"] = name.removeprefix("graph ")
        try:
            order = _to_shardy(mod, opts, raw, matching, name, meshes, facts)
            out = formats.save(mod, emit, version)
        except ShardyConvertError as e:
            named = ShardyConvertError(
                f"cannot convert {name} for the Shardy partitioner "
                f"({plural(num_devices, 'device')}): {e}"
            )
            named.passthrough_aborts = getattr(e, "passthrough_aborts", False)
            raise named from None
    return (out if isinstance(out, bytes) else out.encode()), order


def _to_shardy(
    mod,
    opts: compile_options.CompileOptions,
    raw: bytes | None = None,
    matching: Matching | None = None,
    name: str = "the program",
    meshes: tuple = (),
    facts: dict | None = None,
) -> tuple[int, ...] | None:
    """Converts in place; returns the device order taken out of the mesh, if any. With
    `matching`, GSPMD's boundary is compiled with the options `raw` (the plugin's bytes)."""
    from ..converter import convert_module, is_shardy
    from ..ir.bindings import ir
    from ..options import Options
    from ..passes import pipeline
    from ..passes.iota_mesh import DEVICE_ORDER

    facts = {} if facts is None else facts
    if is_shardy(mod.operation):
        facts["mesh_from"] = "shardy"
        return None
    # strict: an uneven sharding (Shardy would compile another program) is refused, so the
    # plugin never gets a program known to compute differently; passthrough compiles the
    # original with GSPMD instead.
    options = Options(
        num_devices=opts.num_partitions * opts.num_replicas,
        allow_spmd_sharding_propagation_to_parameters=opts.propagate_to_parameters,
        allow_spmd_sharding_propagation_to_output=opts.propagate_to_output,
        strict=True,
        match_gspmd_boundary=matching is not None,
        compile_options=raw,
        boundary_cache=matching.cache if matching else None,
        meshes=meshes or None,
    )
    # import-shardings closes unannotated values; says which mesh it took (facts)
    outcome = convert_module(mod, options, facts=facts)
    facts.setdefault("mesh_from", "")
    if outcome is not None and matching.report is not None:
        matching.report(name, outcome)
    pipeline.run(mod, ["iota-mesh"], verify_each=False)
    facts["mesh"] = _mesh_text(mod)
    attrs = mod.operation.attributes
    if DEVICE_ORDER not in attrs:
        return None
    order = tuple(ir.DenseI64ArrayAttr(attrs[DEVICE_ORDER]))
    del attrs[DEVICE_ORDER]
    return order


def _mesh_text(mod) -> str:
    """The global mesh `<["data"=2, "model"=4]>` of a converted module ("" if none)."""
    from ..ir.sdy_attrs import read_meshes

    mesh = read_meshes(mod.operation).get("mesh")
    return "" if mesh is None else str(mesh)


def _module_name(mod) -> str:
    from ..ir.bindings import ir

    attr = mod.operation.attributes
    if "sym_name" in attr:
        return f"graph {ir.StringAttr(attr['sym_name']).value}"
    return "the program"


def _plugin_version() -> str:
    """StableHLO version of portable artifacts made from HLO protos: the oldest jaxlib writes,
    which every plugin of the same generation reads."""
    from ..ir.bindings import stablehlo

    return stablehlo.get_minimum_version()
