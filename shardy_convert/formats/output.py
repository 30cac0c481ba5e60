"""Writing output whole.

- A file (`AtomicFile`, `write_atomic`): written piece by piece into a temporary file beside
  it, renamed over it at the end, so a reader sees the old file or the whole new one, and an
  output abandoned halfway (a later graph failed) leaves the old file as it was. The
  temporary file is tracked until then, so a Ctrl-C that ends the process leaves none behind
  (`remove_partial_outputs`). Every file the package writes goes through it: convert's
  outputs (`Output`, a graph at a time), mesh files, the plugin's dumps, the cache of GSPMD's
  boundary choices.
- A pipe whose reader may go away (`shardy-convert ... | head`, `write_all`): every write is
  delivered whole or raises BrokenPipeError, which the command line turns into a quiet exit 1.
  Python's buffered streams return a short count, with no error, when a pipe's reader goes
  away in the middle of a write; the BrokenPipeError only comes with the next write, and a
  command whose last write was cut short would exit 0 with its output truncated.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ..errors import ShardyConvertError

# Temporary files being written, for `remove_partial_outputs` (Ctrl-C).
_PARTIAL: set[Path] = set()


def partial_path(path: str | os.PathLike) -> Path:
    """A new temporary file's name beside `path` (`.out.mlir.1a2b3c4d.tmp`)."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")


def track(tmp: Path) -> None:
    """`tmp` is being written (by this process or a worker it started): removed by
    `remove_partial_outputs` should the process end before it is renamed or removed."""
    _PARTIAL.add(tmp)


def untrack(tmp: Path) -> None:
    _PARTIAL.discard(tmp)


def remove_partial_outputs() -> None:
    """Removes the temporary files of outputs being written (a Ctrl-C that ends the process
    before their writer's own clean-up ran)."""
    for tmp in list(_PARTIAL):
        with contextlib.suppress(OSError):
            tmp.unlink()


class AtomicFile:
    """The regular file `path` (or a new one) written piece by piece and put in place whole:
    `write` each piece, then `commit` (the temporary file renamed over `path`, which keeps
    its old mode; a new file gets 0o666 through the umask) or `discard` (nothing changed).
    A file the caller may not write is not replaced (PermissionError when made), even where
    its directory would allow the rename. `path` is taken as it is: a caller that writes
    through symlinks resolves them first. `tmp`: the temporary file's name, when the caller
    chose (and tracks) it; it must not exist. Raises OSError."""

    def __init__(self, path: str | os.PathLike, tmp: Path | None = None):
        self.path = Path(path)
        try:
            self.st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            self.st = None
        if self.st is not None and not os.access(self.path, os.W_OK):
            raise PermissionError(errno.EACCES, "Permission denied", str(self.path))
        self.tmp = tmp or partial_path(self.path)
        track(self.tmp)
        try:
            fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except BaseException:
            untrack(self.tmp)
            raise
        self.file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        try:
            self.file.write(data)
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        try:
            if self.st is not None:
                os.fchmod(self.file.fileno(), stat.S_IMODE(self.st.st_mode))
            self.file.close()
            os.replace(self.tmp, self.path)
        except BaseException:
            self.discard()
            raise
        untrack(self.tmp)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        self.tmp.unlink(missing_ok=True)
        untrack(self.tmp)


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """`path` replaced (or made) with `data` whole, atomically (`AtomicFile`). Raises
    OSError."""
    f = AtomicFile(path)
    f.write(data)
    f.commit()


TERMINAL = "refusing to write bytecode to a terminal; use -o FILE (or a pipe)"
_SPOOLED = 32 << 20  # a spool's bytes kept in memory before it goes to a temporary file


class Output:
    """Where one result goes, written piece by piece as it comes and put in place by
    `close(keep=True)` only, whole: a regular file (or a new one) through an `AtomicFile`
    beside it (`tmp`: its name, when the caller tracks it); stdout (`target` None), a FIFO, a
    device or a terminal, which cannot be replaced whole, through a spool copied there at the
    end. `close(keep=False)` writes nothing. A symlink is written through to its target.

    A failed write stops the writing; `close(keep=True)` returns its ShardyConvertError
    (naming the target; bytecode for a terminal is a UsageError), and `keep=False` drops it:
    an input that failed reports its own errors, not the write it never needed."""

    def __init__(
        self, target: Path | None, tmp: Path | None = None, stdout: BinaryIO | None = None
    ):
        self.target = target
        self.tmp = tmp
        self.stdout = stdout
        self.name = "<stdout>" if target is None else str(target)
        # An AtomicFile, or the temporary file a pipe's or a special file's result waits in
        self.sink: Any = None
        self.error: ShardyConvertError | None = None

    def write(self, piece: str | bytes) -> None:
        if self.error is not None:
            return
        try:
            if self.sink is None:
                self.sink = self._open(piece)
            self.sink.write(piece.encode() if isinstance(piece, str) else piece)
        except BrokenPipeError:
            raise
        except ShardyConvertError as e:
            self._fail(e)
        except OSError as e:
            self._fail(ShardyConvertError(f"cannot write: {e.strerror}", file=self.name))

    def _open(self, first: str | bytes):
        from ..errors import UsageError

        if self.target is None:
            stdout = self.stdout or sys.stdout
            if isinstance(first, bytes) and stdout.isatty():
                raise UsageError(TERMINAL, file="<stdout>")
            return _spooled()
        real = Path(os.path.realpath(self.target))
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.stat(real).st_mode):
                return _spooled()  # written in place at the end
        real.parent.mkdir(parents=True, exist_ok=True)
        return AtomicFile(real, self.tmp)

    def _fail(self, error: ShardyConvertError) -> None:
        self.error = error
        self._drop()

    def _drop(self) -> None:
        if isinstance(self.sink, AtomicFile):
            self.sink.discard()
        elif self.sink is not None:
            self.sink.close()
        self.sink = None

    def close(self, keep: bool) -> ShardyConvertError | None:
        """Puts the result in place (`keep`) or drops it; the write's error if one failed."""
        if not keep:
            self._drop()
            return None
        if self.error is None:
            try:
                self._finish()
            except BrokenPipeError:  # `... | head`: the command line's to handle
                raise
            except ShardyConvertError as e:
                self._fail(e)
            except OSError as e:
                self._fail(ShardyConvertError(f"cannot write: {e.strerror}", file=self.name))
        return self.error

    def _finish(self) -> None:
        if self.sink is None:  # nothing was written: an empty result
            self.sink = self._open("")
        sink, self.sink = self.sink, None
        if isinstance(sink, AtomicFile):
            sink.commit()
            return
        with sink:
            sink.seek(0)
            if self.target is None:
                _copy(sink, self.stdout or sys.stdout.buffer, "<stdout>")
                return
            with open(os.path.realpath(self.target), "wb") as f:
                _copy(sink, f, self.name)


def _copy(source: BinaryIO, stream: BinaryIO, name: str) -> None:
    while chunk := source.read(1 << 20):
        write_all(chunk, stream, name)


def write_all(data: bytes, stream: BinaryIO, name: str) -> None:
    """All of `data` to `stream`, flushed; BrokenPipeError if the reader went away, any other
    OSError as a ShardyConvertError naming `name`."""
    view = memoryview(data)
    try:
        while view:
            view = view[stream.write(view) :]
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise ShardyConvertError(f"cannot write: {e.strerror}", file=name) from None


class WholeWrites(io.BufferedIOBase):
    """A binary stream over `stream` whose every write goes through `write_all`; the command
    line puts a text stream over it in place of sys.stdout (so `click.echo` gets it too)."""

    def __init__(self, stream: BinaryIO, name: str = "<stdout>"):
        super().__init__()
        self.stream = stream
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        write_all(bytes(data), self.stream, self.name)
        return len(data)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()


def whole_text_writes(text: TextIO | io.TextIOBase) -> io.TextIOWrapper | None:
    """A text stream like `text` (sys.stdout) whose writes are whole; None if `text` has no
    binary buffer to write through."""
    buffer = getattr(text, "buffer", None)
    if buffer is None:
        return None
    text.flush()
    return io.TextIOWrapper(
        WholeWrites(buffer),
        encoding=text.encoding,
        errors=text.errors,
        line_buffering=getattr(text, "line_buffering", False),
        write_through=True,
    )


def _spooled() -> _Spool:
    return _Spool(_SPOOLED)


class _Spool:
    """A buffer for what is written at the end: in memory up to `limit` bytes, then a
    temporary file. tempfile (and shutil, random, the compressors it imports) is imported only
    then: cold start, every result written to stdout is spooled."""

    def __init__(self, limit: int):
        self._limit = limit
        self._file: BinaryIO = io.BytesIO()
        self._on_disk = False

    def write(self, data: bytes) -> int:
        if not self._on_disk and self._file.tell() + len(data) > self._limit:
            import tempfile

            disk = tempfile.TemporaryFile()
            disk.write(self._file.getvalue())  # type: ignore[attr-defined]  # a BytesIO
            self._file.close()
            self._file, self._on_disk = disk, True
        return self._file.write(data)

    def seek(self, offset: int) -> int:
        return self._file.seek(offset)

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
