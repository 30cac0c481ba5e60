"""The pipeline runner: Shardy's registered passes (MLIR pass text) and the project's Python
passes (instances, passes/) on one module, in order, verified between them; the run owns its
analyses (analyses.py), collects what each pass found, and reports a failure located."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

from ..errors import ModuleError
from .analyses import Analyses, preserved_by
from .bindings import ir, passmanager
from .diagnostics import format_location, mlir_error, verify
from .parse import string_value


class PythonPass(Protocol):
    """A project pass instance (passes/): `run(module operation, analyses)` returns what it
    found (a small frozen result, or None); it raises a ShardyConvertError to fail.
    `PRESERVES_ANALYSES` (a class attribute, default False): it keeps what the pipeline run's
    analyses found valid (`analyses.py`); a pass that changed nothing in one run calls
    `analyses.mark_all_preserved()`."""

    NAME: ClassVar[str]

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> object | None: ...


def run_pipeline(
    module: ir.Module | ir.Operation,
    steps: Sequence[str | PythonPass],
    verify_each: bool = True,
    analyses: Analyses | None = None,
) -> list[tuple[str, object]]:
    """Runs Shardy/MLIR pass text and Python pass instances, in order; returns (pass name,
    result) for each Python pass that found something (its `run` returned a value). Consecutive
    pass texts share one PassManager; a Python pass runs directly between them (jaxlib 0.7.1's
    `PassManager.add` takes no Python callables, so this is the one way on every release).
    With `verify_each` False, MLIR's verifier does not run after every pass (a whole-module
    verification costs about as much as parsing it); the caller verifies once at the end.

    A Python pass's exception (ShardyConvertError, or a bug) stops the pipeline and is
    re-raised as it is: a bug is not turned into a conversion failure here. The run owns its
    `analyses` (a fresh one unless the caller gives one holding what it knows, e.g. the
    `walker.Mentions` of the text the module was parsed from): what one pass found by walking
    the module is kept for the next while the steps preserve it.
    """
    op = module.operation
    if any(isinstance(step, str) for step in steps):
        check_no_declarations(op)
    analyses = Analyses() if analyses is None else analyses
    found: list[tuple[str, object]] = []
    with op.context:
        for k, group in enumerate(_groups(steps)):
            if not isinstance(group, list):
                result = group.run(op, analyses)
                if result is not None:
                    found.append((group.NAME, result))
                unchanged = analyses.take_all_preserved()
                if not (unchanged or preserved_by(group)):
                    analyses.forget()
                if verify_each:
                    verify(op, "pass pipeline failed")
                continue
            if k and not verify_each:
                # A Python pass came before (pass texts are grouped): Shardy's C++ passes
                # may crash on invalid IR, so what our passes made is verified first.
                verify(op)
            _run_pass_manager(op, group, verify_each)
            analyses.forget()
    return found


def _groups(steps: Sequence[str | PythonPass]) -> list[list[str] | PythonPass]:
    """Runs of consecutive pass texts as lists; each Python pass on its own."""
    groups: list[list[str] | PythonPass] = []
    for step in steps:
        if not isinstance(step, str):
            groups.append(step)
        elif groups and isinstance(groups[-1], list):
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups


def _run_pass_manager(op: ir.Operation, names: list[str], verify_each: bool) -> None:
    pm = passmanager.PassManager("builtin.module")
    pm.enable_verifier(verify_each)
    for name in names:
        pm.add(name)
    try:
        pm.run(op)
    except ir.MLIRError as e:
        raise mlir_error("pass pipeline failed", e) from None


def check_no_declarations(module: ir.Operation) -> None:
    """Raises ModuleError at the first function declaration (a `func.func` without a body).

    Shardy's passes (sdy-import-pipeline, sdy-lift-inlined-meshes, sdy-close-shardings, ...)
    crash the process with SIGSEGV on a module holding one, even without any sharding on it.
    """
    found = _declarations(module)
    if found:
        name = string_value(found[0].attributes["sym_name"])
        raise ModuleError(
            f"function @{name} is only declared (it has no body); Shardy's passes cannot "
            "process function declarations",
            location=format_location(found[0].location),
        )


def _declarations(module: ir.Operation) -> list[ir.Operation]:
    """Body-less `func.func`s of a module and of the modules nested in it (a function lives
    in a symbol table; looking there is cheaper than walking every op)."""
    found: list[ir.Operation] = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func" and not len(op.regions[0].blocks):
            found.append(op)
        elif op.name == "builtin.module" and len(op.regions[0].blocks):
            found += _declarations(op)
    return found
