"""The command line through click's runner: outputs, exit codes (0 ok, 1 failure, 2 usage)."""

from __future__ import annotations

import pytest

from shardy_convert import __version__
from shardy_convert.formats import dump
from tests.conftest import TESTDATA
from tests.helpers import ESCAPE, MATMUL, run, said_same

DUMP = TESTDATA / "torch_xla" / "linear_retrace.dump"


def test_version_says_what_it_runs_on():
    """For bug reports: jax/jaxlib (and whether they are in the supported range, the bounds of
    pyproject.toml), StableHLO and Shardy (issue 19)."""
    from importlib import metadata

    from jaxlib.mlir.dialects import stablehlo

    from shardy_convert.cli.version import SUPPORTED

    result = run("--version")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    low, high = SUPPORTED
    jax, jaxlib = metadata.version("jax"), metadata.version("jaxlib")
    assert lines[0] == f"shardy-convert, version {__version__}"
    assert lines[1] == f"jax {jax}, jaxlib {jaxlib} (supported {low} to {high})"
    assert lines[2].startswith(f"StableHLO {stablehlo.get_current_version()} ")
    assert lines[3].startswith(f"Shardy: built into jaxlib {jaxlib}")
    pyproject = (TESTDATA.parent / "pyproject.toml").read_text()
    assert f'"jax>={low},<={high}"' in pyproject
    assert f'"jaxlib>={low},<={high}"' in pyproject


def test_only_version_imports_jaxlib_at_start_up():
    import subprocess
    import sys

    code = (
        "import sys; from shardy_convert.cli.main import main\n"
        "try: main([sys.argv[1]])\nexcept SystemExit: pass\n"
        "print('jaxlib' in sys.modules)"
    )
    for flag, imported in (("--help", "False"), ("--version", "True")):
        out = subprocess.run([sys.executable, "-c", code, flag], capture_output=True, text=True)
        assert out.stdout.splitlines()[-1] == imported, (flag, out.stdout, out.stderr)


# What `convert` of StableHLO text must not import (cold start, issue 33): the other commands,
# XLA's machinery and HLO readers, the full sharding grammar (every string of strided16.dump
# takes the parser's fast path) and the passes a conversion does not run.
_NOT_ON_THE_CONVERT_PATH = (
    "jax",
    "shardy_convert.cli.check",
    "shardy_convert.cli.diff",
    "shardy_convert.cli.inspect",
    "shardy_convert.cli.opt",
    "shardy_convert.cli.plugin_wrapper",
    "shardy_convert.commands.check",
    "shardy_convert.commands.inspect",
    "shardy_convert.plugin",
    "shardy_convert.xla",
    "shardy_convert.formats.hlo_named",
    "shardy_convert.formats.hlo_proto",
    "shardy_convert.formats.protowire",
    "shardy_convert.sharding.gspmd.lexer",
    "shardy_convert.sharding.gspmd.v1_v2",
    "shardy_convert.sharding.gspmd.v3",
    "shardy_convert.sharding.named",
    "shardy_convert.passes.v1_to_v2",
    "shardy_convert.passes.export_shardings",
    "shardy_convert.passes.match_gspmd_boundary",
    "shardy_convert.passes.match_gspmd_propagation",
)


def test_convert_imports_only_what_it_runs(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from shardy_convert.cli.main import main\n"
        "try: main(sys.argv[1:])\nexcept SystemExit as e: assert not e.code, e.code\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    dump_path = TESTDATA / "torch_xla" / "strided16.dump"
    args = ["convert", str(dump_path), "-o", str(tmp_path / "out.mlir")]
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    imported = out.stdout.split()
    assert "shardy_convert.converter" in imported  # it converted, in this process
    unwanted = [
        m for m in imported for p in _NOT_ON_THE_CONVERT_PATH if m == p or m.startswith(p + ".")
    ]
    assert unwanted == []


def test_convert_module_to_stdout():
    result = run("convert", MATMUL)  # on the mesh recorded beside it: Mesh(..., ("x", "y"))
    assert result.exit_code == 0, result.output
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in result.stdout
    assert "mhlo.sharding" not in result.stdout


def test_convert_with_mesh_names():
    result = run("convert", MATMUL, "--mesh", "data=2,model=4")
    assert result.exit_code == 0, result.output
    assert '#sdy.sharding<@mesh, [{"data"}, {"model"}]>' in result.stdout


def test_convert_dump_keeps_headers_and_converts_every_graph(tmp_path):
    out = tmp_path / "out.dump"
    result = run("convert", DUMP, "-o", out)
    assert result.exit_code == 0, result.output
    text = out.read_text()
    original = DUMP.read_text()
    assert text.count(dump.BEGIN) == original.count(dump.BEGIN) > 1
    assert text.count("Graph Hash:") == original.count("Graph Hash:")
    assert "mhlo.sharding" not in text
    assert text.splitlines()[:8] == original.splitlines()[:8]


def test_failure_is_located_and_writes_nothing(tmp_path):
    out = tmp_path / "out.dump"
    out.write_text("old")
    result = run("convert", ESCAPE, "-o", out)
    assert result.exit_code == 1
    assert f"{ESCAPE}:graph 0:24:5: func.return: error: a manual value escapes" in result.stderr
    assert out.read_text() == "old"


def test_batch_converts_good_inputs_and_lists_bad_ones(tmp_path):
    result = run("convert", MATMUL, ESCAPE, DUMP, "-o", tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / MATMUL.name).exists()
    assert (tmp_path / DUMP.name).exists()
    assert not (tmp_path / ESCAPE.name).exists()
    assert "2 of 3 inputs converted" in result.stderr


def test_directory_input_mirrors_the_tree(tmp_path):
    result = run("convert", TESTDATA / "jax", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "shard_map_full.gspmd.mlir").exists()


def test_stdin_and_bytecode_round_trip():
    result = run("convert", "-", "--emit", "bytecode", input=MATMUL.read_bytes())
    assert result.exit_code == 0
    assert result.stdout_bytes.startswith(b"ML\xefR")
    back = run("convert", "-", "--emit", "text", input=result.stdout_bytes)
    assert back.exit_code == 0
    assert "sdy.mesh @mesh" in back.stdout


def test_v2_rewrites_lists_only():
    result = run("v2", MATMUL)
    assert result.exit_code == 0
    assert '"{devices=[4,2]<=[2,4]T(1,0)}"' in result.stdout
    assert "sdy." not in result.stdout


def test_bad_mesh_is_a_conversion_error():
    result = run("convert", MATMUL, "--mesh", "data=3,model=2")
    assert result.exit_code == 1
    assert "the shardings say 8, the mesh data=3,model=2 says 6" in result.stderr


@pytest.mark.parametrize(
    "args",
    [("convert",), ("convert", MATMUL, "--emit", "pdf"), ("convert", MATMUL, "--num-devices", "0")],
)
def test_usage_errors_exit_2(args):
    assert run(*args).exit_code == 2


def test_missing_file_is_a_usage_error():
    result = run("convert", "no/such/file.mlir")
    assert result.exit_code == 2
    assert "'no/such/file.mlir' does not exist" in result.stderr


def test_opt_runs_named_passes_and_rejects_unknown_ones():
    result = run("opt", MATMUL, "-p", "v1-to-v2,import-shardings")
    assert result.exit_code == 0, result.output
    assert "sdy.sharding" in result.stdout
    bad = run("opt", MATMUL, "-p", "v1-to-v2,no-such-pass,nor-this")
    assert bad.exit_code == 2
    assert "unknown passes: no-such-pass, nor-this" in bad.stderr


def test_list_passes_prints_every_pass():
    result = run("list-passes")
    assert result.exit_code == 0
    for name in ("v1-to-v2", "import-shardings", "import-custom-calls"):
        assert name in result.stdout


def test_check_reports_same_program():
    dump = TESTDATA / "torch_xla" / "matmul_2x4.dump"
    result = run("check", dump)
    assert result.exit_code == 0, result.output
    assert said_same(result.stdout, f"{dump}:graph 0", "4 parameters, 1 output on 8 devices")


def test_emit_portable_artifact_then_read_it_back(tmp_path):
    from shardy_convert.formats import module as formats

    out = tmp_path / "matmul.portable"
    result = run("convert", MATMUL, "--emit", "portable", "--target-version", "1.12.0", "-o", out)
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert formats.detect(data) == "portable"
    assert formats.portable_version(data) == "1.12.0"
    assert b"xla.sdy.meshes" in data
    text = run("convert", out, "--emit", "text")
    assert text.exit_code == 0, text.output
    assert 'xla.sdy.sharding = "#sdy.sharding<@mesh' in text.stdout


def test_jobs_convert_a_batch_in_worker_processes(tmp_path):
    result = run("convert", TESTDATA / "torch_xla", "-o", tmp_path, "--jobs", "2")
    assert result.exit_code == 1  # manual_escape has no Shardy form
    assert "manual_escape.dump:graph 0:24:5" in result.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert "transformer_block.dump" in written
    assert "manual_escape.dump" not in written
    serial = run("convert", TESTDATA / "torch_xla" / "transformer_block.dump")
    assert (tmp_path / "transformer_block.dump").read_text() == serial.stdout


def test_unwritable_output_is_a_located_failure(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run("convert", MATMUL, "-o", blocker / "out.mlir")
    assert result.exit_code == 1
    assert f"{blocker / 'out.mlir'}: error: cannot write" in result.stderr
    assert blocker.read_text() == "not a directory"
