"""The meshes a torch_xla program creates, learnt without any change to the program.

`install()` wraps `torch_xla.distributed.spmd.xla_sharding.Mesh.__init__` (HybridMesh and
`Mesh.from_str` go through it too): each mesh, once built, is recorded here (shape, axis
names, device ids), once per distinct mesh, in the order the program made them. The plugin
wrapper reads `RECORDER.meshes()` for each program it converts (`use_plugin(mesh_names=True)`),
and every file registered with `write_to` (`record_meshes(path)`, `DIR/meshes.json` of a
`dump_dir`) is rewritten atomically after each new mesh.

A torch_xla `Mesh` asks the runtime for its device count, which starts the runtime; the
wrapper must be in place before that (`use_plugin` runs first), so a program has made no mesh
before `install()` runs. Meshes made before it are not seen.
"""

from __future__ import annotations

import functools
import logging
import threading
from pathlib import Path

from ..errors import ShardyConvertError
from ..formats import meshes as mesh_file
from ..sharding.mesh_fit import UserMesh

log = logging.getLogger("shardy_convert.wrapper")


class MeshRecorder:
    """The process's record of the meshes made so far (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict] = []
        self._meshes: list[UserMesh] = []
        self._paths: list[Path] = []
        self.version = 0  # grows with every new mesh (a part of the wrapper's cache key)

    def add(self, mesh) -> None:
        """Records a torch_xla Mesh (anything with `mesh_shape`, `axis_names`, `device_ids`)."""
        ids = mesh.device_ids
        ids = ids.flatten() if hasattr(ids, "flatten") else ids
        entry = mesh_file.entry(type(mesh).__name__, mesh.mesh_shape, mesh.axis_names, ids)
        try:
            user = mesh_file.user_mesh(entry)
        except ShardyConvertError as e:  # e.g. an axis name Shardy's text cannot carry
            log.warning("shardy-convert: the mesh %s is not used for names: %s", entry, e.message)
            return
        with self._lock:
            if entry in self._entries:
                return
            self._entries.append(entry)
            self._meshes.append(user)
            self.version += 1
            paths = list(self._paths)
        for path in paths:
            self._write(path)

    def meshes(self) -> tuple[UserMesh, ...]:
        """The meshes, first made first."""
        with self._lock:
            return tuple(self._meshes)

    def write_to(self, path: str | Path) -> Path:
        """Keeps `path` a mesh file of the meshes made so far (written now, and again after
        every new mesh)."""
        path = Path(path)
        with self._lock:
            if path not in self._paths:
                self._paths.append(path)
        self._write(path)
        return path

    def _write(self, path: Path) -> None:
        with self._lock:
            text = mesh_file.dumps(self._entries)
        try:
            mesh_file.write_atomic(path, text.encode())
        except OSError as e:  # a full disk must not stop the user's program
            log.warning("shardy-convert: cannot write the mesh file %s: %s", path, e.strerror)


RECORDER = MeshRecorder()


def install() -> bool:
    """Wraps torch_xla's `Mesh.__init__` to record every mesh in RECORDER; idempotent.
    False when torch_xla's SPMD module is not there (nothing to record)."""
    try:
        from torch_xla.distributed.spmd import xla_sharding
    except ImportError:
        return False
    original = xla_sharding.Mesh.__init__
    if getattr(original, "_shardy_convert", False):
        return True

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            RECORDER.add(self)
        except Exception as e:  # recording must never break the user's program
            log.warning("shardy-convert: cannot record a mesh: %s: %s", type(e).__name__, e)

    __init__._shardy_convert = True
    xla_sharding.Mesh.__init__ = __init__
    return True
