"""Writing output whole, the one place that does it.

- A file (`write_atomic`): through a temporary file beside it, renamed over it, so a reader
  sees the old file or the whole new one; the temporary file is tracked until then, so a
  Ctrl-C that ends the process leaves none behind (`remove_partial_outputs`). Every file the
  package writes goes through it: convert's outputs, mesh files, the plugin's dumps, the cache
  of GSPMD's boundary choices.
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
from pathlib import Path
from typing import BinaryIO

from ..errors import ShardyConvertError

# Temporary files being written, for `remove_partial_outputs` (Ctrl-C).
_PARTIAL: set[Path] = set()


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Replaces the regular file `path` (or makes it) with `data`, atomically: through a
    temporary file beside it, renamed over it. The new file keeps the old one's mode (a new
    file gets 0o666 through the umask, like any new file); a file the caller may not write is
    not replaced (PermissionError), even where its directory would allow the rename. `path`
    is taken as it is: a caller that writes through symlinks resolves them first. Raises
    OSError."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    _PARTIAL.add(tmp)
    try:
        _write_through(tmp, data, path, st)
    finally:
        _PARTIAL.discard(tmp)


def _write_through(tmp: Path, data: bytes, path: Path, st: os.stat_result | None) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if st is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_partial_outputs() -> None:
    """Removes the temporary files of outputs being written (a Ctrl-C that ends the process
    before their writer's own clean-up ran)."""
    for tmp in list(_PARTIAL):
        with contextlib.suppress(OSError):
            tmp.unlink()


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


def whole_text_writes(text: io.TextIOBase) -> io.TextIOWrapper | None:
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
