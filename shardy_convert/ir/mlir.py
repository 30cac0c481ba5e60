"""The MLIR boundary: a context, parsing, printing and pass pipelines on jaxlib's bindings.

`import jax` costs ~0.6 s; `jaxlib.mlir` alone ~0.2 s, so nothing here imports jax.
MLIR diagnostics become `ModuleError`s located as `LINE:COL` of the input text.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable, Sequence

import numpy as np
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir._mlir_libs import _jax_mlir_ext

from ..errors import ModuleError
from . import analyses, compat
from .bindings import sdy, stablehlo
from .legacy_i1 import i1_hex_for_parser

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


# A thread's reused context (making one costs ~3 ms) is renewed after this many uses: a
# context keeps every attribute and type ever made in it.
_CONTEXT_USES = 32
_thread = threading.local()


def thread_context() -> ir.Context:
    """The calling thread's context for one more module (the plugin wrapper converts each
    program in it); a new context each time where `compat.contexts_reusable` says no."""
    ctx, used = getattr(_thread, "context", (None, 0))
    if ctx is None or used >= _CONTEXT_USES or not compat.contexts_reusable():
        ctx, used = new_context(), 0
    _thread.context = (ctx, used + 1)
    return ctx


def is_bytecode(data: str | bytes) -> bool:
    return isinstance(data, bytes) and data.startswith(BYTECODE_MAGIC)


def parse_module(data: str | bytes, ctx: ir.Context) -> ir.Module:
    """Parses MLIR text or bytecode and verifies it; raises ModuleError at the first error.

    Bytecode is parsed in this process: only for bytecode we wrote ourselves. Untrusted
    bytecode goes through `formats.load`, which reads it in a child process.
    """
    if isinstance(data, bytes) and not is_bytecode(data):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
            raise ModuleError(
                f"input is neither MLIR text nor bytecode, nor HLO text or proto (byte {e.start} "
                "is not UTF-8)",
                location=f"{line}:{column}",
            ) from None
    if isinstance(data, str):
        check_nesting(data.encode("utf-8"))
        data = i1_hex_for_parser(data)
    compat.forget_dead_operations(ctx)
    try:
        return ir.Module.parse(data, context=ctx)
    except ir.MLIRError as e:
        raise mlir_error("cannot parse the module", e) from None


# MLIR's text parser recurses once per nested bracket and overflows the C stack (SIGSEGV) at a
# few thousand levels (measured: 4,000 nested regions, 8,000 nested arrays on an 8 MB stack).
# Real modules nest a few dozen deep; refuse anything deeper than this before parsing.
MAX_NESTING = 256
_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[list(b"([{<")] = 1
_DELTA[list(b")]}>")] = -1
# String literals and comments: their brackets do not nest.
_QUOTED = re.compile(rb'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def check_nesting(text: bytes) -> None:
    """Raises ModuleError at the first bracket nested deeper than MAX_NESTING.

    Counts `( [ { <` against `) ] } >` outside strings and comments, not `->`, `<=`, `>=`.
    Depth is measured from the lowest level seen so far, so stray closing brackets cannot
    hide a deep nest behind them: in `)))((((`, the depth reaches 4. One vectorized pass over
    the text finds the brackets and quotes; the rest looks at those positions only (about a
    tenth of a module's characters), so this costs a few percent of parsing the module.
    """
    if len(text) <= MAX_NESTING:
        return
    chars = np.frombuffer(text, dtype=np.uint8)
    pos, comments = _brackets_and_quotes(chars)
    here = chars[pos]
    delta = np.take(_DELTA, here)
    if np.count_nonzero(delta > 0) <= MAX_NESTING:  # too few openers to nest that deep
        return
    inside = _in_strings_or_comments(text, chars, pos, here, comments)
    counted = (delta != 0) & ~_is_operator(chars, pos, here) & ~inside
    pos, delta = pos[counted], delta[counted]
    level = np.cumsum(delta, dtype=_index_type(text))
    floor = np.minimum.accumulate(np.minimum(level, 0))
    deep = np.flatnonzero(level - floor > MAX_NESTING)
    if deep.size == 0:
        return
    at = int(pos[deep[0]])
    line = text.count(b"\n", 0, at) + 1
    column = at - (text.rfind(b"\n", 0, at) + 1) + 1
    raise ModuleError(
        f"brackets nest more than {MAX_NESTING} deep; refusing to parse (MLIR's parser would "
        "overflow the stack)",
        location=f"{line}:{column}",
    )


# Characters per step of the scan: its masks stay in the CPU cache and are reused. Masks of
# the whole text (0.7 MB each, a dozen) cost more in the kernel's page faults than in the
# compares (measured: a third of the scan's time was system time).
_SCAN_CHUNK = 1 << 17


def _brackets_and_quotes(chars: np.ndarray) -> tuple[np.ndarray, bool]:
    """Positions of `( ) [ ] { } < > "`, and whether `//` occurs (SIMD compares, several
    times cheaper than a table lookup per character; `//` as two adjacent slashes)."""
    size = min(len(chars), _SCAN_CHUNK)
    found, mask = np.empty(size, bool), np.empty(size, bool)
    positions, slashes = [], []
    index = _index_type(chars)
    for start in range(0, len(chars), _SCAN_CHUNK):
        part = chars[start : start + _SCAN_CHUNK]
        hit, other = found[: len(part)], mask[: len(part)]
        np.equal(part, ord('"'), out=hit)
        for c in b"()[]{}<>":
            hit |= np.equal(part, c, out=other)
        positions.append(np.flatnonzero(hit).astype(index) + index(start))
        slashes.append(np.flatnonzero(np.equal(part, ord("/"), out=other)) + start)
    slash = np.concatenate(slashes)
    return np.concatenate(positions), bool(np.any(slash[1:] - slash[:-1] == 1))


def _index_type(text) -> type:
    """Positions and levels in 32 bits where they fit: half the memory to fault in."""
    return np.int32 if len(text) < 2**31 else np.int64


def _is_operator(chars: np.ndarray, pos: np.ndarray, here: np.ndarray) -> np.ndarray:
    """Which bracket positions are the `>` of `->` or the `<`/`>` of `<=`/`>=`."""
    angle = (here == ord("<")) | (here == ord(">"))
    at, here = pos[angle], here[angle]
    prev = chars[np.maximum(at - 1, 0)]
    after = chars[np.minimum(at + 1, len(chars) - 1)]
    arrow = (here == ord(">")) & (prev == ord("-")) & (at > 0)
    compare = (after == ord("=")) & (at + 1 < len(chars))
    found = np.zeros(len(pos), bool)
    found[angle] = arrow | compare
    return found


def _in_strings_or_comments(
    text: bytes, chars: np.ndarray, pos: np.ndarray, here: np.ndarray, comments: bool
) -> np.ndarray:
    """Which of the positions `pos` (brackets and every quote, in order; `here` their
    characters; `chars` the text as bytes) lie inside string literals (or comments, where
    `comments`: the text has a `//`).

    Without `//` (what MLIR's printers write): a quote not preceded by an odd run of
    backslashes opens or closes a string, so a position is inside one when an odd number of
    such quotes precede it. With `//` somewhere, quotes inside comments would flip that
    parity, so the regex below lexes both exactly.
    """
    if comments:
        spans = np.array([m.span() for m in _QUOTED.finditer(text)], dtype=np.int64)
        if not len(spans):
            return np.zeros(len(pos), bool)
        k = np.searchsorted(spans[:, 0], pos, side="right") - 1
        return (k >= 0) & (pos < spans[np.maximum(k, 0), 1])
    quote = here == ord('"')
    if b"\\" in text:  # a quote after an odd run of backslashes is escaped
        quotes = pos[quote]
        others = np.flatnonzero(chars != ord("\\"))  # each quote is one of them
        before = np.searchsorted(others, quotes) - 1
        run = quotes - 1 - np.where(before >= 0, others[np.maximum(before, 0)], -1)
        quote[quote] = run % 2 == 0
    return np.logical_xor.accumulate(quote)


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


def op_location(op: ir.Operation) -> str:
    """Where an error about `op` points: `12:5: stablehlo.custom_call` (its location, or
    `unknown location`, then its name)."""
    return f"{format_location(op.location) or 'unknown location'}: {op.name}"


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
    if is_bytecode(data):
        return False
    return (_LOC.search(data) if isinstance(data, str) else _LOC_BYTES.search(data)) is not None


# `re` finds a literal in about 60% of the time of `in` on a 0.7 MB module without it.
_LOC = re.compile(r"loc\(")
_LOC_BYTES = re.compile(rb"loc\(")


def run_pipeline(
    module: ir.Module | ir.Operation,
    steps: Sequence[str | tuple[str, PythonPass]],
    verify_each: bool = True,
    given: dict | None = None,
) -> None:
    """Runs Shardy/MLIR pass names and named Python passes, in order. Consecutive pass names
    share one PassManager; a Python pass runs directly between them (jaxlib 0.7.1's
    `PassManager.add` takes no Python callables, so this is the one way on every release).
    With `verify_each` False, MLIR's verifier does not run after every pass (a whole-module
    verification costs about as much as parsing it); the caller verifies once at the end.

    A Python pass's exception (ShardyConvertError, or a bug) stops the pipeline and is
    re-raised as it is: a bug is not turned into a conversion failure here. What one pass
    found by walking the module is kept for the next while the steps preserve it (`analyses`),
    starting with the facts `given` (e.g. the `walker.Mentions` of the text it was parsed
    from, under the key `("mentions", module operation)`).
    """
    op = module.operation
    if any(isinstance(step, str) for step in steps):
        check_no_declarations(op)
    with op.context, analyses.keeping(given) as forget:
        for k, group in enumerate(_groups(steps)):
            if isinstance(group, tuple):
                _, run = group
                run(op)
                if not analyses.preserved_by(run):
                    forget()
                if verify_each:
                    _verify_module(op, "pass pipeline failed")
                continue
            if k and not verify_each:
                # A Python pass came before (pass names are grouped): Shardy's C++ passes
                # may crash on invalid IR, so what our passes made is verified first.
                _verify_module(op)
            _run_pass_manager(op, group, verify_each)
            forget()


def _groups(
    steps: Sequence[str | tuple[str, PythonPass]],
) -> list[list[str] | tuple[str, PythonPass]]:
    """Runs of consecutive pass names as lists; each Python pass on its own."""
    groups: list[list[str] | tuple[str, PythonPass]] = []
    for step in steps:
        if not isinstance(step, str):
            groups.append(step)
        elif groups and isinstance(groups[-1], list):
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups


def _run_pass_manager(op: ir.Operation, names: list[str], verify_each: bool) -> None:
    pm = passmanager.PassManager("builtin.module")
    pm.enable_verifier(verify_each)
    for name in names:
        pm.add(name)
    try:
        pm.run(op)
    except ir.MLIRError as e:
        raise mlir_error("pass pipeline failed", e) from None


def _verify_module(op: ir.Operation, what: str = "the converted module does not verify") -> None:
    try:
        op.verify()
    except ir.MLIRError as e:
        raise mlir_error(what, e) from None


def check_no_declarations(module: ir.Operation) -> None:
    """Raises ModuleError at the first function declaration (a `func.func` without a body).

    Shardy's passes (sdy-import-pipeline, sdy-lift-inlined-meshes, sdy-close-shardings, ...)
    crash the process with SIGSEGV on a module holding one, even without any sharding on it.
    """
    found = _declarations(module)
    if found:
        name = string_value(found[0].attributes["sym_name"])
        raise ModuleError(
            f"function @{name} is only declared (it has no body); Shardy's passes cannot "
            "process function declarations",
            location=format_location(found[0].location),
        )


def _declarations(module: ir.Operation) -> list[ir.Operation]:
    """Body-less `func.func`s of a module and of the modules nested in it (a function lives
    in a symbol table; looking there is cheaper than walking every op)."""
    found: list[ir.Operation] = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func" and not len(op.regions[0].blocks):
            found.append(op)
        elif op.name == "builtin.module" and len(op.regions[0].blocks):
            found += _declarations(op)
    return found


def string_value(attr: ir.Attribute) -> str | None:
    """The text of a StringAttr, or None if `attr` is not one. Bytes that are not UTF-8 (MLIR
    allows `"\\FF"`) become U+FFFD: jaxlib's `.value` would raise on them."""
    if not isinstance(attr, ir.StringAttr):
        return None
    return attr.value_bytes.decode("utf-8", "replace")
