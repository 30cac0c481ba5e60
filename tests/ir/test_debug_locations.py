"""ir/debug_locations.py: torch_xla's pretty debug locations (`XLA_HLO_DEBUG=1`) in the form
MLIR's parser reads, every line of the input where it was. The pieces below are the forms
torch_xla 2.9 printed for the README's matmul; e2e/test_pins.py traces that program whole with
XLA_HLO_DEBUG=1 and converts and checks what torch_xla printed."""

from __future__ import annotations

import pytest

from shardy_convert.ir.debug_locations import is_pretty, parseable
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.walker import funcs

PRETTY = (
    """\
#loc1 = /site-packages/torch_xla/distributed/spmd/xla_sharding.py:659:0
#loc9 = "mark_sharding"(#loc1)
#loc2 = /tmp/model.py:8:0
#loc10 = "<module>"(#loc2)
#loc17 = #loc9
 at #loc10
module @IrToHlo.18 {
  func.func @main(%arg0: T "xla__device_data"(#loc17), %arg1: T {A} "x"(#loc17)) -> T {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<8x8xf32> "aten__mul.1/aten__mul"(#loc14)
    %1 = stablehlo.reduce(%0 init: %arg1) across dimensions = [] : SIGNATURE
     reducer(%a: tensor<8x8xf32> [unknown], %b: tensor<8x8xf32> [unknown])  {
      %2 = stablehlo.add %a, %b : tensor<8x8xf32> "aten__sum"(#loc14)
      stablehlo.return %2 : tensor<8x8xf32> [unknown]
    } "aten__sum"(#loc14)
    return %1 : tensor<8x8xf32> [unknown]
  } [unknown]
} [unknown]
#loc = [unknown]
#loc3 = /tmp/model.py:11:0
#loc14 = "<module>"(#loc3)
""".replace(" T", " tensor<8x8xf32>")
    .replace("{A}", '{mhlo.sharding = "{replicated}"}')
    .replace("SIGNATURE", "(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>")
)


def test_the_pretty_form_is_told_from_the_ordinary_one():
    assert is_pretty(PRETTY)
    ordinary = 'func.func @f() {\n  return loc(#loc1)\n}\n#loc1 = loc("x.py":1:0)\n'
    assert not is_pretty(ordinary)
    assert parseable(ordinary) is ordinary


def test_it_parses_and_keeps_every_line_where_it_was():
    text = parseable(PRETTY)
    lines, before = text.splitlines(), PRETTY.splitlines()
    for k, line in enumerate(before):  # each op where it was: errors point into the file
        if line.lstrip().startswith(("%", "func.func", "stablehlo.return", "return")):
            assert lines[k].split()[:2] == line.split()[:2], k
    assert lines[8].startswith("    %0 = stablehlo.multiply %arg0, %arg1 : tensor<8x8xf32> loc(")
    assert "reducer(%a: tensor<8x8xf32> loc(unknown), %b: tensor<8x8xf32> loc(unknown))" in text
    with new_context() as ctx:
        module = parse_module(PRETTY, ctx)  # the reader runs before every parse
        (main,) = funcs(module.operation)
        multiply = main.regions[0].blocks[0].operations[0]
    assert str(multiply.location) == (
        'loc("aten__mul.1/aten__mul"("<module>"("/tmp/model.py":11:0)))'
    )


@pytest.mark.parametrize(
    ("alias", "parsed"),
    [
        ("#loc2 = /tmp/model.py:8:0", '#loc2 = loc("/tmp/model.py":8:0)'),
        ('#loc9 = "mark_sharding"(#loc1)', '#loc9 = loc("mark_sharding"(#loc1))'),
        ('#loc5 = "named"', '#loc5 = loc("named")'),
        ("#loc = [unknown]", "#loc = loc(unknown)"),
        ("#loc6 = [#loc1, #loc2]", "#loc6 = loc(fused[#loc1, #loc2])"),
    ],
)
def test_each_alias_form(alias, parsed):
    text = parseable(f"{alias}\nmodule {{\n}} [unknown]\n")
    assert parsed in text.splitlines()


def test_a_call_site_over_two_lines_becomes_one_and_its_second_line_stays_empty():
    text = parseable("#loc17 = #loc9\n at #loc10\nmodule {\n} [unknown]\n")
    lines = text.splitlines()
    assert lines[:2] == ["", ""]
    assert "#loc17 = loc(callsite(#loc9 at #loc10))" in lines
