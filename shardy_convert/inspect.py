"""`inspect`: every sharded value of a module or dump in every form, and an audit.

For each graph (a module, or one graph of a torch_xla dump) this reads every sharded value in
the walker's order (module attributes, then per `func.func` its arguments, results, and ops in
pre-order) and reports its type, its sharding as given, as V2, as Shardy on the graph's one
global mesh (`plan_mesh` over all shardings of the graph, as import-shardings derives it), and
the shard each device holds. A module that is already Shardy (`sdy.mesh` and no
`mhlo.sharding`) is read the other way: `sdy.sharding` attributes, `sdy.sharding_constraint`,
`sdy.reshard` and `sdy.manual_computation` shardings, each with its GSPMD equivalent
(`sharding.export.to_hlo`). Then an audit in the spirit of "annotate what you own", as
findings with a severity and a location:

    code                   severity  what
    unannotated-arg        warning   a `@main` argument without a sharding: replicated (GSPMD)
                                     or left to propagation (Shardy)
    small-sharded          warning   a sharded tensor under SMALL_ELEMENTS elements or with
                                     shards under SMALL_SHARD_BYTES: a stream of tiny collectives
    custom-device-order    warning   a V1 list with no iota form: a V2-only path (torch_xla's
                                     CONVERT_SHLO_TO_SHARDY, XLA's importer) loses the order
    no-common-factorization warning  an iota form XLA's importer aborts on (sub-axes needed)
    no-device-count        warning   nothing says how many devices the graph runs on (every
                                     sharding replicated, no `mhlo.num_partitions`)
    device-count-mismatch  error     the graphs of one dump disagree on the device count
    rank-mismatch          error     a sharding's tile rank is not the value's rank
    manual-at-boundary     error     a `{manual}` value crosses the function boundary
    tuple-mismatch         error     a tuple sharding whose arity is not the op's result count
    no-mesh                error     the shardings are not views of one device mesh
    no-sdy-form            error     a sharding that cannot be put on the graph's mesh
    no-gspmd-form          error     (Shardy input) a sharding `to_hlo` cannot express

Bad sharding strings and unparsable modules are not findings but located ShardyConvertErrors
(`FILE[:graph N]:LOC: error: ...`); the other graphs and files are still inspected.

JSON schema (`--format json`, `"schema": "shardy-convert.inspect/1"`); fields are only
added in later versions of the same schema, never renamed:

    {"schema": str,
     "graphs": [{"file": str, "graph": int | null (null: not a dump), "form": "gspmd" | "shardy",
                 "num_devices": int | null, "device_count_from": "shardings" |
                 "mhlo.num_partitions" | "sdy.mesh" | "other graphs of the dump" | null,
                 "meshes": [{"name": str, "mesh": str (e.g. `<["_axis_0"=2]>`)}],
                 "values": [{"name": str (`%arg3`, `result 0`, `%1`, `%5#1`),
                             "func": str | null, "kind": "arg" | "result" | "op" | "module",
                             "op": str | null (`@Sharding` for custom calls, else the op name),
                             "location": str | null (`LINE:COL`, dump lines for dumps),
                             "type": str | null, "shape": [int | null] | null, "dtype": str | null,
                             "sharding": str (as given), "gspmd": str | null (canonical GSPMD),
                             "v2": str | null (null: no iota form), "sdy": str | null,
                             "shard": null | {"shape": [int] | null, "tiles": int,
                                              "devices_per_shard": int | null,
                                              "uneven": bool, "text": str}}]}],
     "findings": [{"severity": "error" | "warning" | "info", "code": str, "message": str,
                   "file": str | null, "graph": int | null, "location": str | null,
                   "value": str | null}],
     "errors": [{"file": str | null, "graph": int | null, "location": str | null,
                 "message": str}]}
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from . import dump
from .errors import ModuleError, ShardyConvertError
from .sharding import HloSharding, Kind, SubgroupType

SCHEMA = "shardy-convert.inspect/1"
# Below either threshold a sharded tensor costs more in collectives than it saves in memory.
SMALL_ELEMENTS = 1024
SMALL_SHARD_BYTES = 64
# Longer sharding strings (V1 lists of hundreds of ids) are clipped in the table only.
TABLE_CELL_LIMIT = 80
SEVERITIES = ("error", "warning", "info")


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One audit result; prints like a compiler diagnostic: `FILE:graph N:LOC: warning: ...`."""

    severity: str
    code: str
    message: str
    location: str | None = None
    value: str | None = None
    file: str | None = None
    graph: int | None = None

    def __str__(self) -> str:
        graph = None if self.graph is None else f"graph {self.graph}"
        prefix = ":".join(p for p in (self.file, graph, self.location) if p)
        what = f"{self.value}: " if self.value else ""
        head = f"{prefix}: " if prefix else ""
        return f"{head}{self.severity}: {what}{self.message} [{self.code}]"

    def as_json(self) -> dict:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "graph": self.graph,
            "location": self.location,
            "value": self.value,
        }


@dataclass(frozen=True)
class Shard:
    """What one device holds of a value: `8x16 -> 4x4 per device, 2 replicas`."""

    shape: tuple[int, ...] | None
    tiles: int
    devices_per_shard: int | None
    uneven: bool
    text: str

    def as_json(self) -> dict:
        shape = None if self.shape is None else list(self.shape)
        return {
            "shape": shape,
            "tiles": self.tiles,
            "devices_per_shard": self.devices_per_shard,
            "uneven": self.uneven,
            "text": self.text,
        }


@dataclass
class Value:
    """One sharded value (or one result of a tuple-sharded op)."""

    name: str
    func: str | None
    kind: str
    op: str | None
    location: str | None
    type: str | None
    shape: tuple[int | None, ...] | None
    dtype: str | None
    sharding: str
    gspmd: str | None = None
    v2: str | None = None
    sdy: str | None = None
    shard: Shard | None = None
    hlo: HloSharding | None = None
    num_devices: int | None = None
    mesh: str | None = None

    @property
    def label(self) -> str:
        """`%arg3`, or `@f %arg0` outside `@main`."""
        return self.name if self.func in (None, "main") else f"@{self.func} {self.name}"

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "func": self.func,
            "kind": self.kind,
            "op": self.op,
            "location": self.location,
            "type": self.type,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
            "sharding": self.sharding,
            "gspmd": self.gspmd,
            "v2": self.v2,
            "sdy": self.sdy,
            "shard": None if self.shard is None else self.shard.as_json(),
        }


@dataclass
class Graph:
    """One module: its mesh, its sharded values and its own findings."""

    file: str | None
    graph: int | None
    form: str = "gspmd"
    num_devices: int | None = None
    device_count_from: str | None = None
    meshes: list[tuple[str, str]] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def where(self) -> str:
        parts = [p for p in (self.file, None if self.graph is None else f"graph {self.graph}") if p]
        return ":".join(parts) or "<module>"

    def as_json(self) -> dict:
        return {
            "file": self.file,
            "graph": self.graph,
            "form": self.form,
            "num_devices": self.num_devices,
            "device_count_from": self.device_count_from,
            "meshes": [{"name": n, "mesh": m} for n, m in self.meshes],
            "values": [v.as_json() for v in self.values],
        }


@dataclass
class Report:
    """Everything `inspect` found over its inputs, in input order."""

    graphs: list[Graph] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[ShardyConvertError] = field(default_factory=list)

    def all_findings(self) -> list[Finding]:
        """Graph findings in graph order, then the findings about whole files."""
        return [f for g in self.graphs for f in g.findings] + self.findings

    def as_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "graphs": [g.as_json() for g in self.graphs],
            "findings": [f.as_json() for f in self.all_findings()],
            "errors": [_error_json(e) for e in self.errors],
        }


def _line_col(finding: Finding) -> tuple[int, int]:
    """Sort key: findings without a location first, then by `LINE:COL`."""
    m = re.match(r"(\d+):(\d+)", finding.location or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _error_json(e: ShardyConvertError) -> dict:
    return {"file": e.file, "graph": e.graph, "location": e.location, "message": e.message}


# --- inputs ----------------------------------------------------------------------------------


def inspect_inputs(inputs: Sequence[str]) -> Report:
    """Inspects files, directories (recursively), dumps and `-`; never raises for one input."""
    from .batch import expand, read_input

    report = Report()
    for item in expand(inputs):
        try:
            inspect_file(item.name, read_input(item.name), report)
        except ShardyConvertError as e:
            report.errors.append(e.located(file=item.name))
    return report


def inspect_file(name: str | None, data: bytes | str, report: Report) -> None:
    """Adds a module's graph, or every graph of a dump, to `report`."""
    source = dump.read(data, name)
    fallback = source.device_count if source.is_dump else None

    def one(graph: dump.Graph) -> Graph:
        lines = graph.first_line - 1
        return inspect_module(
            graph.text, file=name, graph=graph.index, line_offset=lines, fallback_devices=fallback
        )

    first = len(report.graphs)
    found = dump.for_each_graph(source, one, name)
    report.graphs += [g for g in found if not isinstance(g, ShardyConvertError)]
    report.errors += [e for e in found if isinstance(e, ShardyConvertError)]
    if source.is_dump:
        report.findings.extend(_count_mismatch(name, report.graphs[first:]))


def _count_mismatch(file: str | None, graphs: list[Graph]) -> list[Finding]:
    """One error when the graphs of a dump name different device counts."""
    own = [(g.graph, g.num_devices) for g in graphs if g.device_count_from in _OWN_COUNT]
    if len({n for _, n in own}) < 2:
        return []
    by_count: dict[int, list[str]] = {}
    for k, n in own:
        by_count.setdefault(n, []).append(str(k))
    said = "; ".join(
        f"{n} in graph{'s' * (len(ks) > 1)} {', '.join(ks)}" for n, ks in by_count.items()
    )
    return [
        Finding(
            "error",
            "device-count-mismatch",
            f"the graphs of this dump disagree on the device count ({said}); one process "
            "runs them all on one set of devices",
            file=file,
        )
    ]


_OWN_COUNT = ("shardings", "mhlo.num_partitions", "sdy.mesh")


def inspect_module(
    data: str | bytes,
    *,
    file: str | None = None,
    graph: int | None = None,
    line_offset: int = 0,
    fallback_devices: int | None = None,
) -> Graph:
    """Inspects one module (MLIR text or bytecode, or a StableHLO portable artifact).

    `line_offset` shifts `LINE:COL` locations (a dump graph's first line - 1);
    `fallback_devices` is the device count to use when nothing in the module says.
    Raises ShardyConvertError (located in the module) for bad input.
    """
    from .converter import is_shardy
    from .formats import load
    from .mlir import new_context, run_pipeline

    result = Graph(file, graph)
    with new_context() as ctx:
        parsed = load(data, ctx)
        if _has_round_trip_meshes(parsed.operation):
            # A portable artifact's Shardy travels as `xla.sdy.*` frontend attributes next to
            # V2 strings; the attributes are the original, so read those.
            run_pipeline(parsed, [ROUND_TRIP_IMPORT])
        module = parsed.operation
        reader = _ShardyReader if is_shardy(module) else _GspmdReader
        reader(module, result, line_offset, fallback_devices).read()
    located = sorted(result.findings, key=_line_col)
    result.findings = [replace(f, file=file, graph=graph) for f in located]
    return result


ROUND_TRIP_IMPORT = "xla-sdy-round-trip-import-shardy-attrs"


def _has_round_trip_meshes(module) -> bool:
    from jaxlib.mlir import ir

    if "mhlo.frontend_attributes" not in module.attributes:
        return False
    return "xla.sdy.meshes" in ir.DictAttr(module.attributes["mhlo.frontend_attributes"])


# --- reading GSPMD modules -------------------------------------------------------------------


class _Reader:
    """Shared by both forms: names, locations, types, unannotated arguments."""

    def __init__(self, module, result: Graph, line_offset: int, fallback: int | None):
        from jaxlib.mlir import ir

        self.module = module
        self.result = result
        self.lines = line_offset
        self.fallback = fallback
        self.asm = ir.AsmState(module)

    def location(self, loc) -> str | None:
        from .mlir import format_location

        return dump.shift_location(format_location(loc), self.lines)

    def finding(self, severity: str, code: str, message: str, value: Value | None = None):
        where = None if value is None else value.location
        label = None if value is None else value.label
        self.result.findings.append(Finding(severity, code, message, where, label))

    def unannotated_args(self, attr_name: str) -> None:
        """Findings for `@main` arguments with no `attr_name` in their attributes."""
        from .walker import funcs

        for func in funcs(self.module):
            if _func_name(func) == "main":
                self._unannotated(func, attr_name)

    def _unannotated(self, func, attr_name: str) -> None:
        from jaxlib.mlir import ir

        block = func.regions[0].blocks[0]
        attrs = _value_dicts(func, "arg_attrs", len(block.arguments))
        for k, arg in enumerate(block.arguments):
            if attr_name in attrs[k]:
                continue
            where = self.location(arg.location)
            self.result.findings.append(
                Finding(
                    "warning",
                    "unannotated-arg",
                    f"{ir.Type(arg.type)} has no sharding: GSPMD replicates it, Shardy leaves it "
                    "to propagation; annotate what you own",
                    where,
                    f"%arg{k}",
                )
            )

    def add_value(self, value: Value) -> None:
        self.result.values.append(value)
        self.audit_value(value)

    def audit_value(self, value: Value) -> None:
        small = _small(value)
        if small:
            self.finding("warning", "small-sharded", small, value)


class _GspmdReader(_Reader):
    def read(self) -> None:
        from .walker import sites

        found = [(site, site.parse()) for site in sites(self.module)]
        self.plan = self._plan([s for _, s in found])
        for site, sharding in found:
            self._site(site, sharding)
        self.unannotated_args("mhlo.sharding")
        self._manual_escapes({s.owner: s for s, _ in found if s.kind == "op"})

    def _manual_escapes(self, op_sites: dict) -> None:
        """`@main` returning a value a `{manual}` op produced (torch_xla returns live manual
        tensors): a manual computation's results are global, so Shardy has no form for it."""
        for k, op, where in _main_returned_producers(self.module):
            site = op_sites.get(op)
            if site is None or not _is_manual(site.parse()):
                continue
            self.result.findings.append(
                Finding(
                    "error",
                    "manual-at-boundary",
                    f'@main returns a manual value ("{site.text}") as result {k}; Shardy has no '
                    "form for it (a manual computation's results are global)",
                    self.location(where),
                    f"result {k}",
                )
            )

    def _plan(self, shardings: list[HloSharding]):
        from .sharding.mesh import plan_mesh

        partitions = _num_partitions(self.module)
        try:
            plan = plan_mesh(shardings, num_devices=partitions)
            source = "mhlo.num_partitions" if partitions else "shardings"
            if not plan.device_count_known and self.fallback:
                plan = plan_mesh(shardings, num_devices=self.fallback)
                source = "other graphs of the dump"
        except ShardyConvertError as e:
            self.finding("error", "no-mesh", f"no Shardy mesh for this graph: {e.message}")
            return None
        self._describe(plan, source)
        return plan

    def _describe(self, plan, source: str) -> None:
        from .sharding.mesh import MESH_NAME, maximal_mesh_name
        from .sharding.sdy import Mesh

        result = self.result
        result.meshes = [(MESH_NAME, str(plan.mesh))]
        result.meshes += [(maximal_mesh_name(d), str(Mesh((), (d,)))) for d in plan.maximal]
        if plan.device_count_known:
            result.num_devices, result.device_count_from = plan.mesh.size, source
            return
        self.finding(
            "warning",
            "no-device-count",
            "every sharding is replicated and there is no mhlo.num_partitions: nothing says "
            "how many devices this graph runs on (convert emits a 1-device mesh unless given "
            "--num-devices)",
        )

    def _site(self, site, sharding: HloSharding) -> None:
        types = site.value_types()
        leaves = sharding.leaves() if sharding.kind is Kind.TUPLE else [sharding] * len(types)
        if not types or (sharding.kind is Kind.TUPLE and len(leaves) != len(types)):
            value = self._value(site, 0, sharding, None, site.text)
            self.add_value(value)
            if types:
                self.finding(
                    "error",
                    "tuple-mismatch",
                    f'tuple sharding "{site.text}" has {len(leaves)} elements but the op has '
                    f"{len(types)} results",
                    value,
                )
            return
        for k, (leaf, value_type) in enumerate(zip(leaves, types)):
            given = site.text if leaf is sharding else str(leaf)
            self.add_value(self._value(site, k, leaf, value_type, given))

    def _value(self, site, k: int, leaf: HloSharding, value_type, given: str) -> Value:
        shape, dtype, type_text = _type_info(value_type)
        value = Value(
            name=_site_name(site, k, self.asm),
            func=site.func_name,
            kind=site.kind,
            op=_op_label(site.owner) if site.kind == "op" else None,
            location=self._site_location(site),
            type=type_text,
            shape=shape,
            dtype=dtype,
            sharding=given,
            gspmd=str(leaf),
            v2=_v2_text(leaf),
            hlo=leaf,
            num_devices=self.result.num_devices,
            mesh=self.result.meshes[0][1] if self.result.meshes else None,
        )
        value.shard = shard_info(leaf, shape, value.num_devices)
        value.sdy = self._sdy(site, leaf, value)
        return value

    def _site_location(self, site) -> str | None:
        if site.kind == "arg":
            return self.location(site.owner.regions[0].blocks[0].arguments[site.index].location)
        if site.kind == "module":
            return None
        return self.location(site.owner.location)

    def _sdy(self, site, leaf: HloSharding, value: Value) -> str | None:
        if self.plan is None or leaf.kind is Kind.TUPLE:
            return None
        rank = _rank(leaf, value.shape)
        if leaf.kind is Kind.TILED and not leaf.is_replicated and len(leaf.data_dims) != rank:
            return None  # reported as rank-mismatch
        try:
            ts = self.plan.tensor_sharding(leaf, rank)
            manual = self.plan.manual_axes(leaf)
        except ShardyConvertError as e:
            self.finding("error", "no-sdy-form", e.message, value)
            return None
        if site.kind == "op":
            ts = ts.opened(_unspecified_dims(site.owner))
        if not manual:
            return str(ts)
        axes = "manual_axes={" + ", ".join(f'"{a}"' for a in manual) + "}"
        # A manual value lives inside an sdy.manual_computation; fully manual, it has no dims.
        return axes if leaf.kind is Kind.MANUAL else f"{ts} {axes}"

    def audit_value(self, value: Value) -> None:
        super().audit_value(value)
        leaf = value.hlo
        self._audit_rank(value)
        self._audit_order(value)
        if value.kind in ("arg", "result") and _is_manual(leaf):
            self.finding(
                "error",
                "manual-at-boundary",
                f'a manual value ("{value.sharding}") crosses the function boundary; Shardy has '
                "no form for it (a manual computation's operands and results are global)",
                value,
            )

    def _audit_rank(self, value: Value) -> None:
        leaf, shape = value.hlo, value.shape
        if leaf.kind is not Kind.TILED or shape is None or leaf.is_replicated:
            return
        if len(leaf.data_dims) != len(shape):
            self.finding(
                "error",
                "rank-mismatch",
                f'sharding "{value.sharding}" has {len(leaf.data_dims)} tile dims but the value '
                f"{value.type} has rank {len(shape)}",
                value,
            )

    def _kept_order(self) -> str:
        if self.plan is None or self.plan.mesh.device_ids is None:
            return "shardy-convert relabels it onto the mesh order"
        return f"shardy-convert keeps it as device_ids={_clip_ids(self.plan.mesh.device_ids)}"

    def _audit_order(self, value: Value) -> None:
        from .sharding.mesh import local_mesh

        leaf = value.hlo
        if leaf.kind is not Kind.TILED or leaf.is_replicated:
            return
        if value.v2 is None:
            self.finding(
                "warning",
                "custom-device-order",
                f"device list {_clip_ids(leaf.tiles.devices)} has no iota form: a V2-only path "
                "(torch_xla's CONVERT_SHLO_TO_SHARDY, XLA's importer) would lose this order; "
                + self._kept_order(),
                value,
            )
            return
        tiles = leaf.to_v2().tiles
        if tiles.reshape is not None and len(tiles.reshape) > 1 and local_mesh(tiles) is None:
            self.finding(
                "warning",
                "no-common-factorization",
                f"{tiles} has no common factorization of tile and reshape dims: XLA's importer "
                f"aborts on it; shardy-convert places it on mesh {value.mesh}",
                value,
            )


def _clip_ids(ids, limit: int = 16) -> str:
    ids = list(ids)
    return "[" + ",".join(map(str, ids[:limit])) + (",...]" if len(ids) > limit else "]")


def _main_returned_producers(module) -> Iterator[tuple[int, object, object]]:
    """(result index, producing op, return location) for each value `@main` returns that an op
    produced."""
    from jaxlib.mlir import ir

    from .walker import funcs

    for func in funcs(module):
        if _func_name(func) != "main":
            continue
        ops = func.regions[0].blocks[0].operations
        terminator = ops[len(ops) - 1]
        for k, operand in enumerate(terminator.operands):
            if isinstance(operand.owner, ir.Operation | ir.OpView):
                yield k, operand.owner.operation, terminator.location


def _num_partitions(module) -> int | None:
    from jaxlib.mlir import ir

    if "mhlo.num_partitions" not in module.attributes:
        return None
    return ir.IntegerAttr(module.attributes["mhlo.num_partitions"]).value


def _func_name(func) -> str:
    from jaxlib.mlir import ir

    return ir.StringAttr(func.attributes["sym_name"]).value


def _value_dicts(func, array_name: str, count: int) -> list[set[str]]:
    """The attribute names of each argument (or result) of a func."""
    from jaxlib.mlir import ir

    if array_name not in func.attributes:
        return [set() for _ in range(count)]
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes[array_name])]
    names = [{d[i].name for i in range(len(d))} for d in dicts]
    return names + [set() for _ in range(count - len(names))]


def _site_name(site, k: int, asm) -> str:
    if site.kind == "arg":
        return f"%arg{site.index}"
    if site.kind == "result":
        return f"result {site.index}"
    if site.kind == "module":
        return f"{site.attr}[{site.index}]"
    results = site.owner.results
    return results[k].get_name(asm) if len(results) > k else site.owner.name


def _op_label(op) -> str:
    from jaxlib.mlir import ir

    if op.name == "stablehlo.custom_call":
        return "@" + ir.StringAttr(op.attributes["call_target_name"]).value
    return op.name


def _unspecified_dims(op) -> frozenset[int]:
    from .passes.import_custom_calls import unspecified_dims

    return unspecified_dims(op) if op.name == "stablehlo.custom_call" else frozenset()


def _type_info(value_type) -> tuple[tuple[int | None, ...] | None, str | None, str | None]:
    """(shape, dtype, type text) of a value type; shape None when not a ranked tensor."""
    from jaxlib.mlir import ir

    if value_type is None:
        return None, None, None
    if not isinstance(value_type, ir.RankedTensorType):
        return None, None, str(value_type)
    t = ir.RankedTensorType(value_type)
    shape = tuple(d if d >= 0 else None for d in t.shape)
    return shape, str(t.element_type), str(t)


def _rank(leaf: HloSharding, shape) -> int | None:
    if shape is not None:
        return len(shape)
    return len(leaf.data_dims) if leaf.kind is Kind.TILED else 0


def _v2_text(leaf: HloSharding) -> str | None:
    """The V2 text, or None when a V1 list has no iota form (a custom device order)."""
    v2 = leaf.to_v2()
    if v2.kind is Kind.TILED and not v2.tiles.is_iota:
        return None
    return str(v2)


def _is_manual(s: HloSharding | None) -> bool:
    if s is None:
        return False
    return s.kind is Kind.MANUAL or SubgroupType.MANUAL in s.subgroups


# --- reading Shardy modules ------------------------------------------------------------------


SDY_SHARDING = "sdy.sharding"
_AXIS_NAME = re.compile(r'"((?:[^"\\]|\\.)*)"')


class _ShardyReader(_Reader):
    def read(self) -> None:
        from .walker import body, funcs

        self.meshes = dict(_meshes(body(self.module)))
        self._describe()
        for func in funcs(self.module):
            self._func(func)
        self.unannotated_args(SDY_SHARDING)

    def _describe(self) -> None:
        result = self.result
        result.form = "shardy"
        result.meshes = [(name, str(mesh)) for name, mesh in self.meshes.items()]
        sizes = [mesh.size for mesh in self.meshes.values() if mesh.axes]
        if sizes:
            result.num_devices, result.device_count_from = max(sizes), "sdy.mesh"
            return
        self.finding(
            "warning",
            "no-device-count",
            "no sdy.mesh with axes: nothing says how many devices this graph runs on",
        )

    def _func(self, func) -> None:
        from jaxlib.mlir import ir

        name = _func_name(func)
        block = func.regions[0].blocks[0]
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        for k, attr in _sdy_value_attrs(func, "arg_attrs"):
            where = self.location(block.arguments[k].location)
            self._add(attr, f"%arg{k}", name, "arg", None, where, block.arguments[k].type)
        for k, attr in _sdy_value_attrs(func, "res_attrs"):
            where = self.location(func.location)
            self._add(attr, f"result {k}", name, "result", None, where, ftype.results[k])
        for op, k, attr, value, manual in _sdy_op_shardings(func):
            label = _op_label(op)
            value_type = value.type if value is not None else None
            where = self.location(op.location)
            value_name = _value_name(value, self.asm, op, k)
            self._add(attr, value_name, name, "op", label, where, value_type, manual)

    def _add(self, attr, name, func, kind, op, where, value_type, manual=()) -> None:
        from .sharding.export import to_hlo

        shape, dtype, type_text = _type_info(value_type)
        given = str(attr).removeprefix("#sdy.sharding")
        value = Value(name, func, kind, op, where, type_text, shape, dtype, given, sdy=given)
        value.num_devices = self.result.num_devices
        try:
            ts, mesh = _tensor_sharding(attr, self.meshes)
            value.mesh = str(mesh)
            value.hlo = to_hlo(ts, mesh, manual)
        except ShardyConvertError as e:
            self.result.values.append(value)
            self.finding("error", "no-gspmd-form", e.message, value)
            return
        value.gspmd = str(value.hlo)
        value.v2 = _v2_text(value.hlo)
        value.shard = shard_info(value.hlo, shape, value.num_devices)
        self.add_value(value)


def _meshes(block) -> Iterator[tuple[str, object]]:
    from jaxlib.mlir import ir

    for op in block.operations:
        if op.operation.name == "sdy.mesh":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            yield name, _mesh(op.attributes["mesh"])


def _mesh(attr):
    from jaxlib.mlir.dialects import sdy

    from .sharding.sdy import Mesh

    m = sdy.MeshAttr(attr)
    axes = tuple((a.name, a.size) for a in map(sdy.MeshAxisAttr, m.axes))
    return Mesh(axes, tuple(m.device_ids) or None)


def _sdy_value_attrs(func, array_name: str) -> Iterator[tuple[int, object]]:
    from jaxlib.mlir import ir

    if array_name not in func.attributes:
        return
    for k, d in enumerate(ir.ArrayAttr(func.attributes[array_name])):
        d = ir.DictAttr(d)
        if SDY_SHARDING in d:
            yield k, d[SDY_SHARDING]


def _sdy_op_shardings(func) -> list[tuple]:
    """(op, index, TensorShardingAttr, value or None, manual axes) for every op sharding."""
    from jaxlib.mlir import ir

    found: list[tuple] = []

    def visit(op) -> ir.WalkResult:
        if op != func:
            found.extend(_op_shardings(op))
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _op_shardings(op) -> list[tuple]:
    from jaxlib.mlir.dialects import sdy

    manual = _enclosing_manual_axes(op)
    attrs = op.attributes
    out = []
    if SDY_SHARDING in attrs:
        per_value = sdy.TensorShardingPerValueAttr(attrs[SDY_SHARDING]).shardings
        out += [(op, k, a, _at(op.results, k), manual) for k, a in enumerate(per_value)]
    if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
        out.append((op, 0, attrs["sharding"], op.results[0], manual))
    if op.name == "sdy.manual_computation":
        ins = sdy.TensorShardingPerValueAttr(attrs["in_shardings"]).shardings
        outs = sdy.TensorShardingPerValueAttr(attrs["out_shardings"]).shardings
        out += [(op, -1 - k, a, _at(op.operands, k), manual) for k, a in enumerate(ins)]
        out += [(op, k, a, _at(op.results, k), manual) for k, a in enumerate(outs)]
    return out


def _at(values, k: int):
    return values[k] if k < len(values) else None


def _value_name(value, asm, op, k: int) -> str:
    """`%3`; a manual computation's operand k reads `%0 in[k]` (named after the op)."""
    if k < 0:
        head = op.results[0].get_name(asm) if len(op.results) else op.name
        return f"{head} in[{-1 - k}]"
    return value.get_name(asm) if value is not None else op.name


def _enclosing_manual_axes(op) -> tuple[str, ...]:
    """Axes made manual by the `sdy.manual_computation`s around `op` (outermost first)."""
    axes: list[str] = []
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "sdy.manual_computation":
            axes[:0] = _AXIS_NAME.findall(str(parent.attributes["manual_axes"]))
        parent = parent.parent
    return tuple(axes)


def _tensor_sharding(attr, meshes: dict):
    """(TensorSharding, Mesh) of a `#sdy.sharding` attribute."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import sdy

    from .sharding.sdy import TensorSharding

    ts = sdy.TensorShardingAttr(attr)
    ref = ts.mesh_or_ref
    if isinstance(ref, ir.FlatSymbolRefAttr):
        if ref.value not in meshes:
            raise ModuleError(f"unknown mesh @{ref.value}")
        name, mesh = ref.value, meshes[ref.value]
    else:
        name, mesh = "<inlined>", _mesh(ref)
    dims = tuple(map(_dim, ts.dimension_shardings))
    replicated = tuple(map(_axis_ref, ts.replicated_axes))
    unreduced = tuple(map(_axis_ref, ts.unreduced_axes))
    return TensorSharding(name, dims, replicated, unreduced), mesh


def _dim(attr):
    from jaxlib.mlir.dialects import sdy

    from .sharding.sdy import DimSharding

    d = sdy.DimensionShardingAttr(attr)
    return DimSharding(tuple(map(_axis_ref, d.axes)), d.is_closed)


def _axis_ref(attr):
    from jaxlib.mlir.dialects import sdy

    from .sharding.sdy import AxisRef

    a = sdy.AxisRefAttr(attr)
    if a.sub_axis_info is None:
        return AxisRef(a.name)
    sub = sdy.SubAxisInfoAttr(a.sub_axis_info)
    return AxisRef(a.name, sub.pre_size, sub.size)


# --- what each device holds ------------------------------------------------------------------


def shard_info(s: HloSharding, shape, num_devices: int | None) -> Shard | None:
    """The shard each device holds of a value of `shape` (None: unknown or non-tensor)."""
    if shape is None or any(d is None for d in shape):
        return None
    full = _dims_text(shape)
    if s.kind is Kind.TILED and not s.is_replicated:
        return _tiled_shard(s, shape)
    if s.is_replicated:
        every = f"each of {num_devices} devices" if num_devices else "every device"
        return Shard(tuple(shape), 1, num_devices, False, f"{full} on {every} (replicated)")
    if s.kind is Kind.MAXIMAL:
        return Shard(tuple(shape), 1, 1, False, f"{full} on device {s.device} only")
    texts = {
        Kind.MANUAL: f"manual: each device holds its own {full} (no global tiles)",
        Kind.UNKNOWN: "unknown: left to propagation",
        Kind.UNREDUCED: f"{full} partial sums on every device (unreduced)",
    }
    return Shard(None, 1, None, False, texts.get(s.kind, s.kind.value))


def _tiled_shard(s: HloSharding, shape) -> Shard | None:
    data = s.data_dims
    if len(data) != len(shape):
        return None
    per = tuple(-(-n // d) for n, d in zip(shape, data))
    uneven = any(n % d for n, d in zip(shape, data))
    groups = s.tiles.dims[len(data) :]
    group = math.prod(groups)
    text = f"{_dims_text(per)} per device"
    for kind, size in zip(s.subgroups, groups):
        if size > 1:
            text += _SUBGROUP_WORDS[kind].format(size)
    if uneven:
        text += ", uneven (padded)"
    return Shard(per, math.prod(data), group, uneven, text)


_SUBGROUP_WORDS = {
    SubgroupType.REPLICATED: ", {} replicas",
    SubgroupType.MANUAL: ", {}-way manual",
    SubgroupType.UNREDUCED: ", {}-way unreduced",
    SubgroupType.MAXIMAL: ", {}-way maximal",
}


def _dims_text(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def _small(value: Value) -> str | None:
    """Why a sharded value is too small to shard, or None."""
    s, shard = value.hlo, value.shard
    if s is None or shard is None or shard.shape is None or shard.tiles < 2:
        return None
    elements = math.prod(value.shape)
    shard_bytes = math.prod(shard.shape) * _element_bytes(value.dtype)
    if elements >= SMALL_ELEMENTS and shard_bytes >= SMALL_SHARD_BYTES:
        return None
    return (
        f"{elements} elements in {shard.tiles} tiles of {shard_bytes} bytes: a stream of tiny "
        "collectives; replicate it"
    )


def _element_bytes(dtype: str | None) -> int:
    """Bytes per element (`f32` 4, `bf16` 2, `i1` 1, `complex<f32>` 8); 4 when unknown."""
    m = re.search(r"(\d+)", dtype or "")
    if m is None:
        return 4
    size = max(int(m.group(1)), 8) // 8
    return size * 2 if dtype.startswith("complex") else size


# --- table -----------------------------------------------------------------------------------


_HEADERS = {
    "gspmd": ("VALUE", "AT", "TYPE", "SHARDING", "SDY", "SHARD"),
    "shardy": ("VALUE", "AT", "TYPE", "SHARDING (SDY)", "GSPMD", "SHARD"),
}


def format_table(report: Report) -> str:
    """Per graph: a header with the mesh, an aligned table, then its findings."""
    out: list[str] = []
    files_done: set = set()
    for k, graph in enumerate(report.graphs):
        out.extend(_graph_table(graph))
        last_of_file = k + 1 == len(report.graphs) or report.graphs[k + 1].file != graph.file
        if last_of_file:
            files_done.add(graph.file)
            out.extend(_findings_block([f for f in report.findings if f.file == graph.file]))
    other = [f for f in report.findings if f.file not in files_done]
    out.extend(_findings_block(other))
    out.append(_summary(report))
    return "\n".join(out) + "\n"


def _graph_table(graph: Graph) -> list[str]:
    count = f"{graph.num_devices} devices" if graph.num_devices else "device count unknown"
    source = f" (from {graph.device_count_from})" if graph.device_count_from else ""
    lines = [f"== {graph.where}: {graph.form.upper()}, {count}{source}"]
    lines += [f"   mesh @{name} = {mesh}" for name, mesh in graph.meshes]
    rows: list[list[str]] = [list(_HEADERS[graph.form])]
    for value in graph.values:
        rows.extend(_rows(value, graph.form))
    if graph.values:
        lines.extend("   " + line for line in _align(rows))
    else:
        lines.append("   (no sharded values)")
    lines.extend(_findings_block(graph.findings))
    lines.append("")
    return lines


def _rows(value: Value, form: str) -> list[list[str]]:
    """One row per value, plus a continuation row for the V2 form when it differs."""
    name = value.label + (f" = {value.op}" if value.op else "")
    type_text = _short_type(value)
    shard = value.shard.text if value.shard else "-"
    if form == "shardy":
        other = _clip(value.v2 or value.gspmd or "-")
        return [[name, value.location or "-", type_text, value.sharding, other, shard]]
    row = [name, value.location or "-", type_text, _clip(value.sharding), value.sdy or "-", shard]
    if value.v2 == value.sharding:
        return [row]
    v2 = f"v2 {_clip(value.v2)}" if value.v2 else "v2: none, no iota form (custom device order)"
    return [row, ["", "", "", v2, "", ""]]


def _short_type(value: Value) -> str:
    if value.shape is None:
        return value.type or "-"
    dims = "x".join("?" if d is None else str(d) for d in value.shape)
    return f"{dims}x{value.dtype}" if dims else value.dtype


def _clip(text: str) -> str:
    return text if len(text) <= TABLE_CELL_LIMIT else text[: TABLE_CELL_LIMIT - 1] + "…"


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _findings_block(findings: list[Finding]) -> list[str]:
    if not findings:
        return []
    rows = [[f.severity, f.location or "-", f.value or "-", f.code, f.message] for f in findings]
    return ["   findings:"] + ["     " + line for line in _align(rows)]


def _summary(report: Report) -> str:
    values = sum(len(g.values) for g in report.graphs)
    counts = [sum(f.severity == s for f in report.all_findings()) for s in SEVERITIES]
    text = f"{_plural(len(report.graphs), 'graph')}, {_plural(values, 'sharded value')}"
    text += "; findings: " + ", ".join(_plural(n, s) for n, s in zip(counts, SEVERITIES))
    if report.errors:
        text += f"; {_plural(len(report.errors), 'input')} failed"
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


# --- --show ----------------------------------------------------------------------------------


def find_value(report: Report, name: str, graph: int | None = None) -> tuple[Graph, Value]:
    """The value `name` (`%arg3`, `arg3`, `result 0`, `%1`, `@f:%arg0`) names.

    Raises LookupError listing the candidates when there is none or more than one.
    """
    func, key = _split_name(name)
    graphs = [g for g in report.graphs if graph is None or (g.graph or 0) == graph]
    hits = [(g, v) for g in graphs for v in g.values if _matches(v, func, key)]
    if len(hits) > 1 and func is None:
        hits = [(g, v) for g, v in hits if v.func == "main"] or hits
    if len({id(g) for g, _ in hits}) > 1:
        where = ", ".join(str(g.graph) for g, _ in hits[:20])
        raise LookupError(f'"{name}" is in graphs {where}: pick one with --graph N')
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise LookupError(f'"{name}" names {len(hits)} values: ' + _names(v for _, v in hits))
    known = _names(v for g in graphs for v in g.values)
    raise LookupError(f'no sharded value "{name}"' + (f"; values: {known}" if known else ""))


def _split_name(name: str) -> tuple[str | None, str]:
    if name.startswith("@") and ":" in name:
        func, _, rest = name[1:].partition(":")
        return func, _key(rest)
    return None, _key(name)


def _key(name: str) -> str:
    return name.strip().lstrip("%").replace(" ", "").lower()


def _matches(value: Value, func: str | None, key: str) -> bool:
    return _key(value.name) == key and (func is None or value.func == func)


def _names(values) -> str:
    names = list(dict.fromkeys(v.label for v in values))
    return ", ".join(names[:30]) + (", ..." if len(names) > 30 else "")


_BOX = dict(h="─", v="│", tl="┌", tm="┬", tr="┐", ml="├", mm="┼", mr="┤", bl="└", bm="┴", br="┘")
_ASCII = dict(h="-", v="|", tl="+", tm="+", tr="+", ml="+", mm="+", mr="+", bl="+", bm="+", br="+")
# More tiles than this across a terminal line: list the tiles instead of drawing them.
MAX_DRAWN_COLUMNS = 16


def show(graph: Graph, value: Value, *, ascii: bool = False) -> str:
    """Which devices hold each tile of `value`, like `jax.debug.visualize_sharding`.

    Rank <= 2: a grid, dim 0 down and dim 1 across, labelled with each tile's index range;
    each cell lists the devices holding that tile (a replication group when several, ids
    sorted: they carry no order). Rank > 2: one line per tile.
    """
    lines = [
        f"{value.label} of {graph.where}" + (f" at {value.location}" if value.location else "")
    ]
    lines += [f"  {k:<9}{v}" for k, v in _facts(value) if v]
    lines.append("")
    lines.extend(_picture(value, _ASCII if ascii else _BOX))
    return "\n".join(lines) + "\n"


def _facts(value: Value) -> list[tuple[str, str | None]]:
    v2 = value.v2 if value.v2 is not None else "none: no iota form (custom device order)"
    return [
        ("type", value.type),
        ("sharding", value.sharding),
        ("gspmd", value.gspmd if value.gspmd != value.sharding else None),
        ("v2", v2 if v2 != value.sharding else None),
        ("sdy", value.sdy if value.sdy != value.sharding else None),
        ("mesh", value.mesh),
        ("shard", value.shard.text if value.shard else None),
    ]


def _picture(value: Value, chars: dict) -> list[str]:
    s, shape = value.hlo, value.shape
    if s is None:
        return ["(no placement: the sharding could not be read)"]
    if s.kind is Kind.TILED and not s.is_replicated:
        if shape is None or len(shape) != len(s.data_dims) or None in shape:
            shape = s.data_dims  # no usable tensor shape: label tiles by index
        return [*_tiled_picture(s, tuple(shape), chars), _legend_tiled(s)]
    devices = _whole_devices(s, value.num_devices)
    if devices is None:
        return [value.shard.text if value.shard else f"{s.kind.value}: no tiles to draw"]
    return [*_grid([""], [""], [[devices]], chars), _legend_whole(s, value)]


def _whole_devices(s: HloSharding, n: int | None) -> str | None:
    if s.kind is Kind.MAXIMAL:
        return str(s.device)
    if not s.is_replicated:
        return None
    return _ids(range(n)) if n else "all devices"


def _legend_whole(s: HloSharding, value: Value) -> str:
    what = _dims_text(value.shape) if value.shape is not None else "the value"
    if s.kind is Kind.MAXIMAL:
        return f"device {s.device} holds the whole {what}"
    return f"replicated: every device holds the whole {what}"


def _tiled_picture(s: HloSharding, shape: tuple[int, ...], chars: dict) -> list[str]:
    """Dim 0 down, dim 1 across (rank 1: one row); a list of tiles for rank > 2."""
    groups = tile_devices(s)
    ranges = [[_range_text(r) for r in _ranges(n, d)] for n, d in zip(shape, s.data_dims)]
    rank = len(shape)
    if rank > 2 or (rank and len(ranges[-1]) > MAX_DRAWN_COLUMNS):
        return _tile_list(groups, ranges)
    if rank < 2:
        cols = ranges[0] if rank else [""]
        return _grid(cols, [""], [[_ids(g) for g in groups.reshape(-1, groups.shape[-1])]], chars)
    cells = [[_ids(groups[i, j]) for j in range(groups.shape[1])] for i in range(groups.shape[0])]
    return _grid(ranges[1], ranges[0], cells, chars)


def tile_devices(s: HloSharding) -> np.ndarray:
    """Shape data_dims + (devices per tile,): the sorted device ids holding each tile."""
    grid = s.tiles.array()
    return np.sort(grid.reshape(*s.data_dims, -1), axis=-1)


def _legend_tiled(s: HloSharding) -> str:
    rank = len(s.data_dims)
    if rank > 2:
        text = "one line per tile: its index ranges and the devices that hold it"
    else:
        text = ("one tile", "dim 0 across", "dim 0 down, dim 1 across")[rank]
        text += "; each cell lists the devices that hold that tile"
    kinds = {t for t, n in zip(s.subgroups, s.tiles.dims[len(s.data_dims) :]) if n > 1}
    if SubgroupType.REPLICATED in kinds:
        text += " (a replication group)"
    if SubgroupType.MANUAL in kinds:
        text += " (a manual group: each device has its own data)"
    return text


def _ranges(size: int, parts: int) -> list[tuple[int, int]]:
    """XLA's tiling: tile i covers [i*c, min((i+1)*c, size)) with c = ceil(size / parts)."""
    chunk = -(-size // parts)
    return [(min(i * chunk, size), min((i + 1) * chunk, size)) for i in range(parts)]


def _range_text(r: tuple[int, int]) -> str:
    return f"{r[0]}:{r[1]}" if r[1] > r[0] else "(padding)"


def _ids(ids) -> str:
    """`0,4` or, for runs of 3 or more, `0-3,8-11`."""
    ids = [int(i) for i in ids]
    parts, start = [], 0
    for k in range(1, len(ids) + 1):
        if k < len(ids) and ids[k] == ids[k - 1] + 1:
            continue
        run = ids[start:k]
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ",".join(map(str, run)))
        start = k
    return ",".join(parts)


def _grid(cols: list[str], rows: list[str], cells: list[list[str]], c: dict) -> list[str]:
    """A box grid: column labels on top, row labels on the left, centred cells."""
    width = max(len(x) for x in [*cols, *(cell for row in cells for cell in row)]) + 2
    pad = max(len(r) for r in rows)
    n = len(cols)

    def border(left: str, mid: str, right: str) -> str:
        return " " * pad + " " + left + mid.join([c["h"] * width] * n) + right

    lines = []
    if any(cols):
        lines.append(" " * (pad + 2) + " ".join(label.center(width) for label in cols).rstrip())
    lines.append(border(c["tl"], c["tm"], c["tr"]))
    for k, (label, row) in enumerate(zip(rows, cells)):
        if k:
            lines.append(border(c["ml"], c["mm"], c["mr"]))
        body = c["v"].join(cell.center(width) for cell in row)
        lines.append(f"{label.rjust(pad)} {c['v']}{body}{c['v']}")
    lines.append(border(c["bl"], c["bm"], c["br"]))
    return lines


def _tile_list(groups: np.ndarray, ranges: list[list[str]]) -> list[str]:
    lines = []
    for index in np.ndindex(*groups.shape[:-1]):
        where = ", ".join(ranges[d][i] for d, i in enumerate(index))
        lines.append(f"  tile {index!s:<12} [{where}]  devices {_ids(groups[index])}")
    return lines


__all__ = [
    "SCHEMA",
    "Finding",
    "Graph",
    "Report",
    "Shard",
    "Value",
    "find_value",
    "format_table",
    "inspect_file",
    "inspect_inputs",
    "inspect_module",
    "shard_info",
    "show",
    "tile_devices",
]
