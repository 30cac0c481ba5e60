"""What more than one command shares: arguments and options (`mesh_option`, `inputs_argument`,
...), option values checked when the command line is read (a bad one is a usage error, exit 2,
reported before any input is read), and `Failed`, the exit 1 after the errors were printed."""

from __future__ import annotations

import os

import click

from ..errors import ShardyConvertError
from ..options import parse_mesh


class Failed(click.exceptions.Exit):
    """Exit 1 after the errors were printed."""

    def __init__(self):
        super().__init__(1)


class Mesh(click.ParamType):
    """`--mesh NAME=SIZE,...`, checked when the command line is read (a usage error)."""

    name = "NAME=SIZE,..."

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value

        try:
            return parse_mesh(value)
        except ShardyConvertError as e:
            self.fail(e.message, param, ctx)


def mesh_option(f):
    return click.option(
        "--mesh",
        type=Mesh(),
        help="Mesh axis names, order and sizes to use (default _axis_0, _axis_1, ...).",
    )(f)


def num_devices_option(f):
    return click.option(
        "--num-devices",
        type=click.IntRange(min=1),
        help="Device count; the shardings must agree. Needed when all are replicated.",
    )(f)


def match_gspmd_boundary_option(f):
    return click.option(
        "--match-gspmd-boundary",
        is_flag=True,
        help="Compile each module with GSPMD first (CPU, same devices) and pin the shardings it "
        "chose for @main's open arguments and results: the Shardy program's boundary is GSPMD's "
        "(costs a GSPMD compile per module).",
    )(f)


def match_gspmd_propagation_option(f):
    return click.option(
        "--match-gspmd-propagation",
        is_flag=True,
        help="Compile each module with GSPMD and its conversion with Shardy (CPU, same "
        "devices) and pin GSPMD's sharding as a constraint wherever Shardy's propagation "
        "departs from it, so Shardy compiles GSPMD's program; implies --match-gspmd-boundary "
        "(costs a GSPMD compile and a Shardy compile per round, a few rounds per module).",
    )(f)


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
        from ..formats import meshes as mesh_file

        try:
            return mesh_file.read(value)
        except ShardyConvertError as e:
            self.fail(f"{e.file}: {e.message}" if e.file else e.message, param, ctx)


class InputPath(click.Path):
    """An input that must exist (click's Path); where it does not but torch_xla's numbered
    file is there (XLA_SAVE_TENSORS_FILE=run.dump writes run.dump.0, one file per process),
    the usage error names it."""

    def __init__(self, **kwargs):
        super().__init__(exists=True, allow_dash=True, **kwargs)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value != "-" and not os.path.lexists(value):
            numbered = process_files(value)
            if numbered:
                more = f"; also {', '.join(numbered[1:4])}" if len(numbered) > 1 else ""
                self.fail(
                    f"{value} does not exist; did you mean {numbered[0]} (torch_xla adds the "
                    f"process index{more})?",
                    param,
                    ctx,
                )
        return super().convert(value, param, ctx)


def process_files(name: str) -> list[str]:
    """The files torch_xla writes for XLA_SAVE_TENSORS_FILE=`name`: `name.0`, `name.1`, ...
    (one per process), by process index."""
    folder, base = os.path.split(name)
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return []
    indexes = []
    for entry in entries:
        head, dot, index = entry.rpartition(".")
        if head == base and dot and index.isascii() and index.isdigit():
            indexes.append(int(index))
    return [f"{name}.{k}" for k in sorted(indexes)]


def inputs_argument(f):
    """`INPUTS...`: files, directories or `-` (stdin), at least one, each existing."""
    return click.argument("inputs", nargs=-1, required=True, type=InputPath())(f)


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
