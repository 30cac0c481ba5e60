"""`check`: verdicts per graph, values up to float reassociation, the unpartitioned reference,
known XLA bugs reported as compiler differences, batches (failing files, device counts, every
input form), XLA's logging kept off the terminal."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from shardy_convert import convert
from shardy_convert.commands.check import Verdict, agreement, compare, tolerance
from shardy_convert.commands.check.reference import identity_order, unpartitioned
from shardy_convert.commands.check.values import CANCELLATION_FLOOR, agreements
from tests.conftest import TESTDATA
from tests.helpers import ESCAPE, MATMUL, SHARDY, run, said_same

SMALL = TESTDATA / "torch_xla" / "matmul_2x2.mlir"  # 4 devices
MANUAL = TESTDATA / "torch_xla" / "custom_device_ids_manual.mlir"


# A dot on a mesh ["data"=2, "model"=4] in the custom device order [6,2,1,7,3,0,5,4], written
# as torch_xla writes it (V1 lists in mesh order); `ORDER` is replaced to get the identity mesh.
ORDER = "6,2,1,7,3,0,5,4"
DOT = (
    "module @dot {\n"
    '  func.func @main(%arg0: tensor<4x8xf32> {mhlo.sharding = "A"}, '
    '%arg1: tensor<8x16xf32> {mhlo.sharding = "B"}) '
    '-> (tensor<4x16xf32> {mhlo.sharding = "OUT"}) {\n'
    "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] "
    ": (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>\n"
    "    %1 = stablehlo.tanh %0 : tensor<4x16xf32>\n"
    "    return %1 : tensor<4x16xf32>\n  }\n}\n"
)


def _v1(grid: np.ndarray, dims: tuple[str | None, str | None]) -> str:
    """The V1 string of a rank-2 sharding on the (data=2, model=4) device grid."""
    names = ["data", "model"]
    used = [names.index(a) for a in dims if a]
    rest = [k for k in range(2) if k not in used]
    tile = [grid.shape[names.index(a)] if a else 1 for a in dims]
    ids = ",".join(str(d) for d in grid.transpose(used + rest).reshape(-1))
    if not rest:
        return f"{{devices=[{','.join(map(str, tile))}]{ids}}}"
    tile.append(math.prod(grid.shape[k] for k in rest))
    return f"{{devices=[{','.join(map(str, tile))}]{ids} last_tile_dim_replicate}}"


def dot(order: str, a, b, out=(None, "model")) -> str:
    grid = np.array([int(x) for x in order.split(",")]).reshape(2, 4)
    text = DOT.replace('"A"', f'"{_v1(grid, a)}"').replace('"B"', f'"{_v1(grid, b)}"')
    return text.replace('"OUT"', f'"{_v1(grid, out)}"')


IDENTITY = "0,1,2,3,4,5,6,7"
# jaxlib 0.10.2: a contracting dim sharded on "data" gets all-reduce groups {1,0},{2,3},{6,4},
# {7,5} where the data pairs are {6,3},{2,0},{1,5},{7,4}: GSPMD and Shardy alike.
BOTH_WRONG = ((None, "data"), ("data", "model"))
# Sharded on "model" instead, only Shardy's partitioning hits it; GSPMD is right.
SHARDY_WRONG = ((None, "model"), ("model", "data"))


def fixed(report) -> bool:
    """Whether this jaxlib's partitioner computes the program right (the XLA bug these tests
    reproduce, found on jaxlib 0.10.2, fixed): then it must be the same program, never a
    conversion that differs; else the tests hold the compiler difference to its evidence."""
    if report.verdict is Verdict.COMPILER_DIFFERS:
        return False
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)
    return True


# --- values: exact, up to float reassociation, different ----------------------------------


def test_reassociation_is_relative_to_the_output_scale():
    """The issue's case: magnitude 2e4, max abs diff 0.0085 on a small element."""
    want = np.array([2.0e4, 1.0, -3.0], np.float32)
    got = want + np.array([0.0, 0.0085, 0.0], np.float32)
    found = agreement(0, want, got)
    assert not np.allclose(want, got, rtol=1e-5, atol=1e-5)  # what `check` used to ask
    assert found.close
    assert not found.exact
    assert found.relative == pytest.approx(0.0085 / 2.0e4, rel=1e-2)


def test_a_wrong_value_is_not_reassociation():
    want = np.arange(16, dtype=np.float32).reshape(4, 4)
    got = want[::-1]  # a shard in the wrong place
    found = agreement(3, want, got)
    assert not found.close
    assert str(found).startswith("output 3: max relative")


def test_an_output_made_by_cancellation_is_judged_at_its_programs_scale():
    """BERT on a 3-D mesh (testdata hf_bert_3d, graph 1): two gradient outputs of magnitude
    6.4e-7 differ from the unpartitioned run by 3.6e-7, rounding noise of terms of magnitude ~1
    that cancelled; the loss beside them has magnitude 2."""
    loss = np.array(2.0, np.float32)
    grad = np.array([6.43e-7, -1.0e-7, 2.0e-7], np.float32)
    noisy = grad + np.array([3.55e-7, 0.0, 0.0], np.float32)
    assert not agreement(1, grad, noisy).close  # its own scale: relative 0.55
    found = agreements([loss, grad], [loss.copy(), noisy])
    assert all(f.close for f in found), [str(f) for f in found]
    assert found[1].relative == pytest.approx(3.55e-7 / (CANCELLATION_FLOOR * 2.0), rel=1e-2)


def test_a_moved_shard_in_a_small_output_still_differs():
    loss = np.array(2.0, np.float32)
    small = np.arange(8, dtype=np.float32) * 1e-3  # 0.35% of the loss, above the floor's noise
    found = agreements([loss, small], [loss.copy(), small[::-1].copy()])
    assert found[0].exact
    assert not found[1].close


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integers_and_bools_compare_exactly(dtype):
    want = np.array([0, 1, 1, 0], dtype)
    assert agreement(0, want, want.copy()).exact
    found = agreement(0, want, np.array([0, 1, 0, 0], dtype))
    assert not found.close
    assert "1 of 4 values differ" in found.detail


def test_real_training_graph_is_the_same_up_to_float_reassociation():
    """HF Llama TP+DP from torch_xla 2.9: GSPMD and Shardy sum its reductions in other orders,
    so outputs differ in their last bits; `check` says so instead of "differs"."""
    text = (TESTDATA / "torch_xla" / "hf_llama_tp.mlir").read_text()
    report = compare(text, convert(text), 8, reference=False)
    assert report.verdict is Verdict.REASSOCIATED, str(report)
    assert 0 < report.relative <= tolerance(np.dtype("float32"))
    assert str(report).startswith("same program up to float reassociation (max relative ")


def test_tolerance_is_half_the_mantissa_bits():
    import ml_dtypes

    assert tolerance(np.dtype("float32")) == pytest.approx(2.0**-11.5)
    assert tolerance(np.dtype("float64")) == pytest.approx(2.0**-26)
    assert tolerance(np.dtype(ml_dtypes.bfloat16)) == pytest.approx(2.0**-3.5)
    assert tolerance(np.dtype("int8")) == 0.0


def test_nan_must_be_in_the_same_places():
    want = np.array([1.0, np.nan, 2.0])
    assert agreement(0, want, want.copy()).exact
    assert not agreement(0, want, np.array([np.nan, 1.0, 2.0])).close
    assert not agreement(0, want, np.array([1.0, 2.0])).close  # shapes


# --- the unpartitioned reference ------------------------------------------------------------


def test_unpartitioned_drops_every_sharding():
    text, why = unpartitioned((TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text())
    assert why == ""
    assert "mhlo.sharding" not in text
    assert "@Sharding" not in text
    assert "stablehlo.dot" in text


def test_no_reference_for_manual_regions():
    from shardy_convert.ir.parse import new_context, parse_module, print_module

    text, why = unpartitioned(MANUAL.read_text())
    assert text is None
    assert why == "manual regions"
    with new_context() as ctx:
        bytecode = print_module(parse_module(MANUAL.read_text(), ctx), "bytecode")
    assert unpartitioned(bytecode) == (None, "manual regions")
    report = compare(MANUAL.read_text(), convert(MANUAL.read_text()), 8)
    assert report.verdict is Verdict.SAME
    assert "no unpartitioned reference (manual regions)" in str(report)


def test_no_reference_for_random_numbers():
    text = (
        "func.func @main(%arg0: tensor<2xui64>) -> tensor<4x4xui32> {\n"
        '  %0:2 = "stablehlo.rng_bit_generator"(%arg0) '
        "{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} "
        ": (tensor<2xui64>) -> (tensor<2xui64>, tensor<4x4xui32>)\n"
        "  return %0#1 : tensor<4x4xui32>\n}\n"
    )
    assert unpartitioned(text) == (None, "random numbers")


def test_identity_order_drops_device_ids_only():
    converted = convert(dot(ORDER, *BOTH_WRONG))
    assert "device_ids=[6, 2, 1, 7, 3, 0, 5, 4]" in converted
    plain = identity_order(converted)
    assert "device_ids" not in plain
    assert 'sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]>' in plain
    assert identity_order(convert(dot(IDENTITY, *BOTH_WRONG))) is None


def test_a_changed_computation_is_a_conversion_difference():
    """Same shardings, other values: the reference says the Shardy side is wrong."""
    original = dot(IDENTITY, *BOTH_WRONG)
    wrong = convert(original).replace("stablehlo.tanh", "stablehlo.exponential")
    report = compare(original, wrong, 8)
    assert report.verdict is Verdict.CONVERSION_DIFFERS
    assert not report.ok
    assert report.differences[0].startswith("Shardy result vs reference, output 0: max relative")


def test_reference_agrees_on_a_correct_program():
    report = compare(MATMUL.read_text(), convert(MATMUL.read_text()), 8)
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED)
    assert report.ok
    assert report.notes == []


# --- known XLA bugs are compiler differences ------------------------------------------------


@pytest.mark.xla_bug
def test_xla_bug_dot_on_custom_device_order_is_a_compiler_difference():
    """GSPMD and Shardy compute the same wrong values: only the reference shows it. The
    identity mesh is right. On a jaxlib that fixed the bug: the same program."""
    original = dot(ORDER, *BOTH_WRONG)
    report = compare(original, convert(original), 8)
    if fixed(report):
        return
    assert report.ok
    assert report.differences[0].startswith("GSPMD original vs reference, output 0:")
    assert report.differences[1].startswith("Shardy result vs reference, output 0:")
    assert "an XLA bug, not the conversion" in report.differences[-1]
    identity = dot(IDENTITY, *BOTH_WRONG)
    assert compare(identity, convert(identity), 8).verdict is not Verdict.COMPILER_DIFFERS


@pytest.mark.xla_bug
def test_xla_bug_hit_by_shardy_only_is_a_compiler_difference():
    """GSPMD is right, Shardy wrong; on the identity device order Shardy is right too. On a
    jaxlib that fixed the bug: the same program."""
    original = dot(ORDER, *SHARDY_WRONG)
    report = compare(original, convert(original), 8)
    if fixed(report):
        return
    assert not any(d.startswith("GSPMD") for d in report.differences)
    assert "identity device order matches the reference" in report.differences[-1]


@pytest.mark.xla_bug
def test_check_command_reports_the_xla_bug_and_exits_0(tmp_path):
    path = tmp_path / "dot.mlir"
    path.write_text(dot(ORDER, *BOTH_WRONG))
    result = run("check", path)
    assert result.exit_code == 0, result.output
    said = f"{path}: compiler differs from the unpartitioned reference: 2 parameters"
    assert said in result.stdout or said_same(result.stdout, path, "2 parameters"), result.stdout


# --- the command: verdicts, batches, forms --------------------------------------------------


def test_already_shardy_is_said_not_crashed_on(tmp_path):
    portable = tmp_path / "m.portable"
    assert run("convert", MATMUL, "--emit", "portable", "-o", portable).exit_code == 0
    result = run("check", SHARDY, portable)
    assert result.exit_code == 0, result.output
    assert f"{SHARDY}: already Shardy: nothing to convert" in result.stdout
    assert f"{portable}: already Shardy: nothing to convert" in result.stdout


def test_unsharded_module_is_checked_on_the_devices_given(tmp_path):
    path = tmp_path / "plain.mlir"
    path.write_text(
        "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
        "  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n"
        "  return %0 : tensor<8x8xf32>\n}\n"
    )
    result = run("check", path, "--devices", "4")
    assert result.exit_code == 0, result.output
    assert said_same(result.stdout, path, "1 parameter, 1 output on 4 devices")


def test_warnings_are_located_like_convert_prints_them(tmp_path):
    """`FILE[:graph N][:LINE:COL]: warning: ...`, the same line `convert` prints, the line a
    dump's own (a graph's warning at its line in the dump, not in the graph); a warning that
    names a flag names check's own (`--devices`, convert's `--num-devices`)."""
    plain = tmp_path / "plain.mlir"
    plain.write_text(
        "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  return %arg0 : tensor<8xf32>\n}\n"
    )
    uneven = tmp_path / "uneven.dump"
    uneven.write_text(
        "## BEGIN_GRAPH\n"
        'func.func @main(%arg0: tensor<3xf32> {mhlo.sharding = "{devices=[2]0,1}"}) '
        "-> tensor<3xf32> {\n  return %arg0 : tensor<3xf32>\n}\n\nGraph Hash: 1\n## END_GRAPH\n"
    )
    checked = run("check", plain, uneven, "--no-reference")
    for path in (plain, uneven):
        converted = run("convert", path)
        assert converted.exit_code == 0, converted.output
        lines = [line for line in converted.stderr.splitlines() if ": warning: " in line]
        assert lines, converted.stderr
        for line in lines:
            assert line.replace("--num-devices N", "--devices N") in checked.stderr, checked.stderr
    assert f"{uneven}:graph 0:2:" in checked.stderr


def test_a_graph_of_more_devices_than_jaxs_started_backend_is_checked(tmp_path):
    """Each device count gets a CPU client of its own (xla/clients.py), never jax's backend:
    a graph that needs more devices than this process's jax backend started with is checked
    like any other, beside a graph of fewer."""
    from jax._src import xla_bridge

    started = len(xla_bridge.get_backend("cpu").devices())
    path = tmp_path / "wide.mlir"
    path.write_text(
        f"module attributes {{mhlo.num_partitions = {2 * started} : i32}} {{\n"
        '  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}"}) '
        "-> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    result = run("check", path, MATMUL)
    assert result.exit_code == 0, result.output
    assert said_same(result.stdout, path, f"1 parameter, 1 output on {2 * started} devices")
    assert said_same(result.stdout, MATMUL, "4 parameters, 1 output on 8 devices")


def test_devices_does_not_constrain_a_module_that_says(tmp_path):
    """`--devices` is the count of graphs that do not say; matmul_2x4 says 8."""
    result = run("check", MATMUL, "--devices", "2")
    assert result.exit_code == 0, result.output
    assert said_same(result.stdout, MATMUL, "4 parameters, 1 output on 8 devices")


def test_bytecode_portable_directory_and_stdin_inputs(tmp_path):
    from jaxlib import _jax

    from shardy_convert.formats import module as formats
    from shardy_convert.ir.parse import new_context, parse_module, print_module

    text = MATMUL.read_text()
    with new_context() as ctx:
        (tmp_path / "m.mlirbc").write_bytes(print_module(parse_module(text, ctx), "bytecode"))
    portable = _jax.mlir.serialize_portable_artifact((tmp_path / "m.mlirbc").read_bytes(), "1.0.0")
    assert formats.detect(portable) == "portable"
    (tmp_path / "m.portable").write_bytes(portable)
    result = run("check", tmp_path, tmp_path / "m.portable", "-", input=text)  # a directory too
    assert result.exit_code == 0, result.output
    for name in ("m.mlirbc", "m.portable"):
        assert said_same(result.stdout, tmp_path / name, "4 parameters")
    assert said_same(result.stdout, "-", "4 parameters")


def test_batch_goes_on_after_a_failing_file():
    result = run("check", ESCAPE, MATMUL)
    assert result.exit_code == 1
    assert f"{ESCAPE}:graph 0:24:5: func.return: error: a manual value escapes" in result.stderr
    assert said_same(result.stdout, MATMUL, "4 parameters, 1 output on 8 devices")


def test_fresh_process_batch_of_device_counts_with_xla_logging_on(tmp_path):
    """One process, no XLA_FLAGS: a 4-device module, a bad module (converted, never compiled),
    an 8-device module. The client starts once at 8; XLA's log lines (asked for with
    TF_CPP_MIN_LOG_LEVEL=0) stay off stderr."""
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        'func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,2]0,1,2,2}"})'
        " -> tensor<8x8xf32> {\n  return %arg0 : tensor<8x8xf32>\n}\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    result = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "check", SMALL, bad, MATMUL],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert said_same(result.stdout, SMALL, "4 parameters, 1 output on 4 devices")
    assert said_same(result.stdout, MATMUL, "4 parameters, 1 output on 8 devices")
    notes = [line for line in result.stderr.splitlines() if ": note: " in line]
    assert [line.split(": note: ")[0] for line in notes] == [str(MATMUL)]  # its mesh file
    assert [line for line in result.stderr.splitlines() if line not in notes] == [
        f"{bad}:1:17: arg 0 of @main: error: device id 2 is listed twice at column 21 of "
        '"{devices=[2,2]0,1,2,2}"'
    ], result.stderr


def test_warnings_are_located_as_convert_locates_them(tmp_path):
    """1x128 split 8 ways: the uneven-sharding warning reads as `convert` writes it (file,
    line, value), not reworded with the location dropped."""
    module = tmp_path / "uneven.mlir"
    module.write_text(
        'func.func @main(%arg0: tensor<1x128xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})'
        " -> tensor<1x128xf32> {\n"
        "  %0 = stablehlo.add %arg0, %arg0 : tensor<1x128xf32>\n"
        "  return %0 : tensor<1x128xf32>\n}\n"
    )
    converted = run("convert", module)
    checked = run("check", "--no-reference", module)
    (warning,) = [line for line in converted.stderr.splitlines() if ": warning: " in line]
    assert warning.startswith(f"{module}:1:")
    assert warning in checked.stderr.splitlines()
