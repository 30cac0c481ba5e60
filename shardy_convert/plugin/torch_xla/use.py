"""Run stock torch_xla (2.9, PyPI) on a PJRT plugin that takes only Shardy.

    from shardy_convert.torch_xla import use_plugin

    handle = use_plugin("/path/to/real_plugin.so", create_options={"cpu_device_count": 8})
    import torch_xla.runtime as xr
    xr.use_spmd()
    ...                      # the program, unchanged
    print(handle.counters)   # 3 converted, 12 from cache, 0 passed through, 0 failed

`use_plugin`, called before any XLA work, registers shardy-convert's wrapper plugin (around
the real one) with torch_xla under `device_type` and selects it (PJRT_DEVICE), has torch_xla hand
its programs as HLO protos, as it does to any plugin (XLA_STABLEHLO_COMPILE unset; the wrapper
reads them with XLA's importer), normalizes the sharding specs torch.compile's
dynamo bridge compares (pytorch/xla#9755: `""` vs `{replicated}` retraced every step) and
imports the converter up front, so the first compile does not pay for it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import MissingDependencyError, ShardyConvertError, UsageError
from ...formats import meshes as mesh_file
from ...ir.interrupts import sigint_outside_imports
from .. import plugin_library, wrapper
from ..settings import Settings
from . import mesh_recorder, registration, wrapped


@dataclass
class Handle:
    """What `use_plugin` set up; `counters` count what happened to each compiled program."""

    name: str  # the device type torch_xla runs on
    plugin: str
    library: str
    session: wrapper.Session

    @property
    def device_type(self) -> str:
        return self.name

    @property
    def counters(self) -> wrapper.Counters:
        return self.session.counters

    @property
    def settings(self) -> Settings:
        return self.session.settings


def use_plugin(
    library_path: str | os.PathLike,
    *,
    device_type: str | None = None,
    create_options: dict | None = None,
    on_error: str = "raise",
    emit: str | None = None,
    normalize_sharding_specs: bool = True,
    stablehlo_compile: bool = False,
    match_gspmd_boundary: bool = False,
    boundary_cache: str | os.PathLike | bool | None = None,
    mesh_names: bool = True,
    dump_dir: str | os.PathLike | None = None,
    match_gspmd_propagation: bool = False,
) -> Handle:
    """Makes torch_xla run on the PJRT plugin at `library_path` through shardy-convert's
    wrapper: every program is converted to Shardy and compiled with use_shardy_partitioner.

    device_type: the device type torch_xla runs on (PJRT_DEVICE, `xr.device_type()`; default
        "SHARDY"), letters, digits and _. Not "CPU": torch_xla then runs its built-in CPU
        client and never loads a plugin; "CPU_SHARDY" makes `xr.device_type()` say "CPU"
        (torch_xla reports the part before "_") while the wrapper runs. "TPU" and "NEURON"
        make torch_xla lower for that hardware: see docs/plugin.md.
    create_options: the plugin's client options (xla-cpu-pjrt: {"cpu_device_count": 8}).
    on_error: "raise" (a program with no Shardy form fails to compile with the located error)
        or "passthrough" (it compiles with GSPMD; counted).
    emit: what the plugin receives: "portable" (default, Shardy's round-trip form in a
        StableHLO portable artifact, as JAX sends it), "text" or "bytecode" (sdy dialect).
    normalize_sharding_specs: apply the pytorch/xla#9755 fix (see the module docstring).
    stablehlo_compile: True sets XLA_STABLEHLO_COMPILE=1: torch_xla then hands the plugin
        StableHLO portable artifacts it serializes itself. The default (False, the variable
        unset) hands serialized HloModuleProtos, which the wrapper reads with XLA's importer:
        on small programs that is ~6 % of each compile cheaper (docs/performance.md), on a
        whole-model step too.
    match_gspmd_boundary: give each program's open outputs (torch_xla annotates none) the
        shardings GSPMD compiles for them (a GSPMD compile of each distinct program on
        jaxlib's CPU client, with torch_xla's compile options): outputs come back sharded as
        on torch_xla's built-in runtime, so the next step's graph has the same input
        shardings and torch_xla compiles the same programs. Where GSPMD's choice cannot be
        pinned, Shardy decides (counted in `counters.boundary_fallbacks`, logged).
    match_gspmd_propagation: compile each distinct program with GSPMD and its conversion
        with Shardy (jaxlib's CPU client, torch_xla's compile options) and pin GSPMD's
        sharding wherever Shardy's propagation departs from it, so the plugin compiles the
        program torch_xla's built-in runtime compiles (collectives, memory); implies
        `match_gspmd_boundary`. Costs a GSPMD compile and a few Shardy compiles per distinct
        program. Where Shardy's own program is cheaper, leave it off (`check` says which).
    boundary_cache: keep GSPMD's choices across processes in this directory (True: the
        user cache dir, ~/.cache/shardy-convert/gspmd-boundary); default in memory only.
    mesh_names: every torch_xla `Mesh` the program creates is recorded (mesh_recorder.py)
        and a program is converted on the one its shardings fit: the user's axis names,
        order and sizes (sub-axes where a sharding splits an axis); where none fits, on the
        mesh inferred from the shardings (`_axis_0`, ...), logged once per program and
        counted (`counters.inferred_meshes`). False: always the inferred mesh.
    dump_dir: a directory (default: $SHARDY_CONVERT_DUMP_DIR, else none) where each distinct
        program the plugin compiles is written, as received and as MLIR text, with an
        `index.tsv` and the program's `meshes.json` (see plugin/dump_dir.py).

    Call it once, before any XLA work (after torch_xla's runtime started: a UsageError). A call
    that fails changes nothing; a second call with the same arguments returns the same handle,
    with other arguments it is a UsageError (torch_xla runs on the first call's wrapper):
    registration.py.
    """
    # dump_dir left out: the environment's
    dump_dir_setting: dict[str, Any] = {} if dump_dir is None else {"dump_dir": dump_dir}
    settings = Settings(
        device_type=device_type or "SHARDY",
        create_options=create_options or {},
        on_error=on_error,
        emit=emit,
        normalize_sharding_specs=normalize_sharding_specs,
        stablehlo_compile=stablehlo_compile,
        match_gspmd_boundary=match_gspmd_boundary,
        match_gspmd_propagation=match_gspmd_propagation,
        boundary_cache=boundary_cache,
        mesh_names=mesh_names,
        **dump_dir_setting,
    )
    settings = replace(settings, plugin=_check_plugin(library_path))  # the settings first
    require_torch_xla("use_plugin")  # then what the environment lacks, before any change
    return registration.once(settings, lambda: _install(settings))


def _install(settings: Settings) -> Handle:
    library = wrapper.library_path()
    session = wrapper.new_session(settings)  # makes the dump directory
    with sigint_outside_imports():  # a Ctrl-C inside jaxlib's imports would abort the process
        _import_converter()
        xlac = registration.register(settings, library)
    wrapper.use_session(session)  # the policy and counters change only now
    if settings.normalize_sharding_specs:
        _normalize_sharding_specs(xlac)
    registration.surface_interrupts(xlac)
    if settings.mesh_names or session.dump is not None:
        mesh_recorder.install()
    assert settings.plugin is not None  # use_plugin checked it (_check_plugin)
    return Handle(settings.device_type, settings.plugin, library, session)


def record() -> None:
    """Records every torch_xla `Mesh` the program creates and every `mark_sharding` it calls
    from now on (mesh_recorder.py), for `audit` to read. Call it at the top of the program,
    before the first mesh and mark; `use_plugin` and `record_meshes` do it too. Idempotent."""
    require_torch_xla("record")
    if not mesh_recorder.install():
        raise ShardyConvertError("record needs torch_xla (torch_xla.distributed.spmd)")


def record_meshes(path: str | os.PathLike | None = None) -> Path:
    """Records every torch_xla `Mesh` the program creates from now on in the mesh file
    `path` (default: `$XLA_SAVE_TENSORS_FILE.meshes.json`, beside torch_xla's own dump),
    rewritten atomically after each new mesh, so that `shardy-convert convert`, `check` and
    `inspect` of the dump use the program's axis names (formats/meshes.py). Call it before
    the program creates its meshes; returns the file's path."""
    if path is None:
        dump = os.environ.get("XLA_SAVE_TENSORS_FILE")
        if not dump:
            raise UsageError("record_meshes needs a path, or XLA_SAVE_TENSORS_FILE to write beside")
        path = dump + mesh_file.SUFFIX
    require_torch_xla("record_meshes")
    if not mesh_recorder.install():
        raise ShardyConvertError("record_meshes needs torch_xla (torch_xla.distributed.spmd)")
    return mesh_recorder.RECORDER.write_to(Path(path).expanduser())


def require_torch_xla(what: str) -> None:
    """A MissingDependencyError saying what to install when this Python has no torch_xla;
    judged without importing it (its import reads PJRT_DEVICE, which use_plugin sets first)."""
    try:
        found = importlib.util.find_spec("torch_xla") is not None
    except (ImportError, ValueError):  # a broken parent package, or sys.modules[name] = None
        found = False
    if not found:
        raise MissingDependencyError(
            f"{what} needs torch_xla, and this Python ({sys.executable}) has none: install "
            f"torch and torch_xla 2.9 beside shardy-convert ({registration.INSTALL_TORCH_XLA})"
        )


def _check_plugin(library_path: str | os.PathLike) -> str:
    """The plugin's absolute path; a UsageError if it is missing or no PJRT plugin, judged
    from the file's headers (plugin_library), never by loading it (that runs its code)."""
    path = Path(library_path).expanduser().resolve()
    if path.is_dir():
        raise UsageError(
            f"no PJRT plugin at {path}: it is a directory (give the plugin's library file)"
        )
    if not path.is_file():
        raise UsageError(f"no PJRT plugin at {path}: the file does not exist")
    reason = plugin_library.why_not_a_plugin(str(path))
    if reason:
        raise UsageError(f"{path} is no PJRT plugin: {reason}")
    return str(path)


def _import_converter() -> None:
    """Imports what the first conversion needs (jaxlib's extension for portable artifacts, MLIR
    bindings, passes: ~0.3-0.7 s)."""
    from ...xla import compat

    compat.jax_extension()

    from ... import converter  # noqa: F401
    from ...formats import module as formats  # noqa: F401
    from ...formats import portable as round_trip
    from ...ir.parse import new_context
    from ...passes import lift_callee_shardings, pad_uneven, pipeline  # noqa: F401

    with new_context():
        pass
    round_trip.prepare()  # the once-per-process check of jaxlib's writer


def _normalize_sharding_specs(xlac) -> None:
    """Wraps `_get_xla_sharding_spec` and `_get_xla_sharding_specs` (looked up at call time by
    torch_xla's Python and its dynamo bridge) so a spec reads as on the built-in runtime: a
    tiling as GSPMD's explicit device list (`{devices=[1,8]0,1,...,7}`, not Shardy's
    `{devices=[1,8]<=[8]}`). The plural (what dynamo compares) also spells every replicated
    placement `{replicated}` (pytorch/xla#9755: `""` vs `{replicated}` retraced every step).
    Idempotent."""
    _wrap(xlac, "_get_xla_sharding_spec", lambda spec: _spelled(spec, replicated=False))
    _wrap(xlac, "_get_xla_sharding_specs", lambda specs: [_spelled(s) for s in specs])


def _wrap(xlac, name: str, after) -> None:
    original = getattr(xlac, name)
    if wrapped.ours(original):
        return

    @functools.wraps(original)
    def spelled(*args, **kwargs):
        return after(original(*args, **kwargs))

    setattr(xlac, name, wrapped.mark(spelled))


def _spelled(spec: str, replicated: bool = True) -> str:
    from ...sharding import normalize
    from ...sharding.canonical import device_list_spelling

    try:
        return device_list_spelling(normalize(spec) if replicated else spec)
    except ShardyConvertError:
        return spec  # a spelling our parser does not know: compared as torch_xla does
