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
Constants are compared by value where they are used, not by position, and both sides go
through VHLO (which drops attributes at their default values), so a portable artifact, whose
Shardy arrives in its `xla.sdy.*` round-trip form (read back first), equals its original.
When a GSPMD side has no Shardy form (NoShardyFormError: a `{manual}` value returned from
main; tiled shardings that are no views of one device mesh, such as a V1 list with two devices
swapped, which GSPMD compiles), both sides are compared as GSPMD instead, without the round
trip: each placement by the devices that hold each tile (`HloSharding` equality; a difference
names the tiles on other devices, sharding/placement.py); any other error is an error. Open
dims on func arguments and results and dim priorities have no GSPMD spelling (XLA's export
drops them too), so they are not compared.

Calls are structure: JAX's GSPMD lowering of a shard_map calls `@shmap_body`, its Shardy
lowering inlines the body, so those twins differ unless `inline=True` (`diff --inline`)
inlines every call on both sides first.

The comparable form (placements and structure) is `comparable`; this module compares two.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

from ..errors import (
    NoShardyFormError,
    ShardyConvertError,
    ShardyConvertWarning,
    clip,
    place,
    plural,
)
from ..formats import dump
from ..ir.bindings import ir
from ..ir.parse import new_context, print_module
from ..ir.walker import transform_shardings
from ..sharding.canonical import canonical
from ..sharding.placement import moved_tiles
from .comparable import How, Op, Placement, View, canonical_backend_configs, comparable, view

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
    detail: str | None = None  # the evidence: for a placement, the tiles on other devices

    def __str__(self) -> str:
        where = place(self.file, self.graph, self.location)
        text = f"{where + ': ' if where else ''}{self.what}: {self.a} vs {self.b}"
        other = place(self.other_file, self.other_graph, self.other)
        text = f"{text} (B: {other})" if other and self.other else text
        return f"{text}: {self.detail}" if self.detail else text


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
    a: str | bytes,
    b: str | bytes,
    names: tuple[str, str] = ("A", "B"),
    *,
    inline: bool = False,
    convert: bool = True,
) -> Comparison:
    """Compares two inputs (modules or torch_xla dumps, graph by graph); differences and
    errors are located as `FILE[:graph N]:LINE:COL`. `inline`: inline every `func.call`
    first (JAX's GSPMD lowering calls `@shmap_body`, its Shardy lowering inlines it).
    `convert=False`: compare the GSPMD forms without the converter (Shardy sides are only
    exported), to check the converter's own output; manual regions then only match when
    both sides spell them the same way."""
    (ga, dump_a), (gb, dump_b) = _graphs(a, names[0]), _graphs(b, names[1])
    result = Comparison()
    if len(ga) != len(gb):
        count = Difference("graphs", str(len(ga)), str(len(gb)), file=names[0])
        result.differences.append(count)
    for x, y in zip(ga, gb):
        try:
            found = diff_modules(x.text, y.text, names, inline=inline, convert=convert)
        except ShardyConvertError as e:
            raise (x if e.file == names[0] else y).locate(e) from None
        for d in found.differences:
            _place(d, x, y, names, dump_a, dump_b)
        result.extend(found)
    return result


def diff_modules(
    a: str | bytes,
    b: str | bytes,
    names: tuple[str, str] = ("A", "B"),
    *,
    inline: bool = False,
    convert: bool = True,
) -> Comparison:
    """Compares two modules; locations are `LINE:COL` of each module's own text. An error
    (unparsable input, a Shardy form that cannot be exported) names its side's file."""
    how = How(convert=convert, inline=inline)
    with new_context() as ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore", ShardyConvertWarning)
        result = Comparison()
        try:
            views = [_side(m, ctx, name, how) for m, name in zip((a, b), names)]
        except NoShardyFormError as e:
            result.notes.append(
                f"{e.file}: no Shardy form ({clip(e.message, 160)}): compared as GSPMD, by the "
                "devices that hold each tile"
            )
            how = replace(how, convert=False)
            views = [_side(m, ctx, name, how) for m, name in zip((a, b), names)]
        _compare(views[0], views[1], result)
        if not inline and any(_about_calls(d) for d in result.differences):
            result.notes.append(
                "if one side calls a function the other inlines (JAX's GSPMD lowering calls "
                "@shmap_body, its Shardy lowering inlines it), --inline compares them inlined"
            )
        return result


def _about_calls(d: Difference) -> bool:
    return d.what.startswith("function @") or "func.call" in (d.a, d.b)


def _side(data: str | bytes, ctx: ir.Context, name: str, how: How) -> View:
    try:
        return view(comparable(data, ctx, how))
    except ShardyConvertError as e:
        raise e.located(file=name) from None


def normalize(data: str | bytes, *, inline: bool = False) -> str:
    """The canonical text of a module or dump: the GSPMD form `diff` compares, every sharding
    in its canonical spelling, no locations. Inputs `diff` calls equal print the same."""
    result, errors = dump.transform(data, lambda g: normalize_module(g.text, inline=inline))
    if errors:
        raise errors[0]
    assert result is not None  # no error: the normalized text
    return dump.as_str(result)


def normalize_module(module: str | bytes, *, inline: bool = False) -> str:
    with new_context() as ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore", ShardyConvertWarning)
        try:
            mod = comparable(module, ctx, How(inline=inline))
        except NoShardyFormError:
            mod = comparable(module, ctx, How(convert=False, inline=inline))
        transform_shardings(mod.operation, lambda _, site: str(canonical(site.parse())))
        canonical_backend_configs(mod.operation)
        return print_module(mod, "text")


# --- comparing two views --------------------------------------------------------------------


_PARTS = ("op", "operands", "attributes", "result types")


def _compare(a: View, b: View, result: Comparison) -> None:
    if a.attributes != b.attributes:
        result.differences.append(
            Difference("module attributes", clip(a.attributes), clip(b.attributes))
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
            clip(x.parts[part]),
            clip(y.parts[part]),
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
            found = Difference(p.what, str(p), str(q), p.location, q.location)
            found.detail = _moved(p, q)
            result.differences.append(found)
        else:
            result.placements += 1
    for q in b.placements:
        if q.key not in seen and not (q.key[1] == "op" and q.key[0] in broken):
            result.differences.append(Difference(q.what, "no sharding", str(q), None, q.location))


_SHOWN_TILES = 4


def _moved(p: Placement, q: Placement) -> str | None:
    """Which tiles two placements of one tiling put on other devices (sharding/placement.py):
    `devices differ at 2 of 8 tiles: tile [0,1] on 1 vs 2, tile [0,2] on 2 vs 1`."""
    moved = moved_tiles(p.sharding, q.sharding)
    if not moved:
        return None
    tiles = math.prod(p.sharding.data_dims)
    shown = ", ".join(map(str, moved[:_SHOWN_TILES])) + (", ..." * (len(moved) > _SHOWN_TILES))
    return f"devices differ at {len(moved)} of {plural(tiles, 'tile')}: {shown}"


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
