"""`shardy-convert diff`: a thin command over `shardy_convert.commands.diff`.

Registered on the main group in cli.py (lazily).
Exit codes as everywhere: 0 ok / equal, 1 a failure or a difference, 2 usage.
"""

from __future__ import annotations

import click

from ..commands.batch import read_input
from ..errors import ShardyConvertError


@click.command("diff")
@click.argument("a", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("b", required=False, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--normalize", is_flag=True, help="Print the canonical form of A (golden files).")
@click.option("--inline", is_flag=True, help="Inline func.call first (JAX's @shmap_body).")
def diff(a, b, normalize, inline) -> None:
    """Compare two modules or dumps by placement: exit 0 equal, 1 different."""
    from ..commands.diff import diff as compare
    from ..commands.diff import normalize as canonical_text

    if normalize == (b is not None):
        raise click.UsageError("give two inputs A B, or one input with --normalize")
    if a == b == "-":
        raise click.UsageError("stdin (-) is given more than once; it can be read once")
    if normalize:
        try:
            text = canonical_text(read_input(a), inline=inline)
        except ShardyConvertError as e:
            raise e.located(file=a) from None  # printed by the group's error boundary
        click.echo(text, nl=False)
        return
    result = compare(read_input(a), read_input(b), (a, b), inline=inline)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    for difference in result.differences:
        click.echo(str(difference))
    if result.equal:
        click.echo(f"EQUAL: {result.placements} placements compared")
        return
    click.echo(f"DIFFERENT: {len(result.differences)} differences")
    raise click.exceptions.Exit(1)
