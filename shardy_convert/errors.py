"""The one error hierarchy of shardy-convert.

Every failure the library reports is a `ShardyConvertError`. Messages quote the bad input, say
what was expected and where; the CLI prints them as ``FILE[:graph N]:LOC: error: MESSAGE``.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, TypeVar

_L = TypeVar("_L", bound="Located")
T = TypeVar("T")


def place(file: str | None = None, graph: int | None = None, location: str | None = None) -> str:
    """Where something is, as every message of ours writes it: ``FILE:graph N:LOC``, the parts
    not known left out (empty when none is)."""
    parts = (file, None if graph is None else f"graph {graph}", location)
    return ":".join(p for p in parts if p)


class Located:
    """What an error and a warning share: a message and where it applies.

    `location` is an MLIR-style location (``loc("x.py":3:1)`` or ``arg 0 of @main``) or None;
    `file` and `graph` are filled in by whoever knows them (the CLI, the dump reader).
    `describe()` is the one line a user reads: ``FILE[:graph N]:LOC: KIND: MESSAGE``.
    """

    kind: ClassVar[str]

    def __init__(
        self,
        message: str,
        *,
        location: str | None = None,
        file: str | None = None,
        graph: int | None = None,
    ):
        super().__init__(message)  # type: ignore[call-arg]  # a mixin: Exception is next
        self.message = message
        self.location = location
        self.file = file
        self.graph = graph

    def located(
        self: _L, *, location: str | None = None, file: str | None = None, graph: int | None = None
    ) -> _L:
        """Fills in the parts of the location that are still unknown; returns self."""
        self.location = self.location or location
        self.file = self.file or file
        self.graph = self.graph if self.graph is not None else graph
        return self

    def describe(self, kind: bool = True) -> str:
        prefix = place(self.file, self.graph, self.location)
        head = f"{prefix}: " if prefix else ""
        return f"{head}{self.kind}: {self.message}" if kind else f"{head}{self.message}"


class ShardyConvertError(Located, Exception):
    """A conversion failure with an optional location (see `Located`). `str()` is the
    message after its location (``FILE[:graph N]:LOC: MESSAGE``: a traceback reads
    ``ShardyConvertError: model.mlir:1:17: ...``); `describe()` is the line the CLI prints,
    with `error:` before the message."""

    kind = "error"

    def __str__(self) -> str:
        return self.describe(kind=False)


class ShardingSyntaxError(ShardyConvertError):
    """A sharding string that does not follow XLA's HloSharding grammar.

    `text` is the whole string and `column` the 1-based column of the offending character.
    """

    def __init__(self, message: str, text: str, column: int, **kwargs):
        pointer = f'\n  "{text}"\n   {" " * (column - 1)}^' if len(text) <= 200 else ""
        super().__init__(f'{message} at column {column} of "{clip(text)}"{pointer}', **kwargs)
        self.text = text
        self.column = column


class ShardingValueError(ShardyConvertError):
    """A well-formed sharding string that describes no valid placement.

    Examples: a device list whose length is not the product of the tile dims, duplicate ids,
    a `T(...)` that is not a permutation, absurd sizes.
    """

    # Set on those the sharding lexer raises (the string, the 1-based column).
    text: str
    column: int


class ModuleError(ShardyConvertError):
    """An MLIR module that cannot be parsed, verified or converted."""


class DumpError(ShardyConvertError):
    """A torch_xla dump file with no graphs or an unterminated graph."""


class ShardingContractError(ShardyConvertError):
    """A program's tensors break its sharding contract: `AuditReport.check()` found findings
    its policy makes errors (`findings`, each naming a tensor)."""

    def __init__(self, message: str, findings: tuple = (), **kwargs):
        super().__init__(message, **kwargs)
        self.findings = findings


def plural(count: int, noun: str) -> str:
    """`1 output`, `2 outputs`: how messages count things."""
    return f"{count} {noun}{'s' * (count != 1)}"


def clip(value: object, limit: int = 120) -> str:
    """`str(value)`, cut to `limit` characters ending in `...`: how messages quote input."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class UsageError(ShardyConvertError, ValueError):
    """A bad argument: a command or a call asked for something impossible (two inputs for one
    output, an output that is an input, an unknown policy); the command line exits 2. Also a
    ValueError, what Python callers catch for a bad argument."""


def check_choice(
    name: str, value: object, choices: tuple[str, ...], error: type = UsageError
) -> None:
    """An `error` (a UsageError unless told) unless `value` is one of `choices`: the one
    "must be one of" check of every setting and option that picks from a few words."""
    if value not in choices:
        raise error(f"{name} must be one of {', '.join(choices)}, not {value!r}")


class MissingDependencyError(ShardyConvertError, ImportError):
    """An entry point needs a package this Python cannot import (`use_plugin` without
    torch_xla): the message says what to install. Also an ImportError, what Python callers
    catch for a missing package."""


class InternalError(ShardyConvertError):
    """A bug of ours (or of jaxlib's) met on one input, for the commands that go on with the
    other inputs; the exception is its `__cause__`."""

    def __init__(self, cause: BaseException, **kwargs):
        super().__init__(f"internal error: {where(cause)}", **kwargs)
        self.__cause__ = cause


def where(error: BaseException) -> str:
    """An exception and the innermost frame it was raised in: ``KeyError: 'x' (at
    shardy_convert/converter.py:120 in convert)``, the summary of a bug for a log line."""
    text = f"{type(error).__name__}: {error}"
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return text
    frame = frames[-1]
    return f"{text} (at {_short_path(frame.filename)}:{frame.lineno} in {frame.name})"


def _short_path(path: str) -> str:
    """`.../site-packages/shardy_convert/x.py` -> `shardy_convert/x.py`; others as they are."""
    parts = Path(path).parts
    if "shardy_convert" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("shardy_convert") :])
    return path


def describe(error: BaseException, file: str | None = None) -> str:
    """The one line a user reads for any error: a ShardyConvertError as located; an OSError
    with its path; anything else is a bug of ours, reported as an internal error."""
    if isinstance(error, OSError) and error.strerror:
        where = error.filename or file
        return f"{where}: error: {error.strerror}" if where else f"error: {error.strerror}"
    if not isinstance(error, ShardyConvertError):
        error = InternalError(error)
    return error.located(file=file).describe()


class ShardyConvertWarning(Located, UserWarning):
    """Something the converter had to guess (the device count), or a module it converted
    faithfully that Shardy will compile to another program (an uneven sharding). Located like
    an error; `describe()` gives ``FILE[:graph N]:LOC: warning: MESSAGE``. Library callers see
    it through Python's `warnings` (`warnings.catch_warnings(record=True)`, or
    `simplefilter("error", ShardyConvertWarning)` to stop on it); the CLI prints it."""

    kind = "warning"


class DeviceCountWarning(ShardyConvertWarning):
    """Nothing says how many devices a module runs on (no tiled sharding, no
    `mhlo.num_partitions`, no count given) and its values need the global mesh: the mesh gets
    no axes (each value on it replicated on every device). `option` is how the caller gives
    the count, the library's `num_devices=N` unless a command names its own flag (`naming`)."""

    def __init__(self, option: str = "num_devices=N", **kwargs):
        super().__init__(
            "no sharding, mhlo.num_partitions or device count says how many devices this module "
            f"runs on; emitting a mesh with no axes (values on it are replicated); give the "
            f"count with {option}",
            **kwargs,
        )
        self.option = option

    def naming(self, option: str) -> DeviceCountWarning:
        """The same warning naming `option` (a command's flag, `--devices N`)."""
        return DeviceCountWarning(option, location=self.location, file=self.file, graph=self.graph)


def naming_flag(warning: Warning | str, option: str) -> Warning | str:
    """`warning`, naming `option` if it is a DeviceCountWarning: how each command prints it
    (a recorded warning's message: typeshed allows a str beside the Warning it holds)."""
    return warning.naming(option) if isinstance(warning, DeviceCountWarning) else warning


def in_file(filename: str | None, work: Callable[[], T]) -> T:
    """`work()`, its ShardyConvertError and ShardyConvertWarnings located in `filename` (what
    the library's `filename=` does): the warnings are caught, then warned again, each once,
    to the caller's own filters. No file named: `work()` as it is."""
    if filename is None:
        return work()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return work()
    except ShardyConvertError as e:
        raise e.located(file=filename) from None
    finally:
        _warn_again(caught, filename)  # after the catching ended: to the caller's filters


def _warn_again(caught: list[warnings.WarningMessage], filename: str) -> None:
    for w in caught:
        message = w.message
        if isinstance(message, ShardyConvertWarning):
            message = message.located(file=filename)
        warnings.warn(message, w.category, stacklevel=4)


class WrittenAsItIs(ShardyConvertWarning):
    """A module a command had nothing to do to, written back as it came, saying why (convert
    or v2 of a Shardy module, to-gspmd of a GSPMD one). `state`: what it already is ("already
    Shardy"), which a batch's summary counts apart from the inputs it converted."""

    def __init__(self, why: str, state: str, **kwargs):
        super().__init__(f"written as it is: {why}", **kwargs)
        self.state = state


class ShardyConvertNote(ShardyConvertWarning):
    """Something the user should know that is no problem: ``FILE: note: MESSAGE`` (a mesh file
    found beside the input and used)."""

    kind = "note"


class NoShardyFormError(ModuleError):
    """A valid GSPMD module that Shardy cannot express: a `{manual}` value crossing a function
    boundary or escaping its manual region (a manual computation's operands and results are
    global). `diff` compares such modules as GSPMD; every other error is an error."""

    # Whether compiling the module unconverted, with GSPMD, is known to kill the process:
    # then the plugin wrapper and the hook refuse it under on_error="passthrough" too.
    passthrough_aborts = False


class NoCommonMeshError(ShardingValueError, NoShardyFormError):
    """Tiled shardings that are no views of one device mesh (two V1 lists whose device orders
    no one mesh order makes iota, e.g. two devices swapped in one list): valid GSPMD, which
    XLA compiles, but no module on one Shardy mesh, the only form the converter writes."""


class ManualInputError(NoShardyFormError):
    """A `{manual}` value as an argument of the program: torch_xla's ReplicateShardedData
    graph, made when the program reads a live manual tensor back (`.cpu()`, printing it). No
    Shardy form, and compiled unconverted XLA aborts the process (`hlo_sharding.cc Check
    failed: !IsManual()` in its SPMD partitioner; stock torch_xla alike)."""

    passthrough_aborts = True
