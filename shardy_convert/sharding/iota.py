"""Iota tile-assignment arithmetic: XLA's V2 `<=[R]T(P)` form, pure Python + numpy.

A V2 tile assignment `devices=[D]<=[R]T(P)` denotes
`numpy.arange(prod(R)).reshape(R).transpose(P).reshape(D)`. Example: `[4,2]<=[2,4]T(1,0)` is
`arange(8).reshape(2,4).T` = `[[0,4],[1,5],[2,6],[3,7]]`, the V1 list `0,4,1,5,2,6,3,7`.

The functions here mirror XLA's `tile_assignment.cc` and `hlo_sharding.cc` (CanonicalizeIotaDims,
IotaTileAssignment::Transpose, GroupMinorIotaDimsSorted) so that printed text matches XLA's, and
add what XLA lacks: recovering `[R]T(P)` from an explicit V1 list (`iota_form`).

Here: the canonical form and V1 -> V2. Beside it: `iota_grouped.py` (V1 -> V2 when the ids of
a replication group carry no order) and `iota_rewrites.py` (XLA's transpose and regrouping of
an iota that keep it V2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Dims = tuple[int, ...]


def canonical_iota(reshape: Sequence[int], perm: Sequence[int]) -> tuple[Dims, Dims]:
    """XLA's CanonicalizeIotaDims: drop size-1 reshape dims, merge runs of consecutive perm.

    `[3,4,5]T(1,2,0)` -> `[3,20]T(1,0)` (perm entries 1,2 are consecutive: dims 4*5 merge);
    `[3,4,5]T(0,1,2)` -> `[60]`; `[1,3,1,4,1,5]T(4,3,2,5,1,0)` -> `[3,20]T(1,0)`.
    Repeats until nothing changes; an all-ones reshape becomes `[1]`.
    """
    dims, prm = list(reshape), list(perm)
    if len(dims) <= 1:
        return tuple(dims), tuple(prm)
    changed = True
    while changed:
        dims, prm = _drop_ones(dims, prm)
        changed = _merge_consecutive(dims, prm)
    if not dims:
        return (1,), (0,)
    return tuple(dims), tuple(prm)


def _drop_ones(dims: list[int], perm: list[int]) -> tuple[list[int], list[int]]:
    keep = [i for i, d in enumerate(dims) if d != 1]
    if len(keep) == len(dims):
        return dims, perm
    new_index = {old: new for new, old in enumerate(keep)}
    return [dims[i] for i in keep], [new_index[p] for p in perm if p in new_index]


def _merge_consecutive(dims: list[int], perm: list[int]) -> bool:
    """Merges each run `perm[base], perm[base]+1, ...` into dim `perm[base]`; the rest become 1."""
    changed = False
    base = 0
    for i in range(1, len(dims)):
        if perm[base] + (i - base) == perm[i]:
            dims[perm[base]] *= dims[perm[i]]
            dims[perm[i]] = 1
            changed = True
        else:
            base = i
    return changed


def iota_array(dims: Sequence[int], reshape: Sequence[int], perm: Sequence[int]) -> np.ndarray:
    """Materializes `[dims]<=[reshape]T(perm)` as an int64 array of shape `dims`."""
    n = math.prod(reshape)
    return np.arange(n, dtype=np.int64).reshape(tuple(reshape)).transpose(perm).reshape(tuple(dims))


# --- V1 -> V2 ------------------------------------------------------------------------------------


def iota_form(devices: np.ndarray | Sequence[int]) -> tuple[Dims, Dims] | None:
    """The canonical `(reshape, perm)` whose iota equals the flat list `devices`, or None.

    JAX's `unflatten_superdims`, vectorized. Peel "superdims" from the minor end: the run
    `a[i] == i*stride` with `stride = a[1]` is one transposed dim of size `run`; keep every
    `run`-th element and repeat. Example `0,4,1,5,2,6,3,7`: stride 4, run 2 gives superdim
    (size 2, stride 4); what is left, `0,1,2,3`, gives (size 4, stride 1). Ordered by stride the
    sizes read reshape `[2,4]`; the transposed order (major first: stride 1, then stride 4) is
    reshape dims 1, 0, so the answer is `<=[2,4]T(1,0)`. Every candidate is verified by
    rebuilding it, so the answer is never wrong, only absent.
    """
    a = np.asarray(devices, dtype=np.int64).ravel()
    if a.size == 0 or a[0] != 0 or not is_permutation(a):
        return None
    if a.size == 1:
        return (1,), (0,)
    superdims = _peel_superdims(a)
    if superdims is None:
        return None
    reshape, perm = _superdims_to_iota(superdims)
    if not np.array_equal(iota_array((a.size,), reshape, perm), a):
        return None
    return canonical_iota(reshape, perm)


def is_permutation(a: np.ndarray) -> bool:
    """True when the flat int array holds each of 0..len-1 exactly once."""
    n = a.size
    if n == 0 or a.min() < 0 or a.max() >= n:
        return False
    return bool((np.bincount(a, minlength=n) == 1).all())


def _peel_superdims(a: np.ndarray) -> list[tuple[int, int]] | None:
    """(size, stride) pairs from minor to major, or None when the runs do not tile the list."""
    superdims = []
    while a.size > 1:
        stride = int(a[1])
        run = _run_length(a, stride)
        if a.size % run:
            return None
        superdims.append((run, stride))
        a = a[::run]
    return superdims


def _run_length(a: np.ndarray, stride: int) -> int:
    mismatch = np.flatnonzero(a != np.arange(a.size, dtype=np.int64) * stride)
    return int(mismatch[0]) if mismatch.size else a.size


def _superdims_to_iota(superdims: list[tuple[int, int]]) -> tuple[Dims, Dims]:
    """Reshape dims sorted by stride (largest first); perm lists them in transposed order.

    Superdims minor->major `[(2, 4), (4, 1)]`: by stride, reshape is `(2, 4)` (stride 4 first);
    transposed order major->minor is `(4,1), (2,4)` = reshape dims `1, 0` -> perm `(1, 0)`.
    """
    by_stride = sorted(range(len(superdims)), key=lambda k: -superdims[k][1])
    reshape = tuple(superdims[k][0] for k in by_stride)
    rank = {k: r for r, k in enumerate(by_stride)}
    perm = tuple(rank[k] for k in reversed(range(len(superdims))))
    return reshape, perm


def prime_factors(n: int) -> list[int]:
    factors = []
    while n % 2 == 0:
        factors.append(2)
        n //= 2
    f = 3
    while f * f <= n:
        while n % f == 0:
            factors.append(f)
            n //= f
        f += 2
    if n > 1:
        factors.append(n)
    return factors
