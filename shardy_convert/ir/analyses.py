"""Analyses, MLIR's AnalysisManager in small: a fact about a module that a pass computes (one
walk over its ops, `walker.op_index`) is kept for the passes after it in the same pipeline run,
until a step runs that does not declare it preserved (a Python pass class with
`PRESERVES_ANALYSES = True` adds and removes no op inside the module's functions and no custom
call; a pass that changed nothing this time says so with `mark_all_preserved`, as MLIR's
passes do; Shardy's C++ passes and every other Python pass forget them all).

The pipeline run owns one `Analyses` and hands it to each pass's `run(module, analyses)`; a
pass run on its own (None) computes what it needs. Nothing is kept between runs."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any


class Analyses:
    """What the passes of one pipeline run found about its module, by key (a kind and the
    module operation: `("op_index", module)`), starting with the facts `given` by the caller
    (what it knows of the module as it is now, `("mentions", module)`)."""

    def __init__(self, given: Mapping | None = None) -> None:
        self._kept: dict = dict(given or {})
        self._all_preserved = False

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()`, or what it returned for `key` earlier in this run."""
        if key not in self._kept:
            self._kept[key] = compute()
        return self._kept[key]

    def peek(self, key: Hashable) -> Any:
        """What is kept for `key`, else None (nothing is computed)."""
        return self._kept.get(key)

    def forget(self) -> None:
        """After a step that does not preserve them: nothing found so far is valid."""
        self._kept.clear()

    def mark_all_preserved(self) -> None:
        """Said by the running pass when it changed nothing (MLIR's
        `markAllAnalysesPreserved`): what was found before it stays valid after it."""
        self._all_preserved = True

    def take_all_preserved(self) -> bool:
        """For the pipeline runner, after each step: whether the step said so (then reset)."""
        said, self._all_preserved = self._all_preserved, False
        return said


def preserved_by(python_pass: object) -> bool:
    """Whether a Python pass (an instance) keeps the analyses valid."""
    return bool(getattr(type(python_pass), "PRESERVES_ANALYSES", False))
