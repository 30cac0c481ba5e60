"""Unannotated @main arguments and results follow XLA's allow_spmd_sharding_propagation_to_*.

GSPMD compiles an unannotated argument replicated when propagation to parameters is not
allowed (torch_xla's compile options); left open in Shardy, propagation would shard it: a
different program. Proven by compiling both sides on the CPU client.
"""

from __future__ import annotations

import pytest

from shardy_convert import ShardyConvertError, convert
from shardy_convert.commands.check import compare
from shardy_convert.options import propagation_flags
from tests.helpers import run

MODULE = """\
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"},
                %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
CLOSED = "tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}"


def _signature(text: str) -> str:
    return next(line for line in text.splitlines() if "func.func @main" in line)


def test_unannotated_argument_compiles_to_the_same_program():
    converted = convert(MODULE)
    assert f"%arg1: {CLOSED}" in _signature(converted)
    report = compare(MODULE, converted, 2)
    assert report.ok, str(report)


def test_results_stay_open_by_default_and_close_when_not_allowed():
    assert "-> (tensor<8x8xf32>, tensor<8x8xf32>)" in _signature(convert(MODULE))
    closed = convert(MODULE, allow_spmd_sharding_propagation_to_output=False)
    assert f"-> ({CLOSED}, {CLOSED})" in _signature(closed)


def test_allowed_propagation_leaves_the_argument_open():
    converted = convert(MODULE, allow_spmd_sharding_propagation_to_parameters=True)
    assert "%arg1: tensor<8x8xf32>)" in _signature(converted)


@pytest.mark.parametrize(
    ("flags", "closed"),
    [((False, True), [False, False]), ((True, False), [False, True]), ((), [False, True])],
    ids=["per-arg-first-closed", "per-arg-second-closed", "empty-means-not-allowed"],
)
def test_one_flag_per_argument_like_xla(flags, closed):
    """arg0 is annotated whatever the flag; arg1 is closed exactly when its flag is False."""
    signature = _signature(convert(MODULE, allow_spmd_sharding_propagation_to_parameters=flags))
    assert (f"%arg1: {CLOSED}" in signature) == closed[1]


@pytest.mark.parametrize("allowed", [None, False, True, (), (False,), (True,), (True, False, True)])
def test_xlas_flag_rule_one_for_all_or_one_per_value(allowed):
    flags = propagation_flags(allowed, 3, "parameters", "arguments")
    listed = (allowed,) if allowed is None or isinstance(allowed, bool) else allowed
    if len(listed) == 3:
        assert flags == list(listed)
    else:  # none or one: the same for every value, False when none is given
        assert flags == [bool(listed and listed[0])] * 3


def test_a_flag_list_of_the_wrong_length_is_a_located_error():
    with pytest.raises(ShardyConvertError, match="has 3 values but @main has 2 arguments") as e:
        convert(MODULE, allow_spmd_sharding_propagation_to_parameters=[True, False, True])
    assert e.value.location


def test_cli_flags(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    default = run("convert", path)
    assert default.exit_code == 0, default.output
    assert f"%arg1: {CLOSED}" in _signature(default.stdout)
    opened = run("convert", path, "--propagate-to-parameters", "--no-propagate-to-output")
    assert opened.exit_code == 0, opened.output
    assert "%arg1: tensor<8x8xf32>)" in _signature(opened.stdout)
    assert f"-> ({CLOSED}, {CLOSED})" in _signature(opened.stdout)
