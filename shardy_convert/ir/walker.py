"""The one walk over every `mhlo.sharding` of a module (Shardy's `sharding_walker.h` idea).

Order, which error messages and tests rely on: module attributes
(`mhlo.spmd_parameters_shardings`, `mhlo.spmd_output_sharding`), then for each `func.func` in
module order its arguments, its results, then the ops of its body in pre-order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from jaxlib.mlir import ir

from .. import regex
from ..errors import ModuleError, ShardyConvertError, clip
from ..sharding import HloSharding, parse
from ..sharding.import_rules import Placed, ValueType
from . import compat
from .analyses import Analyses
from .diagnostics import format_location
from .parse import string_value
from .value_attrs import ValueAttrs, edited, value_dicts, value_types_of

SHARDING = "mhlo.sharding"
SDY_SHARDING = "sdy.sharding"
CUSTOM_CALL = "stablehlo.custom_call"
# The custom calls around GSPMD's manual regions (manual_regions.py): entries, exits.
FULL_TO_SHARD = "SPMDFullToShardShape"
SHARD_TO_FULL = "SPMDShardToFullShape"
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
    _types: list[ir.Type | None] | None = field(default=None, repr=False, compare=False)

    @property
    def func_name(self) -> str | None:
        op: ir.Operation | None = self.owner
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

    @cached_property
    def target(self) -> str | None:
        """The call target of an op site on a `stablehlo.custom_call`; None otherwise."""
        return call_target(self.owner) if self.kind == "op" else None

    @cached_property
    def key(self) -> tuple[str, tuple[ir.Type | None, ...]]:
        """(sharding text, value types): what an import of this site depends on."""
        return self.text, tuple(self.value_types())

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

    def value_types(self) -> list[ir.Type | None]:
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


def callee(call: ir.Operation | ir.OpView) -> str:
    """The name of the func a `func.call` calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def call_target(op: ir.Operation) -> str | None:
    """The `call_target_name` of a `stablehlo.custom_call` (`Sharding`); None for other ops."""
    if op.name != "stablehlo.custom_call" or "call_target_name" not in op.attributes:
        return None
    return string_value(op.attributes["call_target_name"])


def sites(
    module: ir.Operation, ops: bool = True, analyses: Analyses | None = None
) -> Iterator[Site]:
    """Every sharding string of the module, in the documented order; with `ops` False only
    those of the module and of func arguments/results (no walk over the ops). The walk is the
    one `analyses` keeps (`op_index`), if given."""
    mod = module
    for attr in MODULE_SHARDING_ATTRS:
        if attr in mod.attributes:
            yield from _module_sites(mod, attr)
    sharded = op_index(module, analyses=analyses).sharded if ops else {}
    for func in funcs(module):
        yield from _attr_sites(func, "arg_attrs", "arg")
        yield from _attr_sites(func, "res_attrs", "result")
        for op in sharded.get(func, ()):
            if SHARDING in op.attributes:  # it may have gone since the walk (analyses.py)
                yield _site("op", op, 0, op.attributes[SHARDING])


@dataclass(frozen=True)
class Mentions:
    """How often a module's MLIR text names what `OpIndex` looks for: `mhlo.sharding` (every
    attribute-dict entry of that name, and any string that contains it) and `custom_call`
    (every `stablehlo.custom_call`, prefixed or not, and anything else so named). Upper bounds
    of what the parsed module holds, so a walk that has found that many can stop. Only for the
    module parsed from exactly this text and not changed since (`mentions` in formats)."""

    shardings: int
    custom_calls: int

    @classmethod
    def of(cls, text: str | bytes) -> Mentions | None:
        """None where the text can name an attribute without spelling it: it defines an
        attribute alias other than a location (`#a = {...}`: one alias of a dictionary holding
        `mhlo.sharding`, used for many values, names it once for all, as a generic-form func's
        `arg_attrs = [#a, #a]`), or it has an escape (`"mhlo\\2Esharding" = ...` is that name
        too). Neither is in any torch_xla or JAX text seen."""
        if isinstance(text, bytes):
            if b"\\" in text or _ALIAS_BYTES().search(text):
                return None
            return cls(text.count(b"mhlo.sharding"), text.count(b"custom_call"))
        if "\\" in text or _ALIAS.search(text):
            return None
        return cls(text.count("mhlo.sharding"), text.count("custom_call"))


# An attribute alias definition (`#name = ...`) whose value is not a location. Not anchored
# at a line's start: a literal first character lets `re` skip to each `#` (15x faster on a
# 0.7 MB module), and a match anywhere else (inside a string) only costs the bound.
_ALIAS = re.compile(r"#[\w$.-]+[ \t]*=(?![ \t]*loc\()")
_ALIAS_BYTES = regex.lazy(_ALIAS.pattern.encode())


@dataclass
class OpIndex:
    """What passes look for among a module's ops, found by one walk: the ops carrying an
    `mhlo.sharding` (when walked) per top-level `func.func`, and the `stablehlo.custom_call`s
    by call target, each in pre-order. Kept for the next pass of a pipeline (`analyses`).

    With the `Mentions` of the module's text, the walk stops once it has found as many
    sharded ops and custom calls as the text can hold (none: no walk at all): a whole-model
    training graph carries its shardings on @main's arguments and results only, and torch_xla
    puts its sharding custom calls in the forward half."""

    sharded: dict[ir.Operation, list[ir.Operation]]
    custom_calls: dict[str | None, list[ir.Operation]]

    @classmethod
    def build(cls, module: ir.Operation, mentions: Mentions | None = None) -> OpIndex:
        index = cls({}, {})
        # [sharded ops, custom calls] still to find; None: walk everything.
        left = None if mentions is None else _left_to_find(module, mentions)
        for child in body(module).operations:
            top = child.operation
            in_func = top.name == "func.func"
            sharded = [] if left == [0, 0] else _find(top, in_func, index.custom_calls, left)
            if in_func:
                index.sharded[top] = [op for op in sharded if op != top]
        return index


def _find(
    top: ir.Operation, in_func: bool, calls: dict, left: list[int] | None
) -> list[ir.Operation]:
    """Walks `top` (pre-order): its ops carrying an `mhlo.sharding` (in a func) are returned,
    its custom calls added to `calls` by target; stops when `left` comes down to [0, 0]."""
    sharded: list[ir.Operation] = []
    raised: list[BaseException] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        try:  # guards itself (compat.walk): the one walk over every op
            if op.name == CUSTOM_CALL:
                calls.setdefault(call_target(op), []).append(op)
                if left is not None:
                    left[1] -= 1
            if in_func and SHARDING in op.attributes:
                sharded.append(op)
                if left is not None:
                    left[0] -= 1
            if left is not None and left[0] <= 0 and left[1] <= 0:
                left[:] = [0, 0]
                return ir.WalkResult.INTERRUPT
        except BaseException as e:
            raised.append(e)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    compat.walk(top, visit, ir.WalkOrder.PRE_ORDER, raised=raised)
    return sharded


def _left_to_find(module: ir.Operation, mentions: Mentions) -> list[int]:
    """[sharded ops, custom calls] the walk may still find: the text's mentions of
    `mhlo.sharding` less the argument and result attribute entries that use some of them."""
    signature = 0
    for func in funcs(module):
        for kind in ("arg", "result"):
            signature += sum(SHARDING in d for d in value_dicts(func, kind))
    return [max(mentions.shardings - signature, 0), mentions.custom_calls]


def op_index(
    module: ir.Operation, fresh: bool = False, analyses: Analyses | None = None
) -> OpIndex:
    """The OpIndex of `module`: the one an earlier pass of the pipeline run that owns
    `analyses` made, unless `fresh` (the caller added or removed ops since) or a step in
    between did not preserve it. The walk stops early where the run was given the module
    text's `Mentions`. Without `analyses` (a pass run on its own): a walk of its own."""
    if fresh or analyses is None:
        return OpIndex.build(module)
    return analyses.get(
        ("op_index", module), lambda: OpIndex.build(module, analyses.peek(("mentions", module)))
    )


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
            types = types or value_types_of(func, kind)
            site = _site(kind, func, k, d[SHARDING])
            site.value_type = types[k] if k < len(types) else None
            yield site


def _site(kind: str, owner: ir.Operation, index: int, attr: ir.Attribute, name=SHARDING) -> Site:
    """A Site for a sharding attribute, which must be a UTF-8 string (its bytes read once)."""
    if not isinstance(attr, ir.StringAttr):
        site = Site(kind, owner, index, "", name)
        raise ModuleError(
            f'{site.attr} must be a string like "{{replicated}}", not {clip(attr)}',
            location=site.location,
        )
    raw = attr.value_bytes
    try:
        return Site(kind, owner, index, raw.decode("utf-8"), name)
    except UnicodeDecodeError as e:
        site = Site(kind, owner, index, raw.decode("utf-8", "replace"), name)
        raise ModuleError(
            f'{site.attr} "{clip(site.text)}" is not UTF-8 text (byte {e.start})',
            location=site.location,
        ) from None


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
                edited(edits, site.owner, site.kind).dict(site.index)[SHARDING] = attr
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
