"""`shardy-convert opt` (run chosen passes on one module, like mlir-opt / sdy_opt) and
`list-passes` (every pass `opt` runs)."""

from __future__ import annotations

import warnings

import click

from ..errors import ShardyConvertError, ShardyConvertWarning, describe, naming_flag
from .main import _Failed, _mesh_option, _num_devices_option


@click.command()
@click.argument("input", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
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
@_mesh_option
@_num_devices_option
def opt(input, passes, split_input_file, output, mesh, num_devices) -> None:
    """Run chosen passes on one module and print it (like mlir-opt / sdy_opt)."""
    from pathlib import Path

    from ..commands.batch import STDIN, read_input, refuse_terminal, write
    from ..converter import run_passes, split_input
    from ..formats.dump import as_text
    from ..passes.pipeline import parse

    # Every unknown pass and bad option: a usage error. --mesh and --num-devices: the options
    # of that name of every pass of the pipeline that has them, unless its text gives them.
    steps = parse(passes, defaults={"num_devices": num_devices, "mesh": mesh})
    data = read_input(input)
    text = as_text(data)
    refuse_terminal(output, "bytecode" if text is None else None)  # the input's form
    _check_one_module(text, input)
    target = None if output in (None, STDIN) else Path(output)
    cases = split_input(text) if split_input_file and text is not None else [text or data]
    results, failures = [], 0
    for k, case in enumerate(cases):
        if k and target is None:
            write("// -----\n", None)
        try:
            result = _warnings_named(input, run_passes, case, steps)
        except ShardyConvertError as e:  # reported; the next case still runs (like mlir-opt)
            click.echo(describe(e, file=input), err=True)
            failures += 1
            continue
        if target is None:
            write(result, None)  # all of it, or BrokenPipeError
        results.append(result)
    if failures:
        raise _Failed()
    if target is not None:
        write(results[0] if len(results) == 1 else "// -----\n".join(results), target)


def _check_one_module(text: str | None, file: str) -> None:
    """opt runs on one module, as mlir-opt does: a dump is refused, saying so."""
    from ..formats.dump import read

    source = None if text is None else read(text, file)  # a malformed dump: located error
    if source is None or not source.is_dump:
        return
    count = len(source.graphs)
    raise ShardyConvertError(
        f"a torch_xla dump ({count} graph{'s' * (count != 1)}): opt runs on one module "
        "(convert runs on dumps)",
        file=file,
    )


def _warnings_named(file: str, fn, *args):
    """`fn(*args)`, its ShardyConvertWarnings located in `file` (as convert prints them)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ShardyConvertWarning)
            return fn(*args)
    finally:  # passed on once recording has stopped
        for w in caught:
            ours = isinstance(w.message, ShardyConvertWarning)
            message = naming_flag(w.message, "--num-devices N")
            warnings.warn(message.located(file=file) if ours else message, stacklevel=2)


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
