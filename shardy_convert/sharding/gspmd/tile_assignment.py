"""The tile assignment of XLA's HloSharding text: `devices=[d0,d1]` followed by an iota
`<=[r0,r1]T(p0,p1)` or an explicit device id list, with the checks XLA skips (sizes before
allocating, ids in range and listed once, `T(...)` a permutation)."""

from __future__ import annotations

import math
import re

import numpy as np

from ...options import MAX_DEVICES
from ..tiles import MAX_RANK
from .lexer import INT, Cursor, int_list

# A run of integers separated by commas: the bulk of a V1 device list, matched in one go.
_INT_RUN = re.compile(r"-?[0-9]+(?:[ \t\r\n]*,[ \t\r\n]*-?[0-9]+)*(?![A-Za-z0-9_])")


def tile_assignment(cur: Cursor) -> tuple:
    """`[d0,d1]` then either `<=[r0,r1]T(p0,p1)` or an explicit id list.

    Sizes are checked before the list is read, so `[65536,65536]` fails without allocating.
    """
    dims_pos = cur.skip()
    cur.expect("[", "'[' to start the tile dims")
    dims = tuple(int_list(cur, "tile dim", MAX_RANK))
    cur.expect("]", "']' to end the tile dims")
    _check_sizes(cur, dims, dims_pos, "tile dims")
    if cur.eat("<="):
        reshape, perm = _iota(cur, dims)
        return dims, reshape, perm, None, dims_pos
    list_pos = cur.skip()
    return dims, None, None, _device_list(cur), list_pos


def _check_sizes(cur: Cursor, dims, pos: int, what: str) -> None:
    if any(d < 1 for d in dims):
        raise cur.value_error(f"{what} {list(dims)} must all be positive", pos)
    if math.prod(dims) > MAX_DEVICES:
        raise cur.value_error(
            f"{what} {list(dims)} describe {math.prod(dims)} devices, more than {MAX_DEVICES}",
            pos,
        )


def _iota(cur: Cursor, dims) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`[r0,...]` and, only when there are several reshape dims, `T(p0,...)` (as XLA)."""
    pos = cur.skip()
    cur.expect("[", "'[' to start the iota reshape dims")
    reshape = tuple(int_list(cur, "iota reshape dim", MAX_RANK))
    cur.expect("]", "']' to end the iota reshape dims")
    _check_sizes(cur, reshape, pos, "iota reshape dims")
    if math.prod(reshape) != math.prod(dims):
        raise cur.value_error(
            f"iota reshape dims {list(reshape)} hold {math.prod(reshape)} devices but the tile "
            f"dims {list(dims)} need {math.prod(dims)}",
            pos,
        )
    t_pos = cur.skip()
    if len(reshape) == 1:
        if cur.text.startswith("T", t_pos) and cur.text.startswith("(", t_pos + 1):
            raise cur.error("'T(...)' is only allowed after more than one iota reshape dim")
        return reshape, (0,)
    if not (cur.eat("T") and cur.text.startswith("(", cur.pos)):
        raise cur.error("expected 'T(' after several iota reshape dims", t_pos)
    cur.pos += 1
    perm = tuple(int_list(cur, "iota transpose dim", MAX_RANK))
    cur.expect(")", "')' to end the iota transpose")
    if sorted(perm) != list(range(len(reshape))):
        raise cur.value_error(f"T{perm} is not a permutation of 0..{len(reshape) - 1}", t_pos)
    return reshape, perm


def _device_list(cur: Cursor) -> np.ndarray:
    """Reads `i0,i1,...` as runs of integers (fast for 65,536 ids), comments allowed between."""
    start = cur.skip()
    runs = []
    while True:
        m = _INT_RUN.match(cur.text, cur.skip())
        if m is None:
            raise cur.error("expected a device id")
        cur.pos = m.end()
        runs.append(m.group())
        if not cur.eat(","):
            break
    try:
        return np.array(",".join(runs).split(","), dtype=np.int64)
    except OverflowError:
        raise cur.error("a device id does not fit in 64 bits", start) from None


def check_device_list(cur: Cursor, dims, devices: np.ndarray, pos: int) -> None:
    n = math.prod(dims)
    if devices.size != n:
        raise cur.value_error(
            f"tile dims {list(dims)} need {n} device ids but {devices.size} are listed", pos
        )
    bad = np.flatnonzero((devices < 0) | (devices >= n))
    if bad.size:
        k = int(bad[0])
        raise cur.value_error(
            f"device id {devices[k]} is out of range [0, {n})", _nth_int(cur.text, pos, k)
        )
    counts = np.bincount(devices, minlength=n)
    if (counts != 1).any():
        dup = int(np.flatnonzero(counts > 1)[0])
        k = int(np.flatnonzero(devices == dup)[1])
        raise cur.value_error(f"device id {dup} is listed twice", _nth_int(cur.text, pos, k))


def _nth_int(text: str, pos: int, k: int) -> int:
    """Position of the k-th integer of the list starting at `pos` (for error columns)."""
    for i, m in enumerate(INT.finditer(text, pos)):
        if i == k:
            return m.start()
    return pos
