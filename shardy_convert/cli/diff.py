"""`shardy-convert diff`: a thin command over `shardy_convert.commands.diff` (modules and dumps)
and `shardy_convert.commands.diff_audit` (two sharding audit reports, JSON).

Registered on the main group in cli/main.py (lazily).
Exit codes as GNU diff's, which golden-file scripts read: 0 equal, 1 different, 2 trouble (a
usage error, an input that cannot be read or is no module or dump: the error is printed).
"""

from __future__ import annotations

import contextlib

import click

from ..commands.batch import read_input
from ..errors import UsageError, describe, plural
from .params import InputPath


@click.command("diff")
@click.argument("a", type=InputPath(dir_okay=False))
@click.argument("b", required=False, type=InputPath(dir_okay=False))
@click.option("--normalize", is_flag=True, help="Print the canonical form of A (golden files).")
@click.option("--inline", is_flag=True, help="Inline func.call first (JAX's @shmap_body).")
def diff(a, b, normalize, inline) -> None:
    """Compare two modules or dumps by placement, or two sharding audit reports (JSON, from
    shardy_convert.torch_xla.audit) tensor by tensor: exit 0 equal, 1 different, 2 trouble."""
    from ..commands.diff import diff as compare
    from ..commands.diff import normalize as canonical_text
    from ..commands.diff_audit import diff_reports
    from ..formats.audit import looks_like_report

    if normalize == (b is not None):
        raise click.UsageError("give two inputs A B, or one input with --normalize")
    if a == b == "-":
        raise click.UsageError("stdin (-) is given more than once; it can be read once")
    if normalize:
        with _trouble(a):
            text = canonical_text(read_input(a), inline=inline)
        click.echo(text, nl=False)
        return
    counted = "placement"
    with _trouble(None):
        data = (read_input(a), read_input(b))
        reports = [looks_like_report(d) for d in data]
        if any(reports) and not all(reports):
            report, other = (a, b) if reports[0] else (b, a)
            raise UsageError(
                f"{report} is a sharding audit report and {other} is not: diff compares two "
                "reports, or two modules or dumps"
            )
        if all(reports):
            result, counted = diff_reports(*data, (a, b)), "tensor"
        else:
            result = compare(*data, (a, b), inline=inline)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    for difference in result.differences:
        click.echo(str(difference))
    if result.equal:
        click.echo(f"EQUAL: {plural(result.placements, counted)} compared")
        return
    click.echo(f"DIFFERENT: {plural(len(result.differences), 'difference')}")
    raise click.exceptions.Exit(1)


@contextlib.contextmanager
def _trouble(file: str | None):
    """An input that cannot be read or compared (or a bug of ours) is printed as the error
    it is and exits 2, never 1: that would read as "different"."""
    try:
        yield
    except UsageError:
        raise  # the group's usage error (exit 2)
    except Exception as e:
        click.echo(describe(e, file=file), err=True)
        raise click.exceptions.Exit(2) from None
