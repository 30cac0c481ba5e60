"""The pipeline runner: Shardy's and MLIR's passes by name and the package's Python passes, in
one order, on one module; a failure as a located error."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jaxlib.mlir import ir, passmanager

from ..errors import ModuleError
from . import analyses
from .diagnostics import format_location, mlir_error, verify
from .parse import string_value

# A Python pass: (module operation) -> None; raise ShardyConvertError to fail.
PythonPass = Callable[[ir.Operation], None]


def run_pipeline(
    module: ir.Module | ir.Operation,
    steps: Sequence[str | tuple[str, PythonPass]],
    verify_each: bool = True,
    given: dict | None = None,
) -> None:
    """Runs Shardy/MLIR pass names and named Python passes, in order. Consecutive pass names
    share one PassManager; a Python pass runs directly between them (jaxlib 0.7.1's
    `PassManager.add` takes no Python callables, so this is the one way on every release).
    With `verify_each` False, MLIR's verifier does not run after every pass (a whole-module
    verification costs about as much as parsing it); the caller verifies once at the end.

    A Python pass's exception (ShardyConvertError, or a bug) stops the pipeline and is
    re-raised as it is: a bug is not turned into a conversion failure here. What one pass
    found by walking the module is kept for the next while the steps preserve it (`analyses`),
    starting with the facts `given` (e.g. the `walker.Mentions` of the text it was parsed
    from, under the key `("mentions", module operation)`).
    """
    op = module.operation
    if any(isinstance(step, str) for step in steps):
        check_no_declarations(op)
    with op.context, analyses.keeping(given) as forget:
        for k, group in enumerate(_groups(steps)):
            if isinstance(group, tuple):
                _, run = group
                run(op)
                if not analyses.preserved_by(run):
                    forget()
                if verify_each:
                    verify(op, "pass pipeline failed")
                continue
            if k and not verify_each:
                # A Python pass came before (pass names are grouped): Shardy's C++ passes
                # may crash on invalid IR, so what our passes made is verified first.
                verify(op)
            _run_pass_manager(op, group, verify_each)
            forget()


def _groups(
    steps: Sequence[str | tuple[str, PythonPass]],
) -> list[list[str] | tuple[str, PythonPass]]:
    """Runs of consecutive pass names as lists; each Python pass on its own."""
    groups: list[list[str] | tuple[str, PythonPass]] = []
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
