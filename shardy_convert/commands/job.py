"""What a batch command (`convert`, `v2`, `to-gspmd`) runs on one input: its request on every
graph, as the input is read a graph at a time (formats/source.py), the result handed on piece
by piece until the first error. No click, no printing, no writing: batch.py writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ShardyConvertError, UsageError
from ..formats import dump
from ..formats import meshes as mesh_file
from ..formats.source import Layout, Source

if TYPE_CHECKING:
    from ..converter import ConvertRequest, ToGspmdRequest, V2Request

BINARY_FORMS = ("bytecode", "portable")


@dataclass(frozen=True)
class Job:
    """What a batch command runs on every graph: `request`, a `converter.ConvertRequest`,
    `V2Request` or `ToGspmdRequest` (its `run(module)`). A conversion takes, for each input,
    the device count its dump's graphs agree on and, with `find_meshes`, the meshes of the
    mesh file beside it unless the request names meshes (formats/meshes.py)."""

    request: ConvertRequest | V2Request | ToGspmdRequest
    find_meshes: bool = False

    def apply(self, data: bytes, file: str) -> tuple[str | bytes | None, list[ShardyConvertError]]:
        """The transformed input (held in memory), or None and every (located) error."""
        pieces: list[str | bytes] = []
        done = self.stream(Source(file, data), pieces.append)
        if done.errors:
            return None, done.errors
        # several pieces: a dump, all text
        return (pieces[0] if len(pieces) == 1 else "".join(map(dump.as_str, pieces))), []

    def stream(
        self, source: Source, write: Callable[[str | bytes], None], progress: Progress = None
    ) -> Done:
        """Runs the request on every graph of `source` as it is read (formats/source.py),
        handing the result to `write` piece by piece, in order, until the first error; each
        graph done is counted to `progress(done, count)`. Every error comes back, located."""
        try:
            layout = source.survey()
            request = self._for_input(source.name, layout)
        except ShardyConvertError as e:
            return Done([e.located(file=source.name)])
        if not layout.is_dump:
            assert layout.module is not None  # not a dump: the one module
            graph = dump.Graph(None, layout.module)
            result = dump.run_graph(graph, lambda g: request.run(g.text), source.name)
            if isinstance(result, ShardyConvertError):
                return Done([result], 1)
            write(result)
            return Done([], 1)
        return Done(_graphs(source, request, write, progress, layout.graphs), layout.graphs)

    def _for_input(self, file: str, layout: Layout):
        """The request for one input (see the class docstring); a UsageError for a dump asked
        for in a binary form."""
        from ..converter import ConvertRequest

        request = self.request
        if layout.is_dump and request.emit in BINARY_FORMS:
            raise UsageError(dump_stays_text(request.emit), file=file)
        if not isinstance(request, ConvertRequest):  # the one transform with per-input options
            return request
        found = None
        if not request.importer.mesh:  # --mesh-file, or the mesh file beside the input
            found = mesh_file.for_input(file, request.importer.meshes, self.find_meshes)
        return request.for_input(layout.device_count if layout.is_dump else None, found)


Progress = Callable[[int, int], None] | None


@dataclass(frozen=True)
class Done:
    """What became of one input: its errors (none: every graph converted), and its graph
    count (0 when it could not be read)."""

    errors: list[ShardyConvertError]
    graphs: int = 0


def _graphs(source: Source, request, write, progress: Progress, count: int) -> list:
    """A dump's graphs converted as they are read; the text between them and each result
    handed to `write` until the first error, after which the others are still converted
    (every error is reported). The errors, located."""
    errors: list[ShardyConvertError] = []
    done = 0
    try:
        for piece in source.pieces():
            if isinstance(piece, dump.Graph):
                piece = _converted(piece, request, source.name)
                done += 1
                if progress is not None:
                    progress(done, count)
            if isinstance(piece, ShardyConvertError):
                errors.append(piece)
            elif not errors:
                write(piece)
    except ShardyConvertError as e:  # the file changed since the survey
        errors.append(e.located(file=source.name))
    return errors


def _converted(graph: dump.Graph, request, file: str) -> str | ShardyConvertError:
    """One graph of a dump converted, ending in as many newlines as it did; or its error,
    located in the dump."""
    result = dump.run_graph(graph, lambda g: request.run(g.text), file)
    if isinstance(result, ShardyConvertError):
        return result
    try:
        return dump.same_ending(dump.as_str(result), dump.as_str(graph.text))
    except ShardyConvertError as e:
        return e.located(file=file)


def dump_stays_text(emit: str) -> str:
    return (
        f"a torch_xla dump is text: it cannot be written as {emit} (--emit {emit}; convert its "
        "graphs as modules to get them in that form)"
    )
