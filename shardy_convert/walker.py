"""The one walk over every `mhlo.sharding` of a module (Shardy's `sharding_walker.h` idea).

Order, which error messages and tests rely on: module attributes
(`mhlo.spmd_parameters_shardings`, `mhlo.spmd_output_sharding`), then for each `func.func` in
module order its arguments, its results, then the ops of its body in pre-order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jaxlib.mlir import ir

from .errors import ShardyConvertError
from .mlir import format_location
from .sharding import HloSharding, parse

SHARDING = "mhlo.sharding"
MODULE_SHARDING_ATTRS = ("mhlo.spmd_parameters_shardings", "mhlo.spmd_output_sharding")


@dataclass
class Site:
    """Where one sharding string sits: `kind` is "module", "arg", "result" or "op"."""

    kind: str
    owner: ir.Operation
    index: int
    text: str
    attr: str = SHARDING

    @property
    def func_name(self) -> str | None:
        op = self.owner
        while op is not None and op.name != "func.func":
            op = op.parent
        return None if op is None else ir.StringAttr(op.attributes["sym_name"]).value

    @property
    def location(self) -> str:
        """`LINE:COL` of the value (or op), plus which argument/result it is."""
        if self.kind == "module":
            return f"module attribute {self.attr}"
        if self.kind == "arg":
            loc = format_location(_block(self.owner).arguments[self.index].location)
            return _join(loc, f"arg {self.index} of @{self.func_name}")
        if self.kind == "result":
            return _join(
                format_location(self.owner.location), f"result {self.index} of @{self.func_name}"
            )
        return _join(format_location(self.owner.location), self.owner.name)

    def parse(self) -> HloSharding:
        """The sharding, or a ShardyConvertError located at this site."""
        try:
            return parse(self.text)
        except ShardyConvertError as e:
            raise e.located(location=self.location) from None

    def value_types(self) -> list[ir.Type]:
        """Types of the values this sharding describes (one per tuple element for ops)."""
        if self.kind == "arg":
            return [_block(self.owner).arguments[self.index].type]
        if self.kind == "result":
            ftype = ir.FunctionType(ir.TypeAttr(self.owner.attributes["function_type"]).value)
            return [ftype.results[self.index]]
        if self.kind == "op":
            return [r.type for r in self.owner.results]
        return []


def _join(loc: str | None, what: str) -> str:
    return f"{loc}: {what}" if loc else what


def _block(func: ir.Operation) -> ir.Block:
    return func.regions[0].blocks[0]


def body(module: ir.Operation) -> ir.Block:
    """The block of a `builtin.module` operation."""
    return module.regions[0].blocks[0]


def funcs(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in body(module).operations if op.operation.name == "func.func"]


def sites(module: ir.Operation) -> Iterator[Site]:
    """Every sharding string of the module, in the documented order."""
    mod = module
    for attr in MODULE_SHARDING_ATTRS:
        if attr in mod.attributes:
            yield from _module_sites(mod, attr)
    for func in funcs(module):
        yield from _attr_sites(func, "arg_attrs", "arg")
        yield from _attr_sites(func, "res_attrs", "result")
        yield from op_sites(func)


def _module_sites(mod: ir.Operation, attr: str) -> Iterator[Site]:
    value = mod.attributes[attr]
    if isinstance(value, ir.StringAttr):
        yield Site("module", mod, 0, value.value, attr)
        return
    for k, item in enumerate(ir.ArrayAttr(value)):
        yield Site("module", mod, k, ir.StringAttr(item).value, attr)


def _attr_sites(func: ir.Operation, array_name: str, kind: str) -> Iterator[Site]:
    if array_name not in func.attributes:
        return
    for k, d in enumerate(ir.ArrayAttr(func.attributes[array_name])):
        d = ir.DictAttr(d)
        if SHARDING in d:
            yield Site(kind, func, k, ir.StringAttr(d[SHARDING]).value)


def op_sites(root: ir.Operation) -> list[Site]:
    """Shardings on the ops nested in `root`, pre-order."""
    found: list[Site] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op is not root and SHARDING in op.attributes:
            found.append(Site("op", op, 0, ir.StringAttr(op.attributes[SHARDING]).value))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return [s for s in found if s.owner != root]


class ValueAttrs:
    """The `arg_attrs` or `res_attrs` of one func as Python dicts, written back once by save().

    Rebuilding the array attribute per change would be quadratic in the argument count.
    """

    def __init__(self, func: ir.Operation, kind: str):
        self.func = func
        self.name = "arg_attrs" if kind == "arg" else "res_attrs"
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        count = len(ftype.inputs if kind == "arg" else ftype.results)
        old = list(ir.ArrayAttr(func.attributes[self.name])) if self.name in func.attributes else []
        self.dicts = [_as_dict(ir.DictAttr(d)) for d in old] + [{} for _ in range(count - len(old))]

    def save(self) -> None:
        self.func.attributes[self.name] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in self.dicts])


def _as_dict(d: ir.DictAttr) -> dict[str, ir.Attribute]:
    return {d[i].name: d[i].attr for i in range(len(d))}


def transform_shardings(module: ir.Operation, fn: Callable[[str, Site], str]) -> int:
    """Replaces every sharding string `s` by `fn(s, site)`; returns how many changed."""
    changed = 0
    with module.context:
        edits: dict[tuple[int, str], ValueAttrs] = {}
        for site in list(sites(module)):
            new = fn(site.text, site)
            if new == site.text:
                continue
            changed += 1
            attr = ir.StringAttr.get(new)
            if site.kind in ("arg", "result"):
                key = (id(site.owner), site.kind)
                edits.setdefault(key, ValueAttrs(site.owner, site.kind)).dicts[site.index][
                    SHARDING
                ] = attr
            else:
                _write(site, attr)
        for attrs in edits.values():
            attrs.save()
    return changed


def _write(site: Site, attr: ir.StringAttr) -> None:
    if site.kind == "op":
        site.owner.attributes[SHARDING] = attr
    elif isinstance(site.owner.attributes[site.attr], ir.StringAttr):
        site.owner.attributes[site.attr] = attr
    else:
        items = list(ir.ArrayAttr(site.owner.attributes[site.attr]))
        items[site.index] = attr
        site.owner.attributes[site.attr] = ir.ArrayAttr.get(items)
