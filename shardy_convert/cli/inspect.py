"""`shardy-convert inspect`: every sharded value, its sharding in every form, and an audit.

Registered on the main group with `main.add_command(inspect_command)`. The work is done by
`commands.inspect`; this only parses flags and prints. Exit 0 when every input was read
(findings, even errors among them, are the report, not a failure), 1 when an input could not be
read (a located error for each), 2 for usage errors, including a `--show NAME` that names no
value.
"""

from __future__ import annotations

import json

import click

from .params import inputs_argument, mesh_file_option


@click.command("inspect")
@inputs_argument
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Aligned table for a terminal, or JSON for tools (schema in commands/inspect).",
)
@click.option(
    "--show",
    metavar="NAME",
    help="Draw which devices hold each tile of one value (%arg3, arg3, 'result 0', %1, @f:%arg0).",
)
@click.option(
    "--graph",
    type=click.IntRange(min=0),
    help="Only this graph of a dump (a plain module is graph 0).",
)
@click.option("--ascii", "ascii_only", is_flag=True, help="Draw --show with plain ASCII.")
@mesh_file_option
def inspect_command(inputs, fmt, show, graph, ascii_only, mesh_file) -> None:
    """Show every sharded value (as given, V2, sdy, per device) and audit the annotations."""
    from ..commands.inspect import find_value, format_table, inspect_inputs
    from ..commands.inspect import show as draw

    if show and fmt == "json":
        raise click.UsageError("--show draws a grid: it has no JSON form (drop --format json)")
    report = inspect_inputs(inputs, mesh_file)
    if graph is not None:
        _only_graph(report, graph)
    for error in report.errors:
        click.echo(error.describe(), err=True)
    if show:
        try:
            found, value = find_value(report, show, graph)
        except LookupError as e:
            raise click.BadParameter(str(e), param_hint="--show") from None
        click.echo(draw(found, value, ascii=ascii_only), nl=False)
    elif fmt == "json":
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        click.echo(format_table(report), nl=False)
    if report.errors:
        raise click.exceptions.Exit(1)


def _only_graph(report, graph: int) -> None:
    """Keeps graph `graph` (with its findings); a graph the inputs do not have is a usage
    error naming how many they have (one that failed to read is reported as its error)."""
    known = {g.graph or 0 for g in report.graphs} | {e.graph or 0 for e in report.errors}
    if graph not in known:
        count = max(known) + 1 if known else 0
        have = f"{count} graph" + "s" * (count != 1) + (f" (0 to {count - 1})" if count > 1 else "")
        raise click.BadParameter(
            f"there is no graph {graph}: the input has {have}", param_hint="--graph"
        )
    report.graphs = [g for g in report.graphs if (g.graph or 0) == graph]
    report.findings = [f for f in report.findings if f.graph in (None, graph)]
