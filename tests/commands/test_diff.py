"""export-shardings, `to-gspmd` and `diff`: Shardy back to GSPMD, and semantic comparison.

The export is checked three ways: unit cases, the round-trip property (GSPMD -> convert ->
export keeps every func argument/result placement, for every graph of testdata/), and by
compiling exported modules with GSPMD on jaxlib's CPU client against the originals.
`diff` must call every respelling of a placement equal and locate every real change.
"""

from __future__ import annotations

import re
import warnings

import pytest
from click.testing import CliRunner

from shardy_convert import ShardyConvertError, ShardyConvertWarning, convert
from shardy_convert.cli.main import main
from shardy_convert.commands.batch import Job
from shardy_convert.commands.diff import diff as compare
from shardy_convert.commands.diff import normalize
from shardy_convert.converter import ConvertRequest, ToGspmdRequest, V2Request, run_passes, to_v2
from shardy_convert.converter import to_gspmd as export
from shardy_convert.formats import dump
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.sdy_attrs import sharding_from_attr as from_attr
from shardy_convert.ir.walker import sites
from shardy_convert.passes.export_shardings import ExportShardingsPass
from shardy_convert.passes.import_shardings import ImportShardingsPass
from shardy_convert.sharding.sdy import AxisRef, DimSharding, Mesh
from tests.conftest import TESTDATA, manifest, real_graphs
from tests.helpers import run

MATMUL = TESTDATA / "torch_xla" / "matmul_2x4.mlir"
TP_DUMP = TESTDATA / "torch_xla" / "tp_mlp_train.dump"
JAX = TESTDATA / "jax"


def converted(data: str | bytes, n: int | None = None) -> str | bytes:
    """`shardy-convert convert` of a module or dump, as the library does it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return apply(Job(ConvertRequest(ImportShardingsPass(num_devices=n))), data)


def exported(data: str | bytes) -> str | bytes:
    return apply(Job(ToGspmdRequest()), data)


def v2(text: str) -> str:
    """`shardy-convert v2`; its warning about lists with no iota form is another test's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ShardyConvertWarning)
        return apply(Job(V2Request()), text)


def apply(job: Job, data: str | bytes) -> str | bytes:
    """What the batch command writes for one input; raises its first error."""
    result, errors = job.apply(data.encode() if isinstance(data, str) else data, "input")
    if errors:
        raise errors[0]
    return result


# --- test data ------------------------------------------------------------------------------


def _entries(*kinds: str, ok: bool = True):
    for e in manifest():
        if e["kind"] in kinds and (e["expect"] == "ok" or not ok):
            yield pytest.param(e, id=e["path"])


GRAPHS = [pytest.param(e, graph, id=f"{e['path']}:{k}") for e, k, graph in real_graphs(ok=True)]
GSPMD_FILES = list(_entries("torch_xla_dump", "torch_xla_mlir", "jax_gspmd"))
ALL_GSPMD_FILES = list(_entries("torch_xla_dump", "torch_xla_mlir", "jax_gspmd", ok=False))
TWINS = [p for p in _entries("jax_gspmd") if p.values[0].get("twin")]  # maximal: no twin
CALLS_SHMAP_BODY = ("shard_map_full", "shard_map_partial")


def boundary(text: str | bytes) -> list[tuple]:
    """(kind, func, index, HloSharding) of every func argument and result."""
    with new_context() as ctx:
        module = parse_module(text, ctx)
        return [
            (s.kind, s.func_name, s.index, s.parse())
            for s in sites(module.operation)
            if s.kind in ("arg", "result")
        ]


# --- export-shardings: unit cases -----------------------------------------------------------


def test_pass_runs_by_its_registered_name_and_lists_its_description():
    shardy = (JAX / "mesh3d.shardy.mlir").read_text()
    text = run_passes(shardy, [ExportShardingsPass.NAME])
    assert "sdy." not in text
    assert boundary(text) == boundary(export(shardy))
    listed = CliRunner().invoke(main, ["list-passes"])
    assert listed.exit_code == 0, listed.output
    assert re.search(r"export-shardings\s+Replaces every `sdy.sharding`", listed.stdout)


def test_from_attr_reads_sub_axes_replicated_axes_and_inline_meshes():
    from jaxlib.mlir import ir

    text = '#sdy.sharding<mesh<["a"=6, "b"=2]>, [{"a":(2)3, ?}, {}], replicated={"b"}>'
    with new_context():
        sharding, mesh = from_attr(ir.Attribute.parse(text), {})
    assert mesh == Mesh((("a", 6), ("b", 2)))
    assert sharding.dims == (DimSharding((AxisRef("a", 2, 3),), is_closed=False), DimSharding())
    assert sharding.replicated == (AxisRef("b"),)


def test_gspmd_module_passes_through_unchanged_saying_so():
    text = MATMUL.read_text()
    with pytest.warns(ShardyConvertWarning, match="written as it is: it carries no Shardy"):
        assert export(text) is text


def test_export_then_convert_gives_the_same_shardy_module():
    shardy = (JAX / "mesh3d.shardy.mlir").read_text()
    back = converted(export(shardy), 8)
    assert compare(shardy, back).equal


def test_imported_form_is_a_located_error():
    shardy = (JAX / "mesh3d.shardy.mlir").read_text()
    imported = run_passes(shardy, ["sdy-import-pipeline"])
    with pytest.raises(ShardyConvertError, match=r"sdy\.\w+ has no GSPMD form") as info:
        export(imported)
    assert re.match(r"\d+:\d+: sdy\.", info.value.location)


def test_func_called_under_different_manual_axes_is_an_error():
    text = """
    sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>]
          out_shardings=[<@mesh, [{}]>] manual_axes={"x"} (%a: tensor<4xf32>) {
        %1 = func.call @body(%a) : (tensor<4xf32>) -> tensor<4xf32>
        sdy.return %1 : tensor<4xf32>
      } : (tensor<4xf32>) -> tensor<4xf32>
      %2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>]
          out_shardings=[<@mesh, [{}]>] manual_axes={"y"} (%a: tensor<4xf32>) {
        %3 = func.call @body(%a) : (tensor<4xf32>) -> tensor<4xf32>
        sdy.return %3 : tensor<4xf32>
      } : (tensor<4xf32>) -> tensor<4xf32>
      return %0, %2 : tensor<4xf32>, tensor<4xf32>
    }
    func.func private @body(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      return %arg0 : tensor<4xf32>
    }
    """
    with pytest.raises(
        ShardyConvertError, match=r"@body is called under different manual axes \({x} and {y}\)"
    ):
        export(text)


# --- export-shardings: round trip and compilation -------------------------------------------


@pytest.mark.parametrize(("entry", "graph"), GRAPHS)
def test_round_trip_keeps_every_argument_and_result_placement(entry, graph):
    back = export(converted(graph, entry["num_devices"]))
    assert "sdy." not in back
    assert boundary(back) == boundary(graph)


@pytest.mark.parametrize("entry", TWINS)
def test_export_of_jax_shardy_lowering_matches_its_gspmd_lowering(entry):
    gspmd = (TESTDATA / entry["path"]).read_text()
    back = export((TESTDATA / entry["twin"]).read_text())
    assert boundary(back) == boundary(gspmd)


COMPILED = [
    "torch_xla/matmul_2x4.mlir",
    "torch_xla/custom_device_ids_manual.mlir",
    "torch_xla/strided16.mlir",
    "jax/shard_map_partial.gspmd.mlir",
    "jax/shard_map_full.shardy.mlir",
]


@pytest.mark.slow
@pytest.mark.parametrize("path", COMPILED)
def test_exported_module_compiles_with_gspmd_to_the_same_program(path):
    from shardy_convert.commands.check import compare_programs, compile_module
    from shardy_convert.commands.check.compiled import execute
    from shardy_convert.commands.check.draws import random_inputs
    from shardy_convert.commands.check.values import agreements

    entry = next(e for e in manifest() if e["path"] == path)
    n = entry["num_devices"]
    text = (TESTDATA / path).read_text()
    original = (TESTDATA / entry["twin"]).read_text() if entry["kind"] == "jax_shardy" else text
    back = export(converted(text, n))
    a = compile_module(original, n, shardy=False)
    b = compile_module(back, n, shardy=False)
    report = compare_programs(a, b)
    assert report.ok, str(report)
    if a.signature.unrunnable():  # placements and costs compared; no values to run
        return
    inputs = random_inputs(a.signature, 0)
    differ = [p for p in agreements(execute(a, inputs), execute(b, inputs)) if not p.close]
    assert differ == [], [str(p) for p in differ]


# --- diff: equal spellings ------------------------------------------------------------------


@pytest.mark.parametrize("entry", ALL_GSPMD_FILES)
def test_v1_module_equals_its_v2_twin(entry):
    text = (TESTDATA / entry["path"]).read_text()
    result = compare(text, v2(text))
    assert result.equal, [str(d) for d in result.differences]
    assert result.placements > 0


@pytest.mark.parametrize("entry", GSPMD_FILES)
def test_gspmd_module_equals_its_conversion_and_its_round_trip(entry):
    text = (TESTDATA / entry["path"]).read_text()
    shardy = converted(text, entry["num_devices"])
    for other in (shardy, exported(shardy)):
        result = compare(text, other)
        assert result.equal, [str(d) for d in result.differences]


@pytest.mark.parametrize("entry", TWINS)
def test_jax_gspmd_lowering_vs_its_shardy_lowering(entry):
    gspmd = (TESTDATA / entry["path"]).read_text()
    shardy = (TESTDATA / entry["twin"]).read_text()
    assert compare(gspmd, shardy, inline=True).equal
    plain = compare(gspmd, shardy, ("g.mlir", "s.mlir"))
    if entry["case"] not in CALLS_SHMAP_BODY:
        assert plain.equal
        return
    # JAX's GSPMD lowering calls @shmap_body; its Shardy lowering inlines the body.
    assert "g.mlir:13:3: function @shmap_body: defined vs missing" in map(str, plain.differences)
    assert any("--inline" in note for note in plain.notes)


def test_replicated_spellings_are_equal():
    def module(sharding: str) -> str:
        return f"func.func @main(%a: tensor<4xf32> {{{sharding}}}) -> tensor<4xf32> {{\n" + (
            "  return %a : tensor<4xf32>\n}\n"
        )

    mesh = 'sdy.mesh @m = <["a"=4]>\n'
    spellings = [
        module('mhlo.sharding = ""'),
        module('mhlo.sharding = "{replicated}"'),
        mesh + module("sdy.sharding = #sdy.sharding<@m, [{}]>"),
    ]
    for other in spellings[1:]:
        assert compare(spellings[0], other).equal
        assert normalize(other) == normalize(spellings[0])


def test_axis_names_and_equivalent_meshes_are_equal():
    def module(mesh: str, a: str, b: str) -> str:
        return (
            f"sdy.mesh @mesh = {mesh}\n"
            f"func.func @main(%a: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {a}>}})"
            " -> tensor<8x8xf32> {\n"
            f"  %0 = sdy.sharding_constraint %a <@mesh, {b}> : tensor<8x8xf32>\n"
            "  return %0 : tensor<8x8xf32>\n}\n"
        )

    xy = module('<["x"=2, "y"=4]>', '[{"x"}, {"y"}]', '[{"y", ?}, {}]')
    ab = module(
        '<["_axis_0"=2, "_axis_1"=4]>', '[{"_axis_0"}, {"_axis_1"}]', '[{"_axis_1", ?}, {}]'
    )
    sub = module('<["a"=8]>', '[{"a":(1)2}, {"a":(2)4}]', '[{"a":(2)4, ?}, {}]')
    three = module('<["p"=2, "q"=2, "r"=2]>', '[{"p"}, {"q", "r"}]', '[{"q", "r", ?}, {}]')
    for other in (ab, sub, three):
        result = compare(xy, other)
        assert result.equal, [str(d) for d in result.differences]
        assert result.placements == 2
        assert normalize(other) == normalize(xy)


def test_text_and_bytecode_are_equal():
    text = MATMUL.read_text()
    bytecode = convert(text, emit="bytecode")
    assert compare(text, bytecode).equal
    assert normalize(bytecode) == normalize(text)


def test_module_without_shardy_form_is_compared_as_gspmd():
    text = (TESTDATA / "torch_xla" / "manual_escape.mlir").read_text()
    result = compare(text, v2(text), ("a.mlir", "b.mlir"))
    assert result.equal
    assert any("no Shardy form" in note for note in result.notes)


@pytest.mark.parametrize("entry", GSPMD_FILES)
def test_normalize_is_the_same_for_every_spelling(entry):
    text = (TESTDATA / entry["path"]).read_text()
    shardy = converted(text, entry["num_devices"])
    expected = normalize(text)
    for other in (v2(text), shardy, exported(shardy)):
        assert normalize(other) == expected
    assert "sdy." not in expected
    assert "loc(" not in expected


# --- diff: real differences, located --------------------------------------------------------


def test_one_changed_argument_placement_is_located():
    text = MATMUL.read_text()
    changed = text.replace('"{devices=[4,2]0,4,1,5,2,6,3,7}"', '"{devices=[4,2]<=[8]}"', 1)
    result = compare(text, changed, ("a.mlir", "b.mlir"))
    assert [str(d) for d in result.differences] == [
        "a.mlir:2:221: arg 2 of @main: {devices=[4,2]<=[2,4]T(1,0)} vs {devices=[4,2]<=[8]} "
        "(B: b.mlir:2:221): devices differ at 6 of 8 tiles: tile [0,1] on 4 vs 1, tile [1,0] on "
        "1 vs 2, tile [1,1] on 5 vs 3, tile [2,0] on 2 vs 4, ..."
    ]


def test_changed_constraint_in_a_dump_names_the_graph_and_the_dump_line():
    text = TP_DUMP.read_text()
    old = '@Sharding(%63) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7'
    assert text.count(old) == 1
    changed = text.replace(old, old.replace("0,4,1,5,2,6,3,7", "0,1,2,3,4,5,6,7"))
    line = text[: text.index(old)].count("\n") + 1
    result = compare(changed, converted(text, 8), ("a.dump", "b.dump"))
    (found,) = result.differences
    assert str(found).startswith(f"a.dump:graph 1:{line}:11: op 8 of @main (stablehlo.custom_call")
    assert found.a == "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"
    assert found.b == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"


def test_changed_sharding_inside_a_manual_computation_is_located():
    shardy = (JAX / "shard_map_partial.shardy.mlir").read_text()
    changed = shardy.replace('<@mesh, [{}, {"y"}]>', '<@mesh, [{"y"}, {}]>')
    result = compare(shardy, changed, ("a.mlir", "b.mlir"))
    texts = [str(d) for d in result.differences]
    assert any(t.startswith("a.mlir:10:12: op ") and "last_tile_dims={manual}" in t for t in texts)


def test_open_dims_are_part_of_the_placement():
    shardy = (JAX / "shard_map_partial.shardy.mlir").read_text()
    closed = shardy.replace(
        'in_shardings=[<@mesh, [{"x", ?}, {?}]>]', 'in_shardings=[<@mesh, [{"x"}, {}]>]'
    )
    result = compare(shardy, closed)
    assert result.differences
    assert all("unspecified_dims=[0,1]" in d.a for d in result.differences)


def test_changed_op_is_a_structural_difference():
    text = (JAX / "mesh3d.gspmd.mlir").read_text()
    changed = text.replace("stablehlo.add %1", "stablehlo.subtract %1", 1)
    result = compare(text, changed, ("a.mlir", "b.mlir"))
    assert [str(d) for d in result.differences] == [
        "a.mlir:5:10: op 3 of @main: stablehlo.add vs stablehlo.subtract (B: b.mlir:5:10)"
    ]


def test_graph_counts_differ():
    text = TP_DUMP.read_text()
    first = dump.graphs(text)[0].text
    result = compare(text, first, ("a.dump", "b.mlir"))
    assert "a.dump: graphs: 2 vs 1" in map(str, result.differences)


def test_unparsable_side_is_a_located_error():
    with pytest.raises(ShardyConvertError) as info:
        compare(MATMUL.read_text(), "func.func @main(", ("a.mlir", "b.mlir"))
    assert str(info.value).startswith("b.mlir:1:")


def test_normalize_changes_when_a_placement_changes():
    text = MATMUL.read_text()
    changed = text.replace('"{devices=[4,2]0,4,1,5,2,6,3,7}"', '"{devices=[4,2]<=[8]}"', 1)
    assert normalize(changed) != normalize(text)


def test_normalize_keeps_dump_headers():
    text = TP_DUMP.read_text()
    out = normalize(text)
    assert out.count(dump.BEGIN) == text.count(dump.BEGIN)
    assert out.splitlines()[:8] == text.splitlines()[:8]


# --- the commands ---------------------------------------------------------------------------


def test_cli_diff_equal_exits_0(tmp_path):
    twin = tmp_path / "v2.mlir"
    twin.write_text(to_v2(MATMUL.read_text()))
    result = run("diff", MATMUL, twin)
    assert result.exit_code == 0, result.output
    assert result.stdout == "EQUAL: 5 placements compared\n"


def test_cli_diff_different_exits_1_with_located_lines(tmp_path):
    changed = tmp_path / "changed.mlir"
    changed.write_text(
        MATMUL.read_text().replace('"{devices=[4,2]0,4,1,5,2,6,3,7}"', '"{replicated}"', 1)
    )
    result = run("diff", MATMUL, changed)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{MATMUL}:2:221: arg 2 of @main: {{devices=[4,2]<=[2,4]T(1,0)}} vs {{replicated}} "
        f"(B: {changed}:2:221)",
        "DIFFERENT: 1 difference",
    ]


def test_cli_diff_inline_makes_shard_map_twins_equal():
    a, b = JAX / "shard_map_full.gspmd.mlir", JAX / "shard_map_full.shardy.mlir"
    assert run("diff", a, b).exit_code == 1
    assert run("diff", a, b, "--inline").exit_code == 0


def test_cli_diff_reads_stdin_and_dumps():
    result = run("diff", TP_DUMP, "-", input=v2(TP_DUMP.read_text()))
    assert result.exit_code == 0, result.output


def test_cli_normalize_prints_one_canonical_form(tmp_path):
    shardy = tmp_path / "s.mlir"
    shardy.write_text(converted(MATMUL.read_text(), 8))
    first = run("diff", "--normalize", MATMUL)
    second = run("diff", shardy, "--normalize")
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert '"{devices=[4,2]<=[2,4]T(1,0)}"' in first.stdout


@pytest.mark.parametrize(
    "args", [("diff",), ("diff", MATMUL), ("diff", MATMUL, MATMUL, "--normalize"), ("diff", "-x")]
)
def test_cli_diff_usage_errors_exit_2(args):
    assert run(*args).exit_code == 2


def test_cli_diff_trouble_exits_2_located(tmp_path):
    """GNU diff's convention, which golden-file scripts read: 0 same, 1 different, 2 trouble
    (issue 19: a broken B exited 1, as if it were merely different)."""
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(\n")
    missing = run("diff", MATMUL, "no/such.mlir")
    assert missing.exit_code == 2  # a usage error, as for every command
    assert "'no/such.mlir' does not exist" in missing.stderr
    for args in ([MATMUL, bad], [bad, MATMUL], ["--normalize", bad]):
        broken = run("diff", *args)
        assert broken.exit_code == 2, args
        assert re.search(rf"{re.escape(str(bad))}:\d+:\d+: error: cannot parse", broken.stderr)
        assert "DIFFERENT" not in broken.stdout


def test_cli_to_gspmd_writes_gspmd_to_stdout():
    result = run("to-gspmd", JAX / "shard_map_partial.shardy.mlir")
    assert result.exit_code == 0, result.output
    assert "sdy." not in result.stdout
    assert "@SPMDFullToShardShape" in result.stdout


def test_cli_to_gspmd_keeps_dumps_and_mirrors_directories(tmp_path):
    shardy = tmp_path / "in"
    shardy.mkdir()
    (shardy / "tp.dump").write_text(converted(TP_DUMP.read_text(), 8))
    (shardy / "m.mlir").write_bytes(convert(MATMUL.read_text(), emit="bytecode"))
    result = run("to-gspmd", shardy, "-o", tmp_path / "out", "--emit", "text")
    assert result.exit_code == 0, result.output
    out = (tmp_path / "out" / "tp.dump").read_text()
    assert out.count(dump.BEGIN) == 2
    assert "sdy." not in out
    assert compare(TP_DUMP.read_text(), out).equal
    assert compare(MATMUL.read_text(), (tmp_path / "out" / "m.mlir").read_text()).equal


def test_cli_to_gspmd_failure_is_located_and_writes_nothing(tmp_path):
    imported = tmp_path / "imported.mlir"
    imported.write_text(
        run_passes((JAX / "mesh3d.shardy.mlir").read_text(), ["sdy-import-pipeline"])
    )
    out = tmp_path / "out.mlir"
    result = run("to-gspmd", imported, "-o", out)
    assert result.exit_code == 1
    assert re.search(rf"{re.escape(str(imported))}:\d+:\d+: sdy\.\w+: error: ", result.stderr)
    assert not out.exists()


# --- Shardy's round-trip form (portable artifacts, what a PJRT plugin receives) ------------

ROUND_TRIP_CASES = [
    pytest.param(MATMUL, False, id="matmul_2x4"),
    pytest.param(TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir", False, id="manual"),
    pytest.param(JAX / "shard_map_partial.gspmd.mlir", True, id="jax_shard_map"),
    pytest.param(JAX / "tuple_outputs.gspmd.mlir", False, id="jax_tuple_outputs"),
]


@pytest.mark.parametrize(("path", "inline"), ROUND_TRIP_CASES)
def test_portable_artifact_in_round_trip_form_equals_its_original(path, inline):
    original = path.read_text()
    portable = convert(original, emit="portable")
    assert b"xla.sdy.meshes" in portable  # Shardy as frontend attributes, not sdy ops
    result = compare(original, portable, ("a.mlir", "b.portable"), inline=inline)
    assert result.equal, "\n".join(map(str, result.differences))
    assert result.placements > 0


def test_moved_placement_in_a_portable_artifact_is_located():
    original = MATMUL.read_text()
    changed = original.replace('[4,2]0,4,1,5,2,6,3,7}"}', '[4,2]<=[8]}"}', 1)
    result = compare(original, convert(changed, emit="portable"), ("a.mlir", "b.portable"))
    assert [d.what for d in result.differences] == ["arg 2 of @main"]


def test_changed_constant_is_a_difference_wherever_constants_sit():
    original = MATMUL.read_text()
    assert "dense<0.000000e+00>" in original
    changed = original.replace("dense<0.000000e+00>", "dense<1.000000e+00>", 1)
    result = compare(original, convert(changed, emit="portable"))
    assert not result.equal
    assert "1.000000e+00" in str(result.differences[0])


def test_to_gspmd_exports_a_portable_artifact_in_round_trip_form():
    original = (TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir").read_text()
    portable = convert(original, emit="portable")
    text = export(portable, emit="text")
    assert "xla.sdy" not in text
    assert "sdy." not in text.replace("mhlo.sharding", "")
    assert "@SPMDFullToShardShape" in text
    assert compare(original, text).equal
    back = export(portable)
    assert back != portable
    assert compare(original, back).equal


def test_diff_of_a_bad_module_with_itself_is_an_error(tmp_path):
    bad = tmp_path / "np.mlir"
    bad.write_text(
        'module attributes {mhlo.num_partitions = "eight"} {\n'
        '  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]0,1}"}) '
        "-> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    result = run("diff", bad, bad)
    assert result.exit_code == 2  # trouble, not "different"
    assert "EQUAL" not in result.stdout
    assert f"{bad}:1:1: module attribute mhlo.num_partitions: error: " in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_cli_diff_of_a_module_and_its_portable_artifact_is_equal(tmp_path):
    """The issue's reproduction: `diff original.mlir converted.portable`."""
    portable = tmp_path / "converted.portable"
    result = CliRunner().invoke(
        main, ["convert", str(MATMUL), "--emit", "portable", "-o", str(portable)]
    )
    assert result.exit_code == 0, result.output
    same = run("diff", MATMUL, portable)
    assert same.exit_code == 0, same.output
    assert same.stdout == run("diff", MATMUL, MATMUL).stdout  # every placement, all equal
    assert normalize(portable.read_bytes()) == normalize(MATMUL.read_text())


def test_portable_artifacts_of_two_placements_differ(tmp_path):
    original = MATMUL.read_text()
    changed = original.replace('[4,2]0,4,1,5,2,6,3,7}"}', '[4,2]<=[8]}"}', 1)
    a, b = tmp_path / "a.portable", tmp_path / "b.portable"
    a.write_bytes(convert(original, emit="portable"))
    b.write_bytes(convert(changed, emit="portable"))
    result = run("diff", a, b)
    assert result.exit_code == 1
    assert re.search(rf"{re.escape(str(a))}:\d+:\d+: arg 2 of @main: ", result.stdout)
    assert result.stdout.endswith("DIFFERENT: 1 difference\n")
