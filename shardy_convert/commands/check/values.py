"""Comparing two programs' outputs: exactly, or up to float reassociation (pure numpy).

Two partitioners (or a partitioned and an unpartitioned program) sum the partial results of a
reduction in different orders, so float outputs may differ in their last bits. The error of a
reassociated sum of K terms is about eps * sqrt(K) times the terms' magnitude; a wrong program
(a moved shard, a wrong all-reduce group) is off by the magnitude of the values themselves. So
each output is compared relative to its own scale (its largest finite magnitude, on either
side): `max |a - b| / max |a|,|b|`. Outputs agree up to reassociation when that is at most
sqrt(eps) of their dtype (half the mantissa bits agree: 3.5e-4 for f32, 1.5e-8 for f64, 0.03
for f16, 0.09 for bf16; a complex type's is its parts', an f8 kind's its own: 0.35 for e4m3).
Example: an f32 output of magnitude 2e4 with max abs diff 0.0085 is relative 4e-7:
reassociation. Integers and bools compare exactly; NaN and infinities must be
in the same places.

An output made by cancellation (a gradient that sums terms of magnitude 1 to 6e-7) carries the
rounding error of its terms, not of itself: its own scale would call 3e-7 of noise a 50%
difference. So `agreements` judges every float output of one program at no less than
`CANCELLATION_FLOOR` (1/100) of the largest magnitude among that program's float outputs.
Example: BERT's gradient outputs of magnitude 6.4e-7 beside a loss of magnitude 2 are judged
at scale 0.02, where 3.6e-7 is relative 1.8e-5: reassociation. A moved shard still shows in
every output larger than about sqrt(eps) * 0.02 of that largest magnitude.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import plural


@dataclass(frozen=True)
class Agreement:
    """How one output of two programs compares: `relative` is 0.0 when bit-identical (NaN
    equal to NaN), inf when integers, shapes or non-finite values differ."""

    index: int
    relative: float
    tolerance: float
    detail: str = ""
    max_abs: float = 0.0  # floats: the largest absolute difference
    magnitude: float = 0.0  # floats: the output's own scale (its largest finite magnitude)

    @property
    def exact(self) -> bool:
        return self.relative == 0.0

    @property
    def close(self) -> bool:
        return self.relative <= self.tolerance

    def __str__(self) -> str:
        return f"output {self.index}: {self.detail}"


def tolerance(dtype: np.dtype) -> float:
    """sqrt(eps) for floats, 0 for integers and bools."""
    if not _is_float(dtype):
        return 0.0
    return math.sqrt(float(_finfo(dtype).eps))


# Every float output is judged at a scale of at least this fraction of the largest float output
# magnitude of its program (see the module docstring).
CANCELLATION_FLOOR = 1e-2


def agreement(index: int, a: np.ndarray, b: np.ndarray, floor: float = 0.0) -> Agreement:
    """Compares output `index` of two programs; `floor` is the least scale to judge it at."""
    tol = tolerance(a.dtype)
    if a.shape != b.shape or a.dtype != b.dtype:
        return Agreement(
            index, math.inf, tol, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        )
    if np.array_equal(a, b, equal_nan=_is_float(a.dtype)):
        return Agreement(index, 0.0, tol)
    if not _is_float(a.dtype):
        wrong = int(np.count_nonzero(a != b))
        return Agreement(index, math.inf, tol, f"{wrong} of {plural(a.size, 'value')} differ")
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    x, y = a.astype(wide), b.astype(wide)
    finite = np.isfinite(x) & np.isfinite(y)
    if not np.array_equal(x[~finite], y[~finite], equal_nan=True):
        return Agreement(index, math.inf, tol, "NaN or infinity in different places")
    diff = float(np.max(np.abs(x[finite] - y[finite])))
    own = max(_magnitude(x), _magnitude(y))
    scale = max(own, floor)
    relative = diff / scale if scale else 0.0
    detail = f"max relative {relative:.2g} (max abs diff {diff:.3g}, magnitude {own:.3g})"
    return Agreement(index, relative, tol, detail, diff, own)


def agreements(a: list[np.ndarray], b: list[np.ndarray]) -> list[Agreement]:
    """Compares two programs' outputs, each float output at a scale of at least
    CANCELLATION_FLOOR times the largest float output magnitude of either program."""
    largest = max((_magnitude(v) for v in [*a, *b] if _is_float(v.dtype)), default=0.0)
    floor = CANCELLATION_FLOOR * largest
    return [agreement(k, x, y, floor) for k, (x, y) in enumerate(zip(a, b))]


def _magnitude(values: np.ndarray) -> float:
    """The largest finite magnitude in `values` (0.0 when there is none)."""
    x = np.asarray(values)
    x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    finite = np.abs(x[np.isfinite(x)])
    return float(np.max(finite)) if finite.size else 0.0


def max_relative(found: list[Agreement]) -> float:
    return max((f.relative for f in found), default=0.0)


def _is_float(dtype: np.dtype) -> bool:
    """numpy's floats and complex types, and ml_dtypes' (bfloat16, float8_*, float4_*)."""
    return dtype.kind in "fc" or dtype.name.startswith(("bfloat16", "float"))


def _finfo(dtype: np.dtype):
    if dtype.kind not in "fc":  # ml_dtypes' floats
        import ml_dtypes

        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)  # a complex type: its parts'
