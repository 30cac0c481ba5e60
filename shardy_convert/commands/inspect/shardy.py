"""Reading a Shardy module: every `sdy.sharding` (func arguments, results, ops), constraint,
reshard and manual computation sharding, each with its GSPMD form (`sharding.export.to_hlo`).
A portable artifact's round-trip form is read back into this form first."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import ShardyConvertError
from ...ir import compat
from ...ir.bindings import ir
from ...ir.sdy_attrs import lexical_manual_axes, per_value, read_meshes, sharding_from_attr
from ...ir.walker import SDY_SHARDING, func_name, funcs
from ...sharding.export import to_hlo
from .reader import Reader, op_label, type_info, v2_text
from .report import Value
from .shards import shard_info


class ShardyReader(Reader):
    def read(self) -> None:
        # the module's sdy.mesh ops by name (self.meshes: the meshes the program recorded)
        self.sdy_meshes = read_meshes(self.module)
        self._describe()
        for func in funcs(self.module):
            if len(func.regions[0].blocks):
                self._func(func)
        self.unannotated_args(SDY_SHARDING, "it is left open to Shardy's propagation")

    def _describe(self) -> None:
        result = self.result
        result.form = "shardy"
        result.meshes = [(name, str(mesh)) for name, mesh in self.sdy_meshes.items()]
        sizes = [mesh.size for mesh in self.sdy_meshes.values() if mesh.axes]
        if sizes:
            result.num_devices, result.device_count_from = max(sizes), "sdy.mesh"
            return
        self.finding(
            "warning",
            "no-device-count",
            "no sdy.mesh with axes: nothing says how many devices this graph runs on",
        )

    def _func(self, func: ir.Operation) -> None:
        name = func_name(func)
        block = func.regions[0].blocks[0]
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        for k, attr in _value_shardings(func, "arg_attrs"):
            where = self.location(block.arguments[k].location)
            self._add(attr, f"%arg{k}", name, "arg", None, where, block.arguments[k].type)
        for k, attr in _value_shardings(func, "res_attrs"):
            where = self.location(func.location)
            self._add(attr, f"result {k}", name, "result", None, where, ftype.results[k])
        for op, k, attr, value, manual in _op_shardings(func):
            value_type = value.type if value is not None else None
            where = self.location(op.location)
            value_name = _value_name(value, self.asm, op, k)
            self._add(attr, value_name, name, "op", op_label(op), where, value_type, manual)

    def _add(self, attr, name, func, kind, op, where, value_type, manual=()) -> None:
        shape, dtype, type_text = type_info(value_type)
        given = str(attr).removeprefix("#sdy.sharding")
        value = Value(name, func, kind, op, where, type_text, shape, dtype, given, sdy=given)
        value.num_devices = self.result.num_devices
        try:
            ts, mesh = sharding_from_attr(attr, self.sdy_meshes)
            value.mesh = str(mesh)
            value.hlo = to_hlo(ts, mesh, manual)
        except ShardyConvertError as e:
            self.result.values.append(value)
            self.finding("error", "no-gspmd-form", e.message, value)
            return
        value.gspmd = str(value.hlo)
        value.v2 = v2_text(value.hlo)
        value.shard = shard_info(value.hlo, shape, value.num_devices)
        self.add_value(value)


def _value_shardings(func: ir.Operation, array_name: str) -> Iterator[tuple[int, ir.Attribute]]:
    if array_name not in func.attributes:
        return
    for k, d in enumerate(ir.ArrayAttr(func.attributes[array_name])):
        d = ir.DictAttr(d)
        if SDY_SHARDING in d:
            yield k, d[SDY_SHARDING]


def _op_shardings(func: ir.Operation) -> list[tuple]:
    """(op, index, TensorShardingAttr, value or None, manual axes) for every op sharding,
    pre-order; a manual computation's operand k has index -1 - k."""
    found: list[tuple] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op != func:
            found.extend(_shardings_of(op.operation))
        return ir.WalkResult.ADVANCE

    compat.walk(func, visit, ir.WalkOrder.PRE_ORDER)
    return found


def _shardings_of(op: ir.Operation) -> list[tuple]:
    manual = lexical_manual_axes(op)
    attrs = op.attributes
    out = []
    if SDY_SHARDING in attrs:
        shardings = per_value(attrs[SDY_SHARDING])
        out += [(op, k, a, _at(op.results, k), manual) for k, a in enumerate(shardings)]
    if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
        out.append((op, 0, attrs["sharding"], op.results[0], manual))
    if op.name == "sdy.manual_computation":
        ins, outs = per_value(attrs["in_shardings"]), per_value(attrs["out_shardings"])
        out += [(op, -1 - k, a, _at(op.operands, k), manual) for k, a in enumerate(ins)]
        out += [(op, k, a, _at(op.results, k), manual) for k, a in enumerate(outs)]
    return out


def _at(values, k: int):
    return values[k] if k < len(values) else None


def _value_name(value, asm: ir.AsmState, op: ir.Operation, k: int) -> str:
    """`%3`; a manual computation's operand k reads `%0 in[k]` (named after the op)."""
    if k < 0:
        head = op.results[0].get_name(asm) if len(op.results) else op.name
        return f"{head} in[{-1 - k}]"
    return value.get_name(asm) if value is not None else op.name
