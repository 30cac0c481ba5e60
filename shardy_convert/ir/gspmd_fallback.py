"""What makes XLA compile a module with GSPMD although the Shardy partitioner was asked for.

Before it compiles with Shardy, XLA runs `hasGspmdAttrsOrOps` (xla/service/spmd/shardy/
utils.cc, b/420837831, still there in the XLA of jaxlib 0.12): jaxlib's client
(`PyClient::CompileAndLoad`) and `MlirToXlaComputation` (what a PJRT plugin compiles MLIR
through) alike. On a hit XLA logs one WARNING line (`FALLBACK_LOG_LINE`), switches the
partitioner to GSPMD and compiles on: a program the caller believes is Shardy's is GSPMD's
(openxla/xla#42481 caught jaxlib 0.10.2 at it on a user's program). Its conditions, per
top-level `func.func`:

1. a func other than @main with `mhlo.sharding` on an argument that has neither
   `sdy.sharding` nor the round-trip frontend attribute `xla.sdy.sharding`;
2. unless the module's `mhlo.frontend_attributes` hold `xla.sdy.tuple_results_shardings`:
   `mhlo.sharding` on a result (of @main too) that has no `sdy.sharding` and is not returned
   through a `@xla.sdy.FuncResultSharding` custom call;
3. a `stablehlo.custom_call @Sharding` (nested ops too) with `mhlo.sharding` and neither
   `sdy.sharding` nor an `xla.sdy.sharding` frontend attribute.

@main's arguments are not looked at (XLA's comment: IFRT once added replicated
`mhlo.sharding`s there). `fallback_sites` is the same predicate, site by site, so a caller can
say where and why; an empty list is "Shardy compiles it".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InternalError, ModuleError
from . import compat
from .bindings import ir
from .diagnostics import format_location
from .value_attrs import value_dicts
from .walker import (
    CUSTOM_CALL,
    SDY_SHARDING,
    SHARDING,
    body,
    call_target,
    func_name,
    join_location,
    sites,
)

#: XLA's WARNING when it falls back (py_client.cc and mlir_to_hlo.cc, jaxlib 0.7.1 to 0.12).
FALLBACK_LOG_LINE = (
    "Module has GSPMD attrs or ops, but Shardy is enabled. Disabling Shardy and falling back "
    "to using GSPMD propagation."
)
FRONTEND_ATTRS = "mhlo.frontend_attributes"
ROUND_TRIP_SHARDING = "xla.sdy.sharding"  # HloSharding::kShardingFrontendAttrName
TUPLE_RESULTS = "xla.sdy.tuple_results_shardings"  # kOutTupleShardings
FUNC_RESULT_SHARDING = "xla.sdy.FuncResultSharding"  # kFuncResultShardingTargetName


@dataclass(frozen=True)
class FallbackSite:
    """One thing in a module that makes XLA fall back to GSPMD: `kind` is "arg", "result" or
    "op" (a `@Sharding` custom call), `where` its location in the module's words."""

    kind: str
    where: str
    text: str  # the mhlo.sharding string

    def __str__(self) -> str:
        return f'{self.where}: mhlo.sharding "{self.text}" without a Shardy sharding'


def fallback_sites(module: ir.Operation, *, ops: bool = True) -> list[FallbackSite]:
    """Every site of `module` for which XLA falls back to GSPMD (see the module docstring), in
    func order: arguments, results, then `@Sharding` custom calls (left out with `ops` False:
    that part walks every op)."""
    module = module.operation
    results_exempt = TUPLE_RESULTS in _dict(module, FRONTEND_ATTRS)
    found: list[FallbackSite] = []
    for top in body(module).operations:
        func = top.operation
        if func.name != "func.func":
            continue
        if func_name(func) != "main":
            found += _signature_sites(func, "arg")
        if not results_exempt:
            found += _signature_sites(func, "result")
        if ops:
            found += _sharding_calls(func)
    return found


def _signature_sites(func: ir.Operation, kind: str) -> list[FallbackSite]:
    found = []
    for k, attrs in enumerate(value_dicts(func, kind)):
        if SHARDING not in attrs or SDY_SHARDING in attrs:
            continue
        if kind == "arg" and ROUND_TRIP_SHARDING in _entry_dict(attrs, FRONTEND_ATTRS):
            continue
        if kind == "result" and _returned_through_func_result_sharding(func, k):
            continue
        where = join_location(format_location(func.location), f"{kind} {k} of @{func_name(func)}")
        found.append(FallbackSite(kind, where, _text(attrs[SHARDING])))
    return found


def _returned_through_func_result_sharding(func: ir.Operation, index: int) -> bool:
    blocks = func.regions[0].blocks
    if not len(blocks):
        return False
    terminator = blocks[0].operations[len(blocks[0].operations) - 1]
    if index >= len(terminator.operands):
        return False
    owner = terminator.operands[index].owner
    return isinstance(owner, ir.Operation | ir.OpView) and (
        call_target(owner.operation) == FUNC_RESULT_SHARDING
    )


def _sharding_calls(func: ir.Operation) -> list[FallbackSite]:
    found: list[FallbackSite] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == CUSTOM_CALL and _gspmd_sharding_call(op):
            where = join_location(format_location(op.location), "stablehlo.custom_call @Sharding")
            found.append(FallbackSite("op", where, _text(op.attributes[SHARDING])))
        return ir.WalkResult.ADVANCE

    compat.walk(func, visit, ir.WalkOrder.PRE_ORDER)
    return found


def _gspmd_sharding_call(op: ir.Operation) -> bool:
    attrs = op.attributes
    return (
        call_target(op) == "Sharding"
        and SHARDING in attrs
        and SDY_SHARDING not in attrs
        and ROUND_TRIP_SHARDING not in _dict(op, FRONTEND_ATTRS)
    )


def _dict(op: ir.Operation, name: str) -> ir.DictAttr | dict:
    """An op's dictionary attribute `name`, or {} where it has none (or another kind)."""
    if name not in op.attributes:
        return {}
    attr = op.attributes[name]
    return ir.DictAttr(attr) if isinstance(attr, ir.DictAttr) else {}


def _entry_dict(attrs: ir.DictAttr, name: str) -> ir.DictAttr | dict:
    if name not in attrs:
        return {}
    attr = attrs[name]
    return ir.DictAttr(attr) if isinstance(attr, ir.DictAttr) else {}


def _text(attr: ir.Attribute) -> str:
    return ir.StringAttr(attr).value if isinstance(attr, ir.StringAttr) else str(attr)


def check_no_gspmd_left(module: ir.Operation, saved: str | bytes | None = None) -> None:
    """The pipeline's post-condition: no `mhlo.sharding` is left on the module or on func
    arguments and results, and nothing makes XLA compile the result with GSPMD's propagation
    although Shardy is asked for (ir/gspmd_fallback.py: XLA's own predicate, whose `@Sharding`
    custom calls need a walk over every op, 3.5 % of converting a 2 MB module). A site left is
    a bug of the pass that owns it: an InternalError naming both.

    `saved`: the module as written (text, bytecode or a portable artifact, any of which spells
    a custom call's target as it is, `@Sharding` or `"Sharding"`): where it holds no
    `Sharding`, the module has no `@Sharding` call and the ops are not walked."""
    left = next(sites(module, ops=False), None)
    if left is not None:
        raise ModuleError(
            f'mhlo.sharding "{left.text}" left after conversion', location=left.location
        )
    fallback = fallback_sites(module, ops=saved is None or _names_sharding(saved))
    if fallback:
        site = fallback[0]
        owner = "import-custom-calls" if site.kind == "op" else "import-shardings"
        raise InternalError(
            RuntimeError(
                f"the conversion left what makes XLA fall back to GSPMD: {site} ({owner} "
                f"should have replaced it; {len(fallback)} such site(s))"
            )
        )


def _names_sharding(saved: str | bytes) -> bool:
    if isinstance(saved, str):
        return "Sharding" in saved
    return b"Sharding" in saved
