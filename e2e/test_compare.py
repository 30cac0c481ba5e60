"""What the e2e tests call the same result (e2e/compare.py), on arrays made here."""

from __future__ import annotations

import numpy as np
import pytest

from .compare import assert_same, differences


def _run(**arrays) -> dict:
    return {"arrays": {k: np.asarray(v) for k, v in arrays.items()}}


def test_float_reassociation_is_no_difference():
    # The loss two XLA builds gave on two CPUs (5.96e-08 apart).
    expected = _run(loss=np.float32(0.9157323), w=np.linspace(-2, 2, 64, dtype=np.float32))
    got = _run(loss=np.float32(0.9157324), w=expected["arrays"]["w"] * np.float32(1 + 2e-7))
    assert differences(expected["arrays"], got["arrays"]) == []
    assert_same(expected, got)


def test_the_tolerance_is_relative_to_each_arrays_scale():
    # An element near zero may move by RTOL of the array's largest magnitude, not its own.
    want = np.array([1000.0, 1e-6], dtype=np.float32)
    have = np.array([1000.0, 5e-3], dtype=np.float32)
    assert differences({"a": want}, {"a": have}) == []
    assert differences({"a": want}, {"a": have + np.float32([0, 1])})


def test_a_moved_shard_is_a_difference():
    want = np.arange(16, dtype=np.float32).reshape(4, 4)
    have = np.roll(want, 1, axis=0)
    [line] = differences({"w": want}, {"w": have})
    assert line.startswith("w: max difference 12 at scale 15")


@pytest.mark.parametrize(
    ("want", "have", "why"),
    [
        (np.array([1, 2, 3]), np.array([1, 2, 4]), "1 of 3 elements differ"),
        (np.array([True, False]), np.array([True, True]), "1 of 2 elements differ"),
        (np.array([1.0, np.nan]), np.array([np.nan, 1.0]), "NaN in other places"),
        (np.zeros(3, np.float32), np.zeros(3, np.float64), "float64[3] vs float32[3]"),
    ],
    ids=["ints", "bools", "nan", "dtype"],
)
def test_what_must_match_exactly(want, have, why):
    [line] = differences({"x": want}, {"x": have})
    assert line == f"x: {why}"


def test_plain_pytorch_breaks_a_tie():
    reference = _run(loss=np.float32(1.0))
    ours = _run(loss=np.float32(1.5))
    assert_same(reference, ours, tie_breaker=lambda: _run(loss=np.float32(1.5)))
    with pytest.raises(AssertionError, match="plain PyTorch differs too"):
        assert_same(reference, ours, tie_breaker=lambda: _run(loss=np.float32(1.0)))
    with pytest.raises(AssertionError, match="the two runs differ"):
        assert_same(reference, ours)
