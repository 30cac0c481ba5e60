"""torch_xla dump files (`XLA_SAVE_TENSORS_FILE` with `XLA_SAVE_TENSORS_FMT=stablehlo`).

A dump holds several graphs, each after a header of Python frames, between a `## BEGIN_GRAPH`
line and an `## END_GRAPH` line; the module text inside is followed by a `Graph Hash:` line.
We keep every byte outside the module texts and replace each module, so the output is still a
dump.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .errors import DumpError, ShardyConvertError

BEGIN = "## BEGIN_GRAPH"
END = "## END_GRAPH"
HASH = "\nGraph Hash:"
_LINE_COL = re.compile(r"^(\d+):(\d+)")


@dataclass(frozen=True)
class Graph:
    """One graph: its module text and where it starts in the dump (1-based line)."""

    index: int
    text: str
    first_line: int


HEADER = "TensorsGraphInfo:"


def is_dump(text: str) -> bool:
    """A torch_xla dump: graph markers, or a graph header (a dump truncated before any graph)."""
    return BEGIN in text or END in text or HEADER in text


def split(text: str) -> tuple[list[str], list[Graph]]:
    """The dump as alternating pieces: `between[k]` precedes graph k; one more at the end.

    Raises DumpError (located at the marker's line) for a dump with no graph, a graph that
    does not end before the next begins or the file ends, an END that ends no graph, and a
    graph header left at the end of the file without its graph (a truncated dump).
    """
    between: list[str] = []
    graphs: list[Graph] = []
    pos = 0
    while True:
        start = text.find(BEGIN, pos)
        _check_ends(text, pos, len(text) if start < 0 else start, 1 if graphs else 0)
        if start < 0:
            break
        body_start = text.index("\n", start) + 1 if "\n" in text[start:] else len(text)
        end = _graph_end(text, start, body_start, len(graphs))
        hash_line = text.find(HASH, body_start, end)
        between.append(text[pos:body_start])
        first_line = text.count("\n", 0, body_start) + 1
        body_end = hash_line if hash_line >= 0 else end
        graphs.append(Graph(len(graphs), text[body_start:body_end], first_line))
        pos = body_end
    if not graphs:
        header = max(text.find(HEADER), 0)
        raise DumpError(f"no {BEGIN} in this dump", location=f"{_line(text, header)}:1")
    between.append(text[pos:])
    _check_no_trailing_header(text, pos, len(graphs))
    return between, graphs


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _graph_end(text: str, start: int, body_start: int, index: int) -> int:
    """Where graph `index` (its BEGIN at `start`) ends: its END, with no BEGIN before it."""
    end = text.find(END, body_start)
    again = text.find(BEGIN, body_start, end if end >= 0 else len(text))
    if end >= 0 and again < 0:
        return end
    before = f" before the next {BEGIN} at line {_line(text, again)}" if again >= 0 else ""
    raise DumpError(
        f"graph {index} starting at line {_line(text, start)} has no {END}{before}",
        graph=index,
        location=f"{_line(text, start)}:1",
    )


def _check_ends(text: str, pos: int, stop: int, expected: int) -> None:
    """Between two graphs lies only the END of the first (`expected` = 1; 0 before any)."""
    if text.count(END, pos, stop) <= expected:
        return
    stray = text.find(END, pos, stop)
    if expected:
        stray = text.find(END, stray + len(END), stop)
    raise DumpError(
        f"{END} at line {_line(text, stray)} ends no graph (no {BEGIN} before it)",
        location=f"{_line(text, stray)}:1",
    )


def _check_no_trailing_header(text: str, pos: int, count: int) -> None:
    header = text.find(HEADER, pos)
    if header >= 0:
        raise DumpError(
            f"the dump ends in the header of graph {count}, before its {BEGIN} (truncated?)",
            graph=count,
            location=f"{_line(text, header)}:1",
        )


def join(between: list[str], bodies: list[str]) -> str:
    out = []
    for piece, body in zip(between, bodies):
        out.append(piece)
        out.append(body)
    out.append(between[-1])
    return "".join(out)


def transform(text: str, fn: Callable[[Graph], str]) -> tuple[str | None, list[ShardyConvertError]]:
    """Applies `fn` to every graph; returns the new dump, or None and every graph's error.

    Error locations `LINE:COL` are shifted from the graph's own lines to the dump's lines.
    """
    between, graphs = split(text)
    bodies: list[str] = []
    errors: list[ShardyConvertError] = []
    for graph in graphs:
        try:
            bodies.append(_same_ending(fn(graph), graph.text))
        except ShardyConvertError as e:
            e.located(graph=graph.index)
            e.location = shift_location(e.location, graph.first_line - 1)
            errors.append(e)
    return (None, errors) if errors else (join(between, bodies), [])


def _same_ending(new: str, old: str) -> str:
    """`new` ending in as many newlines as `old` did (torch_xla's dynamo graphs have none
    before `Graph Hash:`, the others one), so only the module text changes."""
    return new.rstrip("\n") + "\n" * (len(old) - len(old.rstrip("\n")))


def graphs(text: str) -> list[Graph]:
    return split(text)[1]


def shift_location(location: str | None, lines: int) -> str | None:
    if not location:
        return location
    m = _LINE_COL.match(location)
    if not m:
        return location
    return f"{int(m.group(1)) + lines}:{m.group(2)}{location[m.end() :]}"
