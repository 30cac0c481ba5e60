"""The one walk over every `mhlo.sharding` of a module (Shardy's `sharding_walker.h` idea).

Order, which error messages and tests rely on: module attributes
(`mhlo.spmd_parameters_shardings`, `mhlo.spmd_output_sharding`), then for each `func.func` in
module order its arguments, its results, then the ops of its body in pre-order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from ..errors import ModuleError, ShardyConvertError, clip
from ..sharding import HloSharding, parse
from ..sharding.import_rules import Placed, ValueType
from . import analyses, compat
from .mlir import format_location, string_value

SHARDING = "mhlo.sharding"
SDY_SHARDING = "sdy.sharding"
CUSTOM_CALL = "stablehlo.custom_call"
MODULE_SHARDING_ATTRS = ("mhlo.spmd_parameters_shardings", "mhlo.spmd_output_sharding")


@dataclass
class Site:
    """Where one sharding string sits: `kind` is "module", "arg", "result" or "op"."""

    kind: str
    owner: ir.Operation
    index: int
    text: str
    attr: str = SHARDING
    value_type: ir.Type | None = None  # args and results: read once per func, not per site
    _types: list[ir.Type] | None = field(default=None, repr=False, compare=False)

    @property
    def func_name(self) -> str | None:
        op = self.owner
        while op is not None and op.name != "func.func":
            op = op.parent
        return None if op is None else func_name(op)

    @property
    def location(self) -> str:
        """`LINE:COL` of the value (or op), plus which argument/result it is."""
        if self.kind == "module":
            return join_location(
                format_location(self.owner.location), f"module attribute {self.attr}"
            )
        if self.kind == "arg":
            block = _block(self.owner)
            owner = self.owner if block is None else block.arguments[self.index]
            return join_location(
                format_location(owner.location), f"arg {self.index} of @{self.func_name}"
            )
        if self.kind == "result":
            return join_location(
                format_location(self.owner.location), f"result {self.index} of @{self.func_name}"
            )
        return join_location(format_location(self.owner.location), self.owner.name)

    def parse(self) -> HloSharding:
        """The sharding, or a ShardyConvertError located at this site."""
        try:
            return parse(self.text)
        except ShardyConvertError as e:
            raise e.located(location=self.location) from None

    def placed(self, sharding: HloSharding) -> Placed:
        """This site as the plain data the import rules read (located lazily)."""
        types = tuple(value_type(t) for t in self.value_types())
        return Placed(self.kind, self.text, sharding, types, where=lambda: self.location)

    def value_types(self) -> list[ir.Type]:
        """Types of the values this sharding describes (one per tuple element for ops), read
        from the IR once."""
        if self._types is None:
            if self.kind in ("arg", "result"):
                self._types = [self.value_type]
            else:
                self._types = [r.type for r in self.owner.results] if self.kind == "op" else []
        return self._types


def value_type(t: ir.Type | None) -> ValueType:
    """A value's type as the import rules see it: text and rank (a token: 0; None: no
    ranked tensor)."""
    if isinstance(t, ir.RankedTensorType):
        return ValueType(str(t), ir.RankedTensorType(t).rank)
    text = str(t)
    return ValueType(text, 0 if text == "!stablehlo.token" else None)


def num_partitions(module: ir.Operation) -> int | None:
    """`mhlo.num_partitions` of a module; ModuleError unless it is a positive integer."""
    if "mhlo.num_partitions" not in module.attributes:
        return None
    attr = module.attributes["mhlo.num_partitions"]
    if not isinstance(attr, ir.IntegerAttr) or ir.IntegerAttr(attr).value < 1:
        raise ModuleError(
            f"mhlo.num_partitions must be a positive integer, not {clip(attr)}",
            location=join_location(
                format_location(module.location), "module attribute mhlo.num_partitions"
            ),
        )
    return ir.IntegerAttr(attr).value


def join_location(loc: str | None, what: str) -> str:
    return f"{loc}: {what}" if loc else what


def _block(func: ir.Operation) -> ir.Block | None:
    """The entry block of a func; None for a declaration (`func.func private @f(...)`)."""
    blocks = func.regions[0].blocks
    return blocks[0] if len(blocks) else None


def body(module: ir.Operation) -> ir.Block:
    """The block of a `builtin.module` operation."""
    return module.regions[0].blocks[0]


def funcs(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in body(module).operations if op.operation.name == "func.func"]


def func_name(func: ir.Operation) -> str:
    """The symbol name of a `func.func` (`main` for `@main`)."""
    return string_value(func.attributes["sym_name"]) or ""


def callee(call: ir.Operation) -> str:
    """The name of the func a `func.call` calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def call_target(op: ir.Operation) -> str | None:
    """The `call_target_name` of a `stablehlo.custom_call` (`Sharding`); None for other ops."""
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return string_value(op.attributes["call_target_name"])


def clone_body(func: ir.Operation, operands: list[ir.Value], ip: ir.InsertionPoint) -> list:
    """Clones the body of `func` (one block) at `ip` with its arguments bound to `operands`;
    returns the values its `func.return` returns, as the clones define them."""
    block = func.regions[0].blocks[0]
    mapping = dict(zip(block.arguments, operands))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [mapping.get(v, v) for v in op.operands]
        clone = op.clone(ip=ip)
        _remap(clone, mapping)
        mapping.update(zip(op.results, clone.results))
    return []


def _remap(root: ir.Operation, mapping: dict) -> None:
    """Operands of `root` and of every op nested in it that are keys of `mapping` are
    replaced by their values (uses of the callee's values inside nested regions too)."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        for k, v in enumerate(op.operands):
            if v in mapping:
                op.operands[k] = mapping[v]
        return ir.WalkResult.ADVANCE

    compat.walk(root, visit, ir.WalkOrder.PRE_ORDER)


def sites(module: ir.Operation, ops: bool = True) -> Iterator[Site]:
    """Every sharding string of the module, in the documented order; with `ops` False only
    those of the module and of func arguments/results (no walk over the ops)."""
    mod = module
    for attr in MODULE_SHARDING_ATTRS:
        if attr in mod.attributes:
            yield from _module_sites(mod, attr)
    sharded = op_index(module).sharded if ops else {}
    for func in funcs(module):
        yield from _attr_sites(func, "arg_attrs", "arg")
        yield from _attr_sites(func, "res_attrs", "result")
        for op in sharded.get(func, ()):
            if SHARDING in op.attributes:  # it may have gone since the walk (analyses.py)
                yield _site("op", op, 0, op.attributes[SHARDING])


@dataclass
class OpIndex:
    """What passes look for among a module's ops, found by one walk: the ops carrying an
    `mhlo.sharding` (when walked) per top-level `func.func`, and the `stablehlo.custom_call`s
    by call target, each in pre-order. Kept for the next pass of a pipeline (`analyses`)."""

    sharded: dict[ir.Operation, list[ir.Operation]]
    custom_calls: dict[str | None, list[ir.Operation]]

    @classmethod
    def build(cls, module: ir.Operation) -> OpIndex:
        index = cls({}, {})
        calls = index.custom_calls
        for top in body(module).operations:
            top = top.operation
            in_func = top.name == "func.func"
            sharded: list[ir.Operation] = []

            def visit(op: ir.Operation) -> ir.WalkResult:
                if op.name == CUSTOM_CALL:
                    calls.setdefault(call_target(op), []).append(op)
                if in_func and SHARDING in op.attributes:
                    sharded.append(op)
                return ir.WalkResult.ADVANCE

            compat.walk(top, visit, ir.WalkOrder.PRE_ORDER)
            if in_func:
                index.sharded[top] = [op for op in sharded if op != top]
        return index


def op_index(module: ir.Operation, fresh: bool = False) -> OpIndex:
    """The OpIndex of `module`: the one an earlier pass of this pipeline run made, unless
    `fresh` (the caller added or removed ops since) or a step in between did not preserve it."""
    if fresh:
        return OpIndex.build(module)
    return analyses.get(("op_index", module), lambda: OpIndex.build(module))


def _module_sites(mod: ir.Operation, attr: str) -> Iterator[Site]:
    value = mod.attributes[attr]
    if isinstance(value, ir.StringAttr):
        yield _site("module", mod, 0, value, attr)
        return
    if not isinstance(value, ir.ArrayAttr):
        raise ModuleError(
            f"{attr} must be a string or an array of strings, not {clip(value)}",
            location=join_location(format_location(mod.location), f"module attribute {attr}"),
        )
    for k, item in enumerate(value):
        yield _site("module", mod, k, item, attr)


def _attr_sites(func: ir.Operation, array_name: str, kind: str) -> Iterator[Site]:
    if array_name not in func.attributes:
        return
    types = None
    for k, d in enumerate(ir.ArrayAttr(func.attributes[array_name])):
        d = ir.DictAttr(d)
        if SHARDING in d:
            types = types or _value_types(func, kind)
            site = _site(kind, func, k, d[SHARDING])
            site.value_type = types[k] if k < len(types) else None
            yield site


def _value_types(func: ir.Operation, kind: str) -> list[ir.Type]:
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    return list(ftype.inputs if kind == "arg" else ftype.results)


def _site(kind: str, owner: ir.Operation, index: int, attr: ir.Attribute, name=SHARDING) -> Site:
    """A Site for a sharding attribute, which must be a UTF-8 string."""
    site = Site(kind, owner, index, string_value(attr) or "", name)
    _check_sharding_attr(site, attr)
    return site


def _check_sharding_attr(site: Site, attr: ir.Attribute) -> None:
    if not isinstance(attr, ir.StringAttr):
        raise ModuleError(
            f'{site.attr} must be a string like "{{replicated}}", not {clip(attr)}',
            location=site.location,
        )
    try:
        attr.value_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModuleError(
            f'{site.attr} "{clip(site.text)}" is not UTF-8 text (byte {e.start})',
            location=site.location,
        ) from None


def find_ops(root: ir.Operation, keep: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The ops nested in `root` (not `root` itself) for which `keep` is true, in pre-order."""
    root = root.operation
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        if op != root and keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    compat.walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return found


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
        self.changed = False  # for callers that read several and write back those they edit

    def save(self) -> None:
        self.func.attributes[self.name] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in self.dicts])


def value_attrs(edits: dict, site: Site) -> ValueAttrs:
    """The ValueAttrs of the site's func and kind, made once and kept in `edits`."""
    key = (site.owner, site.kind)
    if key not in edits:
        edits[key] = ValueAttrs(site.owner, site.kind)
    return edits[key]


def _as_dict(d: ir.DictAttr) -> dict[str, ir.Attribute]:
    return {d[i].name: d[i].attr for i in range(len(d))}


def transform_shardings(module: ir.Operation, fn: Callable[[str, Site], str]) -> int:
    """Replaces every sharding string `s` by `fn(s, site)`; returns how many changed."""
    changed = 0
    with module.context:
        edits: dict[tuple[ir.Operation, str], ValueAttrs] = {}
        for site in list(sites(module)):
            new = fn(site.text, site)
            if new == site.text:
                continue
            changed += 1
            attr = ir.StringAttr.get(new)
            if site.kind in ("arg", "result"):
                value_attrs(edits, site).dicts[site.index][SHARDING] = attr
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
