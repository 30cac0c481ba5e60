"""`check --format json`: the one JSON formatter of `GraphCheck`, `Cost`, `BoundaryDifference`
and `Summary` (`render_text` prints the same data for people).

One object, `{"graphs": [GRAPH, ...], "summary": SUMMARY}`. GRAPH:
`{"input": FILE, "graph": N or null, "verdict": ..., "ok": bool, "gspmd": COST or null,
"shardy": COST or null, "boundary_differences": [DIFFERENCE, ...], "divergences":
[DIVERGENCE, ...], "cheaper": "GSPMD", "Shardy", "same" or "mixed", "pins": [LINE, ...], ...}`,
COST:
`{"collectives": int, "collective_bytes": int, "temp_bytes": int, "flops": float,
"rematerializations": int, "by_kind": {KIND: {"count": int, "bytes": int}}, ...}`; a measure
this jaxlib cannot give is null. The verdict is the text the terminal shows (`same program`,
`conversion differs`, ...), or `already Shardy`, or `error` (then `error` holds the message).

DIVERGENCE (a value the two propagations sharded differently; listed where the two programs
differ in cost, ranked by what it costs): `{"op": "stablehlo.multiply", "op_index": K,
"result": 0, "location": "6:10", "shape": "f32[8,8]", "bytes": 256, "gspmd": XLA's text,
"shardy": XLA's text, "gspmd_spec": "('x', 'y')", "shardy_spec": ..., "bytes_per_device":
{"gspmd": int, "shardy": int}, "collective_bytes": {"gspmd": int, "shardy": int}, "starts":
bool, "pin": "xs.mark_sharding(<value>, mesh, ('x', 'y'))  # ..." or null}`; values XLA made
in another shape on each side are named in `"unmatched_values"`, never guessed.

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
from .divergence import Divergence, cheaper
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
        "verdict": check.verdict.value,
        "ok": not check.failed,
        "error": None if check.error is None else check.error.describe(),
        "gspmd": cost_json(report.gspmd) if report else None,
        "shardy": cost_json(report.shardy) if report else None,
        "boundary_differences": [difference_json(d) for d in report.boundary] if report else [],
        "over_limit": list(check.excess),
        "divergences": _divergences(report),
    }
    if report is None:
        return graph
    graph["cheaper"] = cheaper(report.gspmd, report.shardy)
    graph["unmatched_values"] = _unmatched(report)
    graph["pins"] = list(report.pins)
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


def _divergences(report) -> list[dict] | None:
    """Every value the two propagations decided differently, ranked (divergence.py); empty
    for a graph whose programs cost the same; null where this jaxlib cannot list them."""
    if report is None or report.divergences is None:
        return []
    if report.divergences.unavailable is not None:
        return None
    return [divergence_json(d) for d in report.divergences.found]


def _unmatched(report) -> list[str]:
    return [] if report.divergences is None else list(report.divergences.unmatched)


def divergence_json(d: Divergence) -> dict:
    return {
        "op": d.kind,
        "op_index": d.op,
        "result": d.result,
        "location": d.location,
        "shape": d.shape,
        "bytes": d.bytes,
        "gspmd": d.gspmd,
        "shardy": d.shardy,
        "gspmd_spec": d.gspmd_spec,
        "shardy_spec": d.shardy_spec,
        "bytes_per_device": {"gspmd": d.per_device[0], "shardy": d.per_device[1]},
        "collective_bytes": {"gspmd": d.collective_bytes[0], "shardy": d.collective_bytes[1]},
        "starts": d.starts,
        "pin": d.pin,
    }


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
        "between": str(m.between),
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
