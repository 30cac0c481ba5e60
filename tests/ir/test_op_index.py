"""The one walk over a module's ops (`walker.OpIndex`) and its early stop: with the `Mentions`
of the module's text, the walk ends once it has found as many sharded ops and custom calls as
the text can hold. It must find exactly what the whole walk finds, on every real graph."""

from __future__ import annotations

import pytest
from jaxlib.mlir import ir

from shardy_convert import convert
from shardy_convert.formats import module as formats
from shardy_convert.ir import compat, walker
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.walker import Mentions, OpIndex
from tests.conftest import TESTDATA, real_graphs

GRAPHS = real_graphs()

# The op sharding and the custom call come late; a string mentions both names first.
LATE = """\
module attributes {mhlo.frontend_attributes = {note = "mhlo.sharding, custom_call"}} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
      -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<8x8xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{devices=[4,2]<=[8]}"}
        : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = "stablehlo.negate"(%2) {"mhlo.sharding" = "{replicated}"}
        : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
"""

SIGNATURE_ONLY = """\
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
    -> (tensor<8x8xf32> {mhlo.sharding = "{replicated}"}) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def _parsed(text: str) -> ir.Module:
    return parse_module(text, new_context())


def _summary(index: OpIndex) -> tuple:
    """What an OpIndex found, comparable across two walks of one module."""
    sharded = {walker.func_name(f): [str(op) for op in ops] for f, ops in index.sharded.items()}
    calls = {k: [str(op) for op in ops] for k, ops in index.custom_calls.items()}
    return sharded, calls


def _counting_walks(monkeypatch) -> list[int]:
    """How many ops each walk of compat visits from now on."""
    visited: list[int] = []
    walk = compat._walk

    def counted(root, visit, order, op_class):
        visited.append(0)

        def each(op):
            visited[-1] += 1
            return visit(op)

        walk(root, each, order, op_class)

    monkeypatch.setattr(compat, "_walk", counted)
    return visited


@pytest.mark.parametrize(
    ("entry", "k", "text"),
    GRAPHS,
    ids=[f"{e['path'].rsplit('/', 1)[-1]}:{k}" for e, k, _ in GRAPHS],
)
def test_bounded_walk_finds_what_the_whole_walk_finds(entry, k, text):
    module = _parsed(text)
    whole = OpIndex.build(module.operation)
    bounded = OpIndex.build(module.operation, Mentions.of(text))
    assert _summary(bounded) == _summary(whole)


def test_the_bound_saves_most_of_the_walk_on_real_graphs(monkeypatch):
    """Across testdata's real graphs the bounded walks visit far fewer ops: many graphs carry
    their shardings on @main's signature only (no walk at all), and torch_xla's sharding custom
    calls come in the forward half (measured: 3,422 of 6,798 ops visited)."""
    whole = bounded = 0
    for _, _, text in GRAPHS:
        module = _parsed(text)
        visited = _counting_walks(monkeypatch)
        OpIndex.build(module.operation)
        whole += sum(visited)
        visited.clear()
        OpIndex.build(module.operation, Mentions.of(text))
        bounded += sum(visited)
        monkeypatch.undo()
    assert whole > 5_000
    assert bounded < 0.6 * whole, (bounded, whole)


def test_late_sharding_after_mentions_in_a_string_is_found(monkeypatch):
    """Mentions in strings only make the bound larger: the walk goes to the end."""
    module = _parsed(LATE)
    visited = _counting_walks(monkeypatch)
    index = OpIndex.build(module.operation, Mentions.of(LATE))
    names = [op.name for ops in index.sharded.values() for op in ops]
    assert names == ["stablehlo.custom_call", "stablehlo.negate"]
    assert list(index.custom_calls) == ["Sharding"]
    assert visited == [6]  # func, add, multiply, custom_call, negate, return: all of them
    assert _summary(index) == _summary(OpIndex.build(module.operation))


def test_walk_stops_at_the_last_mentioned_op(monkeypatch):
    text = LATE.replace('{note = "mhlo.sharding, custom_call"}', "{}")
    module = _parsed(text)
    visited = _counting_walks(monkeypatch)
    index = OpIndex.build(module.operation, Mentions.of(text))
    assert visited == [5]  # func, add, multiply, custom_call, negate: the return is not visited
    assert _summary(index) == _summary(OpIndex.build(module.operation))


def test_no_op_mentioned_no_walk(monkeypatch):
    module = _parsed(SIGNATURE_ONLY)
    visited = _counting_walks(monkeypatch)
    index = OpIndex.build(module.operation, Mentions.of(SIGNATURE_ONLY))
    assert visited == []
    assert _summary(index) == ({"main": []}, {})


def test_generic_form_and_bytes_are_counted():
    text = LATE.encode()
    # mhlo.sharding: the note, the argument, two ops; custom_call: the note, the op
    assert Mentions.of(text) == Mentions.of(LATE) == Mentions(4, 2)


def test_mentions_only_of_text_the_loader_parses():
    hlo_text = (TESTDATA / "torch_xla").glob("**/*.txt")
    some_hlo = next(p for p in hlo_text if formats.hlo.kind(p.read_text()) is not None)
    assert formats.mentions(some_hlo.read_text()) is None
    module = _parsed(LATE)
    assert formats.mentions(formats.save(module, "bytecode")) is None
    assert formats.mentions(LATE) == Mentions.of(LATE)


def test_an_interrupt_in_the_walk_reaches_the_caller_as_itself(monkeypatch):
    """The walk's visit guards itself (compat.walk's `raised`): a Ctrl-C is not jaxlib's
    RuntimeError and does not end the walk silently."""
    module = _parsed(LATE)

    def interrupted(op):
        raise KeyboardInterrupt

    monkeypatch.setattr(walker, "call_target", interrupted)
    with pytest.raises(KeyboardInterrupt):
        OpIndex.build(module.operation, Mentions.of(LATE))


# A dictionary alias used for two arguments: the text names `mhlo.sharding` once for both.
ALIASED = """\
#shard = {mhlo.sharding = "{devices=[2,4]<=[8]}"}
module {
  "func.func"() <{arg_attrs = [#shard, #shard],
      function_type = (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>):
    %0 = stablehlo.add %arg0, %arg1 {mhlo.sharding = "{devices=[4,2]<=[8]}"} : tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %0 {mhlo.sharding = "{replicated}"} : tensor<8x8xf32>
    "func.return"(%1) : (tensor<8x8xf32>) -> ()
  }) : () -> ()
}
"""

# The same name spelled with an escape.
ESCAPED = SIGNATURE_ONLY.replace(
    "stablehlo.add %arg0, %arg0 :",
    'stablehlo.add %arg0, %arg0 {"mhlo\\2Esharding" = "{replicated}"} :',
)


@pytest.mark.parametrize("text", [ALIASED, ESCAPED], ids=["alias", "escape"])
def test_text_that_can_name_a_sharding_without_spelling_it_gives_no_bound(text):
    """Counting would undercount here (found before the guard: the multiply of ALIASED kept
    its mhlo.sharding): the walk goes over every op, and every sharding is converted."""
    assert Mentions.of(text) is None
    assert Mentions.of(text.encode()) is None
    converted = convert(text, num_devices=8)
    assert "mhlo.sharding" not in converted
    assert converted.count("sdy.sharding = ") == (4 if text is ALIASED else 3)


def test_location_aliases_keep_the_bound():
    text = LATE.replace("module attributes", '#loc1 = loc("x.py":1:0)\nmodule attributes')
    assert Mentions.of(text) == Mentions.of(LATE)


UNEVEN = """\
func.func @main(%arg0: tensor<6x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"})
    -> (tensor<6x8xf32> {mhlo.sharding = "{replicated}"}) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
"""


@pytest.mark.parametrize("text", [LATE, SIGNATURE_ONLY])
def test_passes_that_change_nothing_leave_their_walk_to_the_next(text, monkeypatch):
    """The plugin's first passes (lift-callee-shardings, pad-uneven) on a program they leave
    as it is: pad-uneven's walk is import-sharding-groups' too."""
    from shardy_convert.ir.pipeline import run_pipeline
    from shardy_convert.passes import pipeline

    module = _parsed(text)
    visited = _counting_walks(monkeypatch)
    steps = pipeline.build(["lift-callee-shardings", "pad-uneven", "import-sharding-groups"])
    run_pipeline(module.operation, steps)
    assert len([n for n in visited if n > 1]) == 1


def test_a_pass_that_changes_the_module_leaves_a_new_walk_to_the_next(monkeypatch):
    """pad-uneven pads an uneven argument: import-sharding-groups walks again."""
    from shardy_convert.ir.pipeline import run_pipeline
    from shardy_convert.passes import pipeline

    module = _parsed(UNEVEN)
    visited = _counting_walks(monkeypatch)
    run_pipeline(module.operation, pipeline.build(["pad-uneven", "import-sharding-groups"]))
    assert "%arg0: tensor<8x8xf32>" in str(module)  # padded to GSPMD's 8 rows
    assert len([n for n in visited if n > 1]) == 2


@pytest.mark.parametrize(("lifts", "kept"), [(False, True), (True, False)])
def test_lift_callee_shardings_keeps_the_texts_mentions_when_it_lifts_nothing(lifts, kept):
    """The mentions count the text's `mhlo.sharding`s; a sharding lifted onto @main is one
    the text did not have, so they are forgotten only then."""
    from shardy_convert.ir.analyses import Analyses
    from shardy_convert.ir.pipeline import run_pipeline
    from shardy_convert.passes import pipeline

    callee = """\
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @f(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func private @f(%x: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
    -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}
"""
    text = callee if lifts else SIGNATURE_ONLY
    module = _parsed(text)
    key = ("mentions", module.operation)
    analyses = Analyses({key: Mentions.of(text)})
    before = str(module)
    run_pipeline(module.operation, pipeline.build(["lift-callee-shardings"]), analyses=analyses)
    assert (analyses.peek(key) is not None) == kept
    lifted = '@main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}'
    assert (lifted in str(module) and lifted not in before) if lifts else str(module) == before
