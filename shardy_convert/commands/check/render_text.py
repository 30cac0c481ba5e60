"""`check`'s report on a terminal: the one formatter of `CheckReport`, `GraphCheck` and `Summary`
as text (`render_json` is the other; both print the same data).

A graph: its verdict line (`same program: 3 parameters, 1 output on 8 devices; Shardy: 1.14x
GSPMD's collective bytes, 1.78x temp memory, 2 involuntary rematerializations`), the
differences that decided it, then a table of what each partitioner compiled (collectives by
kind with their bytes, temp and peak memory, FLOPs, rematerializations) and the outputs each
partitioner compiled to another sharding, those torch_xla feeds back marked.
"""

from __future__ import annotations

from ...errors import plural
from .cost import COLLECTIVES, Cost, ratio
from .verdict import Verdict


def size(n: int | None) -> str:
    """Bytes for people: `512 B`, `1.23 KB`, `332 KB`, `1.17 MB` (powers of 1000)."""
    if n is None:
        return "n/a"
    if n < 1000:
        return f"{n} B"
    units = ("KB", "MB", "GB", "TB")
    value, k = n / 1000, 0
    while value >= 999.5 and k < len(units) - 1:  # 999.6 KB would print as 1e+03 KB
        value, k = value / 1000, k + 1
    return f"{value:.3g} {units[k]}"


def times(value: float | None) -> str:
    """A ratio: `1.14x`, `inf` when only GSPMD's side is 0, `n/a` when unknown."""
    if value is None:
        return "n/a"
    return "inf" if value == float("inf") else f"{value:.2f}x"


def verdict_line(report) -> str:
    """The one line a graph gets (see the module docstring)."""
    head = report.verdict.value
    if report.verdict is Verdict.REASSOCIATED:
        head += f" (max relative {report.relative:.2g}"
        if report.rerun is not None and report.rerun.agrees:
            head += f"; the {report.rerun.run} agrees to {report.rerun.relative:.2g}"
        head += ")"
    shape = (
        f"{plural(report.parameters, 'parameter')}, {plural(report.outputs, 'output')} on "
        f"{plural(report.num_devices, 'device')}"
    )
    costs = cost_clause(report.gspmd, report.shardy)
    not_run = [f"not run: {n}" for n in report.not_run]
    notes = "".join(f"; {n}" for n in [costs, *report.notes, *not_run] if n)
    return f"{head}: {shape}{notes}"


def verdict_text(report) -> str:
    """The verdict line and, under it, the differences that decided the verdict (and the
    rerun that decided it, where one did)."""
    lines = list(report.differences)
    if report.rerun is not None and (report.differences or not report.rerun.agrees):
        lines.insert(0, str(report.rerun))
    return verdict_line(report) + "".join(f"\n  {d}" for d in lines)


def cost_clause(gspmd: Cost | None, shardy: Cost | None) -> str:
    """`Shardy: 1.14x GSPMD's collective bytes, 1.78x temp memory, 2 involuntary
    rematerializations`; empty without both costs."""
    if gspmd is None or shardy is None:
        return ""
    parts = [_measure_part(gspmd, shardy, m) for m in _PHRASES]
    parts.append(_remat_part(gspmd, shardy))
    return "Shardy: " + ", ".join(p for p in parts if p)


# Per measure: how it reads (unknown, 0 on both sides, only Shardy's, and Shardy's ratio).
_PHRASES = {
    "collective_bytes": (
        "collective bytes n/a",
        "no collectives on either",
        "of collectives where GSPMD has none",
        "GSPMD's collective bytes",
    ),
    "temp_bytes": (
        "temp memory n/a",
        "no temp memory on either",
        "of temp memory where GSPMD needs none",
        "temp memory",
    ),
}


def _measure_part(gspmd: Cost, shardy: Cost, measure: str) -> str:
    unknown, neither, only_shardy, ratio_of = _PHRASES[measure]
    was, now = getattr(gspmd, measure), getattr(shardy, measure)
    if was is None or now is None:
        return unknown
    if was == now == 0:
        return neither
    if was == 0:
        return f"{size(now)} {only_shardy}"
    return f"{times(now / was)} {ratio_of}"


def _remat_part(gspmd: Cost, shardy: Cost) -> str:
    was, now = gspmd.rematerializations, shardy.rematerializations
    if not now and not was:
        return ""
    if not now:  # None (XLA's log hidden) or 0
        return f"no involuntary rematerialization (GSPMD {was})" if now == 0 else ""
    text = plural(now, "involuntary rematerialization")
    return text + (f" (GSPMD {was})" if was else "")


def graph_text(check, details: bool = True) -> str:
    """A `GraphCheck`: its error, "already Shardy", or its verdict with the cost table."""
    if check.error is not None:
        return check.error.describe()
    if check.report is None:
        return f"{check.where}: already Shardy: nothing to convert"
    text = f"{check.where}: {verdict_text(check.report)}"
    return text + ("\n" + details_text(check.report) if details else "")


def details_text(report) -> str:
    """The table of both programs' costs and the outputs compiled to other shardings."""
    rows = _cost_rows(report.gspmd, report.shardy)
    lines = _table([["", "GSPMD", "Shardy", "Shardy/GSPMD"], *rows])
    sides = {"gspmd": "GSPMD original", "shardy": "Shardy result"}
    lines += [
        f"{sides[side]} compiled by {used.used}: {used.evidence}"
        for side, used in report.partitioners.items()
    ]
    if report.inputs:
        lines.append(f"inputs: {report.inputs}")
    if report.rerun is not None and report.rerun.agrees and not report.differences:
        lines.append(str(report.rerun))
    chosen = [d for d in report.boundary if d.kind == "output" and not d.annotated]
    if chosen:
        fed = sum(d.retraces for d in chosen)
        lines.append(
            f"outputs compiled to another sharding: {len(chosen)} of {report.outputs}"
            + (
                f"; {fed} fed back (a parameter's type: torch_xla traces the next step again)"
                if fed
                else ""
            )
        )
        lines += [f"  {_difference(d)}" for d in chosen]
    lines += divergences_lines(report)
    return "\n".join(f"  {line}".rstrip() for line in lines)


def divergences_lines(report) -> list[str]:
    """Which program is cheaper, and the values the two propagations decided differently
    that cost the most (`check --format json` lists them all), with the pins `--suggest`
    found."""
    from .divergence import SHOWN, cheaper

    found = report.divergences
    if found is None:
        return []
    which = cheaper(report.gspmd, report.shardy)
    if found.unavailable is not None:
        return [
            f"cheaper program: {which}",
            f"values sharded differently: not listed: {found.unavailable}",
        ]
    keep = which == "Shardy" and found.found
    unmatched = f" ({len(found.unmatched)} not matched: XLA made them differently)"
    lines = [
        f"cheaper program: {which}" + (_KEEP_SHARDY if keep else ""),
        f"values sharded differently: {len(found.found)} of {found.compared} compared"
        + (unmatched if found.unmatched else ""),
    ]
    if not found.found:
        lines.append(
            "  no value is sharded otherwise after propagation: the programs differ in how XLA "
            "partitions and schedules the same decisions, nothing a pin changes"
        )
    for d in found.found[:SHOWN]:
        lines += _divergence_lines(d)
    if len(found.found) > SHOWN:
        lines.append(f"  ... {len(found.found) - SHOWN} more (--format json lists them all)")
    if report.pins:
        lines.append("pins that give GSPMD's program (--suggest):")
        lines += [f"  {pin}" for pin in report.pins]
    return lines


def _divergence_lines(d) -> list[str]:
    """One divergence: the op, where, its shape and bytes; each side's sharding, as XLA prints
    it and as a spec; the collectives each side made for it."""
    where = f" at {d.location}" if d.location else ""
    lines = [
        f"  {d.kind}{where} {d.shape} ({size(d.bytes)}){' [starts]' if d.starts else ''}",
        f"    GSPMD  {d.gspmd}" + (f" = {d.gspmd_spec}" if d.gspmd_spec else ""),
        f"    Shardy {d.shardy}" + (f" = {d.shardy_spec}" if d.shardy_spec else ""),
    ]
    spent = d.collective_bytes
    if spent != (0, 0):
        lines.append(f"    collectives for it: GSPMD {size(spent[0])}, Shardy {size(spent[1])}")
    return lines


_KEEP_SHARDY = " (pinning GSPMD's decisions would make it cost more: keep Shardy's)"


def _difference(d) -> str:
    text = f"{d.kind} {d.index} {d.type}: GSPMD {d.gspmd} vs Shardy {d.shardy}"
    return text + (f"; {d.fed_back}" if d.fed_back_candidates else "")


def _cost_rows(gspmd: Cost, shardy: Cost) -> list[list[str]]:
    kinds = [k for k in COLLECTIVES if k in (gspmd.by_kind or {}) or k in (shardy.by_kind or {})]
    rows = [[kind, _kind(gspmd, kind), _kind(shardy, kind), ""] for kind in kinds]
    rows.append(
        [
            "collectives",
            _count_bytes(gspmd.collectives, gspmd.collective_bytes),
            _count_bytes(shardy.collectives, shardy.collective_bytes),
            times(ratio(gspmd.collective_bytes, shardy.collective_bytes)),
        ]
    )
    for label, attribute in (("temp memory", "temp_bytes"), ("peak memory", "peak_bytes")):
        was, now = getattr(gspmd, attribute), getattr(shardy, attribute)
        rows.append([label, size(was), size(now), times(ratio(was, now))])
    rows.append(["FLOPs", _number(gspmd.flops), _number(shardy.flops)])
    rows[-1].append(times(ratio(gspmd.flops, shardy.flops)))
    rows.append(["rematerializations", _number(gspmd.rematerializations)])
    rows[-1] += [_number(shardy.rematerializations), ""]
    return rows


def _kind(cost: Cost, kind: str) -> str:
    if cost.by_kind is None:
        return "n/a"
    found = cost.by_kind.get(kind)
    return _count_bytes(found.count, found.bytes) if found else "0"


def _count_bytes(count: int | None, n: int | None) -> str:
    return "n/a" if count is None else f"{count} ({size(n)})"


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if isinstance(value, float) and value >= 1e4 else f"{value:g}"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return ["   ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows]


def summary_text(summary) -> str:
    """A batch's totals and worst graphs."""
    counts = ", ".join(f"{n} {verdict}" for verdict, n in summary.verdicts.items())
    lines = [f"{plural(summary.graphs, 'graph')}: {counts}"]
    if summary.gspmd is not None:
        lines.append(f"together, {cost_clause(summary.gspmd, summary.shardy)}")
        lines += [f"  {line}".rstrip() for line in _table(_totals(summary))]
    measures = dict.fromkeys(w.measure for w in summary.worst)
    for measure in measures:
        worst = [w for w in summary.worst if w.measure == measure]
        lines.append(f"most {measure} relative to GSPMD:")
        lines += [f"  {times(w.ratio):>7}  {w.where}" for w in worst]
    return "\n".join(lines)


def _totals(summary) -> list[list[str]]:
    return [["", "GSPMD", "Shardy", "Shardy/GSPMD"], *_cost_rows(summary.gspmd, summary.shardy)]
