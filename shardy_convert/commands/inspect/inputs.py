"""Reading inputs into an InspectReport: files, directories, dumps (graph by graph) and modules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...converter import import_round_trip, is_shardy
from ...errors import ShardyConvertError
from ...formats import dump
from ...formats.meshes import for_input
from ...formats.module import load
from ...ir.parse import new_context
from ..batch import expand, read_input
from .audit import count_mismatch
from .gspmd import GspmdReader
from .report import GraphReport, InspectReport, line_col
from .shardy import ShardyReader


def inspect_inputs(inputs: Sequence[str], meshes: tuple | None = None) -> InspectReport:
    """Inspects files, directories (recursively), dumps and `-`; never raises for one input.
    GSPMD graphs are placed on `meshes` (a mesh file's) or those of the mesh file beside each
    input, where their shardings fit one (formats/meshes.py)."""
    report = InspectReport()
    for item in expand(inputs):
        try:
            found = for_input(item.name, meshes)
            inspect_file(item.name, read_input(item.name), report, found)
        except ShardyConvertError as e:
            report.errors.append(e.located(file=item.name))
    return report


def inspect_file(
    name: str | None, data: bytes | str, report: InspectReport, meshes: tuple | None = None
) -> None:
    """Adds a module's graph, or every graph of a dump, to `report`."""
    source = dump.read(data, name)
    fallback = source.device_count if source.is_dump else None

    def one(graph: dump.Graph) -> GraphReport:
        lines = graph.first_line - 1
        return inspect_module(
            graph.text,
            file=name,
            graph=graph.index,
            line_offset=lines,
            fallback_devices=fallback,
            meshes=meshes,
        )

    first = len(report.graphs)
    found = dump.for_each_graph(source, one, name)
    report.graphs += [g for g in found if not isinstance(g, ShardyConvertError)]
    report.errors += [e for e in found if isinstance(e, ShardyConvertError)]
    if source.is_dump:
        report.findings.extend(count_mismatch(name, report.graphs[first:]))


def inspect_module(
    data: str | bytes,
    *,
    file: str | None = None,
    graph: int | None = None,
    line_offset: int = 0,
    fallback_devices: int | None = None,
    meshes: tuple | None = None,
) -> GraphReport:
    """Inspects one module (MLIR text or bytecode, or a StableHLO portable artifact, whose
    Shardy round-trip form is read back as Shardy).

    `line_offset` shifts `LINE:COL` locations (a dump graph's first line - 1);
    `fallback_devices` is the device count to use when nothing in the module says; a GSPMD
    module goes on the mesh of `meshes` (the program's) its shardings fit, if one does.
    Raises ShardyConvertError (located in the module) for bad input.
    """
    result = GraphReport(file, graph)
    with new_context() as ctx:
        parsed = load(data, ctx)
        import_round_trip(parsed)
        module = parsed.operation
        reader = (ShardyReader if is_shardy(module) else GspmdReader)(
            module, result, line_offset, fallback_devices
        )
        reader.meshes = meshes or ()
        reader.read()
    located = sorted(result.findings, key=line_col)
    result.findings = [replace(f, file=file, graph=graph) for f in located]
    return result
