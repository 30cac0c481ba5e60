"""Where Shardy's propagation decided a value differently from GSPMD's, for `check`: each such
value by op, location and source line, both shardings as XLA prints them and as partition
specs on the program's mesh, what it costs, and the line a torch_xla user adds to pin it.

Both sides are compiled again from a tagged copy of the graph (ir/op_tags.py; the tags are
locations only, the programs are the ones `check` compared), XLA dumping each partitioner's
decisions after propagation (xla/propagation.py); formats/propagation_diff.py matches the
values exactly and says which ones differ. What a divergence costs is read from the two
optimized programs: the collectives XLA made for that op on each side (their `op_name` is the
op's tag), and the bytes one device holds of the value under each sharding. Ranked by the
collective bytes Shardy's program spends on the op beyond GSPMD's, then by the bytes a device
holds beyond GSPMD's.

Example (testdata/torch_xla/matmul_2x4.mlir): `stablehlo.multiply` at 6:10, f32[8,8], GSPMD
`{devices=[4,2]0,4,1,5,2,6,3,7}` = `('_axis_1', '_axis_0')`, Shardy `{devices=[1,2,4]<=[8]
last_tile_dim_replicate}` = `(None, '_axis_0:(1)2')`... the start of the chain that costs
Shardy's program 1.81x GSPMD's collective bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...errors import ShardyConvertError
from ...formats.dump import shift_location
from ...formats.propagated_hlo import instructions
from ...formats.propagation_diff import Comparison, compare
from ...ir.op_tags import NoOpTags, TaggedOp, index_of, tag_ops
from ...ir.parse import new_context, parse_module, print_module
from ...sharding import Kind, parse
from ...sharding.mesh_fit import UserMesh
from ...sharding.partition_spec import spec_on
from ...xla.options import compile_options
from ...xla.propagation import compile_propagated
from .cost import COLLECTIVES, Cost, shape_bytes
from .program import Program

SHOWN = 5  # divergences the text report shows per graph
INFERRED_AXIS = "_axis_"  # the axes of a mesh inferred from the shardings: _axis_0, ...


@dataclass(frozen=True)
class Divergence:
    """One value both partitioners shard, differently. `op`: the op's position in the graph
    (the tag's number), `kind` its MLIR name, `result` which of its results, `location` where
    it is (`12:5` in the graph's text, or `model.py:40:0` when the program carries source
    locations); `shape` and `bytes` the whole value's; `gspmd`/`shardy` as XLA prints them and
    `gspmd_spec`/`shardy_spec` as partition specs on the program's mesh (None where none
    reads it); `per_device` each side's bytes of the value on one device; `collective_bytes`
    each side's collectives made for this op; `starts`: none of its operands diverges;
    `pin`: the line that pins GSPMD's decision in a torch_xla program (None where no
    `mark_sharding` writes it)."""

    op: int
    kind: str
    result: int
    location: str | None
    shape: str
    bytes: int
    gspmd: str
    shardy: str
    gspmd_spec: str | None
    shardy_spec: str | None
    per_device: tuple[int, int]
    collective_bytes: tuple[int, int]
    starts: bool
    pin: str | None

    @property
    def extra_collective_bytes(self) -> int:
        return self.collective_bytes[1] - self.collective_bytes[0]

    @property
    def rank_key(self) -> tuple:
        return (-self.extra_collective_bytes, -(self.per_device[1] - self.per_device[0]), self.op)


@dataclass(frozen=True)
class Divergences:
    """A graph's divergences, ranked (see the module docstring), how many values were compared
    and which could not be matched."""

    found: tuple[Divergence, ...] = ()
    compared: int = 0
    unmatched: tuple[str, ...] = ()
    unavailable: str | None = None  # why they could not be listed (this jaxlib)


def costs_differ(gspmd: Cost | None, shardy: Cost | None) -> bool:
    """Whether two programs differ in any measure `check` reports (collectives, memory,
    FLOPs, rematerializations)."""
    if gspmd is None or shardy is None:
        return False
    measures = ("collective_bytes", "temp_bytes", "flops", "rematerializations")
    return any(getattr(gspmd, m) != getattr(shardy, m) for m in measures)


def cheaper(gspmd: Cost | None, shardy: Cost | None) -> str | None:
    """Which program costs less: "GSPMD", "Shardy", "same", or "mixed" (each is cheaper in
    something: collective bytes, temp memory, rematerializations); None when unknown."""
    if gspmd is None or shardy is None:
        return None
    measures = ("collective_bytes", "temp_bytes", "rematerializations")
    signs = set()
    for m in measures:
        a, b = getattr(gspmd, m), getattr(shardy, m)
        if a is not None and b is not None and a != b:
            signs.add("GSPMD" if a < b else "Shardy")
    if not signs:
        return "same"
    return signs.pop() if len(signs) == 1 else "mixed"


def find_divergences(
    original: Program, convert: Callable[[str], str | bytes], converted: Program
) -> Divergences:
    """The divergences of a GSPMD graph (`original`) and its conversion (`converted`; `convert`
    converts as check did), on the result's devices, specs written on its mesh."""
    devices = converted.devices
    with new_context() as ctx:
        module = parse_module(original.text, ctx)
        try:
            table = tag_ops(module.operation)
        except NoOpTags as e:
            return Divergences(unavailable=e.message)
        tagged = print_module(module, "text", locations=True)
    flags = original.signature.propagate_to_output()
    sides = []
    for text, shardy in ((tagged, False), (convert(tagged), True)):
        options = compile_options(devices, shardy=shardy, propagate_to_output=flags, optimize=False)
        sides.append(compile_propagated(text, devices, options, shardy=shardy))
    comparison = compare(sides[0].hlo, sides[1].hlo)
    spent = [_collectives_by_op(side.compiled.optimized_hlo() or "") for side in sides]
    mesh = converted.mesh
    # a constant is made on every device it is used on: neither reported nor a cause
    constants = {d.op for d in comparison.divergences if table[d.op].name == "stablehlo.constant"}
    found = [
        _divergence(replace(d, after=tuple(set(d.after) - constants)), table[d.op], mesh, spent)
        for d in comparison.divergences
        if d.op not in constants
    ]
    found.sort(key=lambda d: d.rank_key)
    return Divergences(tuple(found), comparison.matched, comparison.unmatched)


def _collectives_by_op(hlo: str) -> dict[int, int]:
    """The bytes of the collectives XLA made for each tagged op of an optimized program (an
    async pair counted once, by its `-done`)."""
    spent: dict[int, int] = {}
    for inst in instructions(hlo):
        op = index_of(inst.op_name)
        kind = inst.opcode.removesuffix("-done")
        if op is None or kind not in COLLECTIVES or inst.opcode.endswith("-start"):
            continue
        spent[op] = spent.get(op, 0) + shape_bytes(inst.shape)
    return spent


def _divergence(d, op: TaggedOp, mesh: UserMesh | None, spent) -> Divergence:
    shape = op.results[0][0] if len(op.results) == 1 and op.results[0] else None
    rank = len(shape) if shape is not None else None
    gspmd_spec, shardy_spec = _spec(d.gspmd, mesh, rank), _spec(d.shardy, mesh, rank)
    whole = shape_bytes(d.shape)
    return Divergence(
        op=op.index,
        kind=op.name,
        result=0 if len(op.results) == 1 else d.part,
        location=op.location,
        shape=d.shape,
        bytes=whole,
        gspmd=d.gspmd,
        shardy=d.shardy,
        gspmd_spec=gspmd_spec,
        shardy_spec=shardy_spec,
        per_device=(_per_device(d.gspmd, whole), _per_device(d.shardy, whole)),
        collective_bytes=(spent[0].get(op.index, 0), spent[1].get(op.index, 0)),
        starts=d.starts,
        pin=pin_line(gspmd_spec, op) if d.starts else None,
    )


def _spec(text: str, mesh: UserMesh | None, rank: int | None) -> str | None:
    if mesh is None or rank is None:
        return None
    try:
        return str(spec_on(parse(text), mesh, rank))
    except ShardyConvertError:
        return None


def _per_device(text: str, whole: int) -> int:
    """Bytes of the value one device holds under `text` (whole when it is not tiled)."""
    try:
        sharding = parse(text)
    except ShardyConvertError:
        return whole
    if sharding.kind is not Kind.TILED or sharding.is_replicated:
        return whole
    tiles = 1
    for ways in sharding.data_dims:
        tiles *= ways
    return -(-whole // tiles)


def pin_line(spec: str | None, op: TaggedOp) -> str | None:
    """`xs.mark_sharding(<value>, mesh, ('data', None))  # stablehlo.add at model.py:40`:
    the line that pins GSPMD's decision on op `op`'s value in a torch_xla program; None where
    the spec is no `mark_sharding` argument (manual, a split axis)."""
    if spec is None or spec in ("manual",) or spec.startswith("maximal") or ":(" in spec:
        return None
    spec_text = "None" if spec == "replicated" else spec
    # The mesh inferred from the shardings names its axes _axis_0, _axis_1, ... major first:
    # torch_xla takes a mesh axis by its position as well (the program's own mesh, where the
    # shardings use every axis of it; a mesh file names them).
    spec_text = re.sub(rf"'{INFERRED_AXIS}(\d+)'", r"\1", spec_text)
    where = f" at {op.location}" if op.location else ""
    return f"xs.mark_sharding(<value>, mesh, {spec_text})  # {op.name}{where}"


def shifted(found: Divergences, lines: int) -> Divergences:
    """`found` with each `LINE:COL` location moved down `lines` lines (a graph of a dump: its
    text starts on line `lines + 1` of the file)."""
    if not lines:
        return found
    moved = tuple(replace(d, location=shift_location(d.location, lines)) for d in found.found)
    return replace(found, found=moved)


def suggested_pins(original: Program, converted: Program, lines: int) -> list[str]:
    """The pins match-gspmd-propagation writes on `original` (the fewest that give GSPMD's
    program: each where a divergence starts), each as the line a torch_xla user adds (the
    pin's GSPMD sharding as a spec on the converted program's mesh), then the divergences it
    cannot pin, with why."""
    from ...passes.match_gspmd_propagation import MatchGspmdPropagationPass

    flags = original.signature.propagate_to_output()
    matcher = MatchGspmdPropagationPass(
        num_devices=converted.devices, allow_spmd_sharding_propagation_to_output=flags
    )
    with new_context() as ctx:
        outcome = matcher.run(parse_module(original.text, ctx).operation)
    table: list[TaggedOp] = []
    if outcome.pins:  # the ops as tagged before the pins: each pin's rank
        with new_context() as ctx:
            table = tag_ops(parse_module(original.text, ctx).operation)
    lines_out = []
    for pin in outcome.pins:
        result = table[pin.op].results[0] if table[pin.op].results else None
        spec = _spec(pin.sharding, converted.mesh, len(result[0]) if result else None)
        op = TaggedOp(pin.op, pin.name, shift_location(pin.location, lines), ())
        lines_out.append(
            pin_line(spec, op)
            or f"{op.name} at {op.location}: pin {pin.sharding} (no mark_sharding spells it)"
        )
    lines_out += [f"not pinned: {u}" for u in outcome.unpinned]
    if outcome.reason:
        lines_out.append(f"not pinned: {outcome.reason}")
    return lines_out


__all__ = [
    "Comparison",
    "Divergence",
    "Divergences",
    "cheaper",
    "find_divergences",
    "shifted",
    "suggested_pins",
]
