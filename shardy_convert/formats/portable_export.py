"""XLA's round-trip export in Python: Shardy's round-trip form written into a module in place,
as XLA's six round-trip export passes (sdy-lift-inlined-meshes, xla-sdy-round-trip-dedup-meshes,
xla-sdy-round-trip-export-ops, xla-sdy-round-trip-shard-map-export,
xla-sdy-round-trip-export-shardy-attrs, xla-sdy-stablehlo-export-shardings; not registered in
Python) write it, for modules with one mesh and no Shardy ops but sharding constraints.
Anything else those passes would rewrite or annotate raises `Unsupported`: `portable.py` then
leaves the module to jaxlib's writer.
"""

from __future__ import annotations

from ..errors import plural
from ..ir import compat
from ..ir.bindings import ir, sdy
from ..ir.sdy_attrs import MESH_OP, export_sharding, read_meshes
from ..ir.walker import body, funcs

SDY_SHARDING = "sdy.sharding"
MHLO_SHARDING = "mhlo.sharding"
FRONTEND = "mhlo.frontend_attributes"
ROUND_TRIP_SHARDING = "xla.sdy.sharding"
ROUND_TRIP_MESHES = "xla.sdy.meshes"
FUNC_RESULT_SHARDING = "xla.sdy.FuncResultSharding"

# Ops XLA's round-trip export or the rest of its pipeline would rewrite or annotate in ways
# `export` does not reproduce: a module holding one goes to jaxlib's writer.
_UNHANDLED_OPS = frozenset(
    {
        "stablehlo.while",  # control flow: may get a sharding of its own
        "stablehlo.case",
        "stablehlo.if",
        "stablehlo.send",  # side effects: may get {maximal device=0}
        "stablehlo.recv",
        "stablehlo.create_token",
    }
)
_UNHANDLED_PREFIXES = ("sdy.", "chlo.", "mhlo.", "shape.", "builtin.unrealized_conversion_cast")


class Unsupported(Exception):
    """The module needs jaxlib's writer."""


def export(module: ir.Operation) -> None:
    """Shardy's round-trip form, in place, as XLA's round-trip export pipeline writes it:
    the mesh in the module's `xla.sdy.meshes` frontend attribute; every `sdy.sharding` as an
    `xla.sdy.sharding` frontend attribute next to its V2 `mhlo.sharding`; a result's sharding
    also on an `@xla.sdy.FuncResultSharding` custom call before the return; constraints as
    `@Sharding` custom calls. Raises Unsupported for anything else XLA's export would touch."""

    meshes = [op.operation for op in body(module).operations if op.operation.name == MESH_OP]
    if not meshes:
        _check_no_shardy(module)
        return
    if len(meshes) > 1:
        raise Unsupported("several meshes (XLA dedups them)")
    strings = _Strings(read_meshes(module))
    for func in funcs(module):
        _export_func(func, strings)
    _set_frontend(module, ROUND_TRIP_MESHES, _meshes_text(meshes))
    for mesh in meshes:
        mesh.erase()


def _check_no_shardy(module: ir.Operation) -> None:
    for func in funcs(module):
        constraints, sharded = _scan(func)
        if constraints or sharded:
            raise Unsupported("Shardy shardings without a mesh")


class _Strings:
    """What each distinct `#sdy.sharding` exports to, computed once (a module repeats few)."""

    def __init__(self, meshes: dict):
        self.meshes = meshes
        self._hlo: dict[ir.Attribute, ir.StringAttr] = {}
        self._text: dict[ir.Attribute, ir.StringAttr] = {}
        self._per_value: dict[ir.Attribute, ir.DictAttr] = {}
        self._arg: dict[ir.Attribute, ir.DictAttr] = {}
        self._result: dict[ir.Attribute, ir.DictAttr] = {}

    def hlo(self, sharding: ir.Attribute) -> ir.StringAttr:
        """Its `mhlo.sharding` string (V2, as XLA's HloSharding prints it)."""
        found = self._hlo.get(sharding)
        if found is None:
            text = str(sharding)
            if not text.startswith("#sdy.sharding<@"):
                raise Unsupported(f"a sharding with an inlined mesh: {text}")
            found = ir.StringAttr.get(export_sharding(sharding, self.meshes).text)
            self._hlo[sharding] = found
        return found

    def text(self, sharding: ir.Attribute) -> ir.StringAttr:
        """Its printed form, the value of an `xla.sdy.sharding` frontend attribute."""
        found = self._text.get(sharding)
        if found is None:
            found = self._text[sharding] = ir.StringAttr.get(str(sharding))
        return found

    def arg(self, attrs: ir.DictAttr) -> ir.DictAttr:
        """An argument's attributes, exported: `sdy.sharding` S becomes `mhlo.sharding` and
        the frontend attribute `xla.sdy.sharding` (kept with any other frontend attribute)."""
        found = self._arg.get(attrs)
        if found is None:
            entries = _entries(attrs)
            sharding = entries.pop(SDY_SHARDING)
            frontend = entries.get(FRONTEND)
            entries[FRONTEND] = _with(frontend, ROUND_TRIP_SHARDING, self.text(sharding))
            entries[MHLO_SHARDING] = self.hlo(sharding)
            found = self._arg[attrs] = ir.DictAttr.get(entries)
        return found

    def result(self, attrs: ir.DictAttr) -> ir.DictAttr:
        """A result's attributes, exported: only `mhlo.sharding` (the frontend attribute
        goes on the result's custom call)."""
        found = self._result.get(attrs)
        if found is None:
            entries = _entries(attrs)
            entries[MHLO_SHARDING] = self.hlo(entries.pop(SDY_SHARDING))
            found = self._result[attrs] = ir.DictAttr.get(entries)
        return found

    def per_value(self, sharding: ir.Attribute) -> ir.DictAttr:
        """`{xla.sdy.sharding = "#sdy.sharding_per_value<[S]>"}` for a result's custom call."""
        found = self._per_value.get(sharding)
        if found is None:
            attr = sdy.TensorShardingPerValueAttr.get([sharding])
            found = self._per_value[sharding] = _with(None, ROUND_TRIP_SHARDING, str(attr))
        return found


def _meshes_text(meshes: list[ir.Operation]) -> ir.StringAttr:
    entries = {ir.StringAttr(m.attributes["sym_name"]).value: m.attributes["mesh"] for m in meshes}
    return ir.StringAttr.get(str(ir.DictAttr.get(entries)))


def _export_func(func: ir.Operation, strings: _Strings) -> None:
    constraints, sharded = _scan(func)
    sharded += [_constraint_to_custom_call(op) for op in constraints]
    _export_args(func, strings)
    _export_results(func, strings)
    for op in sharded:
        _export_op(op, strings)


def _constraint_to_custom_call(op: ir.Operation) -> ir.Operation:
    """`sdy.sharding_constraint %x <S>` -> `stablehlo.custom_call @Sharding(%x)` carrying
    `sdy.sharding = #sdy.sharding_per_value<[S]>` (exported with the other ops after)."""
    old = op.attributes
    attrs = {old[k].name: old[k].attr for k in range(len(old)) if old[k].name != "sharding"}
    attrs["call_target_name"] = ir.StringAttr.get("Sharding")
    attrs[SDY_SHARDING] = sdy.TensorShardingPerValueAttr.get([op.attributes["sharding"]])
    call = ir.Operation.create(
        "stablehlo.custom_call",
        results=[op.results[0].type],
        operands=[op.operands[0]],
        attributes=attrs,
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )
    op.results[0].replace_all_uses_with(call.results[0])
    op.erase()
    return call


def _export_args(func: ir.Operation, strings: _Strings) -> None:
    if "arg_attrs" not in func.attributes:
        return
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes["arg_attrs"])]
    if not any(SDY_SHARDING in d for d in dicts):
        return
    new = [strings.arg(d) if SDY_SHARDING in d else d for d in dicts]
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def _export_results(func: ir.Operation, strings: _Strings) -> None:
    """Result shardings also go on an `@xla.sdy.FuncResultSharding` custom call before the
    return (HLO keeps no frontend attributes on results), one per sharded result, in order."""
    if "res_attrs" not in func.attributes:
        return
    dicts = [ir.DictAttr(d) for d in ir.ArrayAttr(func.attributes["res_attrs"])]
    if not any(SDY_SHARDING in d for d in dicts):
        return
    ip = ir.InsertionPoint.at_block_terminator(func.regions[0].blocks[0])
    ret = ip.ref_operation
    assert ret is not None  # the block's terminator
    values = list(ret.operands)
    target = ir.StringAttr.get(FUNC_RESULT_SHARDING)
    side_effect = ir.BoolAttr.get(True)
    new = []
    for k, d in enumerate(dicts):
        if SDY_SHARDING not in d:
            new.append(d)
            continue
        sharding = d[SDY_SHARDING]
        value = values[k]
        call = ir.Operation.create(
            "stablehlo.custom_call",
            results=[value.type],
            operands=[value],
            attributes={
                "call_target_name": target,
                "has_side_effect": side_effect,
                FRONTEND: strings.per_value(sharding),
            },
            loc=_location(value),
            ip=ip,
        )
        ret.operands[k] = call.results[0]
        new.append(strings.result(d))
    func.attributes["res_attrs"] = ir.ArrayAttr.get(new)


def _export_op(op: ir.Operation, strings: _Strings) -> None:
    per_value = op.attributes[SDY_SHARDING]
    shardings = list(sdy.TensorShardingPerValueAttr(per_value).shardings)
    if len(shardings) != 1 or len(op.results) != 1:
        raise Unsupported(f"{op.name} with {plural(len(op.results), 'result')}")
    op.attributes[FRONTEND] = _with(
        op.attributes[FRONTEND] if FRONTEND in op.attributes else None,
        ROUND_TRIP_SHARDING,
        str(per_value),
    )
    op.attributes[MHLO_SHARDING] = strings.hlo(shardings[0])
    del op.attributes[SDY_SHARDING]


def _location(value: ir.Value) -> ir.Location:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return ir.BlockArgument(value).location
    return owner.location


def _entries(d: ir.Attribute) -> dict[str, ir.Attribute]:
    d = d if isinstance(d, ir.DictAttr) else ir.DictAttr(d)
    return {d[i].name: d[i].attr for i in range(len(d))}


def _with(frontend: ir.Attribute | None, name: str, text: str | ir.StringAttr) -> ir.DictAttr:
    """A frontend-attributes dictionary with `name` set to the string `text`."""
    entries = {} if frontend is None else _entries(frontend)
    entries[name] = ir.StringAttr.get(text) if isinstance(text, str) else text
    return ir.DictAttr.get(entries)


def _set_frontend(op: ir.Operation, name: str, value: ir.StringAttr) -> None:
    old = op.attributes[FRONTEND] if FRONTEND in op.attributes else None
    entries = {} if old is None else _entries(old)
    entries[name] = value
    op.attributes[FRONTEND] = ir.DictAttr.get(entries)


def _scan(func: ir.Operation) -> tuple[list[ir.Operation], list[ir.Operation]]:
    """The sharding constraints and the other ops carrying `sdy.sharding` in `func`;
    Unsupported at any op XLA's export would rewrite otherwise."""
    constraints: list[ir.Operation] = []
    sharded: list[ir.Operation] = []
    unhandled: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name == "sdy.sharding_constraint":
            constraints.append(op)
        elif name.startswith(_UNHANDLED_PREFIXES) or name in _UNHANDLED_OPS:
            unhandled.append(name)
            return ir.WalkResult.INTERRUPT
        elif SDY_SHARDING in op.attributes and name != "func.func":
            sharded.append(op)
        return ir.WalkResult.ADVANCE

    compat.walk(func, visit, ir.WalkOrder.PRE_ORDER)
    if unhandled:
        raise Unsupported(f"{unhandled[0]} op")
    return constraints, sharded
