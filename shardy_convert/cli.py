"""The `shardy-convert` command line: thin click commands over the library.

Exit codes: 0 success, 1 a conversion failure (each reported as `FILE[:graph N]:LOC: error:`),
2 a usage error (click's own).
"""

from __future__ import annotations

import sys
import warnings
from typing import ClassVar

import click

from . import __version__
from .errors import ShardyConvertError


class _LazyGroup(click.Group):
    """A group whose heavier commands are imported only when used (cold start matters: the
    convert path should cost little more than importing jaxlib's MLIR)."""

    lazy: ClassVar[dict[str, str]] = {
        "diff": "shardy_convert.cli_diff:diff",
        "inspect": "shardy_convert.cli_inspect:inspect_command",
        "to-gspmd": "shardy_convert.cli_diff:to_gspmd",
    }

    def list_commands(self, ctx) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx, name):
        if name not in self.lazy:
            return super().get_command(ctx, name)
        import importlib

        module, attr = self.lazy[name].split(":")
        return getattr(importlib.import_module(module), attr)


class _Failed(click.exceptions.Exit):
    """Exit 1 after the errors were printed."""

    def __init__(self):
        super().__init__(1)


def _mesh_option(f):
    return click.option(
        "--mesh",
        metavar="NAME=SIZE,...",
        help="Mesh axis names, order and sizes to use (default _axis_0, _axis_1, ...).",
    )(f)


def _num_devices_option(f):
    return click.option(
        "--num-devices",
        type=click.IntRange(min=1),
        help="Device count; the shardings must agree. Needed when all are replicated.",
    )(f)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shardy-convert")
def main() -> None:
    """Convert GSPMD mhlo.sharding StableHLO (torch_xla, JAX) into the Shardy dialect."""
    warnings.simplefilter("default")
    warnings.showwarning = _show_warning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    click.echo(f"warning: {message}", err=True)


@main.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-o", "--output", type=click.Path(), help="Output file or directory (default stdout)."
)
@click.option(
    "--emit",
    type=click.Choice(["text", "bytecode", "portable"]),
    help="Output form: MLIR text, MLIR bytecode, or a StableHLO portable artifact (what a PJRT "
    "C-API client hands a plugin; Shardy in its round-trip form). Default: the input's form.",
)
@click.option(
    "--target-version",
    metavar="X.Y.Z",
    help="StableHLO version of a portable artifact (default: the input's, else the newest).",
)
@_mesh_option
@_num_devices_option
@click.option("--imported", is_flag=True, help="Emit Shardy's fully imported (internal) form.")
@click.option(
    "--validate/--no-validate",
    default=True,
    show_default=True,
    help="Also run Shardy's whole sdy-import-pipeline on a copy of each result.",
)
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=1, help="Worker processes for batches."
)
def convert(
    inputs, output, emit, target_version, mesh, num_devices, imported, validate, jobs
) -> None:
    """Convert modules or torch_xla dumps to Shardy; `-` reads stdin."""
    from .files import Job, run_jobs

    job = Job(
        "convert",
        emit=emit,
        target_version=target_version,
        mesh=mesh,
        num_devices=num_devices,
        imported=imported,
        validate=validate,
    )
    _run(lambda: run_jobs(job, inputs, output, jobs))


@main.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-o", "--output", type=click.Path(), help="Output file or directory (default stdout)."
)
def v2(inputs, output) -> None:
    """Only rewrite V1 device lists to V2 iota form; the module stays GSPMD."""
    from .files import Job, run_jobs

    _run(lambda: run_jobs(Job("v2"), inputs, output))


@main.command()
@click.argument("input", type=click.Path(allow_dash=True))
@click.option(
    "-p",
    "--passes",
    required=True,
    metavar="NAME,...",
    help="Comma-separated passes: project passes (see list-passes) or registered sdy-* passes.",
)
@click.option("--split-input-file", is_flag=True, help="Run each `// -----` case separately.")
@_mesh_option
@_num_devices_option
def opt(input, passes, split_input_file, mesh, num_devices) -> None:
    """Run chosen passes on one module and print it (like mlir-opt / sdy_opt)."""
    from .converter import parse_mesh, run_passes, split_input
    from .files import read_input
    from .pipeline import Options

    def action() -> int:
        text = read_input(input).decode()
        options = Options(num_devices=num_devices, mesh=parse_mesh(mesh))
        names = [n.strip() for n in passes.split(",") if n.strip()]
        cases = split_input(text) if split_input_file else [text]
        failures = 0
        for k, case in enumerate(cases):
            if k:
                click.echo("// -----")
            try:
                click.echo(run_passes(case, names, options), nl=False)
            except ShardyConvertError as e:
                click.echo(str(e.located(file=input)), err=True)
                failures += 1
        return failures

    _run(action)


@main.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--devices",
    type=click.IntRange(min=1),
    help="CPU devices to compile on (default: what the shardings say).",
)
@_mesh_option
def check(inputs, devices, mesh) -> None:
    """Convert, compile original (GSPMD) and result (Shardy) on the CPU PJRT client, compare."""
    import os

    # Before jaxlib loads: XLA's C++ warnings (GSPMD deprecation, device lists) would drown
    # the report.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from .files import check_inputs

    _run(lambda: check_inputs(inputs, devices, mesh))


@main.command("list-passes")
def list_passes() -> None:
    """Print every pass of the project with its description."""
    from .passes import PASSES
    from .pipeline import CONVERT_PIPELINE

    for name, cls in PASSES.items():
        doc = " ".join((cls.__doc__ or "").split())
        click.echo(f"{name}\n  {doc}\n")
    click.echo("convert pipeline: " + ",".join(CONVERT_PIPELINE))


def _run(action) -> None:
    """Runs a command's action; failures were printed, errors are printed here: exit 1."""
    try:
        failures = action()
    except ShardyConvertError as e:
        click.echo(str(e), err=True)
        raise _Failed() from None
    except Exception as e:  # a bug of ours: one line, not a traceback (exit 1)
        click.echo(f"error: internal error: {type(e).__name__}: {e}", err=True)
        raise _Failed() from None
    if failures:
        raise _Failed()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
