"""A batch at a glance, and the cost gate.

`summarize` adds up what every graph's two programs cost (a `Cost` per partitioner: the
collectives by kind, memory and FLOPs summed over the graphs, a measure unknown for one graph
unknown in the total) and picks the graphs where Shardy's program costs most relative to
GSPMD's. `cost_excess` is `check --max-cost-ratio R`: Shardy's collective bytes or temp
memory over R times GSPMD's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .compare import CheckReport
from .cost import Collectives, Cost, ratio

# The measures the gate and the summary's worst graphs judge: (name, Cost attribute).
MEASURES = (("collective bytes", "collective_bytes"), ("temp memory", "temp_bytes"))
WORST = 3  # graphs named per measure in a summary


@dataclass(frozen=True)
class Worst:
    """A graph where Shardy's program costs `ratio` times GSPMD's in `measure`."""

    where: str
    measure: str
    ratio: float


@dataclass(frozen=True)
class Summary:
    """Counts of verdicts, each partitioner's costs summed, the worst graphs per measure."""

    graphs: int
    verdicts: dict[str, int]
    gspmd: Cost | None
    shardy: Cost | None
    worst: list[Worst] = field(default_factory=list)


def summarize(checks: list) -> Summary:
    """The summary of a batch's `GraphCheck`s."""
    verdicts = Counter(check.verdict.value for check in checks)
    reports = [(c.where, c.report) for c in checks if c.report is not None and c.report.gspmd]
    costs = [r for _, r in reports]
    gspmd = total([r.gspmd for r in costs]) if costs else None
    shardy = total([r.shardy for r in costs]) if costs else None
    worst = []
    for measure, attribute in MEASURES:
        ranked = [
            Worst(where, measure, value)
            for where, report in reports
            if (value := _ratio(report, attribute)) is not None
        ]
        ranked.sort(key=lambda w: -w.ratio)
        worst += ranked[:WORST]
    return Summary(len(checks), dict(verdicts), gspmd, shardy, worst)


def total(costs: list[Cost]) -> Cost:
    """Costs added up: collectives by kind, memory, FLOPs, rematerializations (unknown in
    one: unknown in the total)."""
    kinds: dict[str, Collectives] | None = {}
    for cost in costs:
        if cost.by_kind is None or kinds is None:
            kinds = None
            break
        for kind, c in cost.by_kind.items():
            had = kinds.get(kind, Collectives())
            kinds[kind] = Collectives(had.count + c.count, had.bytes + c.bytes)
    names = ("temp_bytes", "argument_bytes", "output_bytes", "alias_bytes", "flops")
    sums = {name: _sum([getattr(c, name) for c in costs]) for name in names}
    remat = _sum([c.rematerializations for c in costs])
    return Cost(by_kind=kinds, rematerializations=remat, **sums)


def _sum(values: list):
    return None if any(v is None for v in values) else sum(values)


def _ratio(report: CheckReport, attribute: str) -> float | None:
    return ratio(getattr(report.gspmd, attribute), getattr(report.shardy, attribute))


def cost_excess(report: CheckReport | None, limit: float) -> list[str]:
    """Why Shardy's program costs more than `limit` times GSPMD's, one reason per measure;
    a measure this jaxlib cannot give is a reason too (the gate cannot pass what it cannot
    judge). Nothing for a graph that compiled no pair (already Shardy, an error)."""
    if report is None or report.gspmd is None or report.shardy is None:
        return []
    from .render_text import size

    reasons = []
    for measure, attribute in MEASURES:
        was, now = getattr(report.gspmd, attribute), getattr(report.shardy, attribute)
        value = ratio(was, now)
        if value is None:
            reasons.append(f"{measure} unknown on this jaxlib: --max-cost-ratio cannot judge it")
        elif value > limit:
            reasons.append(
                f"Shardy's program has {value:.2f}x GSPMD's {measure} ({size(now)} vs "
                f"{size(was)}), over --max-cost-ratio {limit:g}"
            )
    return reasons
