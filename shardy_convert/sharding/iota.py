"""Iota tile-assignment arithmetic: XLA's V2 `<=[R]T(P)` form, pure Python + numpy.

A V2 tile assignment `devices=[D]<=[R]T(P)` denotes
`numpy.arange(prod(R)).reshape(R).transpose(P).reshape(D)`. Example: `[4,2]<=[2,4]T(1,0)` is
`arange(8).reshape(2,4).T` = `[[0,4],[1,5],[2,6],[3,7]]`, the V1 list `0,4,1,5,2,6,3,7`.

The functions here mirror XLA's `tile_assignment.cc` and `hlo_sharding.cc` (CanonicalizeIotaDims,
IotaTileAssignment::Transpose, GroupMinorIotaDimsSorted) so that printed text matches XLA's, and
add what XLA lacks: recovering `[R]T(P)` from an explicit V1 list (`iota_form`).
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


# --- V1 -> V2 when replication groups carry no order ----------------------------------------

# How many partial orders `grouped_iota_form` tries before giving up (each costs one O(N) numpy
# check; a few thousand take well under a second). Real groups need a few dozen.
SEARCH_BUDGET = 20_000


def grouped_iota_form(groups: np.ndarray) -> tuple[Dims, Dims] | None:
    """An iota whose consecutive runs of `g` ids hold the sets of the rows of `groups`, or None.

    `groups` is (number of groups, g): a partially replicated V1 list, whose groups XLA's
    PartialTile writes sorted, so the list itself is often no iota although an iota with the
    same groups exists. Example `[3,2,2]0,4,1,8,5,9,2,6,3,10,7,11 last_tile_dim_replicate`:
    groups {0,4} {1,8} {5,9} {2,6} {3,10} {7,11} are the runs of 2 of `<=[3,4]T(1,0)` =
    `0,4,8,1,5,9,2,6,10,3,7,11`, so the V2 form is `[3,2,2]<=[3,4]T(1,0)`.

    Search: write N as primes in some order (the reshape, strides = products of the primes
    after each one) and fix the transposed order from the minor end, one prime dim at a time.
    After choosing minor dims of total size m, the first m ids of the iota are known up to a
    base (`offsets`), so every block of m ids is `base + offsets`, where base has all chosen
    digits zero. A choice survives only if (1) each run of lcm(m, g) ids of `groups` holds
    whole blocks, and (2) when g divides m, the groups inside one block are the consecutive
    g-slices of `base + offsets`. Gives up (None) after SEARCH_BUDGET choices.
    """
    g = groups.shape[1]
    n = groups.size
    if n < 2 or not is_permutation(groups.ravel()):
        return None
    rows = np.sort(groups, axis=1)
    position = np.empty(n, dtype=np.int64)
    position[rows.ravel()] = np.arange(n)
    search = _GroupSearch(rows, position // g, g)
    for primes in _distinct_orders(_prime_factors(n)):
        found = search.run(primes)
        if found is not None:
            return found
        if search.budget <= 0:
            return None
    return None


class _GroupSearch:
    """The backtracking of `grouped_iota_form` for one list of groups."""

    def __init__(self, rows: np.ndarray, group_of: np.ndarray, g: int):
        self.rows, self.group_of, self.g = rows, group_of, g
        self.ids = np.arange(rows.size, dtype=np.int64)
        self.budget = SEARCH_BUDGET

    def run(self, primes: tuple[int, ...]) -> tuple[Dims, Dims] | None:
        strides = [math.prod(primes[k + 1 :]) for k in range(len(primes))]
        self.primes, self.strides = primes, strides
        order = self._extend([], np.zeros(1, dtype=np.int64))
        if order is None:
            return None
        return canonical_iota(primes, tuple(reversed(order)))

    def _extend(self, minor: list[int], offsets: np.ndarray) -> list[int] | None:
        """`minor`: reshape dims chosen so far, minor-most first; `offsets` their iota order."""
        if len(minor) == len(self.primes):
            return minor
        # Smallest stride first: the plain arange order is tried first, so the answer has as
        # few transposed dims as the groups allow.
        for dim in reversed(range(len(self.primes))):
            if dim in minor or self.budget <= 0:
                continue
            self.budget -= 1
            size, stride = self.primes[dim], self.strides[dim]
            grown = (np.arange(size, dtype=np.int64)[:, None] * stride + offsets).ravel()
            if self._fits([*minor, dim], grown):
                found = self._extend([*minor, dim], grown)
                if found is not None:
                    return found
        return None

    def _fits(self, dims: list[int], offsets: np.ndarray) -> bool:
        m = offsets.size
        base = self.ids.copy()
        for dim in dims:  # zero the chosen digits: the id of each block's base
            base -= (self.ids // self.strides[dim]) % self.primes[dim] * self.strides[dim]
        runs = math.lcm(m, self.g) // self.g  # groups per run of lcm(m, g) ids
        if not (self.group_of // runs == self.group_of[base] // runs).all():
            return False
        if m % self.g or m == self.rows.size:
            return m < self.rows.size or self._exact(offsets)
        return self._exact_blocks(offsets)

    def _exact_blocks(self, offsets: np.ndarray) -> bool:
        """Each block of m ids (m a multiple of g) holds its groups as consecutive g-slices."""
        per_block = offsets.size // self.g
        blocks = self.rows.reshape(-1, per_block, self.g)
        bases = blocks.min(axis=(1, 2))
        want = np.sort(offsets.reshape(per_block, self.g), axis=1)
        return bool((blocks == bases[:, None, None] + want[None]).all())

    def _exact(self, order: np.ndarray) -> bool:
        return bool((np.sort(order.reshape(-1, self.g), axis=1) == self.rows).all())


def _distinct_orders(primes: list[int]):
    """Every distinct ordering of a multiset of primes: `[2, 2, 3]` -> 223, 232, 322."""
    if not primes:
        yield ()
        return
    for p in sorted(set(primes)):
        rest = list(primes)
        rest.remove(p)
        for tail in _distinct_orders(rest):
            yield (p, *tail)


# --- XLA's IotaTileAssignment::Transpose -------------------------------------------------------

_NOOP, _RESHAPE, _TRANSPOSE = 0, 1, 2


def transpose_iota(
    dims: Sequence[int], reshape: Sequence[int], perm: Sequence[int], tperm: Sequence[int]
) -> tuple[Dims, Dims, Dims] | None:
    """Transposes the tile dims of `[dims]<=[reshape]T(perm)` by `tperm`, staying V2.

    Returns `(new_dims, reshape, perm)` canonicalized, or None where XLA falls back to an
    explicit array (its `Transpose` returns nullopt). Ported from XLA so that V2 shardings stay
    V2 exactly when XLA's printer keeps them V2. Example: `[2,2,2]<=[8]` transposed by
    `(0,2,1)` is `[2,2,2]<=[2,2,2]T(0,2,1)`.
    """
    kind = _transpose_kind(dims, tperm)
    if kind == _NOOP:
        return tuple(dims), tuple(reshape), tuple(perm)
    new_dims = tuple(dims[p] for p in tperm)
    if kind == _RESHAPE:
        return (new_dims, *canonical_iota(reshape, perm))
    if len(reshape) == 1:
        return (new_dims, *canonical_iota(dims, tperm))
    pure = _pure_transpose_perm(dims, reshape, perm, tperm)
    if pure is not None:
        return (new_dims, *canonical_iota(reshape, pure))
    regrouped = _regroup_decanonicalized(dims, reshape, perm, tperm)
    if regrouped is None:
        return None
    return (new_dims, *canonical_iota(*regrouped))


def _transpose_kind(dims: Sequence[int], tperm: Sequence[int]) -> int:
    kind = _NOOP
    prev = -1
    for i, d in enumerate(tperm):
        if dims[d] == 1:
            if d != i and dims[i] != 1:
                kind = _RESHAPE
            continue
        if d <= prev:
            return _TRANSPOSE
        prev = d
    return kind


def _pure_transpose_perm(dims, reshape, perm, tperm) -> list[int] | None:
    """When the non-1 tile dims are exactly the transposed reshape dims, permute `perm`."""
    non_one = [i for i, d in enumerate(dims) if d != 1]
    if len(non_one) != len(reshape):
        return None
    if any(reshape[perm[k]] != dims[i] for k, i in enumerate(non_one)):
        return None
    position = {i: k for k, i in enumerate(non_one)}
    return [perm[position[p]] for p in tperm if dims[p] != 1]


def _prime_factors(n: int) -> list[int]:
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


def _decanonicalize(reshape, perm):
    """XLA's FullyDecanonicalize: split every reshape dim into prime factors.

    `[6,2]T(1,0)` -> reshape `[2,3,2]`, perm `(2,0,1)`; also returns, per new perm position,
    the original reshape dim, and per original dim, its new perm positions.
    """
    new_reshape: list[int] = []
    bounds = [0]
    for size in reshape:
        new_reshape += _prime_factors(size)
        bounds.append(len(new_reshape))
    new_perm: list[int] = []
    origin: list[int] = []
    positions: list[list[int]] = [[] for _ in reshape]
    for old in perm:
        for j in range(bounds[old], bounds[old + 1]):
            positions[old].append(len(new_perm))
            new_perm.append(j)
            origin.append(old)
    return new_reshape, new_perm, origin, positions


def _regroup_decanonicalized(dims, reshape, perm, tperm) -> tuple[list[int], list[int]] | None:
    """Groups prime reshape factors into the non-1 tile dims (major to minor), then transposes.

    Fails (None) like XLA when a tile dim is not a product of consecutive factors. Example
    `[6,2]<=[3,4]T(1,0)`: the factors in perm order are 2, 2 (of reshape dim 4), then 3; tile
    dim 6 takes the first 2 and then needs a 3, but finds the second 2.
    """
    d_reshape, d_perm, origin, positions = _decanonicalize(reshape, perm)
    targets = [d for d in dims if d != 1]
    groups = _group_factors(targets, d_reshape, d_perm, origin, positions)
    if groups is None:
        return None
    index = {i: k for k, i in enumerate(i for i, d in enumerate(dims) if d != 1)}
    flat = [g for p in tperm if p in index for g in groups[index[p]]]
    return d_reshape, flat


def _group_factors(targets, d_reshape, d_perm, origin, positions) -> list[list[int]] | None:
    """For each target tile dim, the consecutive (in perm order) factors whose product it is."""
    groups: list[list[int]] = [[] for _ in targets]
    idx = 0
    for i, target in enumerate(targets):
        while idx < len(d_perm):
            dim = _factor_for(target, idx, d_reshape, d_perm, origin, positions)
            if dim is None:
                break
            target //= d_reshape[dim]
            groups[i].append(dim)
            idx += 1
        if target != 1:
            return None
    return groups


def _factor_for(target, idx, d_reshape, d_perm, origin, positions) -> int | None:
    """The factor at perm position `idx` if it divides `target`; else a later factor of the same
    original reshape dim that does, swapped into place (XLA's look-ahead); else None."""
    dim = d_perm[idx]
    if target % d_reshape[dim] == 0:
        return dim
    for later in positions[origin[idx]]:
        other = d_perm[later]
        if later > idx and target % d_reshape[other] == 0:
            d_reshape[dim], d_reshape[other] = d_reshape[other], d_reshape[dim]
            return dim
    return None


# --- XLA's GroupMinorIotaDimsSorted -------------------------------------------------------------


def group_minor_sorted(
    reshape: Sequence[int], perm: Sequence[int], group_size: int
) -> tuple[list[int], list[int]] | None:
    """Regroups the minor `group_size` devices of an iota so that each group is ascending.

    XLA's PartialTile keeps a partially replicated V2 sharding V2 through this; None means XLA
    materializes a sorted V1 list instead. Example: `[2,2,2]T(0,2,1)` with groups of 4 sorts the
    minor perm entries `(2,1)` -> `[2,2,2]T(0,1,2)`, which canonicalizes to `[8]`. A reshape dim
    larger than what is left of the group is split in two (major part, group part).
    """
    grouped = 0
    split = None
    for dim in reversed(perm):
        size = reshape[dim]
        grouped += 1
        if size > group_size:
            if size % group_size:
                return None
            split = (dim, size // group_size)
            break
        if group_size % size:
            return None
        group_size //= size
    if split is None:
        new_reshape, new_perm = list(reshape), list(perm)
    else:
        new_reshape, new_perm = _split_dim(reshape, perm, *split)
    new_perm[len(new_perm) - grouped :] = sorted(new_perm[len(new_perm) - grouped :])
    return new_reshape, new_perm


def _split_dim(reshape, perm, dim: int, major: int) -> tuple[list[int], list[int]]:
    """Splits reshape dim `dim` into `(major, size // major)`; perm gets the pieces in order."""
    new_reshape = [*reshape[:dim], major, reshape[dim] // major, *reshape[dim + 1 :]]
    new_perm = []
    for p in perm:
        if p == dim:
            new_perm += [dim, dim + 1]
        else:
            new_perm.append(p if p < dim else p + 1)
    return new_reshape, new_perm
