"""The form `diff` compares: a module brought to GSPMD (through Shardy, see `comparable`),
seen as its placements (one semantic `HloSharding` plus open dims per sharded site) and its
structure (ops, operands, attributes and types with the placements left out)."""

from __future__ import annotations

from dataclasses import dataclass

from ..converter import convert_module, import_round_trip
from ..formats import module as formats
from ..ir import compat
from ..ir.bindings import ir
from ..ir.diagnostics import format_location
from ..ir.walker import MODULE_SHARDING_ATTRS, SHARDING, Site, call_target, func_name, funcs, sites
from ..passes import pipeline
from ..passes.import_custom_calls import unspecified_dims
from ..sharding import HloSharding
from ..sharding.canonical import canonical

SHARDING_CALLS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


@dataclass(frozen=True)
class How:
    """How a side is brought to the comparable form (see `comparable`)."""

    convert: bool = True
    inline: bool = False


def comparable(data: str | bytes, ctx: ir.Context, how: How) -> ir.Module:
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
    pipeline.run(mod, pipeline.build(["export-shardings"]))
    if how.inline:
        pipeline.run(mod, pipeline.build(["inline-calls", "symbol-dce"]))
    if how.convert and next(sites(mod.operation), None) is not None:
        convert_module(mod)
        pipeline.run(mod, pipeline.build(["export-shardings"]))
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


def view(mod: ir.Module) -> View:
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


def _constant_text(op: ir.Operation) -> str:
    """A constant's value as written (`dense<1.0> : tensor<f32>`). A complex constant (HF
    Llama-4's rotary constants) is never read as an attribute: the bindings cast it to a typed
    dense attribute they do not have, a TypeError in jaxlib 0.10.2 ("Can't cast unknown element
    type DenseTypedElementsAttr") and a process abort in 0.7.1 (so is iterating such an op's
    attributes as NamedAttributes, in both): its text is the op's own, after the op name."""
    element = str(ir.ShapedType(op.results[0].type).element_type)  # the same in every jaxlib
    if not element.startswith("complex<"):
        try:
            return str(op.attributes["value"])
        except TypeError:  # another element type these bindings cannot cast
            pass
    return str(op).split("stablehlo.constant ", 1)[-1]


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
            numbers[op.results[0]] = _constant_text(op)
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
        # The placement is compared as such; the rest (result_layout, xla_shape, ...) is
        # what the conversion drops on both sides anyway.
        names = {op.attributes[i].name for i in range(len(op.attributes))}
        return names - {"call_target_name"}
    return {SHARDING}


def _attributes(op: ir.Operation, skip: set[str]) -> str:
    parts = []
    for k in range(len(op.attributes)):
        named = op.attributes[k]
        if named.name in skip:
            continue
        value: ir.Attribute | str = named.attr
        if named.name in ("arg_attrs", "res_attrs"):
            value = _without_sharding(named.attr)
        parts.append(f"{named.name} = {value}")
    return "{" + ", ".join(sorted(parts)) + "}"


def _without_sharding(array: ir.Attribute) -> str:
    dicts = []
    for d in ir.ArrayAttr(array):
        d = ir.DictAttr(d)
        items = [f"{d[i].name} = {d[i].attr}" for i in range(len(d)) if d[i].name != SHARDING]
        dicts.append("{" + ", ".join(items) + "}")
    return "[" + ", ".join(dicts) + "]"


def canonical_backend_configs(module: ir.Operation) -> None:
    """`unspecified_dims` of the sharding custom calls as the export writes them."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if call_target(op) in SHARDING_CALLS:
            dims = sorted(unspecified_dims(op.operation))
            text = f"unspecified_dims=[{','.join(map(str, dims))}]" if dims else ""
            op.attributes["backend_config"] = ir.StringAttr.get(text)
        return ir.WalkResult.ADVANCE

    with module.context:
        compat.walk(module, visit, ir.WalkOrder.PRE_ORDER)
