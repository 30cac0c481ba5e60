"""`{maximal device=3}`: a program placed whole on one device (make testdata: JAX's GSPMD
lowering of a jit with GSPMDSharding(devices[:4], MAXIMAL device 3), mhlo.num_partitions = 4).

Its values live on `@maximal_mesh_3` (device 3 only): no global `@mesh` is placed beside it
(nothing would use it, and no device count is needed for it), no warning is printed, and both
partitioners compile the program to run on device 3 of 4.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.commands.check import Verdict, compare, compile_module
from shardy_convert.errors import DeviceCountWarning
from tests.conftest import TESTDATA
from tests.helpers import run

MAXIMAL = TESTDATA / "jax" / "maximal_device3.gspmd.mlir"
_MESHES = re.compile(r"sdy\.mesh @(\w+) = (<[^>]*>)")


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
    assert _MESHES.findall(converted) == [("maximal_mesh_3", "<[], device_ids=[3]>")]


def test_nothing_needs_a_device_count_when_every_sharding_is_maximal(without_count):
    for args in ((), ("--num-devices", "4")):
        result = run("convert", without_count, *args)
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        assert _MESHES.findall(result.stdout) == [("maximal_mesh_3", "<[], device_ids=[3]>")]
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
    """A replicated value beside the maximal ones needs the global mesh, and nothing says
    the count: each command names its own flag (convert and opt --num-devices, check
    --devices), the library its keyword."""
    text = MAXIMAL.read_text().replace("mhlo.num_partitions = 4 : i32, ", "")
    text = text.replace(
        '%arg1: tensor<16x8xf32> {mhlo.sharding = "{maximal device=3}"}',
        ('%arg1: tensor<16x8xf32> {mhlo.sharding = "{replicated}"}'),
    )
    assert '"{replicated}"' in text
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
