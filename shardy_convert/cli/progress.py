"""The progress bar of a batch on a terminal, and `echo`, the one way the command line prints a
message to stderr while a bar may show: the bar's line is cleared, the message takes that line
and the bar is drawn again below it, so a message never runs on from the bar."""

from __future__ import annotations

import sys
import time

import click

_shown: Bar | None = None  # the bar on the terminal now, if any


def echo(message: str) -> None:
    """`message` on stderr on a line of its own (above the progress bar when one shows)."""
    if _shown is not None:
        _shown.echo(message)
    else:
        click.echo(message, err=True)


def progress(count: int, label: str = "converting") -> Bar | _NoBar:
    """A progress bar for a batch of `count` inputs when stderr is a terminal; else nothing."""
    if count > 1 and sys.stderr.isatty():
        return Bar(count, label)
    return _NoBar()


class Bar:
    """`converting [#####-----]  50%  7/14  0:00:09 left` on stderr, redrawn in place."""

    def __init__(self, count: int, label: str):
        self.count = count
        self.label = label
        self.done = 0
        self.start = time.monotonic()

    def __enter__(self) -> Bar:
        global _shown
        _shown = self
        self._draw()
        return self

    def __exit__(self, *exc) -> bool:
        global _shown
        _shown = None
        self._write("\n")  # the last state stays; what follows starts on a line of its own
        return False

    def update(self, n: int) -> None:
        self.done += n
        self._draw()

    def echo(self, message: str) -> None:
        self._write(f"\r\033[K{message}\n")
        self._draw()

    def _draw(self) -> None:
        import shutil  # only a bar on a terminal needs it (4 ms of imports at every start)

        width = shutil.get_terminal_size((80, 24)).columns - 1  # a line that never wraps
        pct = 100 * self.done // self.count
        tail = f" {pct:3d}%  {self.done}/{self.count}{self._eta()}"
        cells = max(0, min(36, width - len(self.label) - len(tail) - 3))
        filled = cells * self.done // self.count
        line = f"{self.label} [{'#' * filled}{'-' * (cells - filled)}]{tail}"
        self._write("\r\033[K" + line[:width])

    def _eta(self) -> str:
        if not 0 < self.done < self.count:
            return ""
        left = (time.monotonic() - self.start) / self.done * (self.count - self.done)
        return f"  {time.strftime('%H:%M:%S', time.gmtime(left)).removeprefix('00:')} left"

    @staticmethod
    def _write(text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def update(self, n: int) -> None:
        pass
