"""The meshes a torch_xla program creates and the shardings it marks, learnt without any
change to the program.

`install()` wraps `torch_xla.distributed.spmd.xla_sharding.Mesh.__init__` (HybridMesh and
`Mesh.from_str` go through it too): each mesh, once built, is recorded here (shape, axis
names, device ids), once per distinct mesh, in the order the program made them. The plugin
wrapper reads `RECORDER.meshes()` for each program it converts (`use_plugin(mesh_names=True)`),
and every file registered with `write_to` (`record_meshes(path)`, `DIR/meshes.json` of a
`dump_dir`) is rewritten atomically after each new mesh.

`install()` also wraps `torch_xla._XLAC._xla_mark_sharding`, which every `mark_sharding`
looks up at call time (so a `mark_sharding` imported before `install()` is seen too): each
marked tensor is recorded with the sharding the mark gave it (`_get_xla_sharding_spec` right
after) and the mesh it was marked on (`xs.mark_sharding` is wrapped to tell; a mark made
through a reference to the original function has none). `shardy_convert.torch_xla.audit`
reads them (`RECORDER.mark_of(tensor)`): tensors are keyed by identity and held weakly.

A torch_xla `Mesh` asks the runtime for its device count, which starts the runtime; the
wrapper must be in place before that (`use_plugin` runs first), so a program has made no mesh
before `install()` runs. Meshes made and marks set before it are not seen.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from pathlib import Path
from typing import NamedTuple

from ...errors import ShardyConvertError
from ...formats import meshes as mesh_file
from ...formats.output import write_atomic
from ...sharding.mesh_fit import UserMesh
from . import wrapped

log = logging.getLogger("shardy_convert.wrapper")


class Mark(NamedTuple):
    """A tensor's last `mark_sharding`: the HLO sharding it gave and the mesh it was on (None
    when the call was not seen, only its effect)."""

    sharding: str
    mesh: UserMesh | None


class MeshRecorder:
    """The process's record of the meshes made and the marks set so far (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict] = []
        self._meshes: list[UserMesh] = []
        self._paths: list[Path] = []
        # id(tensor) -> (a weak reference to it, its Mark); the entry goes with the tensor.
        self._marks: dict[int, tuple[weakref.ref, Mark]] = {}
        self.watching_marks = False  # install() wrapped mark_sharding
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

    def add_mark(self, tensor, sharding: str, mesh: UserMesh | None) -> None:
        """Records `tensor`'s mark (the last one wins)."""
        key = id(tensor)

        def forget(ref, key=key) -> None:
            with self._lock:
                if key in self._marks and self._marks[key][0] is ref:
                    del self._marks[key]

        with self._lock:
            self._marks[key] = (weakref.ref(tensor, forget), Mark(sharding, mesh))

    def mark_of(self, tensor) -> Mark | None:
        """The last mark recorded for this very tensor object, or None."""
        with self._lock:
            entry = self._marks.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        return entry[1]

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
            write_atomic(path, text.encode())
        except OSError as e:  # a full disk must not stop the user's program
            log.warning("shardy-convert: cannot write the mesh file %s: %s", path, e.strerror)


RECORDER = MeshRecorder()


def install() -> bool:
    """Wraps torch_xla's `Mesh.__init__` and `mark_sharding` to record every mesh and mark in
    RECORDER; idempotent. False when torch_xla's SPMD module is not there (nothing to
    record)."""
    try:
        import torch_xla
        from torch_xla.distributed import spmd
        from torch_xla.distributed.spmd import xla_sharding
    except ImportError:
        return False
    _wrap_mesh_init(xla_sharding)
    _wrap_marks(torch_xla._XLAC, (xla_sharding, spmd))
    RECORDER.watching_marks = True
    return True


def _wrap_mesh_init(xla_sharding) -> None:
    original = xla_sharding.Mesh.__init__
    if wrapped.ours(original):
        return

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            RECORDER.add(self)
        except Exception as e:  # recording must never break the user's program
            log.warning("shardy-convert: cannot record a mesh: %s: %s", type(e).__name__, e)

    xla_sharding.Mesh.__init__ = wrapped.mark(__init__)


# The mesh of the `xs.mark_sharding` call in progress on this thread, for the _XLAC wrapper.
_marking = threading.local()


def _wrap_marks(xlac, modules) -> None:
    """Wraps `_XLAC._xla_mark_sharding` (the mark itself) and `mark_sharding` in `modules`
    (where the program finds it: `xla_sharding` and the `spmd` package), which only tells the
    first which mesh the mark is on."""
    original = xlac._xla_mark_sharding
    if wrapped.ours(original):
        return

    @functools.wraps(original)
    def _xla_mark_sharding(tensor, op_sharding, *args, **kwargs):
        result = original(tensor, op_sharding, *args, **kwargs)
        try:
            sharding = xlac._get_xla_sharding_spec(tensor)
            mesh = getattr(_marking, "mesh", None)
            RECORDER.add_mark(tensor, sharding, mesh)
        except Exception as e:  # recording must never break the user's program
            log.warning("shardy-convert: cannot record a mark: %s: %s", type(e).__name__, e)
        return result

    xlac._xla_mark_sharding = wrapped.mark(_xla_mark_sharding)
    python_mark = modules[0].mark_sharding
    telling = _mark_sharding(python_mark)
    for module in modules:
        if getattr(module, "mark_sharding", None) is python_mark:
            module.mark_sharding = telling


def _mark_sharding(original):
    @functools.wraps(original)
    def mark_sharding(t, mesh, partition_spec, *args, **kwargs):
        _marking.mesh = _user_mesh(mesh)
        try:
            return original(t, mesh, partition_spec, *args, **kwargs)
        finally:
            _marking.mesh = None

    return wrapped.mark(mark_sharding)


def _user_mesh(mesh) -> UserMesh | None:
    """The mark's mesh as a UserMesh, recorded like a new one (a mesh made before install()
    is then known too); None when it cannot be read."""
    try:
        RECORDER.add(mesh)
        return mesh_file.as_user_mesh(mesh)
    except Exception:  # a mesh our names cannot carry: the mark is still recorded
        return None
