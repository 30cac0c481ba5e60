"""`shardy-convert opt` (run chosen passes on one module, like mlir-opt / sdy_opt) and
`list-passes` (every pass `opt` runs)."""

from __future__ import annotations

import click

from ..errors import describe
from .params import Failed, InputPath, mesh_option, num_devices_option


@click.command()
@click.argument("input", type=InputPath(dir_okay=False))
@click.option(
    "-p",
    "--passes",
    required=True,
    metavar="PIPELINE",
    help="Passes to run (see list-passes): NAME,... or an mlir-opt pipeline string, "
    "'builtin.module(import-shardings{num-devices=8}, sdy-close-shardings)'.",
)
@click.option("--split-input-file", is_flag=True, help="Run each `// -----` case separately.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Output file (default or `-`: stdout), written whole, and only when every case passed.",
)
@mesh_option
@num_devices_option
def opt(input, passes, split_input_file, output, mesh, num_devices) -> None:
    """Run chosen passes on one module and print it (like mlir-opt / sdy_opt)."""
    from ..commands.opt import opt as run_opt
    from ..passes.pipeline import parse

    # Every unknown pass and bad option: a usage error. --mesh and --num-devices: the options
    # of that name of every pass of the pipeline that has them, unless its text gives them.
    steps = parse(passes, defaults={"num_devices": num_devices, "mesh": mesh})
    failures = 0
    for error in run_opt(input, steps, output=output, split=split_input_file):
        click.echo(describe(error, file=input), err=True)
        failures += 1
    if failures:
        raise Failed()


@click.command("list-passes")
def list_passes() -> None:
    """Print every pass `opt` runs: the project's (with description and options) and the
    Shardy passes this jaxlib registers."""
    from ..passes.pipeline import CONVERT_PIPELINE
    from ..passes.pipeline_text import SYNTAX, option_kinds, registered_shardy_passes
    from ..passes.registry import PASSES

    for name, cls in PASSES.items():
        doc = " ".join((cls.__doc__ or "").split())
        kinds = [(f, k) for f, k in option_kinds(cls).items() if k != "python"]
        options = " ".join(f"{f.replace('_', '-')}={SYNTAX[kind]}" for f, kind in kinds)
        click.echo(f"{name}{f'{{{options}}}' if options else ''}\n  {doc}\n")
    click.echo("Shardy's passes registered in this jaxlib:")
    for name, anchor in registered_shardy_passes().items():
        click.echo(f"  {name}" if anchor == "builtin.module" else f"  {anchor}({name})")
    click.echo("\nconvert pipeline: " + ",".join(CONVERT_PIPELINE))
