"""An input's text read as far as a search needs it, for inputs too big to hold whole.

`text_chunks` decodes a binary stream piece by piece, refusing what no program holds (bytes
that are not UTF-8, a NUL byte) at its line and column in the whole input. A `Window` holds
the text from some position on and answers `find`, `count` and `slice` in positions of the
whole text, reading more chunks while a search has not found its string; `drop` forgets what
lies before a position. The dump reader (dump.py) finds one graph, hands it on, drops it and
finds the next, so memory holds about one graph and one chunk, not the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from ..errors import ModuleError

CHUNK = 1 << 20


def text_chunks(stream: BinaryIO, size: int = CHUNK) -> Iterator[str]:
    """The UTF-8 text of `stream`, `size` bytes at a time (a character cut by a chunk's end
    goes with the next). Raises ModuleError, located at the input's line and column, at the
    first byte that is not UTF-8 and at the first NUL byte (formats.module's checks, as
    parse_module makes them of a whole text)."""
    from ..ir.parse import NOT_A_MODULE

    pending, offset, place = b"", 0, _Place()
    while chunk := stream.read(size):
        data = pending + chunk
        text, pending = _decode(data, offset, place, final=False)
        offset += len(data) - len(pending)
        at = text.find("\0")
        if at >= 0:
            raise ModuleError(f"{NOT_A_MODULE} (it holds a NUL byte)", location=place.of(text, at))
        place.advance(text)
        yield text
    if pending:
        _decode(pending, offset, place, final=True)


def _decode(data: bytes, offset: int, place: _Place, final: bool) -> tuple[str, bytes]:
    """`data` decoded, and the bytes of a character its end cut (kept for the next chunk)."""
    from ..ir.parse import NOT_A_MODULE

    try:
        return data.decode("utf-8"), b""
    except UnicodeDecodeError as e:
        if not final and e.reason == "unexpected end of data" and e.end == len(data):
            return data[: e.start].decode("utf-8"), data[e.start :]
        before = data[: e.start].decode("utf-8")
        raise ModuleError(
            f"{NOT_A_MODULE} (byte {offset + e.start} is not UTF-8)",
            location=place.of(before, len(before)),
        ) from None


class _Place:
    """The line and column where the next chunk starts."""

    def __init__(self):
        self.line, self.column = 1, 1

    def of(self, text: str, at: int) -> str:
        """`LINE:COL` of position `at` of `text`, a chunk starting here."""
        newline = text.rfind("\n", 0, at)
        if newline < 0:
            return f"{self.line}:{self.column + at}"
        line = self.line + text.count("\n", 0, at)
        return f"{line}:{at - newline}"

    def advance(self, text: str) -> None:
        newline = text.rfind("\n")
        if newline < 0:
            self.column += len(text)
            return
        self.line += text.count("\n")
        self.column = len(text) - newline


class Window:
    """The text of one input from position `base` on, as far as it has been read (see the
    module docstring). Positions are those of the whole text. `Window([text])` is a whole
    text held in memory."""

    def __init__(self, chunks: Iterable[str]):
        self._chunks = iter(chunks)
        self._parts: list[str] = []  # read, not yet joined into `text`
        self.text = ""
        self.base = 0
        self.ended = False
        self._lines = (0, 0)  # (position, newlines before it): where `line` counts on from

    @property
    def end(self) -> int:
        """The position the text read so far reaches."""
        return self.base + len(self.text) + sum(map(len, self._parts))

    def _more(self) -> bool:
        """Reads the next chunk; False at the end of the input."""
        if self.ended:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self.ended = True
            return False
        self._parts.append(chunk)
        return True

    def _joined(self) -> str:
        if self._parts:
            self.text += "".join(self._parts)
            self._parts = []
        return self.text

    def find(self, s: str, start: int, stop: int | None = None) -> int:
        """The first position of `s` in [start, stop) (stop None: to the end of the input),
        reading on as needed; -1 if there is none."""
        scan = start
        while True:
            text = self._joined()
            limit = len(text) if stop is None else min(len(text), stop - self.base)
            found = text.find(s, scan - self.base, limit)
            if found >= 0:
                return found + self.base
            if (stop is not None and stop <= self.end) or not self._read_as_much_again():
                return -1
            scan = max(start, self.base + len(text) - len(s) + 1)  # `s` across the new text

    def _read_as_much_again(self) -> bool:
        """Reads chunks until as much text again as is held has come (so a search through a
        big graph joins the text a few times, not once per chunk); False at the end."""
        goal, got = max(len(self.text), 1), 0
        while got < goal and self._more():
            got += len(self._parts[-1])
        return got > 0

    def length(self) -> int:
        """The length of the whole input (reads it to the end)."""
        while self._more():
            pass
        return self.end

    def slice(self, start: int, stop: int) -> str:
        self._joined()
        return self.text[start - self.base : stop - self.base]

    def count(self, s: str, start: int, stop: int) -> int:
        self._joined()
        return self.text.count(s, start - self.base, stop - self.base)

    def line(self, pos: int) -> int:
        """The 1-based line of position `pos` (counted on from the last line asked for, so a
        walk through the input counts each newline once)."""
        at, newlines = self._lines
        if pos < at or at < self.base:
            at, newlines = self._lines_at_base
        newlines += self.count("\n", at, pos)
        self._lines = (pos, newlines)
        return newlines + 1

    def drop(self, pos: int) -> None:
        """Forgets the text before `pos` (no position before it is asked for again, but the
        line of `pos` or later ones). The text is cut only once the dropped part is most of
        it, so dropping after each graph costs each byte one copy at most."""
        self._joined()
        if pos - self.base <= len(self.text) // 2:
            return
        self.line(pos)
        self._lines_at_base = self._lines
        self.text = self.text[pos - self.base :]
        self.base = pos

    _lines_at_base = (0, 0)
