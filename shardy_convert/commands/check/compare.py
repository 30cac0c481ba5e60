"""One graph's verdict: compile the GSPMD original and the Shardy result, compare them with
each other and with the unpartitioned reference.

Order of the evidence:
1. which partitioner XLA really compiled each side with (partitioner.py): a Shardy result
   that XLA compiled with GSPMD's propagation is no proof of anything and fails the check;
2. parameter shardings (and output shardings the original annotates) must be equal, else the
   conversion differs;
3. the values (numerics.py): the three programs on inputs drawn by what each argument is, and
   where they disagree a rerun widened to f64 (or a second draw) that tells float noise from
   a real difference; a compiler difference only where that rerun shows XLA at fault.
A graph whose values this client cannot make or run (an element type it has no array for, a
runtime refusal) is judged on 1 and 2, and its report says which part was not run.

Without a reference (manual regions) GSPMD vs Shardy decides alone, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .boundary_differences import BoundaryDifference, boundary_differences
from .compiled import Compiled, NotRun, compile_program
from .cost import Cost
from .divergence import Divergences
from .draws import Draw, draw_inputs, user_inputs
from .numerics import Judgement, Rerun, Sides, judge
from .partitioner import PartitionerUsed
from .program import Program, read_converted, read_original
from .verdict import Evidence, Verdict, verdict


@dataclass
class CheckReport:
    """What `compare` found. `ok` unless the conversion is at fault: a compiler difference
    (shown in a rerun where noise cannot hide it) is XLA's, not the conversion's. Also what
    each partitioner compiled (`gspmd`, `shardy`), which partitioner XLA really used on each
    side (`partitioners`), every parameter and output whose compiled sharding differs
    (`boundary`), the rerun that decided (`rerun`), how the inputs were made (`inputs`) and
    what was not run (`not_run`)."""

    num_devices: int
    parameters: int = 0
    outputs: int = 0
    # what the verdict rests on: `verdict(evidence)` decides
    evidence: Evidence = field(default_factory=Evidence)
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gspmd: Cost | None = None
    shardy: Cost | None = None
    boundary: list[BoundaryDifference] = field(default_factory=list)
    partitioners: dict[str, PartitionerUsed] = field(default_factory=dict)
    rerun: Rerun | None = None
    inputs: str = ""
    not_run: list[str] = field(default_factory=list)
    judgement: Judgement | None = field(default=None, repr=False)
    # where the two propagations decided differently (divergence.py), for a graph whose two
    # programs differ in cost; the pins --suggest found (their torch_xla lines)
    divergences: Divergences | None = None
    pins: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        return verdict(self.evidence)

    @property
    def relative(self) -> float:
        """The values' largest relative difference in the first run (0 when not run)."""
        return self.evidence.relative

    @property
    def ok(self) -> bool:
        return self.verdict is not Verdict.CONVERSION_DIFFERS

    def __str__(self) -> str:
        """The verdict line and the differences under it (see `render_text` for the rest)."""
        from .render_text import verdict_text

        return verdict_text(self)


@dataclass(frozen=True)
class Given:
    """What the user gave `check` beyond its inputs: test values (`--inputs FILE.npz`: the
    `arrays`, `file` for messages; graph `graph` of a dump picks its own names first; None:
    inputs are drawn by what each argument is), where reproducers go (`--reproducer DIR`), and
    whether to find the pins that give GSPMD's program (`--suggest`)."""

    arrays: dict | None = None
    file: str = ""
    graph: int | None = None
    reproducer: str | None = None
    suggest: bool = False


def compare(
    original: str | bytes,
    converted: str | bytes,
    n: int,
    *,
    seed: int = 0,
    reference: bool = True,
    given: Given | None = None,
) -> CheckReport:
    """Compiles both sides on `n` CPU devices and compares which partitioner compiled them,
    shardings, then values (see the module docstring); `reference`: with the program run
    unpartitioned on one device."""
    read = read_original(original, reference=reference)
    return compare_read(read, replace(read_converted(converted), devices=n), seed=seed, given=given)


def compare_read(
    original: Program, converted: Program, *, seed: int = 0, given: Given | None = None
) -> CheckReport:
    """`compare` of two programs read (program.py), on the result's devices."""
    n = converted.devices
    gspmd = compile_program(original.text, original.signature, n, shardy=False)
    shardy = compile_program(converted.text, converted.signature, n, shardy=True)
    return compare_compiled(gspmd, shardy, original, converted, seed=seed, given=given)


def compare_compiled(
    gspmd: Compiled,
    shardy: Compiled,
    original: Program,
    converted: Program,
    *,
    seed: int = 0,
    given: Given | None = None,
) -> CheckReport:
    """`compare` of two programs already compiled from `original` (GSPMD) and `converted`
    (Shardy) on the same devices; with the unpartitioned reference `original` carries."""
    report = compare_programs(gspmd, shardy, outputs="annotated")
    fell_back = report.partitioners["shardy"]
    if fell_back.fell_back:
        line = f"the Shardy result was compiled by GSPMD, not Shardy: {fell_back.evidence}"
        report.differences.append(line)
        report.evidence = replace(report.evidence, placement=(*report.evidence.placement, line))
    if report.evidence.placement:
        return report
    unrunnable = gspmd.signature.unrunnable() + shardy.signature.unrunnable()
    if unrunnable:
        _not_run(report, f"no test values for {', '.join(dict.fromkeys(unrunnable))}")
        return report
    draw, report.inputs = _inputs(gspmd, original, given or Given(), seed)
    sides = Sides(gspmd, shardy, original, converted, draw)
    try:
        judgement = judge(sides)
    except NotRun as e:
        _not_run(report, e.message)
        return report
    report.notes += sides.notes
    _record(report, judgement)
    return report


def _not_run(report: CheckReport, why: str) -> None:
    report.not_run.append(f"values: {why}")
    report.evidence = replace(report.evidence, not_run=why)


def _inputs(gspmd: Compiled, original: Program, inputs: Given, seed: int) -> tuple[Callable, str]:
    """(draw(signature, seed, scale) -> arrays, how the first run's inputs were made). The
    user's values are the first run's; a second draw, where one is needed, is drawn."""
    draws = list(original.draws)

    def drawn(signature, again: int, scale: float) -> list:
        return draw_inputs(signature, draws, seed + again, scale)

    if inputs.arrays is None:
        return drawn, _drawn(draws)
    given = user_inputs(inputs.arrays, gspmd.signature, inputs.graph, inputs.file)

    def users(signature, again: int, scale: float) -> list:
        return given if again == 0 else drawn(signature, again, scale)

    return users, f"the values of {inputs.file}"


def _drawn(draws: list[Draw]) -> str:
    """`drawn by use: 2 positive (parameters 8, 9), 1 index (parameter 0); others N(0, 1)`."""
    kinds: dict[str, list[int]] = {}
    for k, d in enumerate(draws):
        if d.kind != "normal":
            kinds.setdefault(d.kind, []).append(k)
    if not kinds:
        return "drawn: floats N(0, 1), integers in [0, 8)"
    parts = [
        f"{len(ks)} {kind} (parameter{'s' if len(ks) > 1 else ''} {', '.join(map(str, ks))})"
        for kind, ks in kinds.items()
    ]
    return "drawn by use: " + ", ".join(parts) + "; others N(0, 1)"


def _record(report: CheckReport, judgement: Judgement) -> None:
    report.judgement, report.rerun = judgement, judgement.rerun
    report.evidence = replace(
        report.evidence,
        same=judgement.same,
        relative=judgement.relative,
        compiler=judgement.compiler,
    )
    if not judgement.same:
        report.differences.extend(judgement.lines)


def compare_programs(a: Compiled, b: Compiled, *, outputs: str = "all") -> CheckReport:
    """Sharding differences of two compiled programs, and which partitioner compiled each.
    With `outputs="annotated"` only the outputs the original (`a`) annotates count: the others
    are whatever each partitioner chose. Values are not compared here."""
    n = len(a.devices)
    report = CheckReport(n, len(a.parameters), len(a.outputs), gspmd=a.cost, shardy=b.cost)
    report.partitioners = {"gspmd": a.partitioner, "shardy": b.partitioner}
    report.boundary = boundary_differences(a, b)
    only = a.signature.annotated_results if outputs == "annotated" else None
    lines = _count_differences("parameter", a.parameters, b.parameters)
    lines += _count_differences("output", a.outputs, b.outputs)
    lines += [
        f"{d.kind} {d.index}: GSPMD {d.gspmd} vs Shardy {d.shardy}"
        for d in report.boundary
        if d.kind == "parameter" or only is None or d.index in only
    ]
    report.differences.extend(lines)
    report.evidence = Evidence(placement=tuple(lines))
    return report


def _count_differences(what: str, a: list, b: list) -> list[str]:
    if len(a) == len(b):
        return []
    return [f"{len(a)} {what}s in the original, {len(b)} in the result"]
