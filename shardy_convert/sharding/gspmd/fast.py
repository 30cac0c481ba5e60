"""The parser's fast path: the forms front-ends print (torch_xla's V1 lists, JAX's V2, the
kind keywords) matched by one regex and checked with numpy. Anything else, and anything that
fails a check here, goes through the full parser (`parser.py`), which reports errors."""

from __future__ import annotations

import math
import re

import numpy as np

from ..iota import canonical_iota, is_permutation
from ..model import HloSharding, Kind, SubgroupType
from ..tiles import MAX_MATERIALIZED, MAX_RANK, Tiles
from ..xla_rules import subgroup

_FAST = re.compile(
    r"\{devices=\[([0-9,]+)\](?:<=\[([0-9,]+)\](?:T\(([0-9,]+)\))?|([0-9,]+))"
    r"( last_tile_dim_replicate)?\}"
)
# The kind keywords (the lexer's KINDS: each Kind's value) but `{maximal}`, which the full
# parser checks; not the lexer's own table, which the fast path need not import (cold start).
_KEYWORDS = (Kind.REPLICATED, Kind.MANUAL, Kind.UNKNOWN, Kind.UNREDUCED)
_FAST_KINDS = {"": Kind.REPLICATED, **{"{" + k.value + "}": k for k in _KEYWORDS}}


def parse_fast(text: str) -> HloSharding | None:
    kind = _FAST_KINDS.get(text)
    if kind is not None:
        return HloSharding._make(kind)
    m = _FAST.fullmatch(text)
    if m is None or _has_empty_item(m) or max(len(m[1]), len(m[2] or "")) > 4 * MAX_RANK:
        return None
    dims = _ints(m[1])
    n = math.prod(dims)
    if min(dims) < 1 or n > MAX_MATERIALIZED or len(dims) > MAX_RANK:
        return None
    tiles = _fast_v1(dims, n, m[4]) if m[4] else _fast_v2(dims, n, m[2], m[3])
    if tiles is None:
        return None
    return subgroup(tiles, (SubgroupType.REPLICATED,) if m[5] else ())


def _has_empty_item(m: re.Match) -> bool:
    """An empty item in one of `_FAST`'s `[0-9,]+` groups: `1,,2`, `,1` or `1,`."""
    for group in m.groups()[:4]:
        if group and (group[0] == "," or group[-1] == "," or ",," in group):
            return True
    return False


def _ints(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(",")))


def _fast_v1(dims, n: int, text: str) -> Tiles | None:
    if len(text) < 4096:
        ids = _ints(text)
        if n < 2 or len(ids) != n or sorted(ids) != list(range(n)):
            return None
        return Tiles._trusted(dims, devices=ids)
    array = _id_array(text)
    if array is None or array.size != n or not is_permutation(array):
        return None
    return Tiles._trusted(dims, devices=array.tolist(), array=array)


def _id_array(text: str) -> np.ndarray | None:
    """Digits-and-commas text as an int64 array, vectorized (~4 ms for 65,536 ids).

    Horner's rule over digit positions instead of numbers: step j reads digit j of every
    number at once (`value = value*10 + digit`), so the loop runs at most 9 times. For
    `"12,3"`: starts (0, 3), lengths (2, 1); j=0 gives (1, 3), j=1 gives (12, 3).
    """
    digits = np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.int64) - ord("0")
    ends = np.append(np.flatnonzero(digits < 0), digits.size)  # commas, then the end
    starts = np.append(0, ends[:-1] + 1)
    lengths = ends - starts
    if lengths.min() < 1 or lengths.max() > 9:  # `1,,2`, or beyond 2**24: the full parser
        return None
    values = np.zeros(ends.size, dtype=np.int64)
    for j in range(int(lengths.max())):
        live = lengths > j
        values = np.where(live, values * 10 + digits[np.where(live, starts + j, 0)], values)
    return values


def _fast_v2(dims, n: int, reshape_text: str, perm_text: str | None) -> Tiles | None:
    reshape = _ints(reshape_text)
    perm = _ints(perm_text) if perm_text else (0,)
    if (len(reshape) > 1) != (perm_text is not None) or math.prod(reshape) != n:
        return None
    if min(reshape) < 1 or len(reshape) > MAX_RANK or sorted(perm) != list(range(len(reshape))):
        return None
    return Tiles._trusted(dims, *canonical_iota(reshape, perm))
