"""`verdict(evidence)`: the one place a verdict is decided, as a table. Every verdict of the
enum is reached, and the first row that holds wins (check.md's order)."""

from __future__ import annotations

import pytest

from shardy_convert.commands.check.verdict import Evidence, Pair, Verdict, verdict

ROWS = [
    (Evidence(error=True, already_shardy=True), Verdict.ERROR),
    (Evidence(error=True), Verdict.ERROR),
    (Evidence(already_shardy=True), Verdict.ALREADY_SHARDY),
    (Evidence(placement=("parameter 0: ...",), same=True), Verdict.CONVERSION_DIFFERS),
    (Evidence(placement=("the Shardy result was compiled by GSPMD",)), Verdict.CONVERSION_DIFFERS),
    (Evidence(not_run="no test values for f8E4M3FN"), Verdict.PLACEMENT_ONLY),
    (Evidence(), Verdict.PLACEMENT_ONLY),  # placements compared, values never judged
    (Evidence(same=True), Verdict.SAME),
    (Evidence(same=True, relative=1e-7), Verdict.REASSOCIATED),
    (Evidence(same=False, relative=0.3, compiler=True), Verdict.COMPILER_DIFFERS),
    (Evidence(same=False, relative=0.3), Verdict.CONVERSION_DIFFERS),
    (Evidence(not_run="the CPU client does not run it", same=True), Verdict.PLACEMENT_ONLY),
]


@pytest.mark.parametrize(("evidence", "expected"), ROWS, ids=[str(v) for _, v in ROWS])
def test_the_evidence_decides_the_verdict(evidence, expected):
    assert verdict(evidence) is expected


def test_every_verdict_is_reached():
    assert {expected for _, expected in ROWS} == set(Verdict)


def test_the_pairs_of_programs_print_as_the_report_names_them():
    assert [str(p) for p in Pair] == [
        "GSPMD original vs Shardy result",
        "GSPMD original vs reference",
        "Shardy result vs reference",
    ]
    assert [p.with_reference for p in Pair] == [False, True, True]
