"""Files for the command line: inputs (files, directories, dumps, stdin), atomic outputs.

One bad file or graph does not stop the others: each failure is printed as
`FILE[:graph N]:LOC: error: ...` and counted; a file with a failure is not written at all.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from . import dump
from .errors import ShardyConvertError

SUFFIXES = (".mlir", ".mlirbc", ".dump", ".stablehlo", ".txt")
_SHARDING_ATTR = re.compile(r'mhlo\.sharding = "((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Job:
    """What to do with each module: `convert` (to Shardy) or `v2` (V1 -> V2 only)."""

    action: str
    emit: str | None = None
    target_version: str | None = None
    mesh: str | None = None
    num_devices: int | None = None
    imported: bool = False
    validate: bool = True

    def module(self, data: str | bytes, fallback_devices: int | None = None) -> str | bytes:
        from .converter import convert, to_v2

        if self.action == "v2":
            return to_v2(data)
        return convert(
            data,
            mesh=self.mesh,
            num_devices=self.num_devices,
            fallback_devices=fallback_devices,
            emit=self.emit,
            target_version=self.target_version,
            imported=self.imported,
            validate=self.validate,
        )

    def file(self, data: bytes) -> str | bytes:
        """A whole input file: a module, or a dump whose graphs are each converted."""
        text = _as_text(data)
        if text is None or not dump.is_dump(text):
            return self.module(data if text is None else text)
        count = dump_device_count(text)
        result, errors = dump.transform(text, lambda g: self.module(g.text, count))
        if errors:
            raise _Many(errors)
        return result


class _Many(ShardyConvertError):
    def __init__(self, errors: list[ShardyConvertError]):
        super().__init__(f"{len(errors)} graphs failed")
        self.errors = errors


def _as_text(data: bytes) -> str | None:
    if data.startswith(b"ML\xefR"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def dump_device_count(text: str) -> int | None:
    """The one device count the tiled shardings of a dump's graphs agree on, if any."""
    from .sharding import Kind, parse

    counts = set()
    for m in _SHARDING_ATTR.finditer(text):
        try:
            sharding = parse(m.group(1))
        except ShardyConvertError:
            continue  # reported, located, when its graph is converted
        counts.update(
            leaf.num_devices
            for leaf in sharding.leaves()
            if leaf.kind is Kind.TILED and not leaf.is_replicated
        )
    return counts.pop() if len(counts) == 1 else None


def expand(inputs: Sequence[str]) -> Iterator[tuple[str, Path | None]]:
    """(input path, path relative to its directory argument or None) for every file."""
    for item in inputs:
        path = Path(item)
        if item != "-" and path.is_dir():
            for f in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES):
                yield str(f), f.relative_to(path)
        else:
            yield item, None


@dataclass(frozen=True)
class Outcome:
    """One input's result: the converted bytes/text, or its error messages (never both)."""

    name: str
    rel: Path | None
    result: str | bytes | None
    errors: tuple[str, ...] = ()


def process(job: Job, name: str, rel: Path | None, data: bytes | None = None) -> Outcome:
    """Reads and converts one input; errors come back as located messages (picklable, so
    this runs in worker processes too)."""
    try:
        return Outcome(name, rel, job.file(read_input(name) if data is None else data))
    except _Many as many:
        return Outcome(name, rel, None, tuple(str(e.located(file=name)) for e in many.errors))
    except ShardyConvertError as e:
        return Outcome(name, rel, None, (str(e.located(file=name)),))
    except Exception as e:  # a bug of ours: report it with the input, go on with the others
        return Outcome(
            name, rel, None, (f"{name}: error: internal error: {type(e).__name__}: {e}",)
        )


def run_jobs(job: Job, inputs: Sequence[str], output: str | None, jobs: int = 1) -> int:
    """Processes every input (in `jobs` processes), writes each result atomically, reports
    each failure; returns the number of failed inputs."""
    items = list(expand(inputs))
    to_dir = output is not None and (
        len(items) > 1 or Path(output).is_dir() or any(r for _, r in items)
    )
    failures = 0
    with _progress(len(items)) as bar:
        for outcome in _outcomes(job, items, jobs):
            bar.update(1)
            for message in outcome.errors:
                click.echo(message, err=True)
            failures += bool(outcome.errors)
            if outcome.errors:
                continue
            try:
                _write(outcome.result, _target(outcome.name, outcome.rel, output, to_dir))
            except ShardyConvertError as e:
                click.echo(str(e), err=True)
                failures += 1
    if len(items) > 1:
        click.echo(f"{len(items) - failures} of {len(items)} inputs converted", err=True)
    return failures


def _outcomes(job: Job, items: list[tuple[str, Path | None]], jobs: int) -> Iterator[Outcome]:
    """Outcomes in input order; stdin is read here, files by the workers."""
    stdin = {name: read_input(name) for name, _ in items if name == "-"}
    if jobs <= 1 or len(items) <= 1:
        for name, rel in items:
            yield process(job, name, rel, stdin.get(name))
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        args = [(job, name, rel, stdin.get(name)) for name, rel in items]
        try:
            yield from pool.map(process, *zip(*args))
        except BrokenProcessPool as e:
            raise ShardyConvertError(f"a worker process died: {e}") from None


def _progress(count: int):
    """A progress bar on a terminal for batches; nothing otherwise."""
    if count > 1 and sys.stderr.isatty():
        return click.progressbar(length=count, label="converting", file=sys.stderr)
    return _NoBar()


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int) -> None:
        pass


def read_input(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).read_bytes()
    except OSError as e:
        raise ShardyConvertError(f"cannot read: {e.strerror}", file=name) from None


def _target(name: str, rel: Path | None, output: str | None, to_dir: bool) -> Path | None:
    if output is None:
        return None
    if not to_dir:
        return Path(output)
    return Path(output) / (rel if rel is not None else Path(name).name)


def _write(result: str | bytes, target: Path | None) -> None:
    """Writes to stdout, or atomically to `target`: a reader sees the old file or the whole
    new one, never half of it. Raises ShardyConvertError when the target cannot be written."""
    data = result.encode() if isinstance(result, str) else result
    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as e:
        raise ShardyConvertError(f"cannot write: {e.strerror}", file=str(target)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException as e:
        os.unlink(tmp)
        if isinstance(e, OSError):
            raise ShardyConvertError(f"cannot write: {e.strerror}", file=str(target)) from None
        raise


def check_inputs(inputs: Sequence[str], devices: int | None, mesh: str | None) -> int:
    """`check`: per graph, convert and compare compiled programs; returns the failure count."""
    from .check import compare, ensure_devices
    from .converter import convert

    failures = 0
    for name, _ in expand(inputs):
        try:
            text = read_input(name).decode()
            graphs = dump.graphs(text) if dump.is_dump(text) else [dump.Graph(0, text, 1)]
        except (ShardyConvertError, UnicodeDecodeError) as e:
            click.echo(f"{name}: error: {e}", err=True)
            failures += 1
            continue
        count = devices or dump_device_count(text)
        ensure_devices(max(count or 1, 1))
        for graph in graphs:
            is_dump = dump.is_dump(text)
            where = f"{name}:graph {graph.index}" if is_dump else name
            try:
                result = convert(
                    graph.text,
                    mesh=mesh,
                    num_devices=devices,
                    fallback_devices=count,
                    validate=True,
                )
                report = compare(graph.text, result, count or 1)
            except ShardyConvertError as e:
                e.location = dump.shift_location(e.location, graph.first_line - 1)
                graph_index = graph.index if is_dump else None
                click.echo(str(e.located(file=name, graph=graph_index)), err=True)
                failures += 1
                continue
            click.echo(f"{where}: {report}")
            failures += not report.ok
    return failures
