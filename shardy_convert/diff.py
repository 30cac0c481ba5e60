"""Semantic comparison of two modules or torch_xla dumps, and their canonical text form.

Two inputs are equal when they differ only in how placements are spelled: V1 lists vs V2 iota
vs `#sdy.sharding`, `""` vs `{replicated}`, axis names vs `_axis_N`, different but
equivalent meshes, a torch_xla inline manual region vs the same `sdy.manual_computation`.

Both sides are brought to one form: export (Shardy -> GSPMD), convert (-> Shardy), export
again. That gives one structure per program (manual regions in JAX's custom-call encoding,
formed by our importer whichever side they came from) and one `mhlo.sharding` per sharded
value. Then
(a) placements are compared per site, as semantic `HloSharding` values plus the open dims
    (`unspecified_dims`): func arguments/results by (func, index), module attributes by name,
    sharded ops by their rank in pre-order within their func;
(b) everything else (ops, operands, types, attributes) is compared with the sharding
    attributes and the mesh ops left out; an op placement is only compared when the
    structure of its func matches.
When a GSPMD side has no Shardy form (a `{manual}` value returned from main), both sides are
compared as GSPMD instead, without the round trip. Open dims on func arguments and results
and dim priorities have no GSPMD spelling (XLA's export drops them too), so they are not
compared.

Calls are structure: JAX's GSPMD lowering of a shard_map calls `@shmap_body`, its Shardy
lowering inlines the body, so those twins differ unless `inline=True` (`diff --inline`)
inlines every call on both sides first.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

from jaxlib.mlir import ir

from . import dump, formats, pipeline
from .converter import convert_module, import_round_trip
from .errors import NoShardyFormError, ShardyConvertError, ShardyConvertWarning
from .mlir import format_location, new_context, print_module
from .passes.import_custom_calls import unspecified_dims
from .sharding import HloSharding
from .sharding.canonical import canonical
from .walker import (
    MODULE_SHARDING_ATTRS,
    SHARDING,
    Site,
    call_target,
    func_name,
    funcs,
    sites,
    transform_shardings,
)

SHARDING_CALLS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")
_CLIP = 120


# --- results --------------------------------------------------------------------------------


@dataclass
class Difference:
    """One difference: where in A (and B), what, and A's and B's side of it."""

    what: str
    a: str
    b: str
    location: str | None = None
    other: str | None = None
    file: str | None = None
    graph: int | None = None
    other_file: str | None = None
    other_graph: int | None = None

    def __str__(self) -> str:
        where = _where(self.file, self.graph, self.location)
        text = f"{where + ': ' if where else ''}{self.what}: {self.a} vs {self.b}"
        other = _where(self.other_file, self.other_graph, self.other)
        return f"{text} (B: {other})" if other and self.other else text


def _where(file: str | None, graph: int | None, location: str | None) -> str:
    parts = [file, None if graph is None else f"graph {graph}", location]
    return ":".join(p for p in parts if p)


@dataclass
class Comparison:
    """What `diff` found: the differences, how many placements matched, notes on the form."""

    differences: list[Difference] = field(default_factory=list)
    placements: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differences

    def extend(self, other: Comparison) -> None:
        self.differences += other.differences
        self.placements += other.placements
        self.notes += other.notes


# --- library entry points -------------------------------------------------------------------


def diff(
    a: str | bytes, b: str | bytes, names: tuple[str, str] = ("A", "B"), *, inline: bool = False
) -> Comparison:
    """Compares two inputs (modules or torch_xla dumps, graph by graph); differences and
    errors are located as `FILE[:graph N]:LINE:COL`. `inline`: inline every `func.call`
    first (JAX's GSPMD lowering calls `@shmap_body`, its Shardy lowering inlines it)."""
    (ga, dump_a), (gb, dump_b) = _graphs(a, names[0]), _graphs(b, names[1])
    result = Comparison()
    if len(ga) != len(gb):
        count = Difference("graphs", str(len(ga)), str(len(gb)), file=names[0])
        result.differences.append(count)
    for x, y in zip(ga, gb):
        try:
            found = diff_modules(x.text, y.text, names, inline=inline)
        except ShardyConvertError as e:
            raise (x if e.file == names[0] else y).locate(e) from None
        for d in found.differences:
            _place(d, x, y, names, dump_a, dump_b)
        result.extend(found)
    return result


def diff_modules(
    a: str | bytes, b: str | bytes, names: tuple[str, str] = ("A", "B"), *, inline: bool = False
) -> Comparison:
    """Compares two modules; locations are `LINE:COL` of each module's own text. An error
    (unparsable input, a Shardy form that cannot be exported) names its side's file."""
    how = _How(inline=inline)
    with new_context() as ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore", ShardyConvertWarning)
        result = Comparison()
        try:
            views = [_side(m, ctx, name, how) for m, name in zip((a, b), names)]
        except NoShardyFormError as e:
            result.notes.append(f"{e.file}: no Shardy form ({e.message}): compared as GSPMD")
            how = replace(how, convert=False)
            views = [_side(m, ctx, name, how) for m, name in zip((a, b), names)]
        _compare(views[0], views[1], result)
        if not inline and any(_about_calls(d) for d in result.differences):
            result.notes.append(
                "if one side calls a function the other inlines (JAX's GSPMD lowering calls "
                "@shmap_body, its Shardy lowering inlines it), --inline compares them inlined"
            )
        return result


@dataclass(frozen=True)
class _How:
    """How a side is brought to the comparable form (see `_comparable`)."""

    convert: bool = True
    inline: bool = False


def _about_calls(d: Difference) -> bool:
    return d.what.startswith("function @") or "func.call" in (d.a, d.b)


def _side(data: str | bytes, ctx: ir.Context, name: str, how: _How) -> View:
    try:
        return _view(_comparable(data, ctx, how))
    except ShardyConvertError as e:
        raise e.located(file=name) from None


def normalize(data: str | bytes, *, inline: bool = False) -> str:
    """The canonical text of a module or dump: the GSPMD form `diff` compares, every sharding
    in its canonical spelling, no locations. Inputs `diff` calls equal print the same."""
    result, errors = dump.transform(data, lambda g: normalize_module(g.text, inline=inline))
    if errors:
        raise errors[0]
    return result


def normalize_module(module: str | bytes, *, inline: bool = False) -> str:
    with new_context() as ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore", ShardyConvertWarning)
        try:
            mod = _comparable(module, ctx, _How(inline=inline))
        except NoShardyFormError:
            mod = _comparable(module, ctx, _How(convert=False, inline=inline))
        transform_shardings(mod.operation, lambda _, site: str(canonical(site.parse())))
        _canonical_backend_configs(mod.operation)
        return print_module(mod, "text")


# --- the comparable form --------------------------------------------------------------------


def _comparable(data: str | bytes, ctx: ir.Context, how: _How) -> ir.Module:
    """The module as GSPMD, through Shardy when `how.convert`: export, [inline], convert,
    export, then through VHLO (a portable artifact went through it, which drops attributes
    at their default values: every side does, so that only meaning is compared).

    Shardy's round-trip form (a portable artifact) is read back as Shardy first. The first
    export makes Shardy and GSPMD inputs meet in one form before the conversion; the
    conversion then forms every manual region the same way (ops of an inlined body that use
    no region value end up outside it, whichever side they came from). Raises
    NoShardyFormError when the GSPMD module has no Shardy form.
    """
    mod = formats.load(data, ctx)
    import_round_trip(mod)
    pipeline.run(mod, ["export-shardings"])
    if how.inline:
        pipeline.run(mod, ["inline-calls", "symbol-dce"])
    if how.convert and next(sites(mod.operation), None) is not None:
        convert_module(mod, pipeline.Options(), validate=False)
        pipeline.run(mod, ["export-shardings"])
    return formats.through_vhlo(mod, ctx)


@dataclass(frozen=True)
class Placement:
    """One sharded site: a key that matches it across modules, and its placement."""

    key: tuple
    what: str
    location: str | None
    sharding: HloSharding
    open_dims: frozenset[int]

    def __str__(self) -> str:
        text = str(canonical(self.sharding))
        if self.open_dims:
            text += f" unspecified_dims=[{','.join(map(str, sorted(self.open_dims)))}]"
        return text

    def same(self, other: Placement) -> bool:
        return self.sharding == other.sharding and self.open_dims == other.open_dims


@dataclass(frozen=True)
class Op:
    """One op of the structure: (name, operands, attributes, result types)."""

    parts: tuple[str, str, str, str]
    location: str | None


@dataclass
class View:
    attributes: str
    funcs: dict[str, list[Op]]
    placements: list[Placement]


def _view(mod: ir.Module) -> View:
    op = mod.operation
    attributes = _attributes(op, skip=set(MODULE_SHARDING_ATTRS))
    structure = {func_name(f): _func_structure(f) for f in funcs(op)}
    return View(attributes, structure, _placements(op))


def _placements(module: ir.Operation) -> list[Placement]:
    counts: dict[str | None, int] = {}
    found = []
    for site in sites(module):
        key, what, location = _describe(site, counts)
        found.append(Placement(key, what, location, site.parse(), _open_dims(site)))
    return found


def _describe(site: Site, counts: dict) -> tuple[tuple, str, str | None]:
    if site.kind == "module":
        return ("module", site.attr, site.index), f"module attribute {site.attr}", None
    func = site.func_name
    if site.kind in ("arg", "result"):
        where = site.location.rpartition(": ")
        return (func, site.kind, site.index), where[2], where[0] or None
    k = counts.get(func, 0)
    counts[func] = k + 1
    what = f"op {k} of @{func} ({_op_title(site.owner)})"
    return (func, "op", k), what, format_location(site.owner.location)


def _op_title(op: ir.Operation) -> str:
    target = call_target(op)
    return f"{op.name} @{target}" if target else op.name


def _open_dims(site: Site) -> frozenset[int]:
    if site.kind != "op" or call_target(site.owner) not in SHARDING_CALLS:
        return frozenset()
    return unspecified_dims(site.owner)


# --- structure ------------------------------------------------------------------------------


def _func_structure(func: ir.Operation) -> list[Op]:
    """The func and every op in it, pre-order; values numbered in definition order.

    Constants are not ops of the structure: their uses name their value (`dense<1.0> :
    tensor<f32>`), so where a producer put them (XLA hoists them) does not matter."""
    numbers: dict[ir.Value, str] = {}
    ops: list[Op] = []
    defined = [0]

    def define(values) -> None:
        for v in values:
            numbers[v] = f"#{defined[0]}"
            defined[0] += 1

    def visit(op: ir.Operation) -> None:
        if op.name == "stablehlo.constant":
            numbers[op.results[0]] = str(op.attributes["value"])
            return
        operands = ", ".join(numbers.get(v, "?") for v in op.operands)
        results = ", ".join(str(r.type) for r in op.results)
        attrs = _attributes(op, skip=_skipped(op))
        regions = " ".join(f"[{len(r.blocks)} blocks]" for r in op.regions)
        parts = (op.name, f"({operands})", f"{attrs} {regions}".strip(), results)
        ops.append(Op(parts, format_location(op.location)))
        define(op.results)
        for region in op.regions:
            for block in region.blocks:
                define(block.arguments)
                for inner in block.operations:
                    visit(inner.operation)

    visit(func)
    return ops


def _skipped(op: ir.Operation) -> set[str]:
    if op.name == "func.func":
        return set()
    if call_target(op) in SHARDING_CALLS:
        return {SHARDING, "backend_config"}
    return {SHARDING}


def _attributes(op: ir.Operation, skip: set[str]) -> str:
    parts = []
    for k in range(len(op.attributes)):
        named = op.attributes[k]
        if named.name in skip:
            continue
        value = named.attr
        if named.name in ("arg_attrs", "res_attrs"):
            value = _without_sharding(value)
        parts.append(f"{named.name} = {value}")
    return "{" + ", ".join(sorted(parts)) + "}"


def _without_sharding(array: ir.Attribute) -> str:
    dicts = []
    for d in ir.ArrayAttr(array):
        d = ir.DictAttr(d)
        items = [f"{d[i].name} = {d[i].attr}" for i in range(len(d)) if d[i].name != SHARDING]
        dicts.append("{" + ", ".join(items) + "}")
    return "[" + ", ".join(dicts) + "]"


# --- comparing two views --------------------------------------------------------------------


_PARTS = ("op", "operands", "attributes", "result types")


def _compare(a: View, b: View, result: Comparison) -> None:
    if a.attributes != b.attributes:
        result.differences.append(
            Difference("module attributes", _clip(a.attributes), _clip(b.attributes))
        )
    broken = _compare_funcs(a, b, result)
    _compare_placements(a, b, broken, result)


def _compare_funcs(a: View, b: View, result: Comparison) -> set[str]:
    """Structural differences, one per func (the first op that differs); returns those funcs."""
    broken = set()
    for name in [*a.funcs, *(n for n in b.funcs if n not in a.funcs)]:
        if name not in a.funcs or name not in b.funcs:
            pair = ("defined", "missing") if name in a.funcs else ("missing", "defined")
            first = (a.funcs.get(name) or b.funcs[name])[0]
            result.differences.append(Difference(f"function @{name}", *pair, first.location))
            broken.add(name)
            continue
        found = _first_op_difference(name, a.funcs[name], b.funcs[name])
        if found is not None:
            result.differences.append(found)
            broken.add(name)
    return broken


def _first_op_difference(name: str, a: list[Op], b: list[Op]) -> Difference | None:
    for k, (x, y) in enumerate(zip(a, b)):
        if x.parts == y.parts:
            continue
        part = next(i for i in range(4) if x.parts[i] != y.parts[i])
        what = f"op {k} of @{name}" if k else f"@{name}"
        if part:
            what += f" ({x.parts[0]}) {_PARTS[part]}"
        return Difference(
            what,
            _clip(x.parts[part]),
            _clip(y.parts[part]),
            x.location,
            y.location,
        )
    if len(a) != len(b):
        last = (a if len(a) > len(b) else b)[min(len(a), len(b))]
        return Difference(f"@{name}: op count", str(len(a)), str(len(b)), last.location)
    return None


def _compare_placements(a: View, b: View, broken: set[str], result: Comparison) -> None:
    by_key = {p.key: p for p in b.placements}
    seen = set()
    for p in a.placements:
        if p.key[1] == "op" and p.key[0] in broken:
            continue
        seen.add(p.key)
        q = by_key.get(p.key)
        if q is None:
            result.differences.append(Difference(p.what, str(p), "no sharding", p.location))
        elif not p.same(q):
            result.differences.append(Difference(p.what, str(p), str(q), p.location, q.location))
        else:
            result.placements += 1
    for q in b.placements:
        if q.key not in seen and not (q.key[1] == "op" and q.key[0] in broken):
            result.differences.append(Difference(q.what, "no sharding", str(q), None, q.location))


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[: _CLIP - 3] + "..."


def _canonical_backend_configs(module: ir.Operation) -> None:
    """`unspecified_dims` of the sharding custom calls as the export writes them."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if call_target(op) in SHARDING_CALLS:
            dims = sorted(unspecified_dims(op.operation))
            text = f"unspecified_dims=[{','.join(map(str, dims))}]" if dims else ""
            op.attributes["backend_config"] = ir.StringAttr.get(text)
        return ir.WalkResult.ADVANCE

    with module.context:
        module.walk(visit, ir.WalkOrder.PRE_ORDER)


# --- inputs: modules and dumps --------------------------------------------------------------


def _graphs(data: str | bytes, name: str) -> tuple[list[dump.Graph], bool]:
    """The graphs of a dump, or the one module as graph None (first line 1)."""
    source = dump.read(data, name)
    return source.graphs, source.is_dump


def _place(d: Difference, x: dump.Graph, y: dump.Graph, names, dump_a, dump_b) -> None:
    d.location = x.shift(d.location)
    d.other = y.shift(d.other)
    d.file, d.other_file = names
    d.graph = x.index if dump_a else None
    d.other_graph = y.index if dump_b else None
