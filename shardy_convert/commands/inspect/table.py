"""The aligned table `inspect` prints per graph, with its findings and a summary line."""

from __future__ import annotations

from ...errors import plural
from .report import SEVERITIES, Diagnostic, GraphReport, InspectReport, Value

# Longer sharding strings (V1 lists of hundreds of ids) are clipped in the table only.
TABLE_CELL_LIMIT = 80


_HEADERS = {
    "gspmd": ("VALUE", "AT", "TYPE", "SHARDING", "SDY", "SHARD"),
    "shardy": ("VALUE", "AT", "TYPE", "SHARDING (SDY)", "GSPMD", "SHARD"),
}


def format_table(report: InspectReport) -> str:
    """Per graph: a header with the mesh, an aligned table, then its findings."""
    out: list[str] = []
    files_done: set = set()
    for k, graph in enumerate(report.graphs):
        out.extend(_graph_table(graph))
        last_of_file = k + 1 == len(report.graphs) or report.graphs[k + 1].file != graph.file
        if last_of_file:
            files_done.add(graph.file)
            out.extend(_findings_block([f for f in report.findings if f.file == graph.file]))
    other = [f for f in report.findings if f.file not in files_done]
    out.extend(_findings_block(other))
    out.append(_summary(report))
    return "\n".join(out) + "\n"


def _graph_table(graph: GraphReport) -> list[str]:
    count = plural(graph.num_devices, "device") if graph.num_devices else "device count unknown"
    source = f" (from {graph.device_count_from})" if graph.device_count_from else ""
    lines = [f"== {graph.where}: {graph.form.upper()}, {count}{source}"]
    lines += [f"   mesh @{name} = {mesh}" for name, mesh in graph.meshes]
    if graph.mesh_from:
        lines[-1] += f"  (the program's {graph.mesh_from})"
    rows: list[list[str]] = [list(_HEADERS[graph.form])]
    for value in graph.values:
        rows.extend(_rows(value, graph.form))
    if graph.values:
        lines.extend("   " + line for line in _align(rows))
    else:
        lines.append("   (no sharded values)")
    lines.extend(_findings_block(graph.findings))
    lines.append("")
    return lines


def _rows(value: Value, form: str) -> list[list[str]]:
    """One row per value, plus a continuation row for the V2 form when it differs."""
    name = value.label + (f" = {value.op}" if value.op else "")
    type_text = _short_type(value)
    shard = value.shard.text if value.shard else "-"
    if form == "shardy":
        other = _clip(value.v2 or value.gspmd or "-")
        return [[name, value.location or "-", type_text, value.sharding, other, shard]]
    row = [name, value.location or "-", type_text, _clip(value.sharding), value.sdy or "-", shard]
    if value.v2 == value.sharding:
        return [row]
    v2 = f"v2 {_clip(value.v2)}" if value.v2 else "v2: none, no iota form (custom device order)"
    return [row, ["", "", "", v2, "", ""]]


def _short_type(value: Value) -> str:
    if value.shape is None:
        return value.type or "-"
    dims = "x".join("?" if d is None else str(d) for d in value.shape)
    return f"{dims}x{value.dtype}" if dims else str(value.dtype)


def _clip(text: str) -> str:
    return text if len(text) <= TABLE_CELL_LIMIT else text[: TABLE_CELL_LIMIT - 1] + "…"


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _findings_block(findings: list[Diagnostic]) -> list[str]:
    if not findings:
        return []
    rows = [[f.severity, f.location or "-", f.value or "-", f.code, f.message] for f in findings]
    return ["   findings:"] + ["     " + line for line in _align(rows)]


def _summary(report: InspectReport) -> str:
    values = sum(len(g.values) for g in report.graphs)
    counts = [sum(f.severity == s for f in report.all_findings()) for s in SEVERITIES]
    text = f"{plural(len(report.graphs), 'graph')}, {plural(values, 'sharded value')}"
    text += "; findings: " + ", ".join(plural(n, s) for n, s in zip(counts, SEVERITIES))
    if report.errors:
        text += f"; {plural(len(report.errors), 'input')} failed"
    return text
