"""The `check` loop over a batch: every graph of every input gets one `GraphCheck`.

Two phases, because nothing in jaxlib that can abort may see input `convert` has not
accepted:
1. read every input (text, bytecode, portable artifact, dump, directory, stdin) and convert
   every graph; a graph's device count is what its converted module says (its meshes,
   `mhlo.num_partitions`), `devices` only when nothing in the module or its dump says;
2. compile and compare graph by graph, each on the CPU client of its device count (xla/
   keeps one per count).
A failing file or graph is reported and the batch goes on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from ...converter import ConvertRequest, before_import
from ...errors import InternalError, ShardyConvertError, ShardyConvertWarning, naming_flag, place
from ...formats import dump, hlo
from ...formats import module as formats
from ...formats.meshes import for_input
from ...ir.parse import new_context, parse_module, print_module
from ...passes.import_shardings import ImportShardingsPass
from ...passes.match_gspmd_boundary import MatchGspmdBoundaryPass
from ...passes.pad_uneven import PadUnevenPass
from ..batch import STDIN, expand, read_input
from .compare import CheckReport, Given, compare_read
from .program import Program, devices_of, read_converted, read_original
from .summary import cost_excess
from .verdict import Evidence, Verdict, verdict


@dataclass
class GraphCheck:
    """One graph's outcome: a report, "already Shardy", or a located error; and, under
    `--max-cost-ratio`, why Shardy's program costs too much (`excess`)."""

    file: str
    index: int | None
    report: CheckReport | None = None
    error: ShardyConvertError | None = None
    excess: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return place(self.file, self.index)

    @property
    def verdict(self) -> Verdict:
        if self.report is not None:
            return self.report.verdict
        return verdict(Evidence(error=self.error is not None, already_shardy=True))

    @property
    def failed(self) -> bool:
        """An error, a conversion that differs, or a cost over the limit (exit 1); a compiler
        difference is not."""
        if self.error is not None or self.excess:
            return True
        return self.report is not None and not self.report.ok

    def __str__(self) -> str:
        from .render_text import graph_text

        return graph_text(self, details=False)


@dataclass
class _Graph:
    """Phase 1's result for one graph: the two modules to compile, or the final outcome."""

    file: str
    index: int | None
    original: Program | None = None
    converted: Program | None = None
    outcome: GraphCheck | None = None
    # the graph's conversion, as check ran it (for the divergences' tagged copy), and the
    # line the graph starts on in its dump (their locations are the graph's own lines)
    again: Callable[[str], str | bytes] | None = None
    first_line: int = 1

    @property
    def where(self) -> str:
        return place(self.file, self.index)

    def failed(self, error: ShardyConvertError) -> _Graph:
        located = error.located(file=self.file, graph=self.index)
        self.outcome = GraphCheck(self.file, self.index, error=located)
        return self

    def finish(self, given: Given | None = None) -> GraphCheck:
        if self.outcome is not None:
            return self.outcome
        assert self.original is not None
        assert self.converted is not None
        given = given or Given()
        given = replace(given, graph=self.index)
        try:
            report = compare_read(self.original, self.converted, given=given)
            if given.reproducer is not None:
                _reproduce(given.reproducer, self.where, report)
            self._explain_cost(report, given.suggest)
        except ShardyConvertError as e:
            return self.failed(e).outcome  # type: ignore[return-value]  # failed() sets it
        except Exception as e:  # a bug of ours or jaxlib's: this graph only
            return self.failed(InternalError(e)).outcome  # type: ignore[return-value]  # set
        return GraphCheck(self.file, self.index, report)

    def _explain_cost(self, report: CheckReport, suggest: bool) -> None:
        """Where a graph's two programs differ in cost, the values whose sharding the two
        propagations decided differently (divergence.py); with `suggest`, the pins that give
        GSPMD's program (passes/match_gspmd_propagation.py) as torch_xla lines."""
        from .divergence import costs_differ, find_divergences, shifted

        original, converted = self.original, self.converted
        if self.again is None or not costs_differ(report.gspmd, report.shardy):
            return
        assert original is not None
        assert converted is not None
        found = find_divergences(original, self.again, converted)
        report.divergences = shifted(found, self.first_line - 1)
        if suggest:
            from .divergence import suggested_pins

            report.pins = suggested_pins(original, converted, self.first_line - 1)


def _reproduce(directory: str, where: str, report: CheckReport) -> None:
    """Writes the reproducer of a graph whose values differ (reproducer.py); the report says
    where."""
    from .reproducer import write_reproducer

    judged = report.judgement
    if judged is None or judged.same or not judged.mismatches:
        return
    if report.verdict not in (Verdict.COMPILER_DIFFERS, Verdict.CONVERSION_DIFFERS):
        return
    outputs = [m.agreement.index for m in judged.mismatches]
    written = write_reproducer(directory, where, judged.runs[-1], outputs, report)
    report.notes.append(f"reproducer written to {written.path}")


@dataclass(frozen=True)
class CheckRequest:
    """What one `check` of a batch is asked, built once by its caller (the command line):
    `convert`, the one conversion request (its importer's mesh or mesh file, GSPMD's boundary
    and propagation pinned where asked, validated; its `before` passes as `before_import`
    makes them); `devices` (`--devices`) where nothing in a graph or its dump says a count;
    `reference`: compare both programs with the program run unpartitioned on one device;
    with `max_cost_ratio`, a graph whose Shardy program costs more than that many times
    GSPMD's (collective bytes or temp memory) fails; `given`: the user's test values and
    reproducer directory. A `before` pass that keeps the program GSPMD's and changes its
    buffers (pad-uneven) runs on the original first, so that both programs compared take the
    same per-device buffers."""

    convert: ConvertRequest = field(default_factory=lambda: ConvertRequest(validate=True))
    devices: int | None = None
    reference: bool = True
    max_cost_ratio: float | None = None
    given: Given | None = None

    @staticmethod
    def conversion(
        mesh: tuple[tuple[str, int], ...] | None = None,
        meshes: tuple | None = None,
        *,
        pad_uneven: bool = False,
        match_gspmd_boundary: bool = False,
        match_gspmd_propagation: bool = False,
    ) -> ConvertRequest:
        """The conversion request of a check: `mesh` or `meshes` (a mesh file's; each input's
        own are found beside it), validated as the command line does, its `before` passes
        those of `before_import`."""
        before = before_import(
            pad_uneven=pad_uneven,
            match_gspmd_boundary=match_gspmd_boundary,
            match_gspmd_propagation=match_gspmd_propagation,
        )
        return ConvertRequest(ImportShardingsPass(mesh=mesh, meshes=meshes), before, validate=True)


def check_inputs(
    inputs: Sequence[str],
    request: CheckRequest = CheckRequest(),
    progress: Callable[[str], None] | None = None,
) -> Iterator[GraphCheck]:
    """Checks every graph of every input, in order (see the module docstring), as `request`
    asks. `progress` hears what is being done. With match-gspmd-propagation in the request,
    each graph is converted with GSPMD's decisions pinned (passes/match_gspmd_propagation.py):
    the report shows the program the pins give."""
    say = progress or (lambda message: None)
    items = expand(inputs)  # before stdin is read: a usage error reads nothing
    stdin = read_input(STDIN) if STDIN in inputs else b""

    graphs = []
    for item in items:
        say(f"converting {item.name}")
        data = stdin if item.name == STDIN else None
        graphs += _prepare(item.name, data, request)
    for k, graph in enumerate(graphs, 1):
        if graph.outcome is None:
            say(f"[{k}/{len(graphs)}] compiling {graph.where}")
        outcome = graph.finish(request.given)
        if request.max_cost_ratio is not None:
            outcome.excess = cost_excess(outcome.report, request.max_cost_ratio)
        yield outcome


def _prepare(name: str, data: bytes | None, request: CheckRequest) -> list[_Graph]:
    convert = request.convert
    try:
        source = dump.read(_text(read_input(name) if data is None else data), name)
        # --mesh-file, or the mesh file beside the input (unless --mesh names the mesh)
        meshes = None if convert.importer.mesh else for_input(name, convert.importer.meshes)
    except ShardyConvertError as e:
        return [_Graph(name, None).failed(e)]
    fallback = (source.device_count if source.is_dump else None) or request.devices
    ours = request.convert.for_input(fallback, meshes)
    # One loop for every command: errors and warnings come back located in the input.
    results = dump.for_each_graph(
        source,
        lambda g: _convert(
            _Graph(name, g.index, first_line=g.first_line), g, ours, request.reference
        ),
        name,
    )
    return [
        _Graph(name, g.index).failed(r) if isinstance(r, ShardyConvertError) else r
        for g, r in zip(source.graphs, results)
    ]


def _text(data: bytes) -> str | bytes:
    """MLIR text of bytecode, portable artifacts and HLO (read in a child process, see
    formats.load); other bytes as they are (text, or what the parser will reject, located)."""
    if formats.detect(data) == "text" and hlo.kind(data) is None:
        return data
    with new_context() as ctx:
        return print_module(formats.load(data, ctx), "text", locations=True)


def _convert(graph: _Graph, source: dump.Graph, request: ConvertRequest, reference: bool) -> _Graph:
    """`graph` with its two programs read (program.py), or "already Shardy". Raises
    ShardyConvertError (a bug of ours as an InternalError) for `for_each_graph` to locate.
    The request's pad-uneven runs on the original, which stays GSPMD with GSPMD's padded
    buffers, so that both programs compared take the same per-device buffers; the other
    `before` passes stay in the request."""

    try:
        pads, request = request.taking(PadUnevenPass.NAME)
        original = read_original(source.text, reference=reference, before=pads)
        if original.shardy:
            graph.outcome = GraphCheck(graph.file, graph.index)
            return graph
        if request.runs(MatchGspmdBoundaryPass.NAME):
            # GSPMD's boundary as check compiles the original: propagation to the unannotated
            # results only (signature.propagate_to_output)
            flags = original.signature.propagate_to_output()
            importer = replace(request.importer, allow_spmd_sharding_propagation_to_output=flags)
            request = replace(request, importer=importer)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ShardyConvertWarning)
            converted = request.run(original.text)
        for w in caught:  # passed on, naming check's own flag
            warnings.warn(naming_flag(w.message, "--devices N"), stacklevel=2)
        graph.original = original
        graph.converted = read_converted(converted, request.importer.fallback_devices)
        graph.again = _quietly(replace(request, validate=False).run)
    except ShardyConvertError:
        raise
    except Exception as e:
        raise InternalError(e) from None
    return graph


def _quietly(convert_: Callable[[str], str | bytes]) -> Callable[[str], str | bytes]:
    """`convert_` with its warnings dropped (they were given when the graph was converted)."""

    def run(text: str) -> str | bytes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShardyConvertWarning)
            return convert_(text)

    return run


def device_count(text: str | bytes, fallback: int | None = None) -> int:
    """Devices a Shardy module runs on (program.devices_of)."""
    with new_context() as ctx:
        return devices_of(parse_module(text, ctx).operation, fallback)
