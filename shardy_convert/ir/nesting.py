"""The bracket-nesting guard that runs before MLIR's recursive text parser: refuse, as a located
error, text whose brackets nest deeper than the parser's C stack survives (a SIGSEGV, not an
exception, past a few thousand levels)."""

from __future__ import annotations

import numpy as np

from .. import regex
from ..errors import ModuleError

# MLIR's text parser recurses once per nested bracket and overflows the C stack (SIGSEGV) at a
# few thousand levels (measured: 4,000 nested regions, 8,000 nested arrays on an 8 MB stack).
# Real modules nest a few dozen deep; refuse anything deeper than this before parsing.
MAX_NESTING = 256
_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[list(b"([{<")] = 1
_DELTA[list(b")]}>")] = -1
# String literals and comments: their brackets do not nest.
_QUOTED = regex.lazy(rb'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def check_nesting(text: bytes) -> None:
    """Raises ModuleError at the first bracket nested deeper than MAX_NESTING.

    Counts `( [ { <` against `) ] } >` outside strings and comments, not `->`, `<=`, `>=`.
    Depth is measured from the lowest level seen so far, so stray closing brackets cannot
    hide a deep nest behind them: in `)))((((`, the depth reaches 4. One vectorized pass over
    the text finds the brackets and quotes; the rest looks at those positions only (about a
    tenth of a module's characters), so this costs a few percent of parsing the module.
    """
    if len(text) <= MAX_NESTING:
        return
    chars = np.frombuffer(text, dtype=np.uint8)
    pos, comments = _brackets_and_quotes(chars)
    here = chars[pos]
    delta = np.take(_DELTA, here)
    if np.count_nonzero(delta > 0) <= MAX_NESTING:  # too few openers to nest that deep
        return
    inside = _in_strings_or_comments(text, chars, pos, here, comments)
    counted = (delta != 0) & ~_is_operator(chars, pos, here) & ~inside
    pos, delta = pos[counted], delta[counted]
    level: np.ndarray = np.cumsum(delta, dtype=_index_type(text))
    floor = np.minimum.accumulate(np.minimum(level, 0))
    deep = np.flatnonzero(level - floor > MAX_NESTING)
    if deep.size == 0:
        return
    at = int(pos[deep[0]])
    line = text.count(b"\n", 0, at) + 1
    column = at - (text.rfind(b"\n", 0, at) + 1) + 1
    raise ModuleError(
        f"brackets nest more than {MAX_NESTING} deep; refusing to parse (MLIR's parser would "
        "overflow the stack)",
        location=f"{line}:{column}",
    )


# Characters per step of the scan: its masks stay in the CPU cache and are reused. Masks of
# the whole text (0.7 MB each, a dozen) cost more in the kernel's page faults than in the
# compares (measured: a third of the scan's time was system time).
_SCAN_CHUNK = 1 << 17


def _brackets_and_quotes(chars: np.ndarray) -> tuple[np.ndarray, bool]:
    """Positions of `( ) [ ] { } < > "`, and whether `//` occurs (SIMD compares, several
    times cheaper than a table lookup per character; `//` as two adjacent slashes)."""
    size = min(len(chars), _SCAN_CHUNK)
    found, mask = np.empty(size, bool), np.empty(size, bool)
    positions, slashes = [], []
    index = _index_type(chars)
    for start in range(0, len(chars), _SCAN_CHUNK):
        part = chars[start : start + _SCAN_CHUNK]
        hit, other = found[: len(part)], mask[: len(part)]
        np.equal(part, ord('"'), out=hit)
        for c in b"()[]{}<>":
            hit |= np.equal(part, c, out=other)
        positions.append(np.flatnonzero(hit).astype(index) + index(start))
        slashes.append(np.flatnonzero(np.equal(part, ord("/"), out=other)) + start)
    slash = np.concatenate(slashes)
    return np.concatenate(positions), bool(np.any(slash[1:] - slash[:-1] == 1))


def _index_type(text) -> type:
    """Positions and levels in 32 bits where they fit: half the memory to fault in."""
    return np.int32 if len(text) < 2**31 else np.int64


def _is_operator(chars: np.ndarray, pos: np.ndarray, here: np.ndarray) -> np.ndarray:
    """Which bracket positions are the `>` of `->` or the `<`/`>` of `<=`/`>=`."""
    angle = (here == ord("<")) | (here == ord(">"))
    at, here = pos[angle], here[angle]
    prev = chars[np.maximum(at - 1, 0)]
    after = chars[np.minimum(at + 1, len(chars) - 1)]
    arrow = (here == ord(">")) & (prev == ord("-")) & (at > 0)
    compare = (after == ord("=")) & (at + 1 < len(chars))
    found = np.zeros(len(pos), bool)
    found[angle] = arrow | compare
    return found


def _in_strings_or_comments(
    text: bytes, chars: np.ndarray, pos: np.ndarray, here: np.ndarray, comments: bool
) -> np.ndarray:
    """Which of the positions `pos` (brackets and every quote, in order; `here` their
    characters; `chars` the text as bytes) lie inside string literals (or comments, where
    `comments`: the text has a `//`).

    Without `//` (what MLIR's printers write): a quote not preceded by an odd run of
    backslashes opens or closes a string, so a position is inside one when an odd number of
    such quotes precede it. With `//` somewhere, quotes inside comments would flip that
    parity, so the regex below lexes both exactly.
    """
    if comments:
        spans = np.array([m.span() for m in _QUOTED().finditer(text)], dtype=np.int64)
        if not len(spans):
            return np.zeros(len(pos), bool)
        k = np.searchsorted(spans[:, 0], pos, side="right") - 1
        return (k >= 0) & (pos < spans[np.maximum(k, 0), 1])
    quote = here == ord('"')
    if b"\\" in text:  # a quote after an odd run of backslashes is escaped
        quotes = pos[quote]
        others = np.flatnonzero(chars != ord("\\"))  # each quote is one of them
        before = np.searchsorted(others, quotes) - 1
        run = quotes - 1 - np.where(before >= 0, others[np.maximum(before, 0)], -1)
        quote[quote] = run % 2 == 0
    return np.logical_xor.accumulate(quote)
