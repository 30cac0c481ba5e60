"""Batches for the commands that rewrite inputs (`convert`, `v2`, `to-gspmd`): expand the
inputs, read each a graph at a time (formats/source.py), run the command's request
(converter.py) on every graph, write each result as it comes, put in place whole only when
every graph converted (formats/output.py). No click and no printing: `run` yields one
`InputOutcome` per input, in input order, and the command line prints them.

One bad file or graph does not stop the others; a file with a failure is not written at all.
Everything that makes a batch impossible (two inputs for one output, an output that is an
input, several inputs and no `-o`, stdin given twice) is a `UsageError` before anything is
read or written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import (
    ShardyConvertError,
    ShardyConvertWarning,
    UsageError,
    WrittenAsItIs,
    describe,
    naming_flag,
)
from ..formats import meshes as mesh_file
from ..formats.output import TERMINAL, Output, partial_path, track, untrack
from ..formats.source import Source
from .job import BINARY_FORMS, Done, Job, Progress, dump_stays_text

STDIN = "-"


@dataclass(frozen=True)
class Item:
    """One input file, its path below its directory argument (None for a file argument), and
    where its result goes (None: stdout)."""

    name: str
    rel: Path | None = None
    target: Path | None = None


def refuse_dumps(items: list[Item], emit: str | None) -> None:
    """UsageError, before anything is written, for an input file that is a torch_xla dump when
    `emit` is a binary form (stdin is judged when it is read: `InputOutcome.usage`)."""
    if emit not in BINARY_FORMS:
        return
    for item in items:
        if item.name == STDIN:
            continue
        try:
            is_dump = Source(item.name).is_dump()
        except ShardyConvertError:  # reported when it is read
            continue
        if is_dump:
            raise UsageError(f"{item.name}: {dump_stays_text(emit)}")


@dataclass(frozen=True)
class InputOutcome:
    """One input's result, written (to its target) unless it has error messages. `as_it_is`:
    what every graph of it already was, written back as it came ("already Shardy")."""

    item: Item
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # located ShardyConvertWarnings, printed before the errors
    usage: bool = False  # an error is a usage error (exit 2): an option this input refuses
    as_it_is: str | None = None


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
        assert item.target is not None  # planned: every item has one
        key = os.path.realpath(item.target)
        if key in seen:
            raise UsageError(f"{seen[key]} and {item.name} would both be written to {item.target}")
        seen[key] = item.name
    inputs = {os.path.realpath(i.name): i.name for i in items if i.name != STDIN}
    for item in items:
        if os.path.realpath(item.target or "") in inputs:
            raise UsageError(
                f"the output {item.target} is the input {item.name}; inputs are never written"
            )


def read_input(name: str) -> bytes:
    """The bytes of a file, or of stdin for `-`. Raises ShardyConvertError naming the file,
    also when its first bytes already say it is no program (formats.module.check_head): then
    the rest is not read."""
    from ..formats.module import HEAD  # MLIR's bindings: not for `diff` of audit reports

    if name == STDIN:
        data = sys.stdin.buffer.read()
        _check_head(data[:HEAD], len(data) <= HEAD, name)
        return data
    try:
        with open(name, "rb") as f:
            head = f.read(HEAD)
            _check_head(head, len(head) < HEAD, name)
            return head + f.read()
    except OSError as e:
        raise ShardyConvertError(f"cannot read: {e.strerror}", file=name) from None


def _check_head(head: bytes, whole: bool, name: str) -> None:
    from ..formats.module import check_head

    try:
        check_head(head, whole)
    except ShardyConvertError as e:
        raise e.located(file=name) from None


def process(
    job: Job,
    item: Item,
    data: bytes | None = None,
    tmp: Path | None = None,
    progress: Progress = None,
) -> InputOutcome:
    """Reads, transforms and writes one input (`data`: stdin's bytes; `tmp`: the temporary
    file of its output, chosen by the caller, who tracks it); errors come back as located
    messages (picklable, so this runs in worker processes too)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ShardyConvertWarning)
        try:
            done = _written(job, item, data, tmp, progress)
        except BrokenPipeError:  # `... | head`: the command line's to handle
            raise
        except Exception as e:  # a bug of ours: reported with this input, the others go on
            return InputOutcome(item, (describe(e, item.name),))
    found = [naming_flag(w.message, "--num-devices N") for w in caught]
    state = _as_it_is(found, done)
    if state is not None:  # a mesh file changes nothing in a module written as it came
        found = [w for w in found if not isinstance(w, mesh_file.MeshFileNote)]
    messages = tuple(e.located(file=item.name).describe() for e in done.errors)
    usage = any(isinstance(e, UsageError) for e in done.errors)
    return InputOutcome(item, messages, _notes(found, item.name), usage, state)


def _written(job: Job, item: Item, data: bytes | None, tmp: Path | None, progress) -> Done:
    """`job` on one input, its result written piece by piece through an `Output` and put in
    place only when every graph converted."""
    output = Output(item.target, tmp)
    try:
        done = job.stream(Source(item.name, data), output.write, progress)
    except BaseException:
        output.close(keep=False)
        raise
    error = output.close(keep=not done.errors)
    return done if error is None else Done([error], done.graphs)


def _as_it_is(found: list, done: Done) -> str | None:
    """What an input already was when every graph of it was written as it came."""
    passed = [w for w in found if isinstance(w, WrittenAsItIs)]
    if done.errors or not passed or len({w.graph for w in passed}) != done.graphs:
        return None
    return passed[0].state


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
        merged = f"{message} (graphs {_spans(sorted({g for g in graphs if g is not None}))})"
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


def run(
    job: Job, items: list[Item], jobs: int = 1, progress: Progress = None
) -> Iterator[InputOutcome]:
    """Every input transformed (in `jobs` processes) and written, in input order; an input
    whose output cannot be written comes back with that error. Inputs converted in this
    process count their graphs to `progress(done, count)`. Stdin is read here, files by
    whoever converts them, a graph at a time."""
    stdin = read_input(STDIN) if any(i.name == STDIN for i in items) else None
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield process(job, item, stdin if item.name == STDIN else None, progress=progress)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    data = [stdin if i.name == STDIN else None for i in items]
    tmps = [None if i.target is None else partial_path(os.path.realpath(i.target)) for i in items]
    for partial in filter(None, tmps):
        track(partial)  # a worker writes it; this process removes it should Ctrl-C end both
    with ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint) as pool:
        outcomes = pool.map(process, [job] * len(items), items, data, tmps)
        try:
            for outcome, tmp in zip(outcomes, tmps):
                if tmp is not None:
                    untrack(tmp)
                yield outcome
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


def refuse_terminal(target: str | None, emit: str | None) -> None:
    """UsageError, before anything is read, for a binary form asked for on a terminal (as gzip
    refuses); an input that is bytecode itself is refused when it would be written."""
    if emit in BINARY_FORMS and target in (None, STDIN) and sys.stdout.isatty():
        raise UsageError(TERMINAL)


def write(result: str | bytes, target: Path | None, stdout: BinaryIO | None = None) -> None:
    """Writes `result` whole to stdout or to `target` (formats/output.Output: a regular file
    replaced atomically, keeping its mode; a symlink written through; a FIFO, a device or a
    terminal written in place). Raises ShardyConvertError naming the path."""
    output = Output(target, stdout=stdout)
    output.write(result)
    error = output.close(keep=True)
    if error is not None:
        raise error
