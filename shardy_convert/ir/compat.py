"""How jaxlib's MLIR bindings differ between releases (jax/jaxlib 0.7.1 through 0.12.0.1); what
differs in jaxlib's XLA client (portable artifacts, XLA's HLO readers, compiling) is in
xla/compat.py.

Everything else calls these functions and never asks for a version. Each difference is
detected by feature (a signature, an attribute, a probe), not by version string, so a release
in between gets whichever form it has. Measured on 0.7.1 against 0.10.2:

- `PassManager.add` takes only pipeline strings (0.10.2 also takes Python callables): the
  project runs its Python passes between PassManagers on every release (`pipeline.run_pipeline`),
  so nothing here is needed for that.
- `Operation.walk` has no `op_class=` filter: `walk` filters in Python instead.
- `_jax.mlir.deserialize_portable_artifact(bytes)` takes no `context=` and returns MLIR text
  (xla/compat.py; `formats.module` parses that text with `forget_dead_operations` first).
- XLA's HLO text parser rejects the stack-frame tables (`FileNames`, `StackFrames`, ...)
  newer XLAs print after the `HloModule` line, and `stack_frame_id=` in `metadata={...}`:
  `formats.hlo` removes both (debug information) before parsing, on every release.
- StableHLO 1.13.0 is the newest portable artifact 0.7.1 writes (0.10.2: 1.17.0). Both
  serializers silently write their newest version when asked for a newer one, so an
  explicit newer target is refused (`formats.check_version`); a newer input artifact's
  version, kept by default, is written as this jaxlib's newest.
- Python objects of ops of a freed module can outlive it and be handed out for new ops
  (`forget_dead_operations`); the plugin wrapper makes a context per program there
  (`contexts_reusable`).
- `sdy-lift-inlined-meshes` adds no `stablehlo.mesh` attribute to `sdy.mesh`, and the
  StableHLO printer spaces some ops differently: output text differs, semantics do not.

And on 0.11.0, 0.11.2, 0.12.0 and 0.12.0.1 against 0.10.2 (Python 3.12):
- From 0.11.2 on, Shardy refuses a single-device (maximal) sharding on a function argument
  ("function argument 0 cannot have a single-device sharding attribute", in its propagation
  and export pipelines, so XLA's compile too) and XLA drops one on a result; 0.11.0 compiles
  both. JAX itself lowers a single-device placement as one partition on an `@empty_mesh`, the
  device in the device assignment: `single_device_arguments_refused` (a probe of
  `sdy-export-pipeline`) tells which, passes/single_device_program.py makes that form.
- Nothing else of the bindings this module wraps differs (XLA's side: xla/compat.py).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any

from jaxlib.mlir import ir, passmanager


@functools.cache
def _signature(fn: Any) -> str:
    """The first line of a nanobind function's docstring (its signature)."""
    return (getattr(fn, "__doc__", None) or "").strip().split("\n")[0]


def walk_has_op_class() -> bool:
    return "op_class" in _signature(ir.Operation.walk)


def walk(
    root: ir.Operation,
    visit: Callable[[ir.Operation], ir.WalkResult],
    order: ir.WalkOrder = ir.WalkOrder.POST_ORDER,
    op_class: type[ir.OpView] | None = None,
    raised: list[BaseException] | None = None,
) -> None:
    """`root.walk(visit, order, op_class=op_class)` on every release (without jaxlib's filter,
    ops that are not `op_class` are skipped here, by op name), and whatever `visit` raises
    leaves the walk as itself. jaxlib turns an exception raised in a walk's callback into
    `RuntimeError("Exception raised in callback: <traceback>")` on every release: a Ctrl-C
    (KeyboardInterrupt) during a walk read as an internal error, or was swallowed by code that
    goes on after one (issue 19). Every walk of the package goes through here.

    A hot `visit` may guard itself (one Python frame less per op: the whole-module walk of
    `walker.OpIndex`): it catches BaseException into the list it passes as `raised` and
    returns `WalkResult.INTERRUPT`."""
    if raised is None:
        raised = []
        walked = _guarded(visit, raised)
    else:
        walked = visit
    try:
        _walk(root, walked, order, op_class)
    except RuntimeError as e:  # the signal was handled as `guarded` began, before its `try`
        _raise_escaped_interrupt(e)
        raise
    if raised:
        raise raised[0]


def _guarded(
    visit: Callable[[ir.Operation], ir.WalkResult], raised: list[BaseException]
) -> Callable[[ir.Operation], ir.WalkResult]:
    def guarded(op: ir.Operation) -> ir.WalkResult:
        try:
            return visit(op)
        except BaseException as e:
            raised.append(e)
            return ir.WalkResult.INTERRUPT

    return guarded


def _walk(root, visit, order, op_class) -> None:
    if op_class is None:
        root.walk(visit, order)
    elif walk_has_op_class():
        root.walk(visit, order, op_class=op_class)
    else:
        name = op_class.OPERATION_NAME

        def filtered(op: ir.Operation) -> ir.WalkResult:
            return visit(op) if op.name == name else ir.WalkResult.ADVANCE

        root.walk(filtered, order)


def _raise_escaped_interrupt(error: RuntimeError) -> None:
    """KeyboardInterrupt (SystemExit) again when jaxlib's RuntimeError wraps one: the last line
    of the traceback it quotes names the exception."""
    text = str(error)
    if not text.startswith("Exception raised in callback"):
        return
    last = text.strip().splitlines()[-1]
    if last.startswith("KeyboardInterrupt"):
        raise KeyboardInterrupt from None
    if last.startswith("SystemExit"):
        raise SystemExit from None


def forget_dead_operations(ctx: ir.Context) -> None:
    """Call before a new module enters `ctx`.

    jaxlib 0.7.1's bindings map each MLIR operation's address to its Python object, per
    context, and freeing a module leaves the entries of its nested ops that Python still
    references (a reference cycle keeps them until the next garbage collection). An op
    created later at the same address is then handed that stale object (measured: "the
    operation has been invalidated" in the middle of a conversion, in about half the runs of
    the golden diff tests, which read two modules into one context). With no module alive in
    the context, every mapped op is dead: forget them all. Newer bindings keep no such map.
    """
    clear = getattr(ctx, "_clear_live_operations", None)
    # the same bindings as _clear_live_operations (0.7.1), absent from the newer stubs
    if clear is None or ctx._get_live_operation_count() == 0:  # type: ignore[attr-defined]
        return
    if ctx._get_live_module_count():
        gc.collect()  # a module only a reference cycle keeps alive is dead too
    if ctx._get_live_module_count() == 0:
        clear()


def contexts_reusable() -> bool:
    """Whether one context can hold one module after another cheaply: not on bindings that
    keep the live-operation map `forget_dead_operations` clears (it may need a full garbage
    collection per module)."""
    return not hasattr(ir.Context, "_clear_live_operations")


# A function argument placed on one device (the maximal mesh of device 0).
_SINGLE_DEVICE_PROBE = """
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
func.func @main(%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>})
    -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
}
"""


@functools.cache
def single_device_arguments_refused() -> bool:
    """Whether this jaxlib's Shardy (and so its XLA) refuses a single-device sharding on a
    function argument (0.11.2 and later; 0.11.0 and before compile it): found by running
    Shardy's `sdy-export-pipeline` on a probe module, MLIR only (about a millisecond)."""
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext  # the dialects new_context loads

    from .bindings import sdy

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    with ir.Context() as ctx:  # not parse.new_context: parse imports this module
        ctx.append_dialect_registry(registry)
        ctx.load_all_available_dialects()
        sdy.register_dialect(ctx)
        module = ir.Module.parse(_SINGLE_DEVICE_PROBE)
        try:
            passmanager.PassManager.parse("builtin.module(sdy-export-pipeline)").run(
                module.operation
            )
        except ir.MLIRError as e:
            return "single-device" in str(e)
    return False


def has_reduction_kinds() -> bool:
    """Whether this jaxlib's Shardy has reduction kinds on unreduced axes (`unreduced=max{...}`,
    `TensorShardingAttr.reduction_op`; Shardy 2026-07: in jaxlib 0.12.0.1, not in 0.10.2)."""
    from .bindings import sdy

    return hasattr(sdy.TensorShardingAttr, "reduction_op")


def reduction_of(sharding: Any) -> str | None:
    """The reduction kind of an `sdy.TensorShardingAttr` ("max", "min"), None for a sum or a
    jaxlib whose Shardy has none (`reduction_op`, printed as its text form)."""
    op = getattr(sharding, "reduction_op", None)
    if op is None:
        return None
    name = str(op).rsplit(".", 1)[-1].lower()
    return None if name == "sum" else name


def jaxlib_version() -> str:
    """The running jaxlib's version, for messages that name it."""
    from jaxlib import version

    return version.__version__


@functools.cache
def op_locations_settable() -> bool:
    """Whether these bindings set an op's location (`op.location = loc`): jaxlib 0.10.2's do,
    0.7.1's only read it."""
    return getattr(ir.Operation.location, "fset", None) is not None
