"""`shardy-convert plugin-wrapper PLUGIN`: the PJRT plugin wrapper's path and the environment
that makes it wrap PLUGIN (`Settings.to_env()`), for frameworks other than torch_xla (which use
`shardy_convert.torch_xla.use_plugin`). Every setting of the wrapper's own is a flag here, as
it is an argument of `use_plugin`."""

from __future__ import annotations

import shlex

import click

from ..plugin import plugin_library, wrapper
from ..plugin.cache import POLICIES
from ..plugin.settings import EMITS, Settings


@click.command("plugin-wrapper")
@click.argument("plugin", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--on-error",
    type=click.Choice(POLICIES),
    default="raise",
    show_default=True,
    help="A program with no Shardy form: fail its compile, or compile it with GSPMD.",
)
@click.option(
    "--emit",
    type=click.Choice(EMITS),
    help="What the plugin receives (default portable: Shardy's round-trip form, as JAX sends).",
)
@click.option(
    "--match-gspmd-boundary",
    is_flag=True,
    help="Give each program's open arguments and results the shardings GSPMD compiles for "
    "them (a GSPMD compile of each distinct program on jaxlib's CPU client).",
)
@click.option(
    "--boundary-cache",
    type=click.Path(file_okay=False),
    help="Keep GSPMD's choices across processes in this directory.",
)
@click.option(
    "--match-gspmd-propagation",
    is_flag=True,
    help="Also pin GSPMD's decisions inside each program where Shardy's propagation departs "
    "from them (implies --match-gspmd-boundary).",
)
@click.option(
    "--mesh-names/--no-mesh-names",
    default=True,
    show_default=True,
    help="Convert each program on the mesh the program created that its shardings fit (torch_xla "
    "Meshes, recorded in the process), else on the mesh inferred from its shardings.",
)
@click.option(
    "--dump-dir",
    type=click.Path(file_okay=False),
    help="Write each distinct program the plugin compiles into this directory, with an index.",
)
def plugin_wrapper(
    plugin,
    on_error,
    emit,
    match_gspmd_boundary,
    boundary_cache,
    match_gspmd_propagation,
    mesh_names,
    dump_dir,
) -> None:
    """Print the wrapper plugin's path, then the shell lines that make it wrap PLUGIN.

    Load the printed library as the framework's PJRT plugin, in a process with these variables
    set and a Python interpreter (the conversion runs in it).
    """
    reason = plugin_library.why_not_a_plugin(plugin)
    if reason:
        raise click.BadParameter(f"{plugin}: {reason}", param_hint="PLUGIN")
    settings = Settings(
        plugin=plugin,
        on_error=on_error,
        emit=emit,
        match_gspmd_boundary=match_gspmd_boundary,
        match_gspmd_propagation=match_gspmd_propagation,
        boundary_cache=boundary_cache,
        mesh_names=mesh_names,
        dump_dir=dump_dir,
    )
    click.echo(wrapper.library_path())  # a ShardyConvertError: the group's error boundary
    for name, value in settings.to_env().items():
        click.echo(f"export {name}={shlex.quote(value)}")
