"""Output to a pipe whose reader may go away (`shardy-convert ... | head`): every write is
delivered whole or raises BrokenPipeError, which the command line turns into a quiet exit 1.

Python's buffered streams return a short count, with no error, when a pipe's reader goes
away in the middle of a write; the BrokenPipeError only comes with the next write, and a
command whose last write was cut short would exit 0 with its output truncated.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from ..errors import ShardyConvertError


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
