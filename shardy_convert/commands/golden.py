"""A golden file and what a test produced, compared as `diff` compares them: the comparison of
`shardy_convert.testing`'s snapshot extensions (syrupy), kept free of pytest and syrupy.

A golden file holds a module (GSPMD or Shardy, text), a torch_xla dump of several graphs, or a
sharding audit report (JSON): which one is read from the content, as `diff` does
(formats/audit.looks_like_report). Modules and dumps compare by placement, graph by graph
(commands/diff.py), reports tensor by tensor (commands/diff_audit.py): a respelled placement
(V1 vs V2 vs `#sdy.sharding`, other axis names, `""` vs `{replicated}`) is equal, a moved
tile is a difference located in the golden file (`FILE:LINE:COL: arg 2 of @main: ...`).
"""

from __future__ import annotations

from ..errors import UsageError, plural
from ..formats.audit import looks_like_report
from .diff import Comparison, diff
from .diff_audit import diff_reports


def compare(
    golden: str | bytes, received: str | bytes, names: tuple[str, str] = ("golden", "received")
) -> Comparison:
    """`golden` against `received`: differences located in `names[0]` (and `names[1]`). A
    report against a module (or the other way round) is a UsageError: neither has the
    other's placements."""
    reports = (looks_like_report(golden), looks_like_report(received))
    if all(reports):
        return diff_reports(golden, received, names)
    if any(reports):
        report, other = names if reports[0] else names[::-1]
        raise UsageError(
            f"{report} is a sharding audit report and {other} is not: a golden report is "
            "compared with a report, a golden module or dump with a module or dump"
        )
    return diff(golden, received, names)


def report_lines(result: Comparison) -> list[str]:
    """What `diff` prints for a comparison, notes first: the lines a failed test shows."""
    lines = [f"note: {note}" for note in result.notes]
    lines += [str(d) for d in result.differences]
    if result.equal:
        return [*lines, f"EQUAL: {plural(result.placements, 'placement')} compared"]
    return [*lines, f"DIFFERENT: {plural(len(result.differences), 'difference')}"]
