"""`parse`: one `mhlo.sharding` string, any form XLA reads: `""`, the kind keywords, V1 lists,
V2 iotas (`v1_v2.py`), named V3 shardings (`v3.py`) and tuples of them.

It accepts every form XLA prints or parses and rejects, with the column, what XLA silently
accepts or aborts on. The common forms take one regex (`fast.py`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ..model import HloSharding, Kind
from .fast import parse_fast

if TYPE_CHECKING:
    from .lexer import Cursor

# What starts a named (V3) sharding after its `{`.
_NAMED = re.compile(r"(mesh|maximal_mesh|single_device)(?=\s*\[)")


@functools.lru_cache(maxsize=8192)
def parse(text: str) -> HloSharding:
    """Parses one `mhlo.sharding` string; `""` is `{replicated}` (an empty OpSharding proto).

    Strict: raises `ShardingSyntaxError` (with the column) for text XLA would not read and
    `ShardingValueError` for text that describes no placement. Cached on the string, since the
    result is immutable and big modules repeat the same few strings.
    """
    return parse_fast(text) or _parse_full(text)


def _parse_full(text: str) -> HloSharding:
    # The full grammar is imported when a string first misses the fast path (cold start: a
    # program whose shardings all take it never imports the lexer, V1/V2 and V3 readers).
    from .lexer import Cursor

    cur = Cursor(text)
    if cur.at_end():
        return HloSharding(Kind.REPLICATED)
    cur.expect("{", "'{' to start the sharding")
    if cur.peek() in ("{", "}"):
        sharding = _tuple(cur)
    else:
        sharding = _single(cur)
    if not cur.at_end():
        raise cur.error("unexpected text after the sharding")
    return sharding


def _single(cur: Cursor) -> HloSharding:
    """`{` already read: a named sharding or a V1/V2 one, up to its `}`."""
    from . import v1_v2, v3

    m = _NAMED.match(cur.text, cur.skip())
    if m is None:
        return v1_v2.single(cur)
    cur.pos = m.end()
    return v3.single(cur, m.group(1))


def _tuple(cur: Cursor) -> HloSharding:
    """`{` already read; `{}` or `{{...}, {...}}` (flat: XLA has no nested tuple text)."""
    elements = []
    if not cur.eat("}"):
        while True:
            start = cur.skip()
            cur.expect("{", "'{' to start a tuple element")
            if cur.peek() == "{":
                raise cur.error("nested tuple shardings are not allowed", start)
            elements.append(_single(cur))
            if cur.eat("}"):
                break
            cur.expect(",", "',' or '}' after a tuple element")
    return HloSharding(Kind.TUPLE, elements=tuple(elements))
