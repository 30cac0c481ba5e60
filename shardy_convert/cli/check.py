"""`shardy-convert check`: a thin command over `shardy_convert.commands.check`.

Registered on the main group in cli/main.py (lazily). Exit 0 when every graph is the same program
(or differs only where XLA is wrong), 1 when a conversion differs or fails or, with
`--max-cost-ratio R`, when Shardy's program costs more than R times GSPMD's; 2 usage.
Reports go to stdout (text or one JSON object), errors to stderr each on a line of its own;
on a terminal, stderr also shows what is being done, erased before anything else is written.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import warnings

import click

from .params import (
    Failed,
    check_mesh_options,
    inputs_argument,
    match_gspmd_boundary_option,
    match_gspmd_propagation_option,
    mesh_file_option,
    mesh_option,
)


@click.command("check")
@inputs_argument
@click.option(
    "--devices",
    type=click.IntRange(min=1),
    help="Device count of graphs whose module and dump do not say (all replicated).",
)
@mesh_option
@mesh_file_option
@click.option(
    "--reference/--no-reference",
    default=True,
    show_default=True,
    help="Also compare with the program run unpartitioned on one device.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="A report per graph for people, or one JSON object for tools.",
)
@click.option(
    "--max-cost-ratio",
    type=click.FloatRange(min=0, min_open=True),
    callback=lambda ctx, param, value: _a_number(value),
    metavar="R",
    help="Fail (exit 1) a graph whose Shardy program has more than R times GSPMD's collective "
    "bytes or temp memory.",
)
@click.option(
    "--inputs",
    "values",
    type=click.Path(exists=True, dir_okay=False),
    callback=lambda ctx, param, value: _read_values(value),
    metavar="FILE.npz",
    help="Run on these values (arrays arg0, arg1, ... or np.savez's arr_0, ...; 'graph N/arg0' "
    "for graph N of a dump) instead of inputs drawn by what each parameter is.",
)
@click.option(
    "--reproducer",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Write each graph whose values differ as a reproducer (the programs cut to the "
    "differing outputs, the inputs, a script that runs them with jaxlib) under DIR.",
)
@click.option(
    "--pad-uneven",
    is_flag=True,
    help="Give uneven shardings GSPMD's padded global shape in both programs first (as convert "
    "--pad-uneven and the plugin do): compares the programs that take GSPMD's buffers.",
)
@click.option(
    "--suggest",
    is_flag=True,
    help="For a graph whose Shardy program costs differently, find the fewest pins that give "
    "GSPMD's program (as convert --match-gspmd-propagation does) and print each as the "
    "xs.mark_sharding line a torch_xla program adds.",
)
@match_gspmd_boundary_option
@match_gspmd_propagation_option
def check(
    inputs,
    devices,
    mesh,
    mesh_file,
    reference,
    fmt,
    max_cost_ratio,
    values,
    reproducer,
    pad_uneven,
    suggest,
    match_gspmd_boundary,
    match_gspmd_propagation,
) -> None:
    """Convert, compile original (GSPMD) and result (Shardy) on the CPU PJRT client, compare
    them and what each compiled (collectives, memory, FLOPs, boundary shardings)."""
    check_mesh_options(mesh, mesh_file)
    _see_xla_warnings()
    from ..commands.check import CheckRequest, check_inputs
    from ..commands.check.compare import Given
    from ..commands.check.render_json import report_json
    from ..commands.check.render_text import graph_text, summary_text
    from ..commands.check.summary import summarize

    checks = []
    with _status() as status:
        arrays, file = values or (None, "")
        convert = CheckRequest.conversion(
            mesh,
            mesh_file,
            pad_uneven=pad_uneven,
            match_gspmd_boundary=match_gspmd_boundary,
            match_gspmd_propagation=match_gspmd_propagation,
        )
        request = CheckRequest(
            convert,
            devices=devices,
            reference=reference,
            max_cost_ratio=max_cost_ratio,
            given=Given(arrays, file, reproducer=reproducer, suggest=suggest),
        )
        for graph in check_inputs(inputs, request, progress=status):
            status.clear()
            checks.append(graph)
            if fmt == "text" and graph.error is None:
                click.echo(graph_text(graph))
            for line in _errors(graph):
                click.echo(line, err=True)
    if fmt == "json":
        click.echo(report_json(checks, summarize(checks)))
    elif len(checks) > 1:
        click.echo("\n" + summary_text(summarize(checks)))
    if any(graph.failed for graph in checks):
        raise Failed()


def _read_values(path: str | None) -> tuple[dict, str] | None:
    """The arrays of `--inputs`, read when the command line is (a bad file: usage error)."""
    if path is None:
        return None
    from ..commands.check.draws import read_inputs
    from ..errors import ShardyConvertError

    try:
        return read_inputs(path), path
    except ShardyConvertError as e:
        raise click.BadParameter(e.message) from None


def _a_number(value: float | None) -> float | None:
    """`nan` passes click's range (no comparison holds); it is no limit either."""
    if value is not None and math.isnan(value):
        raise click.BadParameter("nan is not a positive number")
    return value


def _see_xla_warnings() -> None:
    """XLA warns of an involuntary rematerialization at WARNING level, which
    `TF_CPP_MIN_LOG_LEVEL=2` hides (read once, when jaxlib loads); `check` keeps all of XLA's
    log off the terminal anyway, so it asks for warnings before jaxlib loads."""
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip()
    if "jaxlib" not in sys.modules and level.isdigit() and int(level) >= 2:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"


def _errors(graph) -> list[str]:
    """The graph's error and why its cost is over the limit, each line `WHERE: error: ...`."""
    lines = [graph.error.describe()] if graph.error is not None else []
    return lines + [f"{graph.where}: error: {reason}" for reason in graph.excess]


class _Status:
    """One line on a terminal's stderr saying what is being done; `clear` erases it. Nothing
    when stderr is not a terminal."""

    def __init__(self):
        self.shown = False

    def __call__(self, message: str) -> None:
        if not sys.stderr.isatty():
            return
        width = shutil.get_terminal_size().columns - 1  # a wrapped line cannot be erased
        sys.stderr.write("\r\x1b[K" + message[:width])
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False


@contextlib.contextmanager
def _status():
    """A `_Status`, erased before any warning is shown and when the command ends."""
    status = _Status()
    show = warnings.showwarning

    def erase_first(*args, **kwargs):
        status.clear()
        show(*args, **kwargs)

    warnings.showwarning = erase_first
    try:
        yield status
    finally:
        warnings.showwarning = show
        status.clear()
