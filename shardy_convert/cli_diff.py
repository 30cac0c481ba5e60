"""`shardy-convert to-gspmd` and `shardy-convert diff`: thin commands over `shardy_convert.diff`.

Registered on the main group in cli.py (`main.add_command(to_gspmd)`, `main.add_command(diff)`).
Exit codes as everywhere: 0 ok / equal, 1 a failure or a difference, 2 usage.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from .errors import ShardyConvertError
from .files import Job, read_input, run_jobs


@dataclass(frozen=True)
class ExportJob(Job):
    """A files.Job whose action is the export: each module (or dump graph) back to GSPMD."""

    action: str = "to-gspmd"

    def module(self, data: str | bytes, fallback_devices: int | None = None) -> str | bytes:
        from .diff import to_gspmd as export

        return export(data, emit=self.emit)


@click.command("to-gspmd")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-o", "--output", type=click.Path(), help="Output file or directory (default stdout)."
)
@click.option(
    "--emit",
    type=click.Choice(["text", "bytecode"]),
    help="Output form (default: the input's own form).",
)
def to_gspmd(inputs, output, emit) -> None:
    """Export Shardy modules or dumps back to GSPMD mhlo.sharding strings (V2)."""
    if run_jobs(ExportJob(emit=emit), inputs, output):
        raise click.exceptions.Exit(1)


@click.command("diff")
@click.argument("a", type=click.Path(allow_dash=True))
@click.argument("b", required=False, type=click.Path(allow_dash=True))
@click.option("--normalize", is_flag=True, help="Print the canonical form of A (golden files).")
@click.option("--inline", is_flag=True, help="Inline func.call first (JAX's @shmap_body).")
def diff(a, b, normalize, inline) -> None:
    """Compare two modules or dumps by placement: exit 0 equal, 1 different."""
    from .diff import diff as compare
    from .diff import normalize as canonical_text

    if normalize == (b is not None):
        raise click.UsageError("give two inputs A B, or one input with --normalize")
    try:
        if normalize:
            click.echo(canonical_text(read_input(a), inline=inline), nl=False)
            return
        result = compare(read_input(a), read_input(b), (a, b), inline=inline)
    except ShardyConvertError as e:
        click.echo(str(e.located(file=a if normalize else None)), err=True)
        raise click.exceptions.Exit(1) from None
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    for difference in result.differences:
        click.echo(str(difference))
    if result.equal:
        click.echo(f"EQUAL: {result.placements} placements compared")
        return
    click.echo(f"DIFFERENT: {len(result.differences)} differences")
    raise click.exceptions.Exit(1)
