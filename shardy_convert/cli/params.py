"""Option values checked when the command line is read: a bad one is a usage error (exit 2),
reported before any input is read."""

from __future__ import annotations

import click

from ..errors import ShardyConvertError


class TargetVersion(click.ParamType):
    """`--target-version X.Y.Z`: a StableHLO version this jaxlib writes."""

    name = "X.Y.Z"

    def convert(self, value, param, ctx):
        from ..formats.module import check_version

        try:
            check_version(value)
        except ShardyConvertError as e:
            self.fail(e.message, param, ctx)
        return value


class MeshFile(click.ParamType):
    """`--mesh-file FILE`: the meshes a torch_xla program recorded (formats/meshes.py), read
    when the command line is (a file that is no mesh file is a usage error)."""

    name = "FILE"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        from ..formats import meshes

        try:
            return meshes.read(value)
        except ShardyConvertError as e:
            self.fail(f"{e.file}: {e.message}" if e.file else e.message, param, ctx)


def inputs_argument(f):
    """`INPUTS...`: files, directories or `-` (stdin), at least one, each existing."""
    return click.argument(
        "inputs", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True)
    )(f)


def mesh_file_option(f):
    return click.option(
        "--mesh-file",
        type=MeshFile(),
        help="The meshes the program created (shardy_convert.torch_xla.record_meshes, or a "
        "dump_dir's meshes.json): each graph gets the one its shardings fit, with their axis "
        "names. Default: the mesh file beside the input (X.meshes.json), if any.",
    )(f)


def check_mesh_options(mesh, mesh_file) -> None:
    """--mesh names the axes itself: a usage error beside --mesh-file."""
    if mesh is not None and mesh_file is not None:
        raise click.UsageError("give --mesh or --mesh-file, not both")
