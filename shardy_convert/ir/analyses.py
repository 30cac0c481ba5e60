"""Analyses, MLIR's idea in small: a fact about a module that a pass computes (one walk over
its ops, `walker.op_index`) is kept for the passes after it in the same pipeline run, until a
step runs that does not declare it preserved (a Python pass class with `PRESERVES_ANALYSES =
True` adds and removes no op inside the module's functions and no custom call; Shardy's C++
passes and every other Python pass forget them all). Outside a pipeline run nothing is kept."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Any

_KEPT: ContextVar[dict | None] = ContextVar("shardy_convert_analyses", default=None)


def get(key: Hashable, compute: Callable[[], Any]) -> Any:
    """`compute()`, or what it returned for `key` earlier in this pipeline run."""
    kept = _KEPT.get()
    if kept is None:
        return compute()
    if key not in kept:
        kept[key] = compute()
    return kept[key]


def peek(key: Hashable) -> Any:
    """What is kept for `key` in this pipeline run, else None (nothing is computed)."""
    kept = _KEPT.get()
    return None if kept is None else kept.get(key)


@contextlib.contextmanager
def keeping(given: dict | None = None) -> Iterator[Callable[[], None]]:
    """Analyses are kept inside (one pipeline run), starting with the facts `given` by the
    caller (what it knows of the module as it is now); the yielded function forgets them all."""
    kept: dict = dict(given or {})
    token = _KEPT.set(kept)
    try:
        yield kept.clear
    finally:
        _KEPT.reset(token)


def preserved_by(python_pass: object) -> bool:
    """Whether a Python pass (an instance) keeps the analyses valid."""
    return bool(getattr(type(python_pass), "PRESERVES_ANALYSES", False))
