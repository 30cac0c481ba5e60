"""The MLIR bindings' compatibility layer (`shardy_convert.ir.compat`; the XLA client's is
tests/xla/test_compat.py) and the pipeline runner that needs no Python
passes inside a PassManager. Every test runs on whichever jaxlib is installed; `make
test` runs them on the newest and the oldest supported release. Where a release lacks a
feature, the fallback is forced here so both paths are tested on every release."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from shardy_convert.errors import ShardyConvertError
from shardy_convert.ir import compat
from shardy_convert.ir.analyses import Analyses
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.pipeline import run_pipeline
from tests import helpers
from tests.conftest import TESTDATA

MATMUL = TESTDATA / "torch_xla" / "matmul_2x4.mlir"
TRANSFORMER = TESTDATA / "torch_xla" / "transformer_block.mlir"
SHARDED_ADD = """\
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
    -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def _custom_call_names(module: ir.Module) -> list[str]:
    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(str(op.operation.attributes["call_target_name"]))
        return ir.WalkResult.ADVANCE

    compat.walk(module.operation, visit, ir.WalkOrder.PRE_ORDER, op_class=stablehlo.CustomCallOp)
    return found


def test_walk_filters_by_op_class_with_and_without_jaxlibs_filter(monkeypatch):
    text = TRANSFORMER.read_text()
    with new_context() as ctx:
        module = parse_module(text, ctx)
        native = _custom_call_names(module)
        monkeypatch.setattr(compat, "walk_has_op_class", lambda: False)
        fallback = _custom_call_names(module)
    assert native == fallback
    assert len(native) == text.count("stablehlo.custom_call @")


def test_comparable_text_spells_each_releases_printing_one_way():
    """The newest jaxlib's converted text and the same text as 0.7.1 prints it (no
    `stablehlo.mesh` attribute, doubled spaces around compare's operands) compare equal."""
    from shardy_convert import convert

    text = convert(TRANSFORMER.read_text())
    assert "stablehlo.compare" in text
    old_style = helpers._MESH_ATTR.sub("", text).replace(
        "stablehlo.compare ", "stablehlo.compare  "
    )
    assert helpers.comparable_text(old_style) == helpers.comparable_text(text)
    assert "stablehlo.mesh" not in helpers.comparable_text(text)
    assert helpers.comparable_text(text).count("stablehlo.compare  ") == 0
    with new_context() as ctx:  # still a module, printed the same by this jaxlib
        assert str(parse_module(helpers.comparable_text(text), ctx)).count("sdy.mesh") == 1


# --- the pipeline runner: Python passes between PassManagers -------------------------------


@dataclass(frozen=True)
class _Record:
    """A Python pass that logs its name, and raises `error` or returns `result`."""

    NAME: str
    log: list
    error: Exception | None = None
    result: object = None
    PRESERVES_ANALYSES = False

    def run(self, op: ir.Operation, analyses: Analyses | None = None) -> object:
        self.log.append(self.NAME)
        if self.error is not None:
            raise self.error
        return self.result


def _record(log: list[str], name: str, error: Exception | None = None) -> _Record:
    return _Record(name, log, error)


@dataclass(frozen=True)
class _Keep(_Record):
    """Computes an analysis, or checks it is still there; it preserves analyses."""

    PRESERVES_ANALYSES = True

    def run(self, op: ir.Operation, analyses: Analyses | None = None) -> object:
        self.log.append(analyses.get("fact", lambda: self.NAME))
        return None


def _converted() -> str:
    from shardy_convert import convert

    return convert(MATMUL.read_text())


@pytest.mark.parametrize("verify_each", [True, False])
def test_python_passes_run_in_order_between_mlir_passes(verify_each):
    log: list[str] = []
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        steps = [
            _record(log, "a"),
            "sdy-manual-axes-cleanup",
            _record(log, "b"),
            _record(log, "c"),
            "sdy-lift-inlined-meshes",
            "sdy-manual-axes-cleanup",
            _record(log, "d"),
        ]
        run_pipeline(module, steps, verify_each=verify_each)
        module.operation.verify()
    assert log == ["a", "b", "c", "d"]


def test_a_python_pass_error_stops_the_pipeline_as_it_is():
    log: list[str] = []
    error = ShardyConvertError("bad sharding", location="3:4")
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        with pytest.raises(ShardyConvertError) as caught:
            run_pipeline(module, [_record(log, "a", error), "sdy-manual-axes-cleanup"])
    assert caught.value is error
    assert log == ["a"]


def test_an_unexpected_exception_in_a_python_pass_is_raised_as_it_is():
    log: list[str] = []
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        with pytest.raises(KeyError):
            run_pipeline(module, [_record(log, "a", KeyError("x")), _record(log, "b")])
    assert log == ["a"]


class _Break(_Record):
    def run(self, op: ir.Operation, analyses: Analyses | None = None) -> None:
        """Makes the module invalid: a sharding naming a mesh that does not exist."""
        ops = op.regions[0].blocks[0].operations
        main = next(o.operation for o in ops if o.operation.name == "func.func")
        attrs = main.attributes["arg_attrs"]
        broken = ir.Attribute.parse("{sdy.sharding = #sdy.sharding<@nowhere, [{}, {}]>}")
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([broken, *list(attrs)[1:]])


def test_what_passes_found_comes_back_from_the_run_in_order():
    log: list[str] = []
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        steps = [_Record("a", log, result=1), _record(log, "b"), _Record("c", log, result="x")]
        assert run_pipeline(module, steps) == [("a", 1), ("c", "x")]


def test_the_run_owns_its_analyses_and_forgets_them_after_a_step_that_does_not_keep_them():
    log: list[str] = []
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        analyses = Analyses({"given": 1})
        steps = [_Keep("first", log), _Keep("kept", log), _record(log, "other"), _Keep("new", log)]
        run_pipeline(module, steps, analyses=analyses)
        assert log == ["first", "first", "other", "new"]  # the third walk is a new one
        assert analyses.peek("given") is None  # `other` kept nothing valid
        log.clear()
        run_pipeline(module, [_Keep("alone", log)], analyses=Analyses({"fact": "given"}))
        run_pipeline(module, [_Keep("fresh", log)])  # a run of its own: nothing kept
        run_pipeline(module, [_Keep("mlir", log), "sdy-manual-axes-cleanup", _Keep("after", log)])
        assert log == ["given", "fresh", "mlir", "after"]  # Shardy's passes keep nothing


@dataclass(frozen=True)
class _Unchanged(_Record):
    """A pass that preserves nothing in general, and says it changed nothing this time."""

    def run(self, op: ir.Operation, analyses: Analyses | None = None) -> object:
        self.log.append(self.NAME)
        assert analyses is not None
        analyses.mark_all_preserved()
        return None


def test_a_pass_that_changed_nothing_keeps_the_analyses_for_that_step_only():
    """MLIR's markAllAnalysesPreserved: said in one step, it does not carry to the next."""
    log: list[str] = []
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        steps = [
            _Keep("first", log),
            _Unchanged("unchanged", log),
            _Keep("kept", log),
            _record(log, "other"),
            _Keep("new", log),
        ]
        run_pipeline(module, steps)
        assert log == ["first", "unchanged", "first", "other", "new"]
        analyses = Analyses()
        analyses.mark_all_preserved()
        assert analyses.take_all_preserved()
        assert not analyses.take_all_preserved()


@pytest.mark.parametrize(
    ("verify_each", "message"),
    [(True, "pass pipeline failed"), (False, "the converted module does not verify")],
)
def test_invalid_ir_from_a_python_pass_never_reaches_shardys_passes(verify_each, message):
    with new_context() as ctx:
        module = parse_module(_converted(), ctx)
        steps = [_Break("break", []), "sdy-lift-inlined-meshes"]
        with pytest.raises(ShardyConvertError, match=message):
            run_pipeline(module, steps, verify_each=verify_each)


@pytest.mark.skipif(
    not hasattr(ir.Context, "_clear_live_operations"),
    reason="these jaxlib bindings keep no map of live operations",
)
def test_ops_of_a_freed_module_are_forgotten_before_the_next_module():
    with new_context() as ctx:
        module = parse_module(SHARDED_ADD, ctx)
        stale = list(module.body.operations)  # nested ops that outlive their module
        del module
        assert ctx._get_live_module_count() == 0 < ctx._get_live_operation_count()
        compat.forget_dead_operations(ctx)
        assert ctx._get_live_operation_count() == 0
        assert len(stale) == 1


def test_live_modules_keep_their_operations():
    with new_context() as ctx:
        module = parse_module(SHARDED_ADD, ctx)
        func = next(iter(module.body.operations))
        parse_module(SHARDED_ADD, ctx)  # a second module in the same context
        assert func.operation.name == "func.func"
        assert "stablehlo.add" in str(module)


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    "error", [KeyboardInterrupt(), SystemExit(3), ShardyConvertError("bad"), _Stop("x")]
)
def test_whatever_a_walk_callback_raises_leaves_the_walk_as_itself(error):
    """jaxlib makes any exception of a walk's callback a RuntimeError quoting it: a Ctrl-C
    during a walk read as an internal error (issue 19)."""
    seen: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        seen.append(op.name)
        raise error

    with new_context() as ctx:
        module = parse_module(SHARDED_ADD, ctx)
        with pytest.raises(type(error)) as raised:
            compat.walk(module.operation, visit, ir.WalkOrder.PRE_ORDER)
    assert raised.value is error
    assert seen == ["builtin.module"]  # the walk stopped at the first op


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_jaxlib_wrapped_in_a_runtime_error_is_raised_again(error):
    """The signal can be handled as the guarding callback begins, outside its `try`: then
    jaxlib's RuntimeError is all there is, and it names the exception."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        raise error

    with new_context() as ctx:
        module = parse_module(SHARDED_ADD, ctx)
        with pytest.raises(RuntimeError) as wrapped:
            module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with pytest.raises(error):
        compat._raise_escaped_interrupt(wrapped.value)
    compat._raise_escaped_interrupt(RuntimeError("Exception raised in callback: ValueError: x"))
