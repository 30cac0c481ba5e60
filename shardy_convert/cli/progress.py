"""The progress bar of a batch on a terminal, and `echo`, the one way the command line prints a
message to stderr while a bar may show: the bar's line is cleared, the message takes that line
and the bar is drawn again below it, so a message never runs on from the bar."""

from __future__ import annotations

import sys
import time
from typing import Literal

import click

_shown: Bar | None = None  # the bar on the terminal now, if any


def echo(message: str) -> None:
    """`message` on stderr on a line of its own (above the progress bar when one shows)."""
    if _shown is not None:
        _shown.echo(message)
    else:
        click.echo(message, err=True)


def progress(count: int, label: str = "converting") -> Bar | _NoBar:
    """A progress bar for a batch of `count` inputs when stderr is a terminal; else nothing.
    It counts the inputs, and the graphs of a dump being converted (`graphs`): one input
    shows only its graphs, and only when it has more than one."""
    if sys.stderr.isatty():
        return Bar(count, label)
    return _NoBar()


class Bar:
    """`converting [#####-----]  50%  7/14  0:00:09 left` on stderr, redrawn in place; the
    input being converted adds `graph 500/2000`, and a single input is counted by its graphs:
    `converting [##--------]  25%  graph 500/2000  0:00:20 left`."""

    def __init__(self, count: int, label: str):
        self.count = count
        self.label = label
        self.done = 0
        self.graph = (0, 0)  # graphs converted and in all, of the input being converted
        self.start = time.monotonic()
        self.shown = False
        self.drawn = 0.0  # when the bar was last drawn

    def __enter__(self) -> Bar:
        global _shown
        _shown = self
        self._draw()
        return self

    def __exit__(self, *exc) -> Literal[False]:
        global _shown
        _shown = None
        if self.shown:
            self._write("\n")  # the last state stays; what follows starts on a line of its own
        return False

    def update(self, n: int) -> None:
        self.done += n
        self.graph = (0, 0)
        self._draw()

    def graphs(self, done: int, count: int) -> None:
        """`done` of the `count` graphs of the input being converted are done."""
        self.graph = (done, count)
        if done == count or time.monotonic() - self.drawn > _REDRAW:
            self._draw()

    def echo(self, message: str) -> None:
        self._write(f"\r\033[K{message}\n" if self.shown else f"{message}\n")
        self._draw()

    def _draw(self) -> None:
        done, count, tail = self._state()
        if count <= 1:  # one input of one graph: nothing to show
            return
        import shutil  # only a bar on a terminal needs it (4 ms of imports at every start)

        width = shutil.get_terminal_size((80, 24)).columns - 1  # a line that never wraps
        tail = f" {100 * done // count:3d}%  {tail}{self._eta(done, count)}"
        cells = max(0, min(36, width - len(self.label) - len(tail) - 3))
        filled = cells * done // count
        line = f"{self.label} [{'#' * filled}{'-' * (cells - filled)}]{tail}"
        self._write("\r\033[K" + line[:width])
        self.shown = True
        self.drawn = time.monotonic()

    def _state(self) -> tuple[int, int, str]:
        """(done, count, what is counted) of what the bar shows: the inputs (and the graphs of
        the one being converted), or the graphs of a single input."""
        graphs = f"graph {self.graph[0]}/{self.graph[1]}" if self.graph[1] > 1 else ""
        if self.count > 1:
            return self.done, self.count, f"{self.done}/{self.count}" + f"  {graphs}" * bool(graphs)
        return self.graph[0], self.graph[1], graphs

    def _eta(self, done: int, count: int) -> str:
        if not 0 < done < count:
            return ""
        left = (time.monotonic() - self.start) / done * (count - done)
        return f"  {time.strftime('%H:%M:%S', time.gmtime(left)).removeprefix('00:')} left"

    @staticmethod
    def _write(text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()


_REDRAW = 0.1  # seconds between two redraws for graphs (a dump may have thousands)


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc) -> Literal[False]:
        return False

    def update(self, n: int) -> None:
        pass

    def graphs(self, done: int, count: int) -> None:
        pass
