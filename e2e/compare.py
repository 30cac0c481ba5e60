"""How the e2e tests compare two runs of one program: what counts as the same result.

Two runs are two XLA builds (torch_xla's built-in runtime and xla-cpu-pjrt) or XLA against
plain PyTorch. Each may add a reduction's partial sums in its own order, and that is not a
difference: a float array matches when every element is within RTOL of the array's scale (its
largest magnitude in the reference), so a loss of 0.9157323 against 0.9157324 (6.5e-8 apart,
seen on one CPU and not on another) matches, while a moved shard (whole values elsewhere)
cannot. Integers and booleans match exactly. Where two XLA runs still differ, plain PyTorch on
one CPU device (the program's eager mode) breaks the tie: the run under test matches it, or the
test fails with both comparisons.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Float reassociation over the shard counts these programs use, after a few training steps.
RTOL = 1e-5


def differences(expected: dict, got: dict) -> list[str]:
    """What differs between two runs' arrays, one line per array (empty: the same result)."""
    if sorted(expected) != sorted(got):
        return [f"array names differ: {sorted(expected)} vs {sorted(got)}"]
    found = []
    for name, want in expected.items():
        have = got[name]
        if (have.shape, have.dtype) != (want.shape, want.dtype):
            shapes = f"{have.dtype}{list(have.shape)} vs {want.dtype}{list(want.shape)}"
            found.append(f"{name}: {shapes}")
            continue
        why = _differs(want, have)
        if why:
            found.append(f"{name}: {why}")
    return found


def _differs(want: np.ndarray, have: np.ndarray) -> str | None:
    if not np.issubdtype(want.dtype, np.inexact):
        unequal = int(np.count_nonzero(want != have))
        return f"{unequal} of {want.size} elements differ" if unequal else None
    if not np.array_equal(np.isnan(want), np.isnan(have)):
        return "NaN in other places"
    want64, have64 = (np.nan_to_num(a.astype(np.float64)) for a in (want, have))
    scale = float(np.max(np.abs(want64), initial=0.0))
    worst = float(np.max(np.abs(have64 - want64), initial=0.0))
    if worst <= RTOL * scale:
        return None
    return f"max difference {worst:.3g} at scale {scale:.3g} (over {RTOL:g} of the scale)"


def assert_same(
    expected: dict, got: dict, *, tie_breaker: Callable[[], dict] | None = None
) -> None:
    """`got`'s arrays are `expected`'s (see the module docstring). Where they differ and a
    `tie_breaker` is given (it runs the program in plain PyTorch and returns its facts),
    `got` must match that run instead."""
    found = differences(expected["arrays"], got["arrays"])
    if not found:
        return
    assert tie_breaker is not None, "\n".join(["the two runs differ:", *found])
    eager = tie_breaker()
    assert "error" not in eager, eager["error"]
    against_eager = differences(eager["arrays"], got["arrays"])
    assert not against_eager, "\n".join(
        ["the two runs differ:", *found, "and plain PyTorch differs too:", *against_eager]
    )
