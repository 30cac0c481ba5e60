"""pad-uneven: values GSPMD shards unevenly get GSPMD's padded shape, so Shardy compiles the
layout torch_xla's buffers already have.

GSPMD pads a dim its tile count does not divide: a [20, 10] weight split 8 ways is 3 rows a
device, the last 4 rows of device 6 and 7 padding, and torch_xla hands the executable buffers
laid out so. Shardy shards such a dim less or not at all (sharding/uneven.py): the converted
program would expect other buffers. Given the padded global shape ([24, 10]) the same
sharding is even, every device's block is GSPMD's, and the logical value is a slice of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import ModuleError
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.manual_regions import FULL_TO_SHARD, SHARD_TO_FULL
from ..ir.ops import reroute_uses, sharding_call
from ..ir.value_attrs import edited
from ..ir.walker import SHARDING, Site, call_target, func_name, sites
from ..sharding import HloSharding, Kind
from ..sharding.uneven import padded_shape


@dataclass(frozen=True)
class PadUnevenPass:
    """Gives every value with an uneven GSPMD tiling GSPMD's padded global shape (each such dim
    rounded up to a multiple of its tile count), keeping the sharding, which is then even:
    an `@main` argument takes the padded type and its logical value is sliced out first; an
    annotated `@main` result is padded (zeros) before it is returned; a `@Sharding` constrains
    the padded value, sliced after; another function's argument or result sharding becomes
    such a `@Sharding` at its entry or exit. Every per-device buffer the program takes, and
    gives where a result is annotated, is then GSPMD's. An uneven sharding elsewhere (an op's
    own, a manual region's boundary) has no such form: an error naming the value, its shape,
    the dim and what to change."""

    NAME: ClassVar[str] = "pad-uneven"

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> None:
        found = list(_uneven_sites(module, analyses))
        if not found:  # the usual case: the op index it made is the next pass's
            if analyses is not None:
                analyses.mark_all_preserved()
            return
        for site, sharding, padded in found:
            _check_paddable(site, sharding, padded)
        with module.context, module.location:  # types are made with a location
            edits: dict = {}
            calls = []
            for site, sharding, padded in found:
                if site.kind == "op":
                    calls.append((site.owner, padded))
                elif _is_main(site.owner):
                    _pad_main_value(site, padded, edits)
                else:
                    calls.append((_as_custom_call(site, edits), padded))
            for values in edits.values():
                if values.changed:
                    values.save()
            for call, padded in calls:
                _pad_custom_call(call, padded)


def _uneven_sites(module: ir.Operation, analyses: Analyses | None):
    """(site, sharding, padded shape) of every site whose tiling does not divide its value."""
    for site in sites(module, analyses=analyses):
        if "devices=" not in site.text:  # cheap: only tilings can be uneven
            continue
        sharding = site.parse()
        types = site.value_types()
        if sharding.kind is Kind.TUPLE or len(types) != 1:
            continue
        if not isinstance(types[0], ir.RankedTensorType):
            continue
        padded = padded_shape(sharding, tuple(ir.RankedTensorType(types[0]).shape))
        if padded is not None:
            yield site, sharding, padded


def _is_main(func: ir.Operation) -> bool:
    return func.name == "func.func" and func_name(func) == "main"


def _check_paddable(site: Site, sharding: HloSharding, padded: tuple[int, ...]) -> None:
    """The sites this pass can pad: func arguments and results, `@Sharding` calls."""
    why = None
    if site.kind == "module":
        why = "a module attribute's sharding"
    elif site.kind == "op" and site.target in (FULL_TO_SHARD, SHARD_TO_FULL):
        why = "a manual region's boundary"
    elif site.kind == "op" and site.target != "Sharding":
        why = f"the sharding of {site.owner.name}" + (f" @{site.target}" if site.target else "")
    elif site.kind == "op" and _at_manual_boundary(site.owner):
        why = "a manual region's boundary"  # its shards are the manual values themselves
    if why is None:
        return
    value_type = site.value_types()[0]
    assert value_type is not None  # a sharded value's type, checked when it was imported
    shape = tuple(ir.RankedTensorType(value_type).shape)
    dims = [k for k, (a, b) in enumerate(zip(shape, padded)) if a != b]
    k = dims[0]
    ways = sharding.data_dims[k]
    raise ModuleError(
        f"a value of shape {list(shape)} sharded {site.text!r}: dim {k} of size {shape[k]} is "
        f"split {ways} ways, which GSPMD pads and Shardy cannot ({why} has no padded form); "
        f"make dim {k} a multiple of {ways} (pad the tensor) or shard it fewer ways",
        location=site.location,
    )


def _at_manual_boundary(op: ir.Operation) -> bool:
    """A `@Sharding` feeding `@SPMDFullToShardShape` or fed by `@SPMDShardToFullShape`."""
    users = [use.owner for use in op.results[0].uses]
    made_by = op.operands[0].owner
    made_by = None if isinstance(made_by, ir.Block) else made_by.operation
    return any(call_target(u) == FULL_TO_SHARD for u in users) or (
        made_by is not None and call_target(made_by) == SHARD_TO_FULL
    )


def _tensor(shape, like: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), ir.RankedTensorType(like).element_type)


def _pad_main_value(site: Site, padded: tuple[int, ...], edits: dict) -> None:
    func = site.owner
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    block = func.regions[0].blocks[0]
    if site.kind == "arg":
        arg = block.arguments[site.index]
        logical = arg.type
        arg.set_type(_tensor(padded, logical))
        ops = block.operations
        sliced = _slice(arg, logical, ir.InsertionPoint(ops[0]), func.location)
        reroute_uses(arg, sliced)
        inputs[site.index] = arg.type
    else:
        ret = block.operations[len(block.operations) - 1].operation
        value = ret.operands[site.index]
        padding = _pad(value, padded, ir.InsertionPoint(ret), ret.location)
        ret.operands[site.index] = padding.result
        results[site.index] = padding.result.type
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _slice(value: ir.Value, logical: ir.Type, ip: ir.InsertionPoint, loc) -> ir.OpView:
    shape = ir.RankedTensorType(logical).shape
    return ir.Operation.create(
        "stablehlo.slice",
        results=[logical],
        operands=[value],
        attributes={
            "start_indices": ir.DenseI64ArrayAttr.get([0] * len(shape)),
            "limit_indices": ir.DenseI64ArrayAttr.get(list(shape)),
            "strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
        },
        loc=loc,
        ip=ip,
    ).opview


def _pad(value: ir.Value, padded: tuple[int, ...], ip: ir.InsertionPoint, loc) -> ir.OpView:
    """`value` padded with zeros at the end of each dim up to `padded` (what the padding holds
    is never read: GSPMD leaves it unspecified, torch_xla slices it off)."""
    shape = ir.RankedTensorType(value.type).shape
    element = ir.RankedTensorType(value.type).element_type
    zero = ir.Operation.create(
        "stablehlo.constant",
        results=[ir.RankedTensorType.get([], element)],
        attributes={"value": _zero(element, loc)},
        loc=loc,
        ip=ip,
    )
    return ir.Operation.create(
        "stablehlo.pad",
        results=[_tensor(padded, value.type)],
        operands=[value, zero.result],
        attributes={
            "edge_padding_low": ir.DenseI64ArrayAttr.get([0] * len(shape)),
            "edge_padding_high": ir.DenseI64ArrayAttr.get([p - s for p, s in zip(padded, shape)]),
            "interior_padding": ir.DenseI64ArrayAttr.get([0] * len(shape)),
        },
        loc=loc,
        ip=ip,
    ).opview


def _zero(element: ir.Type, loc) -> ir.Attribute:
    scalar = ir.RankedTensorType.get([], element)
    if isinstance(element, ir.IntegerType):
        return ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(element, 0))
    try:
        return ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(element, 0.0))
    except (ValueError, TypeError):
        raise ModuleError(
            f"cannot pad a value of element type {element} (no zero to pad it with)",
            location=str(loc),
        ) from None


def _as_custom_call(site: Site, edits: dict) -> ir.Operation:
    """A non-main function's argument or result sharding moved onto a `@Sharding` call at its
    entry (exit), where the padding can happen inside the function."""
    func = site.owner
    values = edited(edits, func, site.kind)
    text = values.dict(site.index).pop(SHARDING)
    values.changed = True
    block = func.regions[0].blocks[0]
    if site.kind == "arg":
        value = block.arguments[site.index]
        ip = ir.InsertionPoint(block.operations[0])
    else:
        ret = block.operations[len(block.operations) - 1].operation
        value = ret.operands[site.index]
        ip = ir.InsertionPoint(ret)
    call = sharding_call(value, {SHARDING: text}, loc=func.location, ip=ip)
    if site.kind == "arg":
        reroute_uses(value, call)
    else:
        ret.operands[site.index] = call.result
    return call


def _pad_custom_call(call: ir.Operation, padded: tuple[int, ...]) -> None:
    """`@Sharding(v)` -> `slice(@Sharding(pad(v)))`. A `@main` result that is the slice stays
    the logical value, its sharding the partitioner's: GSPMD compiles such an output
    replicated where the compile options let it choose (torch_xla's), measured."""
    call = call.operation
    logical = call.results[0].type
    padding = _pad(call.operands[0], padded, ir.InsertionPoint(call), call.location)
    n = len(call.attributes)
    new = ir.Operation.create(
        "stablehlo.custom_call",
        results=[padding.result.type],
        operands=[padding.result],
        attributes={call.attributes[i].name: call.attributes[i].attr for i in range(n)},
        loc=call.location,
        ip=ir.InsertionPoint(call),
    )
    sliced = _slice(new.result, logical, ir.InsertionPoint(call), call.location)
    call.results[0].replace_all_uses_with(sliced.result)
    call.erase()
