"""`{maximal device=3}`: a program placed whole on one device (make testdata: JAX's GSPMD
lowering of a jit with GSPMDSharding(devices[:4], MAXIMAL device 3), mhlo.num_partitions = 4).

Its values live on `@maximal_mesh_3` (device 3 only): no global `@mesh` is placed beside it
(nothing would use it, and no device count is needed for it), no warning is printed, and both
partitioners compile the program to run on device 3 of 4. Where jaxlib's Shardy refuses a
single-device sharding on an argument (0.11.2 on), the program takes the form JAX lowers a
single-device placement to: one partition on `@empty_mesh = <[]>`, device 3 in the device
assignment (`shardy_convert.device_order`); `check` compiles it there.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.commands.check import Verdict, compare, compile_module
from shardy_convert.errors import DeviceCountWarning, ShardyConvertError
from shardy_convert.ir import compat
from tests.conftest import TESTDATA
from tests.helpers import run

MAXIMAL = TESTDATA / "jax" / "maximal_device3.gspmd.mlir"
_MESHES = re.compile(r"sdy\.mesh @(\w+) = (<[^>]*>)")
# What convert writes for a program placed whole on device 3, on this jaxlib.
ONE_PARTITION = compat.single_device_arguments_refused()
PLACED = [("empty_mesh", "<[]>")] if ONE_PARTITION else [("maximal_mesh_3", "<[], device_ids=[3]>")]


@pytest.fixture
def without_count(tmp_path):
    """The same program with nothing saying its device count (no mhlo.num_partitions)."""
    text = re.sub(r"mhlo\.num_partitions = 4 : i32, ", "", MAXIMAL.read_text(), count=1)
    assert "num_partitions" not in text
    path = tmp_path / "maximal.mlir"
    path.write_text(text)
    return path


def test_only_the_maximal_mesh_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        converted = convert(MAXIMAL.read_text())
    assert _MESHES.findall(converted) == PLACED
    if ONE_PARTITION:
        assert "mhlo.num_partitions = 1 : i32" in converted
        assert "shardy_convert.device_order = array<i64: 3>" in converted
        assert "#sdy.sharding<@empty_mesh, [{}, {}]>" in converted


def test_nothing_needs_a_device_count_when_every_sharding_is_maximal(without_count):
    for args in ((), ("--num-devices", "4")):
        result = run("convert", without_count, *args)
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        assert _MESHES.findall(result.stdout) == PLACED
    result = run("inspect", without_count)
    assert result.exit_code == 0, result.output
    assert "mesh @mesh" not in result.stdout
    assert "no-device-count" not in result.stdout


def test_a_maximal_device_beyond_the_count_is_an_error(without_count):
    result = run("convert", without_count, "--num-devices", "2")
    assert result.exit_code == 1
    assert "device 3" in result.stderr


@pytest.mark.parametrize("shardy", [False, True], ids=["gspmd", "shardy"])
def test_both_partitioners_put_the_program_on_device_3_of_4(shardy):
    text = MAXIMAL.read_text()
    compiled = compile_module(convert(text) if shardy else text, 4, shardy=shardy)
    if shardy and ONE_PARTITION:  # one partition, run on device 3: nothing to select
        assert [d.id for d in compiled.devices] == [3]
        assert all(s.is_replicated() for s in compiled.parameters + compiled.outputs)
        assert "partition-id()" not in compiled.executable.hlo_modules()[0].to_string()
        return
    assert [str(s) for s in compiled.parameters] == ["{maximal device=3}"] * 2
    assert [str(s) for s in compiled.outputs] == ["{maximal device=3}"]
    # The partitioned program computes where partition-id == 3 (a select on it).
    optimized = compiled.executable.hlo_modules()[0].to_string()
    assert "partition-id()" in optimized
    assert set(re.findall(r"u32\[\] constant\((\d+)\)", optimized)) == {"3"}


def test_check_compiles_it_on_the_devices_it_names(without_count):
    report = compare(MAXIMAL.read_text(), convert(MAXIMAL.read_text()), 4)
    assert report.verdict is Verdict.SAME, str(report)
    result = run("check", without_count)  # device 3: at least 4 devices
    assert result.exit_code == 0, result.output
    verdict = result.stdout.splitlines()[0]  # the cost table follows it
    assert verdict.startswith(f"{without_count}: same program: 2 parameters, 1 output on 4 devices")
    assert result.stderr == ""
    result = run("check", without_count, "--devices", "8")  # the module does not say: --devices
    assert result.exit_code == 0, result.output
    assert "on 8 devices" in result.stdout


def test_the_device_count_warning_names_the_flag_of_the_command_that_prints_it(tmp_path):
    """A replicated value beside one placed on device 3 needs the global mesh, and nothing
    says the count: each command names its own flag (convert and opt --num-devices, check
    --devices), the library its keyword. (The value on device 3 is inside: on a function's
    boundary, beside other placements, jaxlib 0.11.2 on has no form for it.)"""
    text = _replicated_boundary(MAXIMAL.read_text().replace("mhlo.num_partitions = 4 : i32, ", ""))
    path = tmp_path / "mixed.mlir"
    path.write_text(text)
    said = "says how many devices this module runs on; emitting a mesh with no axes"
    for command, flag in (("convert", "--num-devices N"), ("check", "--devices N")):
        result = run(command, path)
        assert result.exit_code == 0, result.output
        assert f"{path}: warning: no sharding, mhlo.num_partitions or device count {said}" in (
            result.stderr
        )
        assert result.stderr.count("give the count with") == 1
        assert f"give the count with {flag}\n" in result.stderr
    result = run("opt", path, "-p", "import-shardings")
    assert "give the count with --num-devices N\n" in result.stderr
    with pytest.warns(DeviceCountWarning, match="give the count with num_devices=N$"):
        convert(text)
    # In a fresh process, as a user runs it: the suite's in-process CPU client already has
    # the device count of earlier tests (XLA reads it once per process).
    fresh = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "check", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "on 4 devices" in fresh.stdout, fresh.stdout + fresh.stderr


def _replicated_boundary(text: str) -> str:
    """The program with its arguments and result replicated and the tanh placed on device 3."""
    text = text.replace(
        '{mhlo.sharding = "{maximal device=3}"}', '{mhlo.sharding = "{replicated}"}'
    )
    text = text.replace('mhlo.sharding = "{maximal device=3}"}', 'mhlo.sharding = "{replicated}"}')
    text = text.replace(
        "%1 = stablehlo.tanh %0 : tensor<8x8xf32>",
        "%t = stablehlo.tanh %0 : tensor<8x8xf32>\n"
        '    %1 = stablehlo.custom_call @Sharding(%t) {mhlo.sharding = "{maximal device=3}"} : '
        "(tensor<8x8xf32>) -> tensor<8x8xf32>",
    )
    assert text.count("maximal device=3") == 1, text
    return text


def test_a_single_device_argument_beside_other_placements(tmp_path):
    """jaxlib 0.11.2 on: Shardy refuses a single-device sharding on an argument, XLA drops one
    from a result; beside values placed elsewhere no one-partition form exists: a located
    error. Before: the maximal mesh, as ever."""
    text = MAXIMAL.read_text().replace(
        '%arg1: tensor<16x8xf32> {mhlo.sharding = "{maximal device=3}"}',
        '%arg1: tensor<16x8xf32> {mhlo.sharding = "{replicated}"}',
    )
    path = tmp_path / "mixed.mlir"
    path.write_text(text)
    result = run("convert", path)
    if not ONE_PARTITION:
        assert result.exit_code == 0, result.output
        assert "sdy.mesh @maximal_mesh_3" in result.stdout
        return
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f'{path}:2:3: arg 0 of @main: error: "{{maximal device=3}}" on')
    assert "jaxlib 0.11.2" in result.stderr


def test_the_single_device_probe_agrees_with_xla():
    """compat's probe (Shardy's export pipeline, MLIR only) says what XLA's compile does with
    a single-device sharding on an argument."""
    from shardy_convert.commands.check import compile_module as compile_

    text = re.sub(r"mhlo\.num_partitions = 4", "mhlo.num_partitions = 4", MAXIMAL.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        maximal = convert(text, num_devices=4).replace(
            "shardy_convert.device_order", "unused.device_order"
        )
    if ONE_PARTITION:  # the old form, by hand: what 0.10.2 writes
        maximal = _MAXIMAL_FORM
    if ONE_PARTITION:
        with pytest.raises(ShardyConvertError, match="single-device"):
            compile_(maximal, 4, shardy=True)
    else:
        compile_(maximal, 4, shardy=True)


_MAXIMAL_FORM = """module @jit_f attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func public @main(
      %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}
  ) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {
    return %arg0 : tensor<8x16xf32>
  }
}
"""
