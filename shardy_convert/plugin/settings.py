"""The plugin's settings: one frozen value, checked when it is made, whichever way the wrapper
is set up (`use_plugin`'s arguments, `shardy-convert plugin-wrapper`'s flags, `configure`),
and one encoding to the environment and back (`to_env` / `from_env`): the C wrapper's process
side (`wrapper.session()`) rebuilds the same value from the variables a framework was started
with.

    SHARDY_CONVERT_PLUGIN     the real plugin's library (required to load the wrapper)
    SHARDY_CONVERT_ON_ERROR   raise (default): a program with no Shardy form fails to compile
                              with the located error; passthrough: it compiles with GSPMD
    SHARDY_CONVERT_EMIT       portable (default: a StableHLO portable artifact, Shardy in its
                              round-trip form, as JAX hands plugins), text or bytecode (sdy)
    SHARDY_CONVERT_MATCH_GSPMD_BOUNDARY
                              1: each program's open outputs (and parameters) get the
                              shardings GSPMD compiles for them (passes/match_gspmd_boundary)
    SHARDY_CONVERT_MATCH_GSPMD_PROPAGATION
                              1: GSPMD's decisions inside each program pinned where Shardy's
                              propagation departs from them (passes/match_gspmd_propagation;
                              implies the boundary's)
    SHARDY_CONVERT_BOUNDARY_CACHE
                              a directory keeping GSPMD's choices across processes
    SHARDY_CONVERT_MESH_NAMES 0: always the mesh inferred from the shardings, not the meshes
                              the program created (default 1)
    SHARDY_CONVERT_DUMP_DIR   a directory: each distinct program the plugin compiles is
                              written there, with an index (dump_dir.py)

The torch_xla fields (`device_type`, `create_options`, `normalize_sharding_specs`,
`stablehlo_compile`) configure torch_xla in the calling process (registration.py: torch_xla's
own PJRT_DEVICE and XLA_STABLEHLO_COMPILE, its plugin registry): they are not in the encoding,
which carries what the wrapper's process side does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from ..errors import UsageError, check_choice
from ..options import cache_dir
from .cache import POLICIES

ENV_PLUGIN = "SHARDY_CONVERT_PLUGIN"
ENV_ON_ERROR = "SHARDY_CONVERT_ON_ERROR"
ENV_EMIT = "SHARDY_CONVERT_EMIT"
ENV_MATCH = "SHARDY_CONVERT_MATCH_GSPMD_BOUNDARY"
ENV_PROPAGATION = "SHARDY_CONVERT_MATCH_GSPMD_PROPAGATION"
ENV_BOUNDARY_CACHE = "SHARDY_CONVERT_BOUNDARY_CACHE"
ENV_MESH_NAMES = "SHARDY_CONVERT_MESH_NAMES"
ENV_DUMP_DIR = "SHARDY_CONVERT_DUMP_DIR"
# Each encoded field's variable, in the order `to_env` writes them.
ENV = {
    "plugin": ENV_PLUGIN,
    "on_error": ENV_ON_ERROR,
    "emit": ENV_EMIT,
    "match_gspmd_boundary": ENV_MATCH,
    "match_gspmd_propagation": ENV_PROPAGATION,
    "boundary_cache": ENV_BOUNDARY_CACHE,
    "mesh_names": ENV_MESH_NAMES,
    "dump_dir": ENV_DUMP_DIR,
}
EMITS = ("portable", "text", "bytecode")


def _dump_dir_from_env() -> str | None:
    return os.environ.get(ENV_DUMP_DIR) or None


@dataclass(frozen=True)
class Settings:
    """What the wrapper is asked to do (see the module docstring; `use_plugin` documents each
    setting). Made checked and normalized: paths absolute, `emit` None as "portable",
    `create_options` a sorted tuple of items (comparable: a second `use_plugin` call is judged
    by equality), `boundary_cache=True` as the user cache dir."""

    plugin: str | None = None  # the real plugin's library
    on_error: str = "raise"
    emit: str | None = "portable"
    match_gspmd_boundary: bool = False
    match_gspmd_propagation: bool = False
    boundary_cache: str | os.PathLike | bool | None = None
    mesh_names: bool = True
    # default: $SHARDY_CONVERT_DUMP_DIR, for programs that cannot change their call
    dump_dir: str | os.PathLike | None = field(default_factory=_dump_dir_from_env)
    # torch_xla's side (use_plugin)
    device_type: str = "SHARDY"
    create_options: Mapping | tuple = ()
    normalize_sharding_specs: bool = True
    stablehlo_compile: bool = False

    def __post_init__(self) -> None:
        self.check()
        normal = {
            "plugin": _path(self.plugin),
            "emit": self.emit or "portable",
            "boundary_cache": cache_dir(self.boundary_cache),
            "dump_dir": _path(self.dump_dir),
            "device_type": self.device_type.upper(),
            "create_options": tuple(sorted(dict(self.create_options).items())),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    def check(self) -> None:
        """A UsageError for a value no setting takes."""
        check_choice("on_error", self.on_error, POLICIES)
        check_choice("emit", self.emit or "portable", EMITS)
        check_device_type(self.device_type)

    def to_env(self) -> dict[str, str]:
        """The environment variables that make the wrapper's process side use these settings
        (the plugin and the policy always; the others where they differ from the default)."""
        default = Settings(dump_dir=None)
        env = {}
        for name, variable in ENV.items():
            value = getattr(self, name)
            if name in ("plugin", "on_error") or value != getattr(default, name):
                env[variable] = _env_text(value)
        return {k: v for k, v in env.items() if v is not None}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings `to_env` wrote (the torch_xla fields at their defaults); a UsageError
        naming the variables for a value no setting takes."""
        env = os.environ if environ is None else environ
        given = {name: env[var] for name, var in ENV.items() if env.get(var)}
        values = {name: _from_text(name, text) for name, text in given.items()}
        try:
            return cls(**{"dump_dir": None, **values})
        except UsageError as e:
            shown = ", ".join(f"{ENV[name]}={text!r}" for name, text in given.items())
            raise UsageError(f"{e.message} (from the environment: {shown})") from None


_BOOLS = {f.name for f in fields(Settings) if f.type == "bool"}
_WORD = re.compile(r"[A-Za-z0-9_]+")


def check_device_type(name: object) -> None:
    """A UsageError for a device type torch_xla 2.9 cannot run the wrapper under (read in
    pytorch/xla v2.9.0: `InitializePjRt` in torch_xla/csrc/runtime/pjrt_registry.cpp,
    `runtime.device_type()` and `experimental/plugins.py`; docs/plugin.md says what each name
    does). PJRT_DEVICE is the name upper-cased."""
    if not isinstance(name, str) or not _WORD.fullmatch(name):
        raise UsageError(
            f"device_type must be a name of letters, digits and _ (torch_xla's PJRT_DEVICE), "
            f"not {name!r}"
        )
    upper = name.upper()
    if upper == "CPU":
        raise UsageError(
            'the device type name must not be "CPU": torch_xla then runs its built-in CPU '
            "client and never loads a plugin (the programs would not reach the wrapper); for "
            'code that branches on xr.device_type() == "CPU", name it "CPU_" and a word '
            '("CPU_SHARDY")'
        )
    head, underscore, _ = upper.partition("_")
    if underscore and head != "CPU":
        raise UsageError(
            f'device_type {name!r}: torch_xla reports the part before "_" as the device type '
            f"({head!r}) and looks its plugin up under that name, where none is registered "
            f'(xr.host_index() fails); name it without "_" ("{upper.replace("_", "")}")'
        )


def _env_text(value) -> str | None:
    if isinstance(value, bool):
        return "1" if value else "0"
    return None if value is None else str(value)


def _from_text(name: str, text: str):
    return text not in ("0", "false", "False") if name in _BOOLS else text


def _path(value: str | os.PathLike | None) -> str | None:
    return None if value is None else str(Path(value).expanduser().resolve())
