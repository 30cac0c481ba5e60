"""XLA's rewrites of an iota tile assignment that keep it V2, ported so that V2 shardings stay
V2 exactly when XLA's printer keeps them V2: `IotaTileAssignment::Transpose`
(`transpose_iota`) and `GroupMinorIotaDimsSorted` (`group_minor_sorted`). Pure Python."""

from __future__ import annotations

from collections.abc import Sequence

from .iota import Dims, canonical_iota, prime_factors

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


def _decanonicalize(reshape, perm):
    """XLA's FullyDecanonicalize: split every reshape dim into prime factors.

    `[6,2]T(1,0)` -> reshape `[2,3,2]`, perm `(2,0,1)`; also returns, per new perm position,
    the original reshape dim, and per original dim, its new perm positions.
    """
    new_reshape: list[int] = []
    bounds = [0]
    for size in reshape:
        new_reshape += prime_factors(size)
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
