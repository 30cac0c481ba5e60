"""The `shardy-convert` command line: thin click commands over the library.

Exit codes: 0 success, 1 a conversion failure (each reported as `FILE[:graph N]:LOC: error:`),
2 a usage error (click's own), 130 interrupted by Ctrl-C (128 + SIGINT: interrupt.py).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings
from typing import ClassVar

import click

from ..errors import ShardyConvertWarning, UsageError, describe
from .params import (
    Failed,
    TargetVersion,
    check_mesh_options,
    inputs_argument,
    match_gspmd_boundary_option,
    match_gspmd_propagation_option,
    mesh_file_option,
    mesh_option,
    num_devices_option,
)
from .progress import echo, progress
from .version import version_option


class _LazyGroup(click.Group):
    """A group whose heavier commands are imported only when used (cold start matters: the
    convert path should cost little more than importing jaxlib's MLIR). It is also the one
    error boundary: whatever a command raises is printed here as one line (exit 1), usage
    errors as click's (exit 2), never a traceback."""

    lazy: ClassVar[dict[str, str]] = {
        "check": "shardy_convert.cli.check:check",
        "diff": "shardy_convert.cli.diff:diff",
        "inspect": "shardy_convert.cli.inspect:inspect_command",
        "plugin-wrapper": "shardy_convert.cli.plugin_wrapper:plugin_wrapper",
        "opt": "shardy_convert.cli.opt:opt",
        "list-passes": "shardy_convert.cli.opt:list_passes",
    }

    def list_commands(self, ctx) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx, name):
        if name not in self.lazy:
            return super().get_command(ctx, name)

        module, attr = self.lazy[name].split(":")
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx):
        from .interrupt import command_running, interrupted

        try:
            with command_running():
                return self._invoke(ctx)
        except KeyboardInterrupt:  # Ctrl-C: exit 130 (see interrupt.py)
            interrupted()

    def _invoke(self, ctx):
        with _whole_writes_to_stdout():
            try:
                return super().invoke(ctx)
            except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
                raise
            except UsageError as e:
                raise click.UsageError(e.message) from None
            except BrokenPipeError:  # `... | head`: exit 1 (not all was delivered), quietly
                _quiet_stdout()
                raise click.exceptions.Exit(1) from None
            except Exception as e:
                click.echo(describe(e), err=True)
                raise Failed() from None


@contextlib.contextmanager
def _whole_writes_to_stdout():
    """sys.stdout, for the command's time, delivering every write whole or raising
    BrokenPipeError (see `formats/output.py`): a cut-off output never exits 0."""
    from ..formats.output import whole_text_writes

    saved = sys.stdout
    sys.stdout = whole_text_writes(saved) or saved
    try:
        yield
    finally:
        sys.stdout = saved


def _quiet_stdout() -> None:
    """After the reader of our stdout went away (`... | head`): no more output, and no
    "Exception ignored ... BrokenPipeError" when Python flushes stdout at exit."""

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _output(f):
    return click.option(
        "-o",
        "--output",
        type=click.Path(),
        help="Output file or directory (default or `-`: stdout; a directory for several inputs).",
    )(f)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main() -> None:
    """Convert GSPMD mhlo.sharding StableHLO (torch_xla, JAX) into the Shardy dialect."""
    warnings.simplefilter("default")
    warnings.showwarning = _show_warning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if isinstance(message, ShardyConvertWarning):
        echo(message.describe())
    else:
        echo(f"warning: {message}")


@main.command()
@inputs_argument
@_output
@click.option(
    "--emit",
    type=click.Choice(["text", "bytecode", "portable"]),
    help="Output form: MLIR text, MLIR bytecode, or a StableHLO portable artifact (what a PJRT "
    "C-API client hands a plugin; Shardy in its round-trip form). Default: the input's form.",
)
@click.option(
    "--target-version",
    type=TargetVersion(),
    help="StableHLO version of a portable artifact (default: the input's, else the newest).",
)
@mesh_option
@mesh_file_option
@num_devices_option
@click.option("--imported", is_flag=True, help="Emit Shardy's fully imported (internal) form.")
@click.option(
    "--validate/--no-validate",
    default=True,
    show_default=True,
    help="Also run Shardy's whole sdy-import-pipeline on a copy of each result.",
)
@click.option(
    "--propagate-to-parameters/--no-propagate-to-parameters",
    default=False,
    show_default=True,
    help="XLA's allow_spmd_sharding_propagation_to_parameters: without it an unannotated "
    "@main argument is replicated (closed), as GSPMD compiles it; with it, left open.",
)
@click.option(
    "--propagate-to-output/--no-propagate-to-output",
    default=True,
    show_default=True,
    help="XLA's allow_spmd_sharding_propagation_to_output, for unannotated @main results.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Make uneven shardings (a dim its shard count does not divide: GSPMD pads it, Shardy "
    "compiles another program) errors instead of warnings.",
)
@click.option(
    "--pad-uneven",
    is_flag=True,
    help="Give uneven shardings GSPMD's padded global shape (each such dim rounded up to a "
    "multiple of its shard count; @main's arguments take it, the logical value sliced "
    "inside): the program takes the per-device buffers GSPMD's does.",
)
@match_gspmd_boundary_option
@match_gspmd_propagation_option
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=1, help="Worker processes for batches."
)
def convert(
    inputs,
    output,
    emit,
    target_version,
    mesh,
    mesh_file,
    num_devices,
    imported,
    validate,
    propagate_to_parameters,
    propagate_to_output,
    strict,
    pad_uneven,
    match_gspmd_boundary,
    match_gspmd_propagation,
    jobs,
) -> None:
    """Convert modules or torch_xla dumps to Shardy; `-` reads stdin."""
    from ..converter import ConvertRequest, before_import
    from ..passes.import_shardings import ImportShardingsPass

    check_mesh_options(mesh, mesh_file)
    importer = ImportShardingsPass(
        num_devices=num_devices,
        mesh=mesh,
        meshes=mesh_file,
        allow_spmd_sharding_propagation_to_parameters=propagate_to_parameters,
        allow_spmd_sharding_propagation_to_output=propagate_to_output,
        strict=strict,
    )
    before = before_import(
        pad_uneven=pad_uneven,
        match_gspmd_boundary=match_gspmd_boundary,
        match_gspmd_propagation=match_gspmd_propagation,
    )
    request = ConvertRequest(
        importer,
        before,
        emit=emit,
        target_version=target_version,
        imported=imported,
        validate=validate,
    )
    _run_batch(request, inputs, output, jobs, find_meshes=True)


@main.command()
@inputs_argument
@_output
def v2(inputs, output) -> None:
    """Only rewrite V1 device lists to V2 iota form; the module stays GSPMD."""
    from ..converter import V2Request

    _run_batch(V2Request(), inputs, output)


@main.command("to-gspmd")
@inputs_argument
@_output
@click.option(
    "--emit",
    type=click.Choice(["text", "bytecode"]),
    help="Output form (default: the input's own form).",
)
def to_gspmd(inputs, output, emit) -> None:
    """Export Shardy modules or dumps back to GSPMD mhlo.sharding strings (V2)."""
    from ..converter import ToGspmdRequest

    _run_batch(ToGspmdRequest(emit), inputs, output)


def _run_batch(request, inputs, output, jobs: int = 1, find_meshes: bool = False) -> None:
    """Runs a batch command's request (converter.py) on every input: prints each failure
    and, for several inputs, a summary."""
    from ..commands.batch import Job, plan, refuse_dumps, refuse_terminal, run

    refuse_terminal(output, request.emit)
    items = plan(inputs, output)
    refuse_dumps(items, request.emit)
    failures = usage = 0
    as_it_was: dict[str, int] = {}  # inputs written as they came, by what they already were
    with progress(len(items)) as bar:
        for outcome in run(Job(request, find_meshes), items, jobs, progress=bar.graphs):
            for message in (*outcome.warnings, *outcome.errors):
                echo(message)
            failures += bool(outcome.errors)
            usage += outcome.usage
            if outcome.as_it_is is not None:
                as_it_was[outcome.as_it_is] = as_it_was.get(outcome.as_it_is, 0) + 1
            bar.update(1)
    if len(items) > 1:
        converted = len(items) - failures - sum(as_it_was.values())
        apart = "".join(f", {n} {state}" for state, n in as_it_was.items())
        click.echo(f"{converted} of {len(items)} inputs converted{apart}", err=True)
    if usage:
        raise click.exceptions.Exit(2)
    if failures:
        raise Failed()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
