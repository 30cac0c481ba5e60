"""`check`'s divergences (issue 32): for a graph whose two programs differ in cost, every value
the two propagations decided differently, by op and location, both shardings as XLA prints them
and as specs on the program's mesh, what each side's collectives for it cost, ranked; which
program is cheaper; `--suggest`'s pins as the mark_sharding lines a torch_xla user adds. Real
torch_xla graphs of testdata/."""

from __future__ import annotations

import json

from shardy_convert import convert
from shardy_convert.commands.check.cost import Cost
from shardy_convert.commands.check.divergence import cheaper, find_divergences
from shardy_convert.commands.check.program import read_converted, read_original
from shardy_convert.ir.parse import new_context, parse_module, print_module
from shardy_convert.passes.match_gspmd_propagation import MatchGspmdPropagationPass
from shardy_convert.sharding import parse
from tests.conftest import TESTDATA, real_graph
from tests.helpers import MATMUL, needs_op_tags, run

FSDP = TESTDATA / "torch_xla" / "fsdp.dump"  # both programs cost the same


def _json(*args) -> dict:
    result = run("check", "--format", "json", *args)
    return json.loads(result.stdout)


@needs_op_tags
def test_json_lists_every_divergence_of_a_graph_whose_programs_differ_in_cost():
    graph = _json(MATMUL)["graphs"][0]
    found = graph["divergences"]
    assert {d["op"] for d in found} == {
        "stablehlo.multiply",
        "stablehlo.dot_general",
        "stablehlo.maximum",
        "stablehlo.add",
    }
    extra = [d["collective_bytes"]["shardy"] - d["collective_bytes"]["gspmd"] for d in found]
    assert extra == sorted(extra, reverse=True)  # ranked by what Shardy spends beyond GSPMD
    multiply = next(d for d in found if d["op"] == "stablehlo.multiply")
    assert multiply["location"] == "6:10"  # line 6 of the module, where the op is
    assert multiply["shape"] == "f32[8,8]"
    assert multiply["bytes"] == 256
    # as XLA prints them (jaxlib 0.12 prints Shardy's in its named form): by placement
    assert parse(multiply["gspmd"]) == parse("{devices=[4,2]0,4,1,5,2,6,3,7}")
    assert parse(multiply["shardy"]) == parse("{devices=[1,2,4]<=[8] last_tile_dim_replicate}")
    # the mesh file beside the example names the axes: Mesh(range(8), (2, 4), ('x', 'y'))
    assert multiply["gspmd_spec"] == "('y', 'x')"
    assert multiply["shardy_spec"] == "(None, 'x')"
    assert multiply["collective_bytes"]["shardy"] > multiply["collective_bytes"]["gspmd"]
    assert multiply["starts"]
    assert (
        multiply["pin"]
        == "xs.mark_sharding(<value>, mesh, ('y', 'x'))  # stablehlo.multiply at 6:10"
    )
    assert graph["cheaper"] in ("mixed", "GSPMD")  # GSPMD moves fewer bytes
    assert graph["unmatched_values"] == []


def test_json_lists_none_where_the_two_programs_cost_the_same():
    graphs = _json(FSDP)["graphs"]
    assert graphs
    assert all(g["divergences"] == [] for g in graphs)
    assert all(g["cheaper"] == "same" for g in graphs)


@needs_op_tags
def test_suggest_prints_the_pins_as_mark_sharding_lines():
    result = run("check", "--suggest", MATMUL)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("  pins that give GSPMD's program (--suggest):")
    assert lines[at + 1 : at + 4] == [
        "    xs.mark_sharding(<value>, mesh, ('y', 'x'))  # stablehlo.multiply at 6:10",
        "    xs.mark_sharding(<value>, mesh, (None, 'y'))  # stablehlo.maximum at 7:10",
        "    xs.mark_sharding(<value>, mesh, ('y', 'x'))  # stablehlo.add at 8:10",
    ]
    assert "  values sharded differently: 4 of 8 compared" in lines


@needs_op_tags
def test_the_pinned_program_has_no_divergence_left():
    """What a torch_xla user gets who adds the suggested lines: mark_sharding writes a
    `@Sharding` call on the value, as the pass does; the program dumped again diverges
    nowhere."""
    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    with new_context() as ctx:
        module = parse_module(graph, ctx)
        MatchGspmdPropagationPass(num_devices=8).run(module.operation)
        pinned = print_module(module, "text")
    for text, left in ((graph, True), (pinned, False)):
        again = lambda t: convert(t, num_devices=8)  # noqa: E731
        found = find_divergences(read_original(text), again, read_converted(again(text)))
        assert bool(found.found) is left


@needs_op_tags
def test_the_divergences_of_a_dump_graph_are_located_in_the_dump():
    result = run("check", "--format", "json", TESTDATA / "torch_xla" / "matmul_2x4.dump")
    found = json.loads(result.stdout)["graphs"][0]["divergences"]
    multiply = next(d for d in found if d["op"] == "stablehlo.multiply")
    first = int(multiply["location"].split(":")[0])
    text = (TESTDATA / "torch_xla" / "matmul_2x4.dump").read_text().splitlines()
    assert "stablehlo.multiply" in text[first - 1]


def test_which_program_is_cheaper():
    def cost(collective: int, temp: int, remats: int = 0) -> Cost:
        from shardy_convert.commands.check.cost import Collectives

        return Cost({"all-gather": Collectives(1, collective)}, temp, rematerializations=remats)

    assert cheaper(cost(10, 10), cost(10, 10)) == "same"
    assert cheaper(cost(10, 10), cost(20, 10)) == "GSPMD"
    assert cheaper(cost(20, 10), cost(10, 9)) == "Shardy"
    assert cheaper(cost(10, 20), cost(20, 10)) == "mixed"
    assert cheaper(cost(10, 10, 0), cost(10, 10, 6)) == "GSPMD"
    assert cheaper(None, cost(1, 1)) is None


def test_each_jaxlib_lists_the_divergences_or_says_why_it_cannot():
    from shardy_convert.ir.compat import op_locations_settable

    result = run("check", "--format", "json", MATMUL)
    graph = json.loads(result.stdout)["graphs"][0]
    if op_locations_settable():
        assert graph["divergences"]
    else:
        assert graph["divergences"] is None  # not known, never "none"
        text = run("check", MATMUL).stdout
        assert "values sharded differently: not listed: jaxlib" in text
