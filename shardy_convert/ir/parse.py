"""MLIR text and bytecode in and out: a context with every dialect the package reads, parsing
(after the nesting guard and the `i1` layout fix-up) and printing, and the text of a string
attribute read safely.

`import jax` costs ~0.6 s; `jaxlib.mlir` alone ~0.2 s, so nothing here imports jax.
MLIR diagnostics become `ModuleError`s located as `LINE:COL` of the input text.
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
from collections.abc import Iterator
from typing import Literal, TypeGuard, overload

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext

from .. import regex
from ..errors import ModuleError
from . import compat
from .bindings import sdy, stablehlo
from .debug_locations import parseable
from .diagnostics import mlir_error
from .legacy_i1 import i1_hex_for_parser
from .nesting import check_nesting

BYTECODE_MAGIC = b"ML\xefR"


# The dialects loaded when a context is made: those whose ops the package builds in Python
# (`ir.Operation.create`) or whose attributes it makes from text. Every other dialect jaxlib
# registers is loaded when it is first needed, as `mlir-opt` does: by the parser and the
# bytecode reader for what a module holds, and by the pass manager for what its passes declare
# (loading all ~20 up front, LLVM and NVVM among them, was 2.5-3.5 ms of every CLI start).
EAGER_DIALECTS = ("builtin", "func")


def new_context() -> ir.Context:
    """A context with every dialect jaxlib registers (stablehlo, chlo, func, sdy, vhlo, ...),
    those of `EAGER_DIALECTS`, StableHLO's and Shardy's loaded, the rest on first use."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    for name in EAGER_DIALECTS:
        ctx.get_dialect_descriptor(name)
    stablehlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    return ctx


# A reused context (making one costs ~3 ms) is renewed after this many uses: a context keeps
# every attribute and type ever made in it.
_CONTEXT_USES = 32
# Contexts between uses, each with its count of uses. A pool, not one per thread: the plugin
# wrapper's compiles come on threads Python did not start (JAX compiles on its own thread
# pool), whose Python thread state lives for one call only; a context kept in such a thread's
# `threading.local` is destroyed while CPython clears that state, and MLIR's context, which
# releases the GIL as it goes, crashed the process there (SIGSEGV in PyGILState_Release).
_idle: list[tuple[ir.Context, int]] = []
_idle_lock = threading.Lock()


@contextlib.contextmanager
def pooled_context() -> Iterator[ir.Context]:
    """A context for one more module, entered, for as long as the block runs (the plugin
    wrapper converts each program in one); reused from the pool where
    `compat.contexts_reusable` says it may be, put back after, never shared by two blocks."""
    reusable = compat.contexts_reusable()
    with _idle_lock:
        ctx, used = _idle.pop() if _idle and reusable else (None, 0)
    if ctx is None or used >= _CONTEXT_USES:
        ctx, used = new_context(), 0
    with ctx:
        yield ctx
    if reusable:
        with _idle_lock:
            _idle.append((ctx, used + 1))


def is_bytecode(data: str | bytes) -> TypeGuard[bytes]:
    return isinstance(data, bytes) and data.startswith(BYTECODE_MAGIC)


def parse_module(data: str | bytes, ctx: ir.Context) -> ir.Module:
    """Parses MLIR text or bytecode and verifies it; raises ModuleError at the first error.

    Bytecode is parsed in this process: only for bytecode we wrote ourselves. Untrusted
    bytecode goes through `formats.load`, which reads it in a child process.
    """
    if isinstance(data, bytes) and not is_bytecode(data):
        data = decode_text(data)
    if isinstance(data, str):
        check_no_nul(data)
        check_nesting(data.encode("utf-8"))
        data = parseable(i1_hex_for_parser(data))
    compat.forget_dead_operations(ctx)
    try:
        return ir.Module.parse(data, context=ctx)
    except ir.MLIRError as e:
        what = "cannot read the bytecode" if is_bytecode(data) else "cannot parse the module"
        raise mlir_error(what, e) from None


NOT_A_MODULE = "input is neither MLIR text nor bytecode, nor HLO text or proto"


def decode_text(data: bytes, offset: int = 0) -> str:
    """Text input as str; a ModuleError located at the first byte that is not UTF-8 (`offset`:
    where `data` starts in the input, for the message)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ModuleError(
            f"{NOT_A_MODULE} (byte {offset + e.start} is not UTF-8)", location=f"{line}:{column}"
        ) from None


def check_no_nul(text: str) -> None:
    """A ModuleError at the first NUL character: no MLIR or HLO text holds one, and MLIR's
    lexer reads past them as if they were not there (measured: 16 zero bytes, or 1 GB of them,
    parse as an empty module)."""
    at = text.find("\0")
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        column = at - text.rfind("\n", 0, at)
        raise ModuleError(f"{NOT_A_MODULE} (it holds a NUL byte)", location=f"{line}:{column}")


@overload
def print_module(
    module: ir.Module, emit: Literal["text"] = "text", locations: bool = False
) -> str: ...
@overload
def print_module(
    module: ir.Module, emit: Literal["bytecode"], locations: bool = False
) -> bytes: ...
@overload
def print_module(module: ir.Module, emit: str, locations: bool = False) -> str | bytes: ...


def print_module(module: ir.Module, emit: str = "text", locations: bool = False) -> str | bytes:
    """`text` (MLIR assembly) or `bytecode` (MLIR bytecode) of a module. Text carries
    `loc(...)` only with `locations` (when the input text had them; bytecode always keeps
    them), so a module without locations does not come back with `loc("-":L:C)` on every op."""
    if emit == "bytecode":
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()
    return str(module.operation.get_asm(enable_debug_info=locations))


def has_locations(data: str | bytes) -> bool:
    """Whether MLIR text spells out locations (`loc(...)`, `#loc` aliases)."""
    if is_bytecode(data):
        return False
    return (_LOC.search(data) if isinstance(data, str) else _LOC_BYTES().search(data)) is not None


# `re` finds a literal in about 60% of the time of `in` on a 0.7 MB module without it.
_LOC = re.compile(r"loc\(")
_LOC_BYTES = regex.lazy(rb"loc\(")


def string_value(attr: ir.Attribute) -> str | None:
    """The text of a StringAttr, or None if `attr` is not one. Bytes that are not UTF-8 (MLIR
    allows `"\\FF"`) become U+FFFD: jaxlib's `.value` would raise on them."""
    if not isinstance(attr, ir.StringAttr):
        return None
    return attr.value_bytes.decode("utf-8", "replace")
