"""Which partitioner XLA really compiled one program with, from XLA's own evidence.

Asking for Shardy (`use_shardy_partitioner`) is not proof that Shardy ran: XLA falls back to
GSPMD's propagation, silently but for one WARNING line, when the module holds GSPMD attributes
or ops (ir/gspmd_fallback.py has its predicate). The compiled program does not say which ran
(its HLO header, shardings and metadata look alike), so the evidence is, in this order:

1. XLA's line (`FALLBACK_LOG_LINE`) in what it wrote to file descriptor 2 while compiling
   (`Compiled.log`): it fell back.
2. No such line where this XLA's warnings reach us (`fallbacks_logged`: a probe program that
   must fall back shows the line): Shardy ran.
3. Warnings hidden (`TF_CPP_MIN_LOG_LEVEL` 2 or more, read once when jaxlib loads; the test
   suite runs so): XLA's own predicate on the module compiled, which is what decides.

Measured on jaxlib 0.7.1, 0.10.2 and 0.12.0.1 (CPU client): the line is written from
`py_client.cc` at WARNING level; GSPMD's deprecation warning is printed once per process, so it
is no evidence for one compile.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ...ir.gspmd_fallback import FALLBACK_LOG_LINE, fallback_sites

SHARDY, GSPMD = "Shardy", "GSPMD"

# Falls back on every jaxlib: a @Sharding custom call is GSPMD's own op.
_FALLBACK_PROBE = (
    "func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
    '  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"} : '
    "(tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n}\n"
)


@dataclass(frozen=True)
class PartitionerUsed:
    """The partitioner a compile asked for (`requested`), the one XLA used (`used`), and
    why we say so (`evidence`)."""

    requested: str
    used: str
    evidence: str

    @property
    def fell_back(self) -> bool:
        """Shardy asked for, GSPMD's propagation used."""
        return self.requested == SHARDY and self.used == GSPMD

    def __str__(self) -> str:
        if self.fell_back:
            return f"GSPMD, not the Shardy asked for: {self.evidence}"
        return f"{self.used}: {self.evidence}"


def partitioner_used(program: str | bytes, *, shardy: bool, log: str | None) -> PartitionerUsed:
    """Which partitioner compiled `program` (as handed to XLA) with Shardy asked for or not,
    given what XLA wrote to file descriptor 2 during that compile (`log`, None if not kept)."""
    if not shardy:
        return PartitionerUsed(GSPMD, GSPMD, "GSPMD asked for")
    if log is not None and FALLBACK_LOG_LINE in log:
        return PartitionerUsed(SHARDY, GSPMD, f'XLA\'s log: "{FALLBACK_LOG_LINE}"')
    if log is not None and fallbacks_logged():
        return PartitionerUsed(SHARDY, SHARDY, "XLA logs a fallback to GSPMD and logged none")
    sites = _sites(program)
    if sites:
        more = f" (and {len(sites) - 1} more)" if len(sites) > 1 else ""
        return PartitionerUsed(SHARDY, GSPMD, f"XLA falls back on {sites[0]}{more}")
    return PartitionerUsed(
        SHARDY, SHARDY, "XLA's fallback conditions do not hold (its log is not readable here)"
    )


@functools.cache
def fallbacks_logged() -> bool:
    """Whether this process reads XLA's fallback line (its WARNINGs are not hidden): found
    by compiling a program that falls back (through xla/ itself: compiled.py asks this
    module which partitioner ran, so this module does not ask it to compile)."""
    from ...xla import compiler
    from ...xla.options import compile_options

    probe = compiler.compile_program(_FALLBACK_PROBE, 1, compile_options(1, shardy=True))
    return FALLBACK_LOG_LINE in (probe.log or "")


def _sites(program: str | bytes) -> list:
    from ...formats import module as formats
    from ...ir.parse import new_context

    with new_context() as ctx:
        return fallback_sites(formats.load(program, ctx, trusted=True).operation)
