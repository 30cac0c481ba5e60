"""V1 -> V2 for partially replicated device lists, whose replication groups carry no order:
XLA's PartialTile writes each group sorted, so the list itself is often no iota although an
iota with the same groups exists (see `grouped_iota_form`). Pure Python + numpy."""

from __future__ import annotations

import math

import numpy as np

from .iota import Dims, canonical_iota, is_permutation, prime_factors

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
    for primes in _distinct_orders(prime_factors(n)):
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
