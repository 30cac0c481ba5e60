"""`shardy-convert plugin-wrapper PLUGIN`: the PJRT plugin wrapper's path and the environment
that makes it wrap PLUGIN, for frameworks other than torch_xla (which use
`shardy_convert.torch_xla.use_plugin`)."""

from __future__ import annotations

import shlex

import click

from ..plugin import plugin_library, wrapper


@click.command("plugin-wrapper")
@click.argument("plugin", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--on-error",
    type=click.Choice(wrapper.POLICIES),
    default="raise",
    show_default=True,
    help="A program with no Shardy form: fail its compile, or compile it with GSPMD.",
)
@click.option(
    "--emit",
    type=click.Choice(wrapper.EMITS),
    help="What the plugin receives (default portable: Shardy's round-trip form, as JAX sends).",
)
def plugin_wrapper(plugin, on_error, emit) -> None:
    """Print the wrapper plugin's path, then the shell lines that make it wrap PLUGIN.

    Load the printed library as the framework's PJRT plugin, in a process with these variables
    set and a Python interpreter (the conversion runs in it).
    """
    reason = plugin_library.why_not_a_plugin(plugin)
    if reason:
        raise click.BadParameter(f"{plugin}: {reason}", param_hint="PLUGIN")
    click.echo(wrapper.library_path())  # a ShardyConvertError: the group's error boundary
    for name, value in wrapper.environment(plugin, on_error=on_error, emit=emit).items():
        click.echo(f"export {name}={shlex.quote(value)}")
