"""One graph's verdict: compile the GSPMD original and the Shardy result, compare them with
each other and with the unpartitioned reference.

Order of the evidence: parameter shardings (and output shardings the original annotates) must
be equal, else the conversion differs. Then the values on random inputs: both programs are
also compared with the program run unpartitioned on one device, because GSPMD and Shardy can
agree on a value XLA computes wrongly (jaxlib 0.10.2's CPU partitioner does, for a dot whose
contracting dim is sharded on a mesh with a custom device order). With the reference:

- both agree with the reference: same program (or same up to float reassociation);
- GSPMD disagrees (Shardy agrees, or disagrees too): compiler differs from the reference;
- GSPMD agrees, Shardy disagrees: conversion differs, unless the Shardy result on the
  identity device order agrees with the reference: then the compiler differs.

Without a reference (manual regions) GSPMD vs Shardy decides alone, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import ShardyConvertError
from .boundary_differences import BoundaryDifference, boundary_differences
from .compiled import Compiled, compile_module, execute
from .cost import Cost
from .reference import identity_order, unpartitioned
from .signature import random_inputs
from .values import Agreement, agreements, max_relative
from .verdict import Verdict


@dataclass
class Report:
    """What `compare` found. `ok` unless the conversion is at fault: a compiler difference
    (both partitioned programs, or the original alone, disagree with the unpartitioned run)
    is XLA's, not the conversion's. Also what each partitioner compiled (`gspmd`, `shardy`)
    and every parameter and output whose compiled sharding differs (`boundary`)."""

    num_devices: int
    parameters: int = 0
    outputs: int = 0
    verdict: Verdict = Verdict.SAME
    relative: float = 0.0
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gspmd: Cost | None = None
    shardy: Cost | None = None
    boundary: list[BoundaryDifference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict is not Verdict.CONVERSION_DIFFERS

    def differ(self, verdict: Verdict, lines: list[str]) -> None:
        self.verdict = verdict
        self.differences.extend(lines)

    def __str__(self) -> str:
        """The verdict line and the differences under it (see `render_text` for the rest)."""
        from .render_text import verdict_text

        return verdict_text(self)


def compare(
    original: str | bytes, converted: str | bytes, n: int, *, seed: int = 0, reference: bool = True
) -> Report:
    """Compiles both sides on `n` CPU devices and compares shardings, then values on random
    inputs, also against the unpartitioned reference unless `reference` is False."""
    gspmd = compile_module(original, n, shardy=False)
    shardy = compile_module(converted, n, shardy=True)
    return compare_compiled(gspmd, shardy, original, converted, seed=seed, reference=reference)


def compare_compiled(
    gspmd: Compiled,
    shardy: Compiled,
    original: str | bytes,
    converted: str | bytes,
    *,
    seed: int = 0,
    reference: bool = True,
) -> Report:
    """`compare` of two programs already compiled from `original` (GSPMD) and `converted`
    (Shardy) on the same devices."""
    n = len(gspmd.devices)
    report = compare_programs(gspmd, shardy, outputs="annotated")
    if report.differences:
        return report
    inputs = random_inputs(gspmd.signature, seed)
    want, got = execute(gspmd, inputs), execute(shardy, inputs)
    pair = agreements(want, got)
    ref_values = _reference_values(original, inputs, report) if reference else None
    if ref_values is None:
        _decide_alone(report, pair)
    else:
        _decide_with_reference(report, pair, ref_values, want, got, (converted, n, inputs))
    return report


def compare_programs(a: Compiled, b: Compiled, *, outputs: str = "all") -> Report:
    """Sharding differences of two compiled programs. With `outputs="annotated"` only the
    outputs the original (`a`) annotates count: the others are whatever each partitioner
    chose. Values are not compared (see `compare_values`)."""
    n = len(a.devices)
    report = Report(n, len(a.parameters), len(a.outputs), gspmd=a.cost, shardy=b.cost)
    report.boundary = boundary_differences(a, b)
    only = a.signature.annotated_results if outputs == "annotated" else None
    lines = _count_differences("parameter", a.parameters, b.parameters)
    lines += _count_differences("output", a.outputs, b.outputs)
    lines += [
        f"{d.kind} {d.index}: GSPMD {d.gspmd} vs Shardy {d.shardy}"
        for d in report.boundary
        if d.kind == "parameter" or only is None or d.index in only
    ]
    if lines:
        report.differ(Verdict.CONVERSION_DIFFERS, lines)
    return report


def compare_values(a: Compiled, b: Compiled, report: Report, *, seed: int = 0) -> None:
    """Runs both programs on the same random inputs; records the verdict in `report`."""
    inputs = random_inputs(a.signature, seed)
    _decide_alone(report, agreements(execute(a, inputs), execute(b, inputs)))


def _count_differences(what: str, a: list, b: list) -> list[str]:
    if len(a) == len(b):
        return []
    return [f"{len(a)} {what}s in the original, {len(b)} in the result"]


def _decide_alone(report: Report, pair: list[Agreement]) -> None:
    if all(p.close for p in pair):
        _same(report, pair)
        return
    report.differ(Verdict.CONVERSION_DIFFERS, [f"{p}" for p in pair if not p.close])


def _same(report: Report, pair: list[Agreement]) -> None:
    report.relative = max_relative(pair)
    report.verdict = Verdict.SAME if report.relative == 0 else Verdict.REASSOCIATED


def _reference_values(original: str | bytes, inputs: list, report: Report) -> list | None:
    text, why = unpartitioned(original)
    if text is None:
        report.notes.append(f"no unpartitioned reference ({why})")
        return None
    try:
        return execute(compile_module(text, 1, shardy=False), inputs)
    except ShardyConvertError as e:
        report.notes.append(f"no unpartitioned reference ({e.message})")
        return None


def _decide_with_reference(report, pair, ref, want, got, shardy_side) -> None:
    gspmd_ref, shardy_ref = agreements(ref, want), agreements(ref, got)
    gspmd_ok, shardy_ok = all(a.close for a in gspmd_ref), all(a.close for a in shardy_ref)
    if gspmd_ok and shardy_ok:
        _same(report, pair)
        return
    if not gspmd_ok:
        lines = [f"GSPMD original vs reference, {a}" for a in gspmd_ref if not a.close]
        lines += [f"Shardy result vs reference, {a}" for a in shardy_ref if not a.close]
        lines.append(
            "the Shardy result matches the reference: GSPMD computes it wrongly (an XLA bug)"
            if shardy_ok
            else "both partitioned programs differ from the program run unpartitioned on one "
            "device: an XLA bug, not the conversion"
        )
        report.differ(Verdict.COMPILER_DIFFERS, lines)
        return
    lines = [f"Shardy result vs reference, {a}" for a in shardy_ref if not a.close]
    if _identity_order_matches(ref, *shardy_side):
        lines.append(
            "the same Shardy program on the identity device order matches the reference: "
            "the Shardy partitioner is wrong on this mesh's device order (an XLA bug)"
        )
        report.differ(Verdict.COMPILER_DIFFERS, lines)
        return
    report.differ(Verdict.CONVERSION_DIFFERS, lines)


def _identity_order_matches(ref: list, converted: str, n: int, inputs: list) -> bool:
    text = identity_order(converted)
    if text is None:
        return False
    values = execute(compile_module(text, n, shardy=True), inputs)
    return all(a.close for a in agreements(ref, values))
