"""What both readers share: names, locations and types of values, unannotated arguments."""

from __future__ import annotations

from ...formats import dump
from ...ir.bindings import ir
from ...ir.diagnostics import format_location
from ...ir.walker import call_target, func_name, funcs
from ...sharding import HloSharding, Kind
from .audit import small_sharded
from .report import Diagnostic, GraphReport, Value


class Reader:
    """Reads one module into `result`: the graph's values and findings. Locations are shifted
    by `line_offset` (a dump graph's first line - 1); `fallback` is the device count to use
    when nothing in the module says."""

    meshes: tuple = ()  # the program's meshes (sharding.mesh_fit.UserMesh), if recorded

    def __init__(self, module: ir.Operation, result: GraphReport, line_offset: int, fallback):
        self.module = module
        self.result = result
        self.lines = line_offset
        self.fallback = fallback
        self.asm = ir.AsmState(module)

    def location(self, loc) -> str | None:
        return dump.shift_location(format_location(loc), self.lines)

    def finding(self, severity: str, code: str, message: str, value: Value | None = None):
        where = None if value is None else value.location
        label = None if value is None else value.label
        self.result.findings.append(Diagnostic(severity, code, message, where, label))

    def unannotated_args(self, attr_name: str, fate: str) -> None:
        """Findings for `@main` arguments with no `attr_name` in their attributes; `fate`
        says what becomes of such an argument."""
        for func in funcs(self.module):
            if func_name(func) == "main" and len(func.regions[0].blocks):
                self._unannotated(func, attr_name, fate)

    def _unannotated(self, func: ir.Operation, attr_name: str, fate: str) -> None:
        block = func.regions[0].blocks[0]
        attrs = _value_dicts(func, "arg_attrs", len(block.arguments))
        for k, arg in enumerate(block.arguments):
            if attr_name in attrs[k]:
                continue
            self.result.findings.append(
                Diagnostic(
                    "warning",
                    "unannotated-arg",
                    f"{ir.Type(arg.type)} has no sharding: {fate}; annotate what you own",
                    self.location(arg.location),
                    f"%arg{k}",
                )
            )

    def add_value(self, value: Value) -> None:
        self.result.values.append(value)
        self.audit_value(value)

    def audit_value(self, value: Value) -> None:
        small = small_sharded(value)
        if small:
            self.finding("warning", "small-sharded", small, value)


def _value_dicts(func: ir.Operation, array_name: str, count: int) -> list[set[str]]:
    """The attribute names of each argument (or result) of a func."""
    if array_name not in func.attributes:
        return [set() for _ in range(count)]
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes[array_name])]
    names = [{d[i].name for i in range(len(d))} for d in dicts]
    return names + [set() for _ in range(count - len(names))]


def op_label(op: ir.Operation) -> str:
    """`@Sharding` for a custom call, else the op name."""
    target = call_target(op)
    return f"@{target}" if target is not None else op.name


def type_info(value_type) -> tuple[tuple[int | None, ...] | None, str | None, str | None]:
    """(shape, dtype, type text) of a value type; shape None when not a ranked tensor."""
    if value_type is None:
        return None, None, None
    if not isinstance(value_type, ir.RankedTensorType):
        return None, None, str(value_type)
    t = ir.RankedTensorType(value_type)
    shape = tuple(d if d >= 0 else None for d in t.shape)
    return shape, str(t.element_type), str(t)


def v2_text(leaf: HloSharding) -> str | None:
    """The V2 text, or None when a V1 list has no iota form (a custom device order)."""
    v2 = leaf.to_v2()
    if v2.kind is Kind.TILED and not v2.tile_assignment.is_iota:
        return None
    return str(v2)
