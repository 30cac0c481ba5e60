"""`opt` takes mlir-opt pipeline strings and `list-passes` lists every pass `opt` accepts."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from shardy_convert.errors import UsageError
from shardy_convert.passes import pipeline
from shardy_convert.passes.import_shardings import ImportShardingsPass
from shardy_convert.sharding.mesh_fit import UserMesh
from tests.conftest import TESTDATA
from tests.helpers import MATMUL, run


def test_pipeline_string_with_anchor_options_and_nesting():
    text = (
        "builtin.module(v1-to-v2, import-shardings{num-devices=8 mesh=data=2,model=4}, "
        "import-custom-calls, func.func(sdy-constant-or-scalar-merger), sdy-lift-inlined-meshes)"
    )
    result = run("opt", MATMUL, "-p", text)
    assert result.exit_code == 0, result.output
    assert 'sdy.mesh @mesh = <["data"=2, "model"=4]>' in result.stdout
    assert "mhlo.sharding" not in result.stdout


def test_pipeline_options_override_the_command_line_options():
    result = run("opt", MATMUL, "-p", "import-shardings{mesh=a=2,b=4}", "--mesh", "x=2,y=4")
    assert result.exit_code == 0, result.output
    assert 'sdy.mesh @mesh = <["a"=2, "b"=4]>' in result.stdout


def test_every_unknown_pass_is_reported_at_once_as_a_usage_error():
    result = run("opt", MATMUL, "-p", "builtin.module(v1-to-v2, no-such-pass, func.func(nor-this))")
    assert result.exit_code == 2
    assert "unknown passes: no-such-pass, nor-this" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("import-shardings{devices=8}", "pass import-shardings has no option devices"),
        (
            "import-shardings{num-devices=eight}",
            'option num-devices must be a positive count, not "eight"',
        ),
        ("import-shardings{mesh=a}", 'got "a"'),
        ("func.func(import-shardings)", "pass import-shardings runs on the whole module"),
        ("sdy-close-shardings{no-such=1}", "no such option no-such"),
        ("v1-to-v2,(", "expected a pass name at column 10"),
        ("import-shardings{num-devices=8", "expected '}'"),
    ],
)
def test_bad_pipelines_are_usage_errors(text, message):
    result = run("opt", MATMUL, "-p", text)
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_a_bad_option_of_a_shardy_pipeline_is_one_usage_error_saying_why():
    """MLIR's option parser writes its reason for a pass *pipeline* straight to file
    descriptor 2 (not into the exception): it once leaked there as a second, unlocated line
    and the error itself said only "failed to add"."""
    import subprocess
    import sys

    pipe = "sdy-propagation-pipeline{nonsense=true}"
    command = [sys.executable, "-m", "shardy_convert", "opt", str(MATMUL), "-p", pipe]
    child = subprocess.run(command, capture_output=True, text=True, check=False)
    assert child.returncode == 2, child.stderr
    assert child.stderr.splitlines()[-1].startswith(f"Error: {pipe}: "), child.stderr
    assert "<Pass-Options-Parser>" not in child.stderr
    # The reason is whatever this MLIR gives: jaxlib 0.10.2's writes "no such option nonsense"
    # to fd 2; 0.7.1's writes nothing, so its exception ("failed to add ...") is all there is.
    assert _mlir_reason(pipe) in child.stderr


def _mlir_reason(pipe: str) -> str:
    from jaxlib.mlir import passmanager

    from shardy_convert.cpp_stderr import cpp_stderr
    from shardy_convert.ir.parse import new_context

    with new_context(), cpp_stderr() as leaked:
        try:
            passmanager.PassManager.parse(f"builtin.module({pipe})")
        except ValueError as e:
            error = str(e)
        else:
            pytest.fail(f"MLIR accepted {pipe}")
    said = "".join(leaked).strip() or error
    return said.splitlines()[0].removeprefix("<Pass-Options-Parser>: ")


def test_warnings_name_the_input_like_convert(tmp_path):
    path = tmp_path / "plain.mlir"
    path.write_text(
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  return %arg0 : tensor<8xf32>\n}\n"
    )
    result = run("opt", path, "-p", "import-shardings")
    assert result.exit_code == 0, result.output
    assert f"{path}: warning: no sharding, mhlo.num_partitions" in result.stderr


def test_a_dump_is_refused_saying_so():
    """opt runs on one module; a dump once failed as "expected operation name in quotes"."""
    dump = TESTDATA / "torch_xla" / "matmul_2x4.dump"
    result = run("opt", dump, "-p", "v1-to-v2")
    assert result.exit_code == 1, result.output
    assert f"{dump}: error: a torch_xla dump (1 graph): opt runs on one module" in result.stderr
    assert result.stdout == ""


def test_a_malformed_dump_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "zero.dump"
    path.write_text("TensorsGraphInfo:\n  Python Frames:\n")
    result = run("opt", path, "-p", "v1-to-v2")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"{path}:1:1: error: no ## BEGIN_GRAPH in this dump")


def test_a_shardy_pass_nested_where_mlir_would_abort_is_refused():
    """MLIR aborts the process when some module-only Shardy passes are nested under
    func.func; the check runs in a child, so the command still reports a usage error."""
    result = run("opt", MATMUL, "-p", "func.func(sdy-remove-sharding-groups)")
    assert result.exit_code == 2, result.output
    assert "restricted to 'builtin.module'" in result.stderr


def test_list_passes_lists_exactly_what_opt_accepts():
    result = run("list-passes")
    assert result.exit_code == 0
    ours = re.findall(r"^([a-z0-9-]+)(?:\{.*\})?$", result.stdout, re.M)
    shardy = re.findall(r"^  ([a-z.]+\()?((?:xla-)?sdy-[a-z0-9-]+)\)?$", result.stdout, re.M)
    names = [name for _, name in shardy]
    assert ours == list(pipeline.PASSES)
    assert {"sdy-import-pipeline", "sdy-lift-inlined-meshes", "sdy-close-shardings"} <= set(names)
    assert "xla-sdy-round-trip-import-shardy-attrs" in names
    for name in ours:
        assert type(pipeline.parse(name)[0]).NAME == name
    for anchor, name in shardy:  # as listed: `name`, or `func.func(name)`
        assert str(pipeline.parse(f"{anchor}{name}{')' if anchor else ''}")[0]) in (
            name,
            f"{anchor}{name})",
        )
    with pytest.raises(UsageError, match="unknown pass: canonicalize"):
        pipeline.parse("canonicalize")  # registered in jaxlib, but not Shardy's: not listed


# Every option of import-shardings, with a value none of them has by default.
GIVEN = {
    "num_devices": 8,
    "fallback_devices": 4,
    "mesh": (("x", 8),),
    "mesh_device_ids": (1, 0, 2, 3, 4, 5, 6, 7),
    "meshes": (UserMesh((("a", 2), ("b", 4)), label="Mesh((2, 4))"),),
    "allow_spmd_sharding_propagation_to_parameters": (True, False),
    "allow_spmd_sharding_propagation_to_output": False,
    "strict": True,
}


def test_given_covers_every_option_of_import_shardings():
    assert set(GIVEN) == {f.name for f in fields(ImportShardingsPass)}


def test_match_gspmd_boundary_compiles_as_the_importer_reads():
    """The conversion's match-gspmd-boundary takes every option it shares with its
    import-shardings from it (`like`): a field added to both and forgotten fails here."""
    from shardy_convert.passes.match_gspmd_boundary import MatchGspmdBoundaryPass

    importer = ImportShardingsPass(**GIVEN)
    own = {"compile_options": b"\x1a\x02\x28\x08", "boundary_cache": "/cache"}
    first, groups, second, *rest = pipeline.conversion(importer, (MatchGspmdBoundaryPass(**own),))
    assert type(groups).NAME == "import-sharding-groups"  # it reads what import-shardings drops
    assert second is importer
    assert [type(p).NAME if not isinstance(p, str) else p for p in rest] == list(
        pipeline.CONVERT_PIPELINE[2:]
    )
    shared = {f.name for f in fields(first)} & set(GIVEN)
    assert shared
    assert {k: getattr(first, k) for k in shared} == {k: GIVEN[k] for k in shared}
    assert {k: getattr(first, k) for k in own} == own
    assert shared | set(own) == {f.name for f in fields(first)}


def test_match_gspmd_propagation_compiles_as_the_importer_reads():
    """match-gspmd-propagation, after the boundary's pass, takes what it shares with the
    import from it too."""
    from shardy_convert.passes.match_gspmd_boundary import MatchGspmdBoundaryPass
    from shardy_convert.passes.match_gspmd_propagation import MatchGspmdPropagationPass

    importer = ImportShardingsPass(**GIVEN)
    own = {"compile_options": b"\x1a\x02\x28\x08", "max_rounds": 3}
    before = (MatchGspmdBoundaryPass(), MatchGspmdPropagationPass(**own))
    boundary, propagation, *_ = pipeline.conversion(importer, before)
    assert type(boundary).NAME == "match-gspmd-boundary"
    shared = {f.name for f in fields(propagation)} & set(GIVEN)
    assert {k: getattr(propagation, k) for k in shared} == {k: GIVEN[k] for k in shared}
    assert {k: getattr(propagation, k) for k in own} == own
    assert shared | set(own) == {f.name for f in fields(propagation)}


def test_options_in_the_pipeline_text_are_typed_and_win_over_the_defaults():
    text = (
        "import-shardings{strict=false allow-spmd-sharding-propagation-to-output=1,0 "
        "num-devices=2 mesh=a=2},import-custom-calls"
    )
    got, other = pipeline.parse(text, defaults={**GIVEN, "not_an_option": 1})
    assert isinstance(got, ImportShardingsPass)
    assert got.strict is False
    assert got.allow_spmd_sharding_propagation_to_output == (True, False)
    assert (got.num_devices, got.mesh) == (2, (("a", 2),))
    assert got.fallback_devices == GIVEN["fallback_devices"]  # not in the text: the default
    assert type(other).NAME == "import-custom-calls"
    assert other == type(other)()  # it takes none of the defaults: it has no such field


def test_list_passes_shows_what_each_option_takes():
    result = run("list-passes")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("import-shardings{"))
    assert "strict=BOOL" in line
    assert "num-devices=N" in line
    assert "mesh=NAME=SIZE,..." in line
    assert "allow-spmd-sharding-propagation-to-output=BOOL[,BOOL...]" in line


LIT = TESTDATA.parent / "tests" / "lit"


@pytest.mark.parametrize(
    ("case", "passes", "split"),
    [
        (MATMUL, "import-shardings,import-custom-calls", []),
        (LIT / "export_shardings.mlir", "export-shardings", ["--split-input-file"]),
    ],
)
def test_output_file_holds_what_stdout_gets(tmp_path, case, passes, split):
    """`-o FILE` as mlir-opt's: the whole output (every `// -----` case), written once."""
    printed = run("opt", case, "-p", passes, *split)
    assert printed.exit_code == 0, printed.output
    out = tmp_path / "out.mlir"
    written = run("opt", case, "-p", passes, *split, "-o", out)
    assert written.exit_code == 0, written.output
    assert written.stdout == ""
    assert out.read_text() == printed.stdout
    assert out.read_text().count("// -----\n") == case.read_text().count("// -----\n")


def test_output_file_is_not_written_when_a_case_fails(tmp_path):
    case = LIT / "import_custom_calls_errors.mlir"
    out = tmp_path / "out.mlir"
    passes = "import-shardings,import-custom-calls"
    result = run("opt", case, "-p", passes, "--split-input-file", "-o", out)
    assert result.exit_code == 1
    assert "error" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
