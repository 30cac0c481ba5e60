"""`shardy-convert --version`: this release and what it runs on, for bug reports. Only this
option imports jaxlib's MLIR (for the StableHLO version); every other command starts as it
did."""

from __future__ import annotations

import platform

import click

from .. import __version__

# The jax/jaxlib releases this one is tested on (pyproject.toml's bounds; `make test` runs the
# suite on both, `make test-oldest` and `make test-newest` each alone).
SUPPORTED = ("0.7.1", "0.12.0.1")


def version_lines() -> list[str]:
    """shardy-convert's version, then jax/jaxlib, StableHLO and Shardy as this process has
    them, and Python."""
    from ..ir.bindings import stablehlo

    jax, jaxlib = _installed("jax"), _installed("jaxlib")
    low, high = SUPPORTED
    support = f"supported {low} to {high}"
    if not all(_within(v, low, high) for v in (jax, jaxlib)):
        support = f"UNSUPPORTED: {support}"
    return [
        f"shardy-convert, version {__version__}",
        f"jax {jax}, jaxlib {jaxlib} ({support})",
        f"StableHLO {stablehlo.get_current_version()} (portable artifacts written: "
        f"{stablehlo.get_minimum_version()} to {stablehlo.get_current_version()})",
        f"Shardy: built into jaxlib {jaxlib}{_commit()} (it has no version of its own)",
        f"Python {platform.python_version()}",
    ]


def _installed(name: str) -> str:
    from importlib import metadata  # only --version reads it (33 ms of imports at every start)

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _within(version: str, low: str, high: str) -> bool:
    """Compared part by part, every part: 0.12.0.1 is above 0.12.0 (a post release)."""

    def number(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("."))

    try:
        return number(low) <= number(version) <= number(high)
    except ValueError:  # "(not installed)", a dev build
        return False


def _commit() -> str:
    """jaxlib's source commit (XLA and Shardy are built from it), when the release says."""
    try:
        from jaxlib import version
    except ImportError:
        return ""
    commit = getattr(version, "_git_hash", None)
    return f", git {commit[:12]}" if commit else ""


def _print_version(ctx: click.Context, param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo("\n".join(version_lines()))
    ctx.exit()


def version_option(f):
    return click.option(
        "--version",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_print_version,
        help="Show the version, the jax/jaxlib, StableHLO and Shardy it runs on, and exit.",
    )(f)
