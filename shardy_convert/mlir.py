"""The MLIR boundary: a context, parsing, printing and pass pipelines on jaxlib's bindings.

`import jax` costs ~0.6 s; `jaxlib.mlir` alone ~0.2 s, so nothing here imports jax.
MLIR diagnostics become `ModuleError`s located as `LINE:COL` of the input text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import sdy, stablehlo

from .errors import ModuleError

BYTECODE_MAGIC = b"ML\xefR"

# A Python pass: (module operation) -> None; raise ShardyConvertError to fail.
PythonPass = Callable[[ir.Operation], None]


def new_context() -> ir.Context:
    """A context with every dialect jaxlib registers (stablehlo, chlo, mhlo, func, sdy, ...)."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    return ctx


def is_bytecode(data: str | bytes) -> bool:
    return isinstance(data, bytes) and data.startswith(BYTECODE_MAGIC)


def parse_module(data: str | bytes, ctx: ir.Context) -> ir.Module:
    """Parses MLIR text or bytecode and verifies it; raises ModuleError at the first error."""
    if isinstance(data, bytes) and not is_bytecode(data):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModuleError(
                f"input is neither MLIR text nor MLIR bytecode (byte {e.start} is not UTF-8)"
            ) from None
    try:
        return ir.Module.parse(data, context=ctx)
    except ir.MLIRError as e:
        raise mlir_error("cannot parse the module", e) from None


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


_FILE_LINE_COL = re.compile(r'"([^"]*)":(\d+):(\d+)')


def format_location(loc: ir.Location | str) -> str | None:
    """`loc("-":12:5)` -> `12:5`; `loc("x.py":3:1)` -> `x.py:3:1`; names kept; unknown -> None."""
    text = str(loc)
    m = _FILE_LINE_COL.search(text)
    if m:
        file, line, col = m.groups()
        return f"{line}:{col}" if file in ("-", "") else f"{file}:{line}:{col}"
    if text in ("loc(unknown)", ""):
        return None
    return text.removeprefix("loc(").removesuffix(")")


def print_module(module: ir.Module, emit: str = "text", locations: bool = False) -> str | bytes:
    """`text` (MLIR assembly) or `bytecode` (MLIR bytecode) of a module. Text carries
    `loc(...)` only with `locations` (when the input text had them; bytecode always keeps
    them), so a module without locations does not come back with `loc("-":L:C)` on every op."""
    if emit == "bytecode":
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()
    return module.operation.get_asm(enable_debug_info=locations)


def has_locations(data: str | bytes) -> bool:
    """Whether MLIR text spells out locations (`loc(...)`, `#loc` aliases)."""
    return not is_bytecode(data) and ("loc(" in data if isinstance(data, str) else b"loc(" in data)


def run_pipeline(module: ir.Module, steps: Sequence[str | tuple[str, PythonPass]]) -> None:
    """Runs Shardy/MLIR pass names and named Python passes, in order, on one PassManager.

    A Python pass raises ShardyConvertError; it is re-raised after the pipeline stops.
    """
    failures: list[BaseException] = []

    def wrap(name: str, fn: PythonPass):
        def run(op: ir.Operation, pass_) -> None:
            try:
                fn(op)
            except Exception as e:  # re-raised below with its own type and location
                failures.append(e)
                pass_.signal_pass_failure()

        run.__name__ = name
        return run

    with module.context:
        pm = passmanager.PassManager("builtin.module")
        for step in steps:
            if isinstance(step, str):
                pm.add(step)
            else:
                name, fn = step
                pm.add(wrap(name, fn), name)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            if failures:
                raise failures[0] from None
            raise mlir_error("pass pipeline failed", e) from None
    if failures:
        raise failures[0]
