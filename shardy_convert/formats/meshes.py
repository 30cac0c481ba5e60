"""The mesh file: the meshes a torch_xla program created, written beside its dumps.

    {"shardy_convert_meshes": 1,
     "meshes": [{"kind": "Mesh", "axis_names": ["data", "model"], "mesh_shape": [2, 4],
                 "device_ids": [0, 1, 2, 3, 4, 5, 6, 7]}]}

One entry per distinct mesh, in the order the program created them; the keys are torch_xla's
own (`Mesh.__repr__`), `kind` is the class (`Mesh`, `HybridMesh`), `axis_names` may be null
(the axes are then `_axis_0`, `_axis_1`, ...). `shardy_convert.torch_xla.record_meshes`
writes it as `<XLA_SAVE_TENSORS_FILE>.meshes.json`, `use_plugin(dump_dir=DIR)` as
`DIR/meshes.json`; `convert`, `check` and `inspect` read it (`--mesh-file`, or found beside
their input by `beside`). Writes are atomic: a reader never sees half a file.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from ..errors import ShardyConvertError, ShardyConvertNote, clip
from ..options import is_axis_name
from ..sharding.mesh_fit import UserMesh

SUFFIX = ".meshes.json"
IN_DIR = "meshes.json"
VERSION = 1


def entry(kind: str, shape, names, device_ids) -> dict:
    """The file's entry for one mesh (torch_xla's attributes, as plain JSON values)."""
    return {
        "kind": kind,
        "axis_names": None if names is None else [str(n) for n in names],
        "mesh_shape": [int(n) for n in shape],
        "device_ids": [int(d) for d in device_ids],
    }


def as_user_mesh(mesh) -> UserMesh:
    """A UserMesh as it is, or a torch_xla `Mesh` (anything with `mesh_shape`, `axis_names`,
    `device_ids`) as one; ShardyConvertError when it has none of those or a bad one."""
    if isinstance(mesh, UserMesh):
        return mesh
    if not all(hasattr(mesh, a) for a in ("mesh_shape", "axis_names", "device_ids")):
        raise ShardyConvertError(
            f"not a mesh: {clip(repr(mesh), 60)} (a torch_xla Mesh or a UserMesh is)"
        )
    ids = [int(d) for d in _flat(mesh.device_ids)]
    return user_mesh(entry(type(mesh).__name__, mesh.mesh_shape, mesh.axis_names, ids))


def _flat(ids) -> list:
    return list(ids.flatten()) if hasattr(ids, "flatten") else list(ids)


def user_mesh(item: dict) -> UserMesh:
    """The mesh of one entry; ShardyConvertError (unlocated) saying what is wrong with it."""
    if not isinstance(item, dict):
        raise ShardyConvertError(f"a mesh entry must be an object, not {clip(repr(item), 40)}")
    shape, names, ids = item.get("mesh_shape"), item.get("axis_names"), item.get("device_ids")
    if not _ints(shape) or not shape or any(n < 1 for n in shape):
        raise ShardyConvertError(
            f"mesh_shape must be a list of sizes >= 1, not {clip(repr(shape), 40)}"
        )
    if names is None:
        names = [f"_axis_{k}" for k in range(len(shape))]
    if (
        not isinstance(names, list)
        or len(names) != len(shape)
        or len(set(map(str, names))) != len(names)
    ):
        raise ShardyConvertError(
            f"axis_names must be {len(shape)} distinct names, not {clip(repr(names), 60)}"
        )
    bad = next((n for n in names if not is_axis_name(n)), None)
    if bad is not None:
        raise ShardyConvertError(
            f'axis name {clip(repr(bad), 40)}: names are letters, digits, "_", "." or "-"'
        )
    size = 1
    for n in shape:
        size *= n
    if ids is None:
        ids = list(range(size))
    if not _ints(ids) or sorted(ids) != list(range(size)):
        raise ShardyConvertError(
            f"device_ids must order the {size} devices 0..{size - 1}, not {clip(repr(ids), 60)}"
        )
    kind = str(item.get("kind") or "Mesh")
    return UserMesh(tuple(zip(names, shape)), tuple(ids), label(kind, shape, names, ids))


def _ints(value) -> bool:
    return isinstance(value, list) and all(type(v) is int for v in value)


def label(kind: str, shape, names, ids) -> str:
    """How messages name a mesh: `Mesh((2, 4), ('data', 'model'))`, plus its device ids when
    they are not 0, 1, 2, ..."""
    text = f"{kind}({tuple(shape)}, {tuple(names)}"
    if list(ids) != list(range(len(ids))):
        shown = ", ".join(map(str, list(ids)[:16])) + (", ..." if len(ids) > 16 else "")
        text += f", device_ids=[{shown}]"
    return text + ")"


def dumps(entries: Iterable[dict]) -> str:
    """The file's text (one mesh per line, for diffs and eyes)."""
    import json  # only where a mesh file is written or read (cold start: 3 ms)

    lines = ",\n  ".join(json.dumps(e) for e in entries)
    return f'{{"shardy_convert_meshes": {VERSION}, "meshes": [\n  {lines}\n]}}\n'


def read(path: str | os.PathLike) -> tuple[UserMesh, ...]:
    """The meshes of a mesh file, in the order they were created; ShardyConvertError naming
    the file when it cannot be read or is not a mesh file."""
    import json  # only where a mesh file is written or read (cold start: 3 ms)

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ShardyConvertError(
            f"cannot read the mesh file: {e.strerror}", file=str(path)
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ShardyConvertError(f"not a mesh file (no JSON: {e})", file=str(path)) from None
    if not isinstance(data, dict) or data.get("shardy_convert_meshes") != VERSION:
        raise ShardyConvertError(
            f'not a mesh file: expected {{"shardy_convert_meshes": {VERSION}, "meshes": [...]}}',
            file=str(path),
        )
    items = data.get("meshes")
    if not isinstance(items, list):
        raise ShardyConvertError('not a mesh file: "meshes" is no list', file=str(path))
    meshes = []
    for k, item in enumerate(items):
        try:
            meshes.append(user_mesh(item))
        except ShardyConvertError as e:
            raise ShardyConvertError(f"mesh {k}: {e.message}", file=str(path)) from None
    return tuple(meshes)


def beside(path: str | os.PathLike) -> Path | None:
    """The mesh file that goes with a dump or module, if there is one: `F.meshes.json`, then
    F without its last suffix (`x.dump.0` -> `x.dump.meshes.json`, torch_xla's ordinal;
    `matmul.mlir` -> `matmul.meshes.json`), then `meshes.json` in F's directory (a
    `use_plugin(dump_dir=...)` directory)."""
    path = Path(path)
    for candidate in (
        path.with_name(path.name + SUFFIX),
        path.with_name(path.stem + SUFFIX) if path.suffix else None,
        path.parent / IN_DIR,
    ):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


class MeshFileNote(ShardyConvertNote):
    """The mesh file found beside an input, used for its graphs (said once per input; not said
    of an input whose graphs were all written as they came: it changed nothing)."""


def for_input(
    name: str, given: tuple[UserMesh, ...] | None, find: bool = True
) -> tuple[UserMesh, ...] | None:
    """The meshes to convert input `name` on: `given` (`--mesh-file`), else, with `find`, the
    mesh file beside it (a ShardyConvertNote says which), else None. A found file that is no
    mesh file is a ShardyConvertError naming it."""
    if given is not None:
        return given
    found = beside(name) if find and name not in ("-", "") else None
    if found is None:
        return None
    meshes = read(found)
    warnings.warn(
        MeshFileNote(
            f"using the {len(meshes)} mesh{'es' * (len(meshes) != 1)} of {found}, found beside "
            "it: each graph goes on the one its shardings fit (--mesh-file FILE for another)",
            file=name,
        ),
        stacklevel=2,
    )
    return meshes
