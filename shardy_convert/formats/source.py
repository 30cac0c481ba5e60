"""One input of a batch, read graph by graph: memory bounded by its largest graph, not by
the file (a 300 MB dump of 2,000 graphs peaked at 6.7 GB when read whole).

Its first bytes tell its form: bytecode, a portable artifact or what may be an HLO proto is
read whole, as one module; anything else is text, which must be UTF-8 with no NUL byte
(formats.module.check_head: 1 GB of zeros is refused after 64 KB). Text is read through a
`Window` (window.py) in 1 MB chunks:

1. `survey`: the first read. A text with no dump marker is a module, held whole (it is one
   graph). A dump is walked graph by graph, each dropped once read, for what its conversion
   needs before any graph is converted: the graph count (for progress), the device count
   its graphs agree on, and any fault of its structure (a graph with no END, a truncated
   dump), which fails the input before anything is written.
2. `pieces`: the second read, the dump's text and its graphs in order (dump.pieces), each
   graph handed on as soon as it is read.

A file is read twice; stdin (or bytes given) is held in memory and read from there.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import ShardyConvertError
from . import dump
from .window import Window, text_chunks


@dataclass(frozen=True)
class Layout:
    """What the first read found: a module (`module`: its text or bytes, one graph) or a
    dump (`module` None) of `graphs` graphs whose tiled shardings agree on `device_count`."""

    graphs: int
    device_count: int | None = None
    module: str | bytes | None = None

    @property
    def is_dump(self) -> bool:
        return self.module is None


class Source:
    """The input `name` (a file), or `data` read from stdin or given."""

    def __init__(self, name: str, data: bytes | None = None):
        self.name = name
        self.data = data

    def open(self) -> BinaryIO:
        """The input's bytes from the start. Raises ShardyConvertError naming the file."""
        if self.data is not None:
            return io.BytesIO(self.data)
        try:
            return open(self.name, "rb")  # closed by the caller's `with`
        except OSError as e:
            raise ShardyConvertError(f"cannot read: {e.strerror}", file=self.name) from None

    def survey(self) -> Layout:
        """The first read (see the module docstring). Raises ShardyConvertError (located in
        the file) for input that is no program and for a broken dump."""
        try:
            return self._survey()
        except OSError as e:
            raise ShardyConvertError(f"cannot read: {e.strerror}", file=self.name) from None
        except ShardyConvertError as e:
            raise e.located(file=self.name) from None

    def _survey(self) -> Layout:
        from .module import HEAD, check_head, is_binary

        with self.open() as f:
            head = f.read(HEAD)
            check_head(head, len(head) < HEAD)
            if is_binary(head):
                return Layout(1, module=head + f.read())
            f.seek(0)
            text = Window(text_chunks(f))
            if text.find(dump.BEGIN, 0) < 0:
                whole = text.slice(0, text.length())
                if not dump.is_dump(whole):
                    return Layout(1, module=whole)
            counts, graphs = set(), 0
            for piece in dump.pieces(text):
                if isinstance(piece, dump.Graph):
                    counts |= dump.device_counts(dump.as_str(piece.text))
                    graphs += 1
        return Layout(graphs, counts.pop() if len(counts) == 1 else None)

    def is_dump(self) -> bool:
        """Whether the input is a torch_xla dump: text with a dump marker (read until one is
        found, a chunk at a time, nothing kept). Raises ShardyConvertError as `survey`."""
        from .module import HEAD, check_head, is_binary

        markers = (dump.BEGIN, dump.END, dump.HEADER)
        longest = max(map(len, markers))
        with self.open() as f:
            head = f.read(HEAD)
            check_head(head, len(head) < HEAD)
            if is_binary(head):
                return False
            f.seek(0)
            tail = ""
            for chunk in text_chunks(f):
                text = tail + chunk
                if any(m in text for m in markers):
                    return True
                tail = text[-longest:]
        return False

    def pieces(self):
        """The second read of a dump: its text and graphs in order (dump.pieces). A generator
        that holds the file open until it is exhausted or closed."""
        with self.open() as f:
            try:
                yield from dump.pieces(Window(text_chunks(f)))
            except ShardyConvertError as e:  # the file changed since the survey
                raise e.located(file=self.name) from None
