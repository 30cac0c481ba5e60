"""One side of a graph's check, read in one parse: the facts `check` needs of a module.

Each graph's GSPMD original and Shardy result are parsed once each (the conversion parses
its own copy): `read_original` and `read_converted` read everything the comparison asks of
them from that one parse, into a frozen `Program`, and the compiles, the draws, the
unpartitioned reference and the divergences' mesh read the record, not the text again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...converter import is_shardy
from ...formats import device_order
from ...formats import module as formats
from ...ir.bindings import ir
from ...ir.parse import new_context, parse_module, print_module
from ...ir.sdy_attrs import read_meshes
from ...passes import pipeline
from ...sharding.mesh_fit import UserMesh
from .draws import Draw, draws_of
from .reference import strip_partitioning
from .signature import Signature, signature_of


@dataclass(frozen=True)
class Program:
    """A module as `check` compiles it (`text`: MLIR text, or bytecode) and what it says:
    @main's `signature`; whether it carries Shardy (`shardy`); for an original, how each
    argument is drawn (`draws`) and the program run unpartitioned on one device (`reference`,
    or `no_reference`: why there is none); for a result, the devices both sides compile on
    (`devices`, see `devices_of`: read off the converted module, which the conversion
    validated) and its mesh (`mesh`: the divergences' specs are written on it)."""

    text: str | bytes
    signature: Signature
    shardy: bool = False
    devices: int = 1
    draws: tuple[Draw, ...] = ()
    reference: Program | None = None
    no_reference: str = ""
    mesh: UserMesh | None = None


def read_original(
    text: str | bytes, *, reference: bool = True, before: pipeline.Pipeline = ()
) -> Program:
    """The GSPMD original, after the `before` passes that keep it GSPMD's (pad-uneven: both
    programs then take the same per-device buffers; its text is then the printed result),
    with its unpartitioned reference where `reference`. A module that holds no program is an
    error (ShardyConvertError); one that already carries Shardy is read no further."""
    with new_context() as ctx:
        module = parse_module(text, ctx)
        formats.check_program(module)
        if is_shardy(module.operation):
            return Program(text, signature_of(module.operation), shardy=True)
        if before:
            pipeline.run(module, tuple(before))
            text = print_module(module, "text", locations=True)
        op = module.operation
        program = Program(text, signature_of(op), draws=(*draws_of(op),))
        if not reference:
            return program
        unpartitioned, why = strip_partitioning(module)  # changes the module: read last
        if unpartitioned is None:
            return replace(program, no_reference=why)
        one = Program(unpartitioned, signature_of(module.operation))
        return replace(program, reference=one)


def read_converted(text: str | bytes, fallback: int | None = None) -> Program:
    """The Shardy result: its signature, devices (`fallback`: `--devices`, where the module
    says no count) and mesh."""
    with new_context() as ctx:
        op = parse_module(text, ctx).operation
        return Program(
            text,
            signature_of(op),
            shardy=is_shardy(op),
            devices=devices_of(op, fallback),
            mesh=_mesh(op),
        )


def devices_of(module: ir.Operation, fallback: int | None = None) -> int:
    """Devices a module runs on: its meshes (axes, `device_ids`) and `mhlo.num_partitions`,
    whichever is largest; and `fallback` (`--devices`) where neither says a count (no
    `mhlo.num_partitions`, no mesh with axes: every value replicated, or placed whole on one
    device, whose id only says the count is at least that)."""
    counts = [1]
    said = "mhlo.num_partitions" in module.attributes
    if said:
        counts.append(ir.IntegerAttr(module.attributes["mhlo.num_partitions"]).value)
    meshes = read_meshes(module).values()
    for mesh in meshes:
        counts += [mesh.size, max(mesh.device_ids or (-1,)) + 1]
    order = device_order.read(module)  # the devices it compiles on (one: device k)
    if order:
        counts.append(max(order) + 1)
    if fallback and not (said or any(m.axes for m in meshes)):
        counts.append(fallback)
    return max(counts)


def _mesh(module: ir.Operation) -> UserMesh | None:
    """The program's mesh (`@mesh`, else the first with axes), None where it has none."""
    meshes = read_meshes(module)
    mesh = meshes.get("mesh") or next((m for m in meshes.values() if m.axes), None)
    if mesh is None or not mesh.axes:
        return None
    return UserMesh(tuple(mesh.axes), mesh.device_ids)
