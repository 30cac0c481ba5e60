"""The verdicts a graph can get, the evidence they rest on, and `verdict`, the one place that
decides: a pure function of the evidence (`compare` gathers it, `render_text` and
`render_json` print it). What each verdict means: docs/check.md.

The order of the evidence is the order of the decision, the first that holds wins:
1. the graph did not convert, or a side did not compile: error;
2. the input already carries Shardy: already Shardy;
3. a parameter or annotated output placed otherwise, or the Shardy result compiled by GSPMD:
   conversion differs;
4. no values could be made or run: same placement, values not run;
5. all three programs agree: same program (bit for bit), or same program up to float
   reassociation;
6. the run that decided shows XLA at fault: compiler differs from the unpartitioned
   reference; else (the Shardy result computes other values): conversion differs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Verdict(enum.Enum):
    SAME = "same program"
    REASSOCIATED = "same program up to float reassociation"
    CONVERSION_DIFFERS = "conversion differs"
    COMPILER_DIFFERS = "compiler differs from the unpartitioned reference"
    PLACEMENT_ONLY = "same placement, values not run"
    ALREADY_SHARDY = "already Shardy"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class Pair(enum.Enum):
    """The two programs a comparison of values is between."""

    BOTH = "GSPMD original vs Shardy result"
    GSPMD_REFERENCE = "GSPMD original vs reference"
    SHARDY_REFERENCE = "Shardy result vs reference"

    def __str__(self) -> str:
        return self.value

    @property
    def with_reference(self) -> bool:
        return self is not Pair.BOTH


@dataclass(frozen=True)
class Evidence:
    """What `compare` found, as far as the verdict goes: `error`, `already_shardy`; the
    placement or partitioner differences (`placement`, each a line: the conversion's fault);
    why the values were not run (`not_run`); whether they agree (`same`; None: not judged),
    their largest relative difference, and whether the run that decided shows XLA at fault
    (`compiler`)."""

    error: bool = False
    already_shardy: bool = False
    placement: tuple[str, ...] = ()
    not_run: str | None = None
    same: bool | None = None
    relative: float = 0.0
    compiler: bool = False


def verdict(evidence: Evidence) -> Verdict:
    """The verdict the evidence gives (the module docstring's order)."""
    if evidence.error:
        return Verdict.ERROR
    if evidence.already_shardy:
        return Verdict.ALREADY_SHARDY
    if evidence.placement:
        return Verdict.CONVERSION_DIFFERS
    if evidence.not_run is not None or evidence.same is None:
        return Verdict.PLACEMENT_ONLY
    if evidence.same:
        return Verdict.SAME if evidence.relative == 0 else Verdict.REASSOCIATED
    return Verdict.COMPILER_DIFFERS if evidence.compiler else Verdict.CONVERSION_DIFFERS
