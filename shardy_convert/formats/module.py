"""The three forms a module arrives in, and back: MLIR text, MLIR bytecode, and the StableHLO
portable artifact (VHLO bytecode) that XLA's PJRT C-API client hands a plugin. XLA's own forms
(HLO text and module protos, `formats.hlo`) are read too, as StableHLO, and written as MLIR.

A portable artifact is MLIR bytecode whose producer string is `StableHLO_vX.Y.Z`; jaxlib
serializes and deserializes it (`jaxlib._jax.mlir`, named in xla/compat.py). Serializing a
Shardy module exports Shardy to its round-trip form (`xla.sdy.meshes` / `xla.sdy.sharding`
frontend attributes next to V2 `mhlo.sharding` strings), which plugins re-import.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Literal, NoReturn, cast, overload

from .. import regex
from ..errors import ModuleError, ShardyConvertError
from ..ir import compat
from ..ir.bindings import ir, stablehlo
from ..ir.diagnostics import format_location, mlir_error
from ..ir.parse import (
    check_no_nul,
    decode_text,
    is_bytecode,
    new_context,
    parse_module,
    print_module,
)
from ..ir.walker import Mentions
from . import bytecode, hlo

FORMS = ("text", "bytecode", "portable")
_PORTABLE_PRODUCER = "StableHLO_v"


def producer(data: str | bytes) -> str | None:
    """The producer string of MLIR bytecode (`MLIR23.0.0git`, `StableHLO_v1.13.3`)."""
    if not is_bytecode(data):
        return None
    assert isinstance(data, bytes)  # is_bytecode
    try:
        return bytecode.header(data)[1]
    except bytecode.BytecodeError:
        return None


def detect(data: str | bytes) -> str:
    """`text`, `bytecode` or `portable`: the form an output keeps by default (text for HLO
    input, `hlo.kind` tells it apart)."""
    if not is_bytecode(data):
        return "text"
    name = producer(data) or ""
    return "portable" if name.startswith(_PORTABLE_PRODUCER) else "bytecode"


def portable_version(data: str | bytes) -> str | None:
    name = producer(data) or ""
    return name.removeprefix(_PORTABLE_PRODUCER) if name.startswith(_PORTABLE_PRODUCER) else None


def check_type(data: object) -> str | bytes:
    """`data` if it is a module as the library takes it (`str` text, `bytes` text, bytecode,
    portable artifact, HLO text or proto); TypeError otherwise (a path is not read for the
    caller)."""
    if isinstance(data, (str, bytes)):
        return data
    hint = " (read the file first)" if isinstance(data, os.PathLike) else ""
    raise TypeError(
        f"a module must be str or bytes (MLIR text, bytecode, a portable artifact, HLO), "
        f"not {type(data).__name__}{hint}"
    )


def check_version(version: str) -> None:
    """Raises ShardyConvertError unless `version` is a StableHLO version jaxlib can write."""
    low, high = stablehlo.get_minimum_version(), stablehlo.get_current_version()
    parts = version.split(".")
    if len(parts) == 3 and all(p.isascii() and p.isdigit() and len(p) < 6 for p in parts):
        number = tuple(map(int, parts))
        if version_number(low) <= number <= version_number(high):
            return
    raise ShardyConvertError(
        f'target version "{version[:40]}" is not a StableHLO version from {low} to {high}'
    )


def version_number(version: str) -> tuple[int, ...]:
    """(1, 13, 3) for "1.13.3", to order versions; ValueError for what has no such parts."""
    return tuple(int(p) for p in version.split("."))


def load(
    data: str | bytes, ctx: ir.Context, *, trusted: bool = False, program: bool = True
) -> ir.Module:
    """Parses any of the three forms, or HLO (`formats.hlo`), into a StableHLO module in `ctx`.

    Bytecode (plain or portable) and HLO are first read in a child process and come back as
    text: MLIR's bytecode reader is not hardened against corrupt input and can abort or corrupt
    memory (measured: `double free or corruption`, nanobind `terminate`), and XLA's HLO readers
    abort on a failed CHECK, which must not take the caller's process down. The text keeps
    every location. Empty input is an error. `trusted` bytes (a framework's own program,
    handed over in-process by the PJRT plugin wrapper) are read in this process. A module
    that defines no function is no `program` and an error (`opt` takes any module).
    """
    check_type(data)
    if not data or data.isspace():  # isspace stops at the first other character
        raise ModuleError("the input is empty")
    problem = hlo.proto_problem(data)
    if problem is not None:
        raise ModuleError(f"cannot read the {hlo.PROTO}: {problem}")
    risky = is_bytecode(data) or hlo.kind(data) is not None
    if risky and ISOLATE_BYTECODE and not trusted:
        module = parse_module(read_isolated(data), ctx)
    else:
        module = _load_in_process(data, ctx)
    if program:
        check_program(module)
    return module


def check_program(module: ir.Module) -> None:
    """A ModuleError unless `module` defines a function: `module {}` (or one holding only
    meshes) is no program, whatever it was read from."""
    if not any(op.operation.name == "func.func" for op in module.body.operations):
        raise ModuleError(
            "the module defines no function: it holds no program",
            location=format_location(module.operation.location),
        )


HEAD = 1 << 16  # the first bytes of an input, enough to tell that it is no program


def is_binary(head: bytes) -> bool:
    """Whether an input starting with `head` is read as bytes (bytecode, a portable artifact,
    what may be an HLO proto), not as text."""
    return is_bytecode(head) or hlo.looks_binary(head)


def check_head(head: bytes, whole: bool) -> None:
    """The first bytes of an input (`whole`: all of it): a ModuleError, located, when they
    already say it is no program: bytes that are neither bytecode nor an HLO proto's start
    and are not UTF-8 text, or hold a NUL byte. A command refuses 1 GB of zeros this way
    without reading it."""
    if is_binary(head):
        return
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        cut = not whole and e.reason == "unexpected end of data" and e.end == len(head)
        text = decode_text(head[: e.start] if cut else head)  # a character cut at the end
    check_no_nul(text)


def mentions(data: str | bytes) -> Mentions | None:
    """What the text `load` parses says of the ops a walk would find (`walker.Mentions`):
    None for bytecode, portable artifacts and HLO, whose MLIR text is made elsewhere, and for
    text that defines attribute aliases."""
    if is_bytecode(data) or hlo.kind(data) is not None:
        return None
    return Mentions.of(data)


# Read untrusted bytecode and HLO in a child process (see `load`); ~0.3 s per input.
ISOLATE_BYTECODE = bool(sys.executable)
_CHILD_TIMEOUT = 600
_CHILD = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from shardy_convert.formats.module import _isolated_main; _isolated_main()"
)


def read_isolated(data: str | bytes) -> str:
    """MLIR text (with locations) of bytecode or HLO `data`, read by a child process.

    Raises ModuleError with the reader's own message, or saying that it crashed.
    """
    what = _what(data)
    data = data.encode("utf-8") if isinstance(data, str) else data
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        child = subprocess.run(
            [sys.executable, "-c", _CHILD.format(root=root)],
            input=data,
            capture_output=True,
            timeout=_CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ModuleError(f"cannot read the {what}: no result after {_CHILD_TIMEOUT} s") from None
    if child.returncode == 0:
        try:
            return child.stdout.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModuleError(
                f"cannot read the {what}: byte {e.start} of its text is not UTF-8"
            ) from None
    _child_error(child, what)


_FATAL = regex.lazy(r"(?:F\d{4} [\d:. ]+|[\d-]+ [\d:.]+: F )[^\]]*:\d+\] ")


def _what(data: str | bytes) -> str:
    """What is read, for messages: `bytecode`, `HLO text`, `HLO module proto`."""
    return hlo.kind(data) or "bytecode"


def _child_error(child: subprocess.CompletedProcess, what: str = "bytecode") -> NoReturn:
    if child.returncode == 1 and child.stdout.startswith(b"{"):
        import json  # only for a child's report of a failure (cold start: 3 ms)

        raise _reported_error(json.loads(child.stdout), what)
    if child.returncode < 0:
        try:
            how = signal.Signals(-child.returncode).name
        except ValueError:
            how = f"signal {-child.returncode}"
    else:
        how = f"exit code {child.returncode}"
    lines = child.stderr.decode("utf-8", "replace").strip().splitlines()
    # A failed CHECK's own line (glog: `F0000 00:00:... file.cc:188] Check failed: ...`, older
    # `2025-01-01 00:00:00.000: F file.cc:164] ...`)
    # says more than the stack trace after it.
    fatal = [line.split("] ", 1)[-1] for line in lines if _FATAL().match(line)]
    last = fatal[:1] or lines[-1:]
    detail = f": {last[0][:200].strip()}" if last else ""
    reader = "MLIR's reader" if what == "bytecode" else "XLA's reader"
    raise ModuleError(f"cannot read the {what}: {reader} crashed on it ({how}){detail}")


def _reported_error(report: dict, what: str) -> ModuleError:
    """The error the child reported, raised here: ours as it was (message and location), any
    other exception (jaxlib's own) named by its type."""
    if report["ours"]:
        return ModuleError(report["message"], location=report["location"])
    return ModuleError(f"cannot read the {what}: {report['type']}: {report['message']}")


def _isolated_main() -> None:
    """The child of `read_isolated`: bytecode or HLO on stdin; on stdout its text, or the
    exception as data (JSON) for the parent to raise."""
    data = sys.stdin.buffer.read()
    try:
        with new_context() as ctx:
            module = _load_in_process(data, ctx)
            text = module.operation.get_asm(binary=True, enable_debug_info=True)
    except Exception as e:  # raised by the parent, see `_reported_error`
        import json  # only to report a failure (cold start: 3 ms)

        ours = isinstance(e, ShardyConvertError)
        report = {
            "ours": ours,
            "type": type(e).__name__,
            "message": e.message if isinstance(e, ShardyConvertError) else str(e),
            "location": e.location if isinstance(e, ShardyConvertError) else None,
        }
        sys.stdout.write(json.dumps(report))
        sys.exit(1)
    sys.stdout.buffer.write(cast(bytes, text))  # get_asm(binary=True) gives bytes


def _load_in_process(data: str | bytes, ctx: ir.Context) -> ir.Module:
    if hlo.kind(data) is not None:
        return hlo.load(data, ctx)
    if detect(data) != "portable" or not isinstance(data, bytes):  # portable: bytecode
        return parse_module(data, ctx)
    try:
        return deserialize_portable(data, ctx)
    except ir.MLIRError as e:
        raise mlir_error("cannot read the portable artifact", e) from None
    except Exception as e:  # jaxlib raises its own error type for bad artifacts
        raise ModuleError(f"cannot read the portable artifact: {e}") from None


def deserialize_portable(data: bytes, ctx: ir.Context) -> ir.Module:
    """A StableHLO portable artifact as a module in `ctx`, read by jaxlib in this process (only
    for bytes we trust, see `load`). Raises what jaxlib raises (`ir.MLIRError`, or its own
    error type on bytes that are no artifact)."""
    from ..xla import compat as xla  # portable artifacts only (cold start)

    found = xla.deserialize_portable_artifact(data, ctx)
    if not isinstance(found, str):
        return found
    compat.forget_dead_operations(ctx)  # jaxlib 0.7.1 hands back text, parsed here
    return ir.Module.parse(found, context=ctx)


@overload
def save(
    module: ir.Module, form: Literal["text"], target: str | None = None, locations: bool = False
) -> str: ...
@overload
def save(
    module: ir.Module,
    form: Literal["bytecode", "portable"],
    target: str | None = None,
    locations: bool = False,
) -> bytes: ...
@overload
def save(
    module: ir.Module, form: str, target: str | None = None, locations: bool = False
) -> str | bytes: ...


def save(
    module: ir.Module, form: str, target: str | None = None, locations: bool = False
) -> str | bytes:
    """Prints a module as text (with `loc(...)` if `locations`), bytecode, or a portable
    artifact for StableHLO `target` (default: the newest version this jaxlib writes). A
    portable artifact is written in this process when `portable.py` can (the same bytes, in less
    than half the time), else by jaxlib's writer."""
    if form != "portable":
        return print_module(module, form, locations)

    target = target or stablehlo.get_current_version()
    from . import portable  # its export and probes: only when an artifact is written (cold start)

    written = portable.serialize(module, target)  # in this process, when it can
    if written is not None:
        return written
    from ..xla import compat as xla

    try:
        return xla.serialize_portable_artifact(print_module(module, "bytecode"), target)
    except Exception as e:  # an op the target version cannot express, a bad version
        raise ModuleError(f"cannot write a portable artifact for StableHLO {target}: {e}") from None


def through_vhlo(module: ir.Module, ctx: ir.Context) -> ir.Module:
    """`module` serialized to a portable artifact and read back (in this process: we wrote
    it): the form every module that went through VHLO has, attributes at their default value
    dropped. A module VHLO cannot hold comes back as it is."""
    try:
        return _load_in_process(save(module, "portable"), ctx)
    except ModuleError:
        return module
