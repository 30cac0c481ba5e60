"""formats/propagation_diff.py: the values two partitioners decided differently, matched
exactly through the op tags. The modules compared are XLA's own dumps of a real program
(testdata/torch_xla/matmul_2x4.mlir, compiled here on both partitioners) and, for the matching
rules, short excerpts of such dumps."""

from __future__ import annotations

import pytest

from shardy_convert import convert
from shardy_convert.formats.propagation_diff import compare
from shardy_convert.ir.op_tags import tag_ops
from shardy_convert.ir.parse import new_context, parse_module, print_module
from shardy_convert.sharding import parse
from shardy_convert.xla.options import compile_options
from shardy_convert.xla.propagation import compile_propagated
from tests.conftest import TESTDATA
from tests.helpers import needs_op_tags


def _decisions(text: str, n: int = 8):
    """(GSPMD's dump, Shardy's dump, the tag table) of a GSPMD module and its conversion."""
    with new_context() as ctx:
        module = parse_module(text, ctx)
        table = tag_ops(module.operation)
        tagged = print_module(module, "text", locations=True)
    converted = convert(tagged, num_devices=n)
    dumps = [
        compile_propagated(source, n, compile_options(n, shardy=shardy), shardy=shardy).hlo
        for source, shardy in ((tagged, False), (converted, True))
    ]
    return (*dumps, table)


@pytest.fixture(scope="module")
def matmul():
    return _decisions((TESTDATA / "torch_xla/matmul_2x4.mlir").read_text())


@needs_op_tags
def test_the_readme_matmul_diverges_at_the_multiply_and_what_follows(matmul):
    gspmd, shardy, table = matmul
    found = compare(gspmd, shardy)
    by_op = {table[d.op].name: d for d in found.divergences}
    assert set(by_op) == {
        "stablehlo.constant",
        "stablehlo.multiply",
        "stablehlo.maximum",
        "stablehlo.add",
        "stablehlo.dot_general",
    }
    multiply = by_op["stablehlo.multiply"]
    assert multiply.starts
    assert multiply.shape == "f32[8,8]"
    assert parse(multiply.gspmd) == parse("{devices=[4,2]0,4,1,5,2,6,3,7}")
    # as XLA prints it: jaxlib 0.12 prints Shardy's decisions in the named (V3) form
    assert parse(multiply.shardy) == parse("{devices=[1,2,4]<=[8] last_tile_dim_replicate}")
    assert table[by_op["stablehlo.add"].after[0]].name == "stablehlo.multiply"
    assert found.unmatched == ()
    assert found.matched == 8


@needs_op_tags
def test_a_program_compared_with_itself_has_no_divergence(matmul):
    gspmd, _, _ = matmul
    found = compare(gspmd, gspmd)
    assert found.divergences == ()
    assert found.matched == 8


HEAD = "ENTRY %main.1 (Arg_0.1: f32[8]) -> f32[8] {\n"


def _inst(name: str, op: str, sharding: str | None, tag: int = 1, shape: str = "f32[8]{0}"):
    """One instruction line as XLA prints it after propagation."""
    placed = "" if sharding is None else f", sharding={sharding}"
    return f'  %{name} = {shape} {op}{placed}, metadata={{op_name="sc.op.{tag}"}}\n'


def _module(*lines: str) -> str:
    return HEAD + "".join(lines) + "}\n"


def test_a_respelled_placement_is_no_divergence():
    a = _module(_inst("a", "negate(%x)", "{devices=[8]0,1,2,3,4,5,6,7}"))
    b = _module(_inst("b", "negate(%y)", "{devices=[8]<=[8]}"))
    assert compare(a, b).divergences == ()


def test_no_sharding_after_propagation_is_replicated():
    a = _module(_inst("a", "negate(%x)", "{replicated}"))
    b = _module(_inst("b", "negate(%y)", None))
    assert compare(a, b).divergences == ()


def test_tuple_elements_are_matched_by_index_not_by_order():
    """XLA prints a tuple's get-tuple-elements in no fixed order; one without a sharding has
    its element of the tuple's."""
    pair, tiled = "(f32[8]{0}, f32[8]{0})", "{devices=[8]<=[8]}"
    a = _module(
        _inst("t", "sort(%x, %y)", "{{devices=[8]<=[8]}, {replicated}}", 2, pair),
        _inst("g1", "get-tuple-element(%t), index=1", None, 2),
        _inst("g0", "get-tuple-element(%t), index=0", None, 2),
    )
    b = _module(
        _inst("t", "sort(%x, %y)", "{{devices=[8]<=[8]}, {devices=[8]<=[8]}}", 2, pair),
        _inst("g0", "get-tuple-element(%t), index=0", tiled, 2),
        _inst("g1", "get-tuple-element(%t), index=1", tiled, 2),
    )
    found = compare(a, b).divergences
    assert [(d.opcode, d.index) for d in found] == [("sort", None), ("get-tuple-element", 1)]
    assert found[1].after == (2,)


def test_an_instruction_only_one_side_made_is_unmatched_never_guessed():
    a = _module(_inst("a", "negate(%x)", "{replicated}"))
    b = _module(
        _inst("b", "negate(%y)", "{replicated}"), _inst("c", "copy(%b)", "{devices=[8]<=[8]}")
    )
    found = compare(a, b)
    assert found.divergences == ()
    assert found.unmatched == ("op 1: only Shardy's program has this copy f32[8]{0}",)
