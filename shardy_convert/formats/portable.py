"""A Shardy module as a portable artifact in Shardy's round-trip form, written in this process.

jaxlib's writer (`_jax.mlir.serialize_portable_artifact`, what `formats.save` calls) reparses
the module in a context of its own, then runs XLA's pipeline with MLIR's verifier after every
pass (measured on jaxlib 0.10.2 for the 17 KB Mixtral graph: 31 ms of a 50 ms hook, 44% of it
verification):

    func.func(stablehlo-complex-math-expander, canonicalize)     canonicalize: not in 0.7.1
    sdy-lift-inlined-meshes, xla-sdy-round-trip-dedup-meshes, xla-sdy-round-trip-export-ops,
    xla-sdy-round-trip-shard-map-export, xla-sdy-round-trip-export-shardy-attrs,
    xla-sdy-stablehlo-export-shardings
    chlo-preserve-high-level-ops, func.func(chlo-legalize-to-stablehlo),
    stablehlo-compatibility-expander{target}, func.func(chlo-legalize-to-stablehlo,
    shape-legalize-to-stablehlo), reconcile-unrealized-casts, hlo-legalize-to-stablehlo
    then stablehlo's own writer (stablehlo-legalize-to-vhlo, vhlo-to-version, bytecode).

`serialize` does the same on a copy of the in-memory module: the StableHLO passes jaxlib
registers run in this context, the six round-trip export passes (not registered in Python)
are `portable_export.export`, and stablehlo's writer (`stablehlo.serialize_portable_artifact`,
which verifies) ends it. The rest of XLA's pipeline only rewrites chlo, mhlo, shape and
unrealized-cast ops, which stablehlo's writer refuses: a module holding any falls back to
jaxlib's writer, as does one `export` does not cover (several meshes, manual computations,
sharding rules, control flow or collectives XLA's export annotates). Same bytes as jaxlib's
writer: checked once per process on a module exercising every case `export` handles
(`_agrees_with_jaxlib`; otherwise jaxlib's writer is used throughout), and by the test suite
on every real graph of the test data.
"""

from __future__ import annotations

import functools
import logging

from ..ir.bindings import ir, passmanager, stablehlo
from ..ir.parse import new_context, print_module
from ..ir.walker import body
from ..xla import compat
from .portable_export import Unsupported, export

log = logging.getLogger("shardy_convert.round_trip")

# Use the in-process writer when it agrees with jaxlib's (set False to always use jaxlib's).
ENABLED = True


def serialize(module: ir.Module, target: str) -> bytes | None:
    """`module` (left as it is) as a portable artifact for StableHLO `target`, byte for byte
    what jaxlib's writer makes of it; None when only jaxlib's writer can (the caller uses it)."""
    if not ENABLED or not _target_ok(target):
        return None
    if not _agrees_with_jaxlib():
        return None
    return _serialize(module, target, _jaxlib_canonicalizes())


def prepare() -> bool:
    """Does now what the first `serialize` would do once (register StableHLO's passes, check
    this jaxlib's writer: ~10 ms); whether the in-process writer will be used."""
    _register_passes()
    return ENABLED and _agrees_with_jaxlib()


def _serialize(module: ir.Module, target: str, canonicalize: bool) -> bytes | None:
    ctx = module.context
    with ctx, ir.Location.unknown(ctx):
        copy = _copy(module)
        try:
            _run(copy, _PRE_EXPORT[canonicalize])
            export(copy.operation)
            _run(copy, f"builtin.module(stablehlo-compatibility-expander{{target={target}}})")
            return _write(copy, target)
        except Unsupported as e:
            log.debug("jaxlib's writer: %s", e)
        except Exception:  # a bug here: jaxlib's writer still writes the right bytes
            log.warning("shardy-convert: in-process writer failed; using jaxlib's", exc_info=True)
        return None


_PRE_EXPORT = {
    False: "builtin.module(func.func(stablehlo-complex-math-expander))",
    True: "builtin.module(func.func(stablehlo-complex-math-expander, canonicalize))",
}


def _copy(module: ir.Module) -> ir.Module:
    """A new module with the same attributes, location and top-level ops."""
    op = module.operation
    copy = ir.Module.create(op.location)
    attrs = op.attributes
    for k in range(len(attrs)):
        copy.operation.attributes[attrs[k].name] = attrs[k].attr
    ip = ir.InsertionPoint(copy.body)
    for child in body(op).operations:
        child.operation.clone(ip=ip)
    return copy


def _run(module: ir.Module, pipeline: str) -> None:
    _register_passes()
    pm = passmanager.PassManager.parse(pipeline)
    pm.enable_verifier(False)  # stablehlo's writer verifies the end result
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        raise Unsupported(f"pass failed: {e}") from None


def _write(module: ir.Module, target: str) -> bytes:
    """stablehlo's writer; diagnostics of a module it refuses are not printed."""
    handler = module.context.attach_diagnostic_handler(lambda _diagnostic: True)
    try:
        return bytes(stablehlo.serialize_portable_artifact(module, target))
    except Exception as e:  # refused (an op of another dialect): jaxlib's writer handles it
        raise Unsupported(f"stablehlo's writer: {e}") from None
    finally:
        handler.detach()  # type: ignore[attr-defined]  # a DiagnosticHandler, typed object


@functools.cache
def _register_passes() -> None:
    stablehlo.register_stablehlo_passes()


def _target_ok(target: str) -> bool:
    """jaxlib's writer writes min(target, its newest): only a target it writes as asked."""
    current = stablehlo.get_current_version()
    try:
        return _number(target) <= _number(current)
    except ValueError:
        return False


def _number(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# --------------------------------------------------------------------------------------------
# Feature detection: which pipeline this jaxlib's writer runs (checked once per process)

# Every case `export` handles: args and results with and without shardings (open dims,
# sub-axes, replicated axes, existing frontend attributes), an op sharding, a constraint.
_PROBE = """
module @probe attributes {mhlo.frontend_attributes = {x = "y"}} {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func @main(
      %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", ?}]>},
      %arg1: tensor<8x16xf32> {
        mhlo.frontend_attributes = {k = "v"},
        sdy.sharding = #sdy.sharding<@mesh, [{"b":(1)2}, {}], replicated={"a"}>},
      %arg2: tensor<f32>)
      -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}, tensor<f32>,
          tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}) {
    %0 = stablehlo.add %arg0, %arg1
      {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "b"}, {}]>]>} : tensor<8x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"b"}]> : tensor<8x16xf32>
    %c1 = stablehlo.constant dense<1.0> : tensor<f32>
    %c2 = stablehlo.constant dense<2.0> : tensor<f32>
    %2 = stablehlo.add %c1, %c2 : tensor<f32>
    %3 = stablehlo.multiply %2, %arg2 : tensor<f32>
    return %1, %3, %arg0 : tensor<8x16xf32>, tensor<f32>, tensor<8x16xf32>
  }
}
"""

# A no-op collective: canonicalization erases it; XLA's export cannot write it.
_NOOP_COLLECTIVE = """
module {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}]> : tensor<8xf32>
    %1 = sdy.all_gather [{}] %0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
"""


def _jaxlib_write(text: str) -> bytes:
    """`text` written by jaxlib's writer, in a context of its own."""
    with new_context() as ctx:
        module = ir.Module.parse(text, context=ctx)
        target = stablehlo.get_minimum_version()
        return compat.serialize_portable_artifact(print_module(module, "bytecode"), target)


@functools.cache
def _jaxlib_canonicalizes() -> bool:
    """Whether jaxlib's writer canonicalizes before the export (jaxlib 0.10.2 does, 0.7.1
    does not): only then does a no-op collective disappear instead of failing the export."""
    try:
        _jaxlib_write(_NOOP_COLLECTIVE)
    except Exception:  # jaxlib's own error type: the collective reached the export
        return False
    return True


@functools.cache
def _agrees_with_jaxlib() -> bool:
    """Whether the in-process writer writes the probe module byte for byte as jaxlib's
    writer does (checked once per process; otherwise jaxlib's writer is used)."""

    expected = _jaxlib_write(_PROBE)
    with new_context() as ctx:
        module = ir.Module.parse(_PROBE, context=ctx)
        target = stablehlo.get_minimum_version()
        if _serialize(module, target, _jaxlib_canonicalizes()) == expected:
            return True
    log.warning("shardy-convert: portable artifacts are written by jaxlib's writer (slower)")
    return False
