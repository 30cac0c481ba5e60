"""Batches for the commands that rewrite inputs (`convert`, `v2`, `to-gspmd`): expand the
inputs, read each once, run the command's request (converter.py) on every graph, write each
result safely. No click and no printing: `run` yields one `Outcome` per input, in input order,
and the command line prints them.

One bad file or graph does not stop the others; a file with a failure is not written at all.
Everything that makes a batch impossible (two inputs for one output, an output that is an
input, several inputs and no `-o`, stdin given twice) is a `UsageError` before anything is
read or written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..errors import ShardyConvertError, ShardyConvertWarning, UsageError, describe, naming_flag
from ..formats import dump
from ..formats import meshes as mesh_file
from ..formats.output import write_all, write_atomic

if TYPE_CHECKING:
    from ..converter import ConvertRequest, ToGspmdRequest, V2Request

STDIN = "-"


@dataclass(frozen=True)
class Item:
    """One input file, its path below its directory argument (None for a file argument), and
    where its result goes (None: stdout)."""

    name: str
    rel: Path | None = None
    target: Path | None = None


@dataclass(frozen=True)
class Job:
    """What a batch command runs on every graph: `request`, a `converter.ConvertRequest`,
    `V2Request` or `ToGspmdRequest` (its `run(module)`). A conversion takes, for each input,
    the device count its dump's graphs agree on and, with `find_meshes`, the meshes of the
    mesh file beside it unless the request names meshes (formats/meshes.py)."""

    request: ConvertRequest | V2Request | ToGspmdRequest
    find_meshes: bool = False

    def apply(self, data: bytes, file: str) -> tuple[str | bytes | None, list[ShardyConvertError]]:
        """The transformed input, or None and every (located) error."""
        try:
            source = dump.read(data, file)
        except ShardyConvertError as e:
            return None, [e]
        from ..converter import ConvertRequest

        request = self.request
        if source.is_dump and request.emit in BINARY_FORMS:
            return None, [UsageError(_dump_stays_text(request.emit), file=file)]
        if isinstance(request, ConvertRequest):  # the one transform with per-input options
            found = None
            if not request.importer.mesh:
                try:  # --mesh-file, or the mesh file beside the input (a note says so)
                    found = mesh_file.for_input(file, request.importer.meshes, self.find_meshes)
                except ShardyConvertError as e:
                    return None, [e]
            request = request.for_input(source.device_count if source.is_dump else None, found)
        return dump.transform(source, lambda g: request.run(g.text), file)


BINARY_FORMS = ("bytecode", "portable")


def _dump_stays_text(emit: str) -> str:
    return (
        f"a torch_xla dump is text: it cannot be written as {emit} (--emit {emit}; convert its "
        "graphs as modules to get them in that form)"
    )


def refuse_dumps(items: list[Item], emit: str | None) -> None:
    """UsageError, before anything is written, for an input file that is a torch_xla dump when
    `emit` is a binary form (stdin is judged when it is read: `Outcome.usage`)."""
    if emit not in BINARY_FORMS:
        return
    for item in items:
        if item.name == STDIN:
            continue
        with contextlib.suppress(OSError, UnicodeDecodeError):  # reported when it is read
            if dump.is_dump(Path(item.name).read_bytes().decode()):
                raise UsageError(f"{item.name}: {_dump_stays_text(emit)}")


@dataclass(frozen=True)
class Outcome:
    """One input's result: the transformed bytes/text, or its error messages (never both)."""

    item: Item
    result: str | bytes | None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # located ShardyConvertWarnings, printed before the errors
    usage: bool = False  # an error is a usage error (exit 2): an option this input refuses


def expand(inputs: Sequence[str]) -> list[Item]:
    """Every input file: files as given, directories recursively (`commands.directory` says
    which files; what it skips is a ShardyConvertWarning naming the directory). Raises
    UsageError for stdin given twice and for a directory with no input file (a batch that
    does nothing is a mistake, not a success)."""
    if list(inputs).count(STDIN) > 1:
        raise UsageError("stdin (-) is given more than once; it can be read once")
    items: list[Item] = []
    for name in inputs:
        path = Path(name)
        if name != STDIN and path.is_dir():
            from . import directory  # only for a directory argument (cold start)

            found, notes = directory.inputs(path)
            for note in notes:
                warnings.warn(ShardyConvertWarning(note, file=name), stacklevel=2)
            if not found:
                raise UsageError(
                    f"{name}: no input files in this directory (looked for "
                    f"{', '.join(directory.SUFFIXES)}, and XLA dumps' *.before_optimizations.*)"
                )
            items += [Item(str(f), rel) for f, rel in found]
        else:
            items.append(Item(name))
    return items


def plan(inputs: Sequence[str], output: str | None) -> list[Item]:
    """The inputs with their targets (`-o -` is stdout). Raises UsageError, before anything
    is read, for a batch that cannot be written as asked."""
    items = expand(inputs)
    if output == STDIN:
        output = None
    several = len(items) > 1 or any(i != STDIN and Path(i).is_dir() for i in inputs)
    if output is None:
        if several:
            raise UsageError(
                "several inputs (or a directory) need -o DIR: their outputs would run together "
                "on stdout"
            )
        return items
    if several and Path(output).exists() and not Path(output).is_dir():
        raise UsageError(f"{output} is a file: several inputs (or a directory) need -o DIR")
    to_dir = several or Path(output).is_dir() or output.endswith(("/", os.sep))
    planned = [Item(i.name, i.rel, _target(i, Path(output), to_dir)) for i in items]
    _check_targets(planned)
    return planned


def _target(item: Item, output: Path, to_dir: bool) -> Path:
    if not to_dir:
        return output
    if item.name == STDIN:
        raise UsageError("stdin (-) has no file name to write under the output directory")
    return output / (item.rel if item.rel is not None else Path(item.name).name)


def _check_targets(items: list[Item]) -> None:
    """No two inputs write one file, and no output is an input."""
    seen: dict[str, str] = {}
    for item in items:
        key = os.path.realpath(item.target)
        if key in seen:
            raise UsageError(f"{seen[key]} and {item.name} would both be written to {item.target}")
        seen[key] = item.name
    inputs = {os.path.realpath(i.name): i.name for i in items if i.name != STDIN}
    for item in items:
        if os.path.realpath(item.target) in inputs:
            raise UsageError(
                f"the output {item.target} is the input {item.name}; inputs are never written"
            )


def read_input(name: str) -> bytes:
    """The bytes of a file, or of stdin for `-`. Raises ShardyConvertError naming the file."""
    if name == STDIN:
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as e:
        raise ShardyConvertError(f"cannot read: {e.strerror}", file=name) from None


def process(job: Job, item: Item, data: bytes | None = None) -> Outcome:
    """Reads and transforms one input; errors come back as located messages (picklable, so
    this runs in worker processes too)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ShardyConvertWarning)
        try:
            result, errors = job.apply(read_input(item.name) if data is None else data, item.name)
        except Exception as e:  # a bug of ours: reported with this input, the others go on
            return Outcome(item, None, (describe(e, item.name),))
    notes = _notes([naming_flag(w.message, "--num-devices N") for w in caught], item.name)
    messages = tuple(e.located(file=item.name).describe() for e in errors)
    usage = any(isinstance(e, UsageError) for e in errors)
    return Outcome(item, result, messages, notes, usage)


def _notes(caught: list, file: str) -> tuple[str, ...]:
    """The ShardyConvertWarnings of one input as lines; one said of several graphs at the same
    place (a whole graph: "written as it is") is one line naming them (`graphs 0-15`)."""
    groups: dict[tuple, list[ShardyConvertWarning]] = {}
    for w in caught:
        if isinstance(w, ShardyConvertWarning):
            w.located(file=file)
            groups.setdefault((w.message, w.location), []).append(w)
    lines = []
    for (message, location), found in groups.items():
        graphs = [w.graph for w in found]
        if len(found) == 1 or None in graphs:
            lines += [w.describe() for w in found]
            continue
        merged = f"{message} (graphs {_spans(sorted(set(graphs)))})"
        lines.append(ShardyConvertWarning(merged, location=location, file=file).describe())
    return tuple(lines)


def _spans(numbers: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def run(job: Job, items: list[Item], jobs: int = 1) -> Iterator[Outcome]:
    """Every input transformed (in `jobs` processes) and written, in input order. An input
    whose output cannot be written comes back with that error."""
    for outcome in _outcomes(job, items, jobs):
        if not outcome.errors:
            try:
                write(outcome.result, outcome.item.target)
            except ShardyConvertError as e:
                usage = isinstance(e, UsageError)
                outcome = Outcome(outcome.item, None, (e.describe(),), outcome.warnings, usage)
        yield outcome


def _outcomes(job: Job, items: list[Item], jobs: int) -> Iterator[Outcome]:
    """Outcomes in input order; stdin is read here, files by the workers."""
    stdin = read_input(STDIN) if any(i.name == STDIN for i in items) else None
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield process(job, item, stdin if item.name == STDIN else None)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint) as pool:
        data = [stdin if i.name == STDIN else None for i in items]
        try:
            yield from pool.map(process, [job] * len(items), items, data)
        except BrokenProcessPool as e:
            raise ShardyConvertError(f"a worker process died: {e}") from None
        except BaseException:  # Ctrl-C, a closed stdout: the workers' results are not wanted
            _kill_workers(pool)
            raise


def _ignore_sigint() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it kills the workers), so a terminal's
    SIGINT to the whole process group prints no traceback per worker."""

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _kill_workers(pool) -> None:
    """Ends the workers now (they only compute: the parent writes every output), so the
    pool's shutdown does not wait for the inputs in flight."""
    for worker in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            worker.kill()
    pool.shutdown(wait=False, cancel_futures=True)


TERMINAL = "refusing to write bytecode to a terminal; use -o FILE (or a pipe)"


def refuse_terminal(target: str | None, emit: str | None) -> None:
    """UsageError, before anything is read, for a binary form asked for on a terminal (as gzip
    refuses); an input that is bytecode itself is refused when it would be written."""
    if emit in BINARY_FORMS and target in (None, STDIN) and sys.stdout.isatty():
        raise UsageError(TERMINAL)


# --- safe writes -------------------------------------------------------------------------------


def write(result: str | bytes, target: Path | None, stdout: BinaryIO | None = None) -> None:
    """Writes `result` to stdout or to `target`. Raises ShardyConvertError naming the path.

    A regular file (or a new one) is replaced atomically: a reader sees the old file or the
    whole new one. The new file keeps the old one's mode (a new file follows the umask). A
    symlink is written through to its target; a FIFO, a device or a terminal is written in
    place, never renamed over.
    """
    data = result.encode() if isinstance(result, str) else result
    if target is None:
        if isinstance(result, bytes) and (stdout or sys.stdout).isatty():
            raise UsageError(TERMINAL, file="<stdout>")
        write_all(data, stdout or sys.stdout.buffer, "<stdout>")
        return
    real = Path(os.path.realpath(target))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ShardyConvertError(f"cannot write: {e.strerror}", file=str(target)) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_in_place(data, real, target)
    else:
        _replace(data, real, target)


def _write_in_place(data: bytes, real: Path, target: Path) -> None:
    try:
        with open(real, "wb") as f:
            f.write(data)
    except OSError as e:
        raise ShardyConvertError(f"cannot write: {e.strerror}", file=str(target)) from None


def _replace(data: bytes, real: Path, target: Path) -> None:
    """Atomic replace of a regular file (or a new one), its directory made if missing."""
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(real, data)
    except OSError as e:
        raise ShardyConvertError(f"cannot write: {e.strerror}", file=str(target)) from None
