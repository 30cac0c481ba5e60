"""`check --format json`: the one JSON formatter of `GraphCheck`, `Cost`, `BoundaryDifference`
and `Summary` (`render_text` prints the same data for people).

One object, `{"graphs": [GRAPH, ...], "summary": SUMMARY}`. GRAPH:
`{"input": FILE, "graph": N or null, "verdict": ..., "ok": bool, "gspmd": COST or null,
"shardy": COST or null, "boundary_differences": [DIFFERENCE, ...], ...}`, COST:
`{"collectives": int, "collective_bytes": int, "temp_bytes": int, "flops": float,
"rematerializations": int, "by_kind": {KIND: {"count": int, "bytes": int}}, ...}`; a measure
this jaxlib cannot give is null. The verdict is the text the terminal shows (`same program`,
`conversion differs`, ...), or `already Shardy`, or `error` (then `error` holds the message).

The evidence behind a verdict, for a graph that was compiled:
- `"partitioners"`: `{"gspmd": USED, "shardy": USED}`, USED `{"requested": "Shardy", "used":
  "Shardy", "fell_back": false, "evidence": "..."}`: which partitioner XLA really used;
- `"inputs"`: how the test inputs were made (drawn by use, or the user's file);
- `"rerun"`: null, or the run that decided a disagreement: `{"how": "f64" or "second draw",
  "agrees": bool, "max_relative": float, "first_max_relative": float, "why": "..." (why not
  f64)}`;
- `"mismatches"`: the outputs that differ in the deciding run, `{"between": "Shardy result vs
  reference", "output": K, "max_relative": float, "max_abs": float, "magnitude": float,
  "devices": [ids], "run": "f64 run"}`;
- `"not_run"`: the parts not run (`values: no test values for output 2 (tensor<...>)`);
- in each DIFFERENCE: `"fed_back_candidates"` (every parameter the output may become) and
  `"fed_back_evidence"` ("aliased", "donated", "type" or null); `"fed_back_as"` is the one
  parameter where they name one, else null.
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
        "partitioners": {side: _used(u) for side, u in report.partitioners.items()},
        "inputs": report.inputs,
        "rerun": _rerun(report.rerun),
        "mismatches": [_mismatch(m) for m in _mismatches(report)],
        "not_run": list(report.not_run),
    }
    return graph


def _used(used) -> dict:
    return {
        "requested": used.requested,
        "used": used.used,
        "fell_back": used.fell_back,
        "evidence": used.evidence,
    }


def _rerun(rerun) -> dict | None:
    if rerun is None:
        return None
    return {
        "how": rerun.how,
        "agrees": rerun.agrees,
        "max_relative": _finite(rerun.relative),
        "first_max_relative": _finite(rerun.first_relative),
        "why": rerun.why or None,
    }


def _mismatches(report) -> list:
    return [] if report.judgement is None else report.judgement.mismatches


def _mismatch(m) -> dict:
    found = m.agreement
    return {
        "between": m.between,
        "output": found.index,
        "max_relative": _finite(found.relative),
        "max_abs": found.max_abs,
        "magnitude": found.magnitude,
        "devices": list(m.devices),
        "run": m.run or "first run",
    }


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
        "fed_back_candidates": list(d.fed_back_candidates),
        "fed_back_evidence": d.fed_back_evidence or None,
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
