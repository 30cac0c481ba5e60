"""A command that leaves something undone says so (issue 19, "silent no-ops"): `v2` on lists
with no iota form, `v2` on Shardy and `to-gspmd` on GSPMD input (written as they are), and
bytecode is never written to a terminal (as gzip refuses)."""

from __future__ import annotations

import pytest

from tests.conftest import TESTDATA
from tests.helpers import MATMUL, SHARDY, on_a_terminal, run

CUSTOM = TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir"  # 6 lists, a custom order
CUSTOM_DUMP = TESTDATA / "torch_xla" / "custom_device_ids_manual.dump"
RETRACE = TESTDATA / "torch_xla" / "linear_retrace.dump"  # 16 GSPMD graphs


def test_v2_counts_and_locates_the_lists_it_leaves_v1():
    result = run("v2", CUSTOM)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"{CUSTOM}:2:19: arg 0 of @main: warning: 6 V1 device lists have no V2 iota form (a "
        "custom device order: no transpose of a reshaped arange) and stay V1; the first is "
        '"{devices=[4,1,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}"'
    ]
    assert result.stdout.count("{devices=[4,1,2]1,3,6,7,0,2,4,5 last_tile_dim_replicate}") == 1


def test_v2_locates_the_lists_in_a_dump_by_graph():
    result = run("v2", CUSTOM_DUMP)
    assert result.exit_code == 0, result.output
    assert f"{CUSTOM_DUMP}:graph 0:12:19: arg 0 of @main: warning: 6 V1 device lists" in (
        result.stderr
    )


def test_v2_of_lists_that_all_have_an_iota_form_says_nothing():
    result = run("v2", MATMUL)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("command", "path", "why"),
    [
        ("v2", SHARDY, "it carries Shardy shardings, no GSPMD string to rewrite"),
        ("to-gspmd", MATMUL, "it carries no Shardy sharding (GSPMD already, or none)"),
    ],
    ids=["v2-of-shardy", "to-gspmd-of-gspmd"],
)
def test_a_module_with_nothing_to_rewrite_is_written_as_it_is_saying_so(command, path, why):
    result = run(command, path)
    assert result.exit_code == 0, result.output
    assert result.stdout == path.read_text()
    assert result.stderr == f"{path}: warning: written as it is: {why}\n"


def test_to_gspmd_of_a_gspmd_dump_says_it_once_for_all_graphs():
    result = run("to-gspmd", RETRACE)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"{RETRACE}: warning: written as it is: it carries no Shardy sharding (GSPMD already, "
        "or none) (graphs 0-15)"
    ]


@pytest.mark.parametrize("emit", ["bytecode", "portable"])
def test_bytecode_is_never_written_to_a_terminal(emit):
    code, received, err = on_a_terminal(["convert", str(MATMUL), "--emit", emit])
    assert code == 2, err
    assert "refusing to write bytecode to a terminal; use -o FILE (or a pipe)" in err
    assert received == b""


@pytest.fixture
def bytecode(tmp_path):
    """MATMUL converted, as MLIR bytecode."""
    path = tmp_path / "m.mlirbc"
    assert run("convert", MATMUL, "--emit", "bytecode", "-o", path).exit_code == 0
    return path


def test_a_bytecode_input_is_not_written_back_to_a_terminal(bytecode):
    code, received, err = on_a_terminal(["convert", str(bytecode)])
    assert code == 2, err
    assert "<stdout>: error: refusing to write bytecode to a terminal" in err
    assert received == b""
    code, received, err = on_a_terminal(["convert", str(bytecode), "--emit", "text"])
    assert code == 0, err
    assert b"sdy.mesh @mesh" in received


def test_opt_refuses_to_write_a_bytecode_input_back_to_a_terminal_as_a_usage_error(bytecode):
    """opt writes its input's form: bytecode to a terminal is refused before any pass runs,
    a usage error (exit 2) as convert's refusal is (was exit 1, as a pass failure)."""
    code, received, err = on_a_terminal(["opt", bytecode, "-p", "sdy-close-shardings"])
    assert code == 2, err
    assert "refusing to write bytecode to a terminal" in err
    assert received == b""
    code, received, err = on_a_terminal(["opt", MATMUL, "-p", "sdy-close-shardings"])
    assert code == 0, err
    assert b"mhlo.sharding" in received  # text is written to a terminal
