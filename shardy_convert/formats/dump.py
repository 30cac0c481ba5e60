"""torch_xla dump files (`XLA_SAVE_TENSORS_FILE` with `XLA_SAVE_TENSORS_FMT=stablehlo`), and
the one per-graph loop every command uses.

A dump holds several graphs, each after a header of Python frames, between a `## BEGIN_GRAPH`
line and an `## END_GRAPH` line; the module text inside is followed by a `Graph Hash:` line.
We keep every byte outside the module texts and replace each module, so the output is still a
dump.

`read(data)` gives any input (a module, or a dump) as graphs; `for_each_graph` runs a function
on each and locates its errors once: file, `graph N`, and the line in the dump rather than in
the graph's own text.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from .. import regex
from ..errors import DumpError, Located, ShardyConvertError, ShardyConvertWarning
from ..sharding import Kind, parse
from .window import Window

T = TypeVar("T")
_L = TypeVar("_L", bound=Located)

BEGIN = "## BEGIN_GRAPH"
END = "## END_GRAPH"
HASH = "\nGraph Hash:"
_LINE_COL = regex.lazy(r"^(\d+):(\d+)")
_SHARDING_ATTR = re.compile(r'mhlo\.sharding = "((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Graph:
    """One graph: its module text and where it starts in the dump (1-based line). A module
    that is not in a dump is one graph with index None, starting at line 1 (bytecode stays
    bytes)."""

    index: int | None
    text: str | bytes
    first_line: int = 1

    def shift(self, location: str | None) -> str | None:
        """A `LINE:COL...` location in the graph's own text, as a location in the dump."""
        return shift_location(location, self.first_line - 1)

    def locate(self, error: _L, file: str | None = None) -> _L:
        """`error` (or warning, raised on this graph's text) located in the input: file,
        graph, line."""
        error.location = self.shift(error.location)
        return error.located(file=file, graph=self.index)


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
    for piece in pieces(Window([text])):
        if isinstance(piece, Graph):
            graphs.append(piece)
        else:
            between.append(piece)
    return between, graphs


def pieces(text: Window) -> Iterator[str | Graph]:
    """The dump as it is read (`split`'s pieces, in order: text, graph 0, text, ..., graph
    N-1, text), each graph found, handed on and dropped from `text` before the next is read.
    Raises `split`'s DumpErrors when the reading reaches them (nothing is handed on before
    graph 0's fault; a later fault comes after the graphs before it)."""
    pos = count = 0
    while True:
        start = text.find(BEGIN, pos)
        _check_ends(text, pos, text.length() if start < 0 else start, 1 if count else 0)
        if start < 0:
            break
        newline = text.find("\n", start)
        body_start = newline + 1 if newline >= 0 else text.length()
        end = _graph_end(text, start, body_start, count)
        hash_line = text.find(HASH, body_start, end)
        body_end = hash_line if hash_line >= 0 else end
        yield text.slice(pos, body_start)
        yield Graph(count, text.slice(body_start, body_end), text.line(body_start))
        count += 1
        pos = body_end
        text.drop(pos)
    if not count:
        header = max(text.find(HEADER, 0), 0)
        raise DumpError(f"no {BEGIN} in this dump", location=f"{text.line(header)}:1")
    _check_no_trailing_header(text, pos, count)
    yield text.slice(pos, text.length())


def _graph_end(text: Window, start: int, body_start: int, index: int) -> int:
    """Where graph `index` (its BEGIN at `start`) ends: its END, with no BEGIN before it."""
    end = text.find(END, body_start)
    again = text.find(BEGIN, body_start, end if end >= 0 else text.length())
    if end >= 0 and again < 0:
        return end
    before = f" before the next {BEGIN} at line {text.line(again)}" if again >= 0 else ""
    raise DumpError(
        f"graph {index} starting at line {text.line(start)} has no {END}{before}",
        graph=index,
        location=f"{text.line(start)}:1",
    )


def _check_ends(text: Window, pos: int, stop: int, expected: int) -> None:
    """Between two graphs lies only the END of the first (`expected` = 1; 0 before any)."""
    if text.count(END, pos, stop) <= expected:
        return
    stray = text.find(END, pos, stop)
    if expected:
        stray = text.find(END, stray + len(END), stop)
    raise DumpError(
        f"{END} at line {text.line(stray)} ends no graph (no {BEGIN} before it)",
        location=f"{text.line(stray)}:1",
    )


def _check_no_trailing_header(text: Window, pos: int, count: int) -> None:
    header = text.find(HEADER, pos)
    if header >= 0:
        raise DumpError(
            f"the dump ends in the header of graph {count}, before its {BEGIN} (truncated?)",
            graph=count,
            location=f"{text.line(header)}:1",
        )


def join(between: list[str], bodies: list[str]) -> str:
    out = []
    for piece, body in zip(between, bodies):
        out.append(piece)
        out.append(body)
    out.append(between[-1])
    return "".join(out)


@dataclass(frozen=True)
class Input:
    """One input as graphs: a module (one graph, index None), or a dump's graphs with the
    text between them. `device_count`: the count a dump's tiled shardings agree on, if any
    (the fallback for a graph whose own shardings do not say; for a module, what its own
    shardings say)."""

    graphs: list[Graph]
    between: list[str] | None = None
    device_count: int | None = None

    @property
    def is_dump(self) -> bool:
        return self.between is not None

    def join(self, bodies: list[str | bytes]) -> str | bytes:
        """The input with each graph's module replaced by `bodies` (in graph order)."""
        if self.between is None:
            return bodies[0]
        new = [same_ending(as_str(b), as_str(g.text)) for b, g in zip(bodies, self.graphs)]
        return join(self.between, new)


def read(data: str | bytes, file: str | None = None) -> Input:
    """Any input as graphs. Raises DumpError (located in `file`) for a malformed dump."""
    text = as_text(data)
    if text is None:
        return Input([Graph(None, data)])
    if not is_dump(text):
        return Input([Graph(None, text)], device_count=device_count(text))
    try:
        between, graphs = split(text)
    except ShardyConvertError as e:
        raise e.located(file=file) from None
    return Input(graphs, between, device_count(text))


def as_text(data: str | bytes) -> str | None:
    """Text input as str; None for bytecode and for bytes that are not UTF-8."""
    if isinstance(data, str):
        return data
    if data.startswith(b"ML\xefR"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def as_str(body: str | bytes) -> str:
    if isinstance(body, str):
        return body
    raise DumpError("a dump holds text: its graphs cannot be written as bytecode")


def for_each_graph(
    source: Input, fn: Callable[[Graph], T], file: str | None = None
) -> list[T | ShardyConvertError]:
    """`fn(graph)` for every graph, in order; a graph whose `fn` raises ShardyConvertError
    gets that error, located (file, graph, line in the dump), in place of its result."""
    return [run_graph(graph, fn, file) for graph in source.graphs]


def run_graph(graph: Graph, fn: Callable[[Graph], T], file: str | None) -> T | ShardyConvertError:
    """`fn(graph)`, or the ShardyConvertError it raises, located (file, graph, line in the
    dump); its ShardyConvertWarnings are located the same way and passed on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ShardyConvertWarning)
        result: T | ShardyConvertError
        try:
            result = fn(graph)
        except ShardyConvertError as e:
            result = graph.locate(e, file)
    for w in caught:  # located like the errors, then passed on
        ours = w.message
        message = graph.locate(ours, file) if isinstance(ours, ShardyConvertWarning) else ours
        warnings.warn(message, stacklevel=3)
    return result


def transform(
    data: Input | str | bytes, fn: Callable[[Graph], str | bytes], file: str | None = None
) -> tuple[str | bytes | None, list[ShardyConvertError]]:
    """`fn` applied to every graph of a module or dump: the new input, or None and every
    error, located (a malformed dump is one error)."""
    try:
        source = data if isinstance(data, Input) else read(data, file)
    except ShardyConvertError as e:
        return None, [e]
    results = for_each_graph(source, fn, file)
    errors = [r for r in results if isinstance(r, ShardyConvertError)]
    if errors:
        return None, errors
    try:
        return source.join([r for r in results if not isinstance(r, ShardyConvertError)]), []
    except ShardyConvertError as e:
        return None, [e.located(file=file)]


def device_count(text: str) -> int | None:
    """The one device count the tiled shardings of a text (a dump's graphs) agree on, if any."""
    counts = device_counts(text)
    return counts.pop() if len(counts) == 1 else None


def device_counts(text: str) -> set[int]:
    """The device counts of the tiled shardings of a text."""
    counts: set[int] = set()
    for m in _SHARDING_ATTR.finditer(text):
        try:
            sharding = parse(m.group(1))
        except ShardyConvertError:
            continue  # reported, located, when its graph is converted
        counts.update(
            leaf.tile_assignment.num_devices
            for leaf in sharding.leaves()
            if leaf.kind is Kind.TILED and not leaf.is_replicated
        )
    return counts


def same_ending(new: str, old: str) -> str:
    """`new` ending in as many newlines as `old` did (torch_xla's dynamo graphs have none
    before `Graph Hash:`, the others one), so only the module text changes."""
    return new.rstrip("\n") + "\n" * (len(old) - len(old.rstrip("\n")))


def graphs(text: str) -> list[Graph]:
    """The graphs of a dump's whole text, in order (what a user reading a dump wants:
    examples/hook_on_pjrt_clients.py)."""
    return split(text)[1]


def shift_location(location: str | None, lines: int) -> str | None:
    if not location:
        return location
    m = _LINE_COL().match(location)
    if not m:
        return location
    return f"{int(m.group(1)) + lines}:{m.group(2)}{location[m.end() :]}"
