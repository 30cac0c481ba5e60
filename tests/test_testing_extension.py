"""shardy_convert.testing's syrupy extensions end to end: a fresh pytest project (pytester)
with one test that keeps a torch_xla program from testdata/ as a golden file. The snapshot is
written on `--snapshot-update`, passes as it is and respelled (V1 as V2, the Shardy
conversion), and fails with `diff`'s located line once a tile moves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTDATA = Path(__file__).resolve().parent.parent / "testdata" / "torch_xla"
V1 = "{devices=[4,2]0,4,1,5,2,6,3,7}"  # arg 2 of matmul_2x4.mlir
ARG2 = f'%arg2: tensor<16x8xf32> {{mhlo.sharding = "{V1}"}}'
GOLDEN = "__snapshots__/test_program/test_matmul.mlir"

TEST = """
import subprocess
import sys
from pathlib import Path

from shardy_convert.testing import ShardingExtension


def test_matmul(snapshot):
    assert Path("program.mlir").read_text() == snapshot(extension_class=ShardingExtension)
"""
PLUGIN = 'pytest_plugins = ["shardy_convert.testing"]\n'
ENTRY_POINT = "shardy_convert"  # pyproject.toml's pytest11 entry point


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """The project's pytest, in this process (the comparison imported above)."""
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def respell(text: str, sharding: str) -> str:
    assert text.count(ARG2) == 1
    return text.replace(ARG2, ARG2.replace(V1, sharding))


@pytest.fixture(scope="module", autouse=True)
def _comparison_imported():
    """Everything a comparison imports, imported before pytester first notes sys.modules: it
    drops what a test imported when the test ends, and numpy's and jaxlib's native modules
    load once per process (a second load is an ImportError, or an abort)."""
    from shardy_convert import convert
    from shardy_convert.commands.golden import compare

    matmul = (TESTDATA / "matmul_2x4.mlir").read_text()
    assert compare(matmul, convert(matmul)).equal
    dump = (TESTDATA / "tp_mlp_train.dump").read_text()
    assert compare(dump, dump).equal


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose test keeps matmul_2x4.mlir, golden file written (no conftest: the
    package's pytest plugin is loaded by its entry point)."""
    pytester.makepyfile(test_program=TEST)
    (pytester.path / "program.mlir").write_text((TESTDATA / "matmul_2x4.mlir").read_text())
    run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    return pytester


def test_snapshot_update_writes_the_module_as_a_golden_file(project):
    golden = project.path / GOLDEN
    assert golden.read_text() == (TESTDATA / "matmul_2x4.mlir").read_text()
    run(project).assert_outcomes(passed=1)


def test_a_respelled_placement_passes_and_is_not_rewritten(project):
    program = project.path / "program.mlir"
    program.write_text(respell(program.read_text(), "{devices=[4,2]<=[2,4]T(1,0)}"))
    run(project).assert_outcomes(passed=1)
    run(project, "--snapshot-update").assert_outcomes(passed=1)
    assert V1 in (project.path / GOLDEN).read_text()  # equal: the golden file is kept


def test_the_shardy_conversion_passes(project):
    from shardy_convert import convert

    program = project.path / "program.mlir"
    program.write_text(convert(program.read_text()))
    run(project).assert_outcomes(passed=1)


def test_a_moved_tile_fails_with_the_located_difference(project):
    program = project.path / "program.mlir"
    program.write_text(respell(program.read_text(), "{devices=[4,2]0,4,1,5,2,6,7,3}"))
    result = run(project)
    result.assert_outcomes(failed=1)
    shown = result.stdout.str()
    assert (
        f"{GOLDEN}:2:221: arg 2 of @main: {{devices=[4,2]<=[2,4]T(1,0)}} vs "
        "{devices=[4,2]0,4,1,5,2,6,7,3} (B: received:2:221): devices differ at 2 of 8 tiles: "
        "tile [3,0] on 3 vs 7, tile [3,1] on 7 vs 3"
    ) in shown
    assert "DIFFERENT: 1 difference" in shown
    run(project, "--snapshot-update").assert_outcomes(passed=1)  # accepted: rewritten
    assert "6,7,3}" in (project.path / GOLDEN).read_text()
    run(project).assert_outcomes(passed=1)


def test_use_extension_shows_the_located_difference_without_the_plugin(project):
    test = project.path / "test_program.py"
    test.write_text(
        test.read_text().replace("snapshot(extension_class=", "snapshot.use_extension(")
    )
    program = project.path / "program.mlir"
    program.write_text(respell(program.read_text(), "{devices=[4,2]0,4,1,5,2,6,7,3}"))
    result = run(project, "-p", f"no:{ENTRY_POINT}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E * {GOLDEN}:2:221: arg 2 of @main: * devices differ at *"])


def test_a_conftest_loads_the_plugin_where_its_entry_point_is_not(project):
    project.makeconftest(PLUGIN)
    program = project.path / "program.mlir"
    program.write_text(respell(program.read_text(), "{devices=[4,2]0,4,1,5,2,6,7,3}"))
    result = run(project, "-p", f"no:{ENTRY_POINT}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E * {GOLDEN}:2:221: arg 2 of @main: * devices differ at *"])


def test_a_dump_is_compared_graph_by_graph(pytester):
    pytester.makepyfile(test_program=TEST)
    dump = (TESTDATA / "tp_mlp_train.dump").read_text()
    program = pytester.path / "program.mlir"
    program.write_text(dump)
    run(pytester, "--snapshot-update").assert_outcomes(passed=1)
    rows = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"
    lines = dump.split("\n")
    assert lines[145].count(rows) == 1  # line 146: graph 1's first sharding custom call
    lines[145] = lines[145].replace(rows, "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    program.write_text("\n".join(lines))
    run(pytester).assert_outcomes(passed=1)
    lines[145] = lines[145].replace("<=[2,4]T(1,0)", "0,1,2,3,4,5,6,7")
    program.write_text("\n".join(lines))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E * {GOLDEN}:graph 1:146:*: op * devices differ at *"])


def test_the_call_syntax_fails_without_the_plugin_too(project):
    """Without the plugin syrupy writes the message with its default extension (a text diff of
    the two modules); the test still fails, and --snapshot-update still accepts the change."""
    program = project.path / "program.mlir"
    program.write_text(respell(program.read_text(), "{devices=[4,2]0,4,1,5,2,6,7,3}"))
    result = run(project, "-p", f"no:{ENTRY_POINT}")
    result.assert_outcomes(failed=1)
    assert "devices differ at" not in result.stdout.str()
    run(project, "--snapshot-update").assert_outcomes(passed=1)


def test_importing_the_extensions_imports_no_mlir():
    code = (
        "import sys, shardy_convert.testing; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
