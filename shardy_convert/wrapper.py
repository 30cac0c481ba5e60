"""`shardy_convert.wrapper`, the public name of the plugin wrapper's Python side (it lives in
`plugin/wrapper.py`): users may name `shardy_convert.wrapper:on_compile` in
SHARDY_CONVERT_HOOK, and `library_path()`/`environment()` (a `Settings`' `to_env()`) set up a
plugin by hand."""

from __future__ import annotations

from .plugin.program import convert_program
from .plugin.settings import EMITS, ENV_EMIT, ENV_ON_ERROR, ENV_PLUGIN, Settings
from .plugin.wrapper import (
    ENV_HOOK,
    LIBRARY,
    Counters,
    Session,
    caller_device_assignment,
    configure,
    environment,
    library_path,
    on_compile,
    relabel_program,
    session,
)

__all__ = [
    "EMITS",
    "ENV_EMIT",
    "ENV_HOOK",
    "ENV_ON_ERROR",
    "ENV_PLUGIN",
    "LIBRARY",
    "Counters",
    "Session",
    "Settings",
    "caller_device_assignment",
    "configure",
    "convert_program",
    "environment",
    "library_path",
    "on_compile",
    "relabel_program",
    "session",
]
