"""Option values checked before any MLIR is read: the mesh a user names (`parse_mesh`), a
device order, XLA's rule for its propagation flags, and the directory an on-disk cache option
names (`cache_dir`). The options themselves are the fields
of the passes that take them (passes/). A leaf: it imports only `errors`, so the CLI and the
pipeline-text parser can check values without jaxlib."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from . import regex
from .errors import ShardyConvertError, clip

# More devices than any machine has: refuse before allocating anything of that size.
MAX_DEVICES = 2**24


def propagation_flags(
    allowed: bool | Sequence[bool] | None, count: int, what: str, values: str
) -> list[bool]:
    """XLA's rule for `allow_spmd_sharding_propagation_to_parameters` / `_to_output`, per value
    of @main: no flag means not allowed for any, one flag applies to all, otherwise one flag per
    value. A list of another length is a ShardyConvertError (the caller locates it): XLA would
    read past its end. `what` is "parameters" or "output", `values` "arguments" or "results"."""
    flags = (allowed,) if allowed is None or isinstance(allowed, bool) else tuple(allowed)
    if len(flags) <= 1:
        return [bool(flags and flags[0])] * count
    if len(flags) != count:
        raise ShardyConvertError(
            f"allow_spmd_sharding_propagation_to_{what} has {len(flags)} values but @main has "
            f"{count} {values}"
        )
    return [bool(f) for f in flags]


# Axis names go into `#sdy.mesh<["name"=4]>` text; sizes are bounded like sharding sizes.
_MESH_NAME = regex.lazy(r"[A-Za-z0-9_.\-]+")


def is_axis_name(name: object) -> bool:
    """A mesh axis name shardy-convert writes into `#sdy.mesh<["name"=4]>` unquoted."""
    return isinstance(name, str) and _MESH_NAME().fullmatch(name) is not None


def parse_mesh(mesh: Sequence[tuple[str, int]] | str | None) -> tuple[tuple[str, int], ...] | None:
    """`"batch=2,model=4"` or `[("batch", 2), ...]` -> (("batch", 2), ("model", 4))."""
    if mesh is None or (isinstance(mesh, (list, tuple)) and not mesh):
        return None
    if isinstance(mesh, str):
        parts = [part.strip() for part in mesh.split(",")]
    else:
        parts = [f"{n}={s}" for n, s in mesh]
    text = mesh if isinstance(mesh, str) else ",".join(parts)
    axes = tuple(_check_mesh_axis(text, part) for part in parts)
    if len({n for n, _ in axes}) != len(axes):
        raise ShardyConvertError(f'mesh "{text}" names an axis twice')
    return axes


def parse_device_ids(ids: Sequence[int] | str | None) -> tuple[int, ...] | None:
    """A mesh's device order, `"3,6,0,5,1,7,2,4"` or a sequence of ints -> a tuple: the
    device at each row-major position of the mesh (a torch_xla `Mesh`'s `device_ids`)."""
    if ids is None:
        return None
    parts = [p.strip() for p in ids.split(",")] if isinstance(ids, str) else list(ids)
    shown = clip(ids if isinstance(ids, str) else ",".join(map(str, parts)), 80)
    try:
        order = tuple(int(p) for p in parts)
    except (TypeError, ValueError):
        raise ShardyConvertError(f'device ids "{shown}": expected integers like 3,6,0,5') from None
    if len(order) > MAX_DEVICES or sorted(order) != list(range(len(order))):
        raise ShardyConvertError(
            f'device ids "{shown}": expected each of the devices 0..{len(order) - 1} once'
        )
    return order


def _check_mesh_axis(mesh: str, part: str) -> tuple[str, int]:
    """One `NAME=SIZE` of a mesh; errors quote `part` as it was written."""
    shown = clip(mesh, 80)
    name, equals, size = (x.strip() for x in part.partition("="))
    if not equals or not _MESH_NAME().fullmatch(name) or not size.isascii() or not size.isdigit():
        raise ShardyConvertError(
            f'mesh "{shown}": expected NAME=SIZE,... with names of letters, digits, "_", "." '
            f'or "-", got "{clip(part, 40)}"'
        )
    if len(size.lstrip("0")) > 9 or not 1 <= int(size) <= MAX_DEVICES:
        raise ShardyConvertError(
            f'mesh "{shown}": axis "{name[:40]}" has size {clip(size, 20)}, not one from 1 to '
            f"{MAX_DEVICES}"
        )
    return name, int(size)


def user_cache_dir() -> Path:
    """Where an on-disk cache goes when the caller asks for one without naming it."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "shardy-convert" / "gspmd-boundary"


def cache_dir(value: str | os.PathLike | bool | None) -> str | None:
    """The directory an on-disk cache option names: None or False none, True the user's
    cache dir, else the path given."""
    if value is None or value is False:
        return None
    return str(user_cache_dir()) if value is True else os.fspath(value)
