"""MLIR's diagnostics and locations as the package's located errors: where an error in a module
is (`LINE:COL` of the input text, `FILE:LINE:COL`, or an op's name), a parser's or verifier's
`MLIRError` as a `ModuleError` there, and verifying a module that way."""

from __future__ import annotations

from .. import regex
from ..errors import ModuleError
from .bindings import ir


def mlir_error(what: str, e: ir.MLIRError) -> ModuleError:
    """A ModuleError at the first diagnostic's location, quoting its message."""
    diags = list(e.error_diagnostics)
    if not diags:
        return ModuleError(f"{what}: {e}")
    first = diags[0]
    notes = "".join(
        f"\n  note: {n.message}" for n in first.notes if "see current operation" not in n.message
    )
    return ModuleError(f"{what}: {first.message}{notes}", location=format_location(first.location))


_FILE_LINE_COL = regex.lazy(r'"([^"]*)":(\d+):(\d+)')


def format_location(loc: ir.Location | str) -> str | None:
    """`loc("-":12:5)` -> `12:5`; `loc("x.py":3:1)` -> `x.py:3:1`; names kept; unknown -> None,
    and so is line 0 (MLIR's bytecode reader places its errors at `0:0`: no line of the input)."""
    text = str(loc)
    m = _FILE_LINE_COL().search(text)
    if m and m.group(2) == "0" and m.group(1) in ("-", ""):
        return None
    if m:
        file, line, col = m.groups()
        return f"{line}:{col}" if file in ("-", "") else f"{file}:{line}:{col}"
    if text in ("loc(unknown)", ""):
        return None
    return text.removeprefix("loc(").removesuffix(")")


def op_location(op: ir.Operation) -> str:
    """Where an error about `op` points: `12:5: stablehlo.custom_call` (its location, or
    `unknown location`, then its name)."""
    return f"{format_location(op.location) or 'unknown location'}: {op.name}"


def verify(op: ir.Operation, what: str = "the converted module does not verify") -> None:
    """Verifies `op`; a ModuleError saying `what`, at the first diagnostic, if it fails."""
    try:
        op.verify()
    except ir.MLIRError as e:
        raise mlir_error(what, e) from None
