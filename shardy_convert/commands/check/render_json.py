"""`check --format json`: the one JSON formatter of `GraphCheck`, `Cost`, `BoundaryDifference`
and `Summary` (`render_text` prints the same data for people).

One object, `{"graphs": [GRAPH, ...], "summary": SUMMARY}`. GRAPH:
`{"input": FILE, "graph": N or null, "verdict": ..., "ok": bool, "gspmd": COST or null,
"shardy": COST or null, "boundary_differences": [DIFFERENCE, ...], ...}`, COST:
`{"collectives": int, "collective_bytes": int, "temp_bytes": int, "flops": float,
"rematerializations": int, "by_kind": {KIND: {"count": int, "bytes": int}}, ...}`; a measure
this jaxlib cannot give is null. The verdict is the text the terminal shows (`same program`,
`conversion differs`, ...), or `already Shardy`, or `error` (then `error` holds the message).
"""

from __future__ import annotations

import json
import math

from .boundary_differences import BoundaryDifference
from .cost import Cost, ratio
from .summary import MEASURES, Summary


def report_json(checks: list, summary: Summary) -> str:
    """The whole batch as one JSON object (see the module docstring)."""
    document = {"graphs": [graph_json(c) for c in checks], "summary": summary_json(summary)}
    return json.dumps(document, indent=2)


def graph_json(check) -> dict:
    report = check.report
    graph = {
        "input": check.file,
        "graph": check.index,
        "verdict": check.verdict,
        "ok": not check.failed,
        "error": None if check.error is None else check.error.describe(),
        "gspmd": cost_json(report.gspmd) if report else None,
        "shardy": cost_json(report.shardy) if report else None,
        "boundary_differences": [difference_json(d) for d in report.boundary] if report else [],
        "over_limit": list(check.excess),
    }
    if report is None:
        return graph
    graph["ratios"] = _ratios(report.gspmd, report.shardy)
    graph |= {
        "num_devices": report.num_devices,
        "parameters": report.parameters,
        "outputs": report.outputs,
        "max_relative": report.relative,
        "differences": list(report.differences),
        "notes": list(report.notes),
    }
    return graph


def cost_json(cost: Cost | None) -> dict | None:
    if cost is None:
        return None
    kinds = cost.by_kind
    return {
        "collectives": cost.collectives,
        "collective_bytes": cost.collective_bytes,
        "temp_bytes": cost.temp_bytes,
        "flops": cost.flops,
        "rematerializations": cost.rematerializations,
        "by_kind": None
        if kinds is None
        else {k: {"count": c.count, "bytes": c.bytes} for k, c in kinds.items()},
        "argument_bytes": cost.argument_bytes,
        "output_bytes": cost.output_bytes,
        "alias_bytes": cost.alias_bytes,
        "peak_bytes": cost.peak_bytes,
    }


def difference_json(d: BoundaryDifference) -> dict:
    return {
        "kind": d.kind,
        "index": d.index,
        "type": d.type,
        "gspmd": d.gspmd,
        "shardy": d.shardy,
        "annotated": d.annotated,
        "fed_back_as": d.fed_back_as,
        "retraces": d.retraces,
    }


def summary_json(summary: Summary) -> dict:
    return {
        "graphs": summary.graphs,
        "verdicts": dict(summary.verdicts),
        "gspmd": cost_json(summary.gspmd),
        "shardy": cost_json(summary.shardy),
        "ratios": _ratios(summary.gspmd, summary.shardy),
        "worst": [
            {"where": w.where, "measure": w.measure, "ratio": _finite(w.ratio)}
            for w in summary.worst
        ],
    }


def _ratios(gspmd: Cost | None, shardy: Cost | None) -> dict | None:
    """Shardy over GSPMD per measure; null when unknown or when only GSPMD's is 0 (JSON has
    no infinity)."""
    if gspmd is None or shardy is None:
        return None
    measures = [*MEASURES, ("flops", "flops")]
    return {
        attribute: _finite(ratio(getattr(gspmd, attribute), getattr(shardy, attribute)))
        for _, attribute in measures
    }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else value
