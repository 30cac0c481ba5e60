"""Registering the wrapper with torch_xla for `use_plugin` (torch_xla.py): once per process,
and all or nothing.

A call that fails changes nothing: everything that can fail is checked before anything
changes (the runtime not started yet, the plugin, the session's settings), the environment is
put back if torch_xla refuses the registration, and the wrapper's session (policy, counters)
becomes the process's only once the registration succeeded. A second call with the same
settings returns the first handle; other settings are a UsageError (torch_xla runs on the
first call's wrapper). Also here: torch_xla's sync calls wrapped so that a Ctrl-C the C wrapper
kept during a conversion is raised as itself (`surface_interrupts`).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from ...errors import MissingDependencyError, UsageError
from ..settings import ENV, Settings
from . import wrapped

_installed: tuple[Settings, Any] | None = None
_lock = threading.Lock()
# What registering sets in the environment: put back as it was when it fails.
_ENV = (*ENV.values(), "PJRT_DEVICE", "XLA_STABLEHLO_COMPILE", "PJRT_DYNAMIC_PLUGINS")


def once(settings: Settings, install: Callable[[], Any]) -> Any:
    """`install()`'s handle, called once per process; a second call gets the first handle for
    the same settings and a UsageError for others."""
    global _installed
    with _lock:
        if _installed is not None:
            return _again(*_installed, settings)
        check_runtime_not_started()
        handle = install()
        _installed = (settings, handle)
        return handle


def installed_device_type() -> str | None:
    """The device type `use_plugin` registered the wrapper under (`SHARDY`, `CPU_SHARDY`: what
    it set PJRT_DEVICE to), None before."""
    installed = _installed
    return None if installed is None else installed[0].device_type.upper()


def _again(settings: Settings, handle: Any, asked: Settings) -> Any:
    if asked == settings:
        return handle
    differ = [
        f"{f.name}={getattr(asked, f.name)!r} (was {getattr(settings, f.name)!r})"
        for f in fields(Settings)
        if getattr(asked, f.name) != getattr(settings, f.name)
    ]
    raise UsageError(
        "use_plugin was already called in this process with other arguments: "
        + ", ".join(differ)
        + "; torch_xla runs on the first call's wrapper (call it once, or with the same "
        "arguments for the same handle)"
    )


def check_runtime_not_started() -> None:
    """A UsageError once torch_xla's runtime has started: it then loads no plugin any more
    ("Can't enable dynamic plugins after XLA runtime is initialized")."""
    xlac = getattr(sys.modules.get("torch_xla"), "_XLAC", None)
    if xlac is not None and xlac._xla_runtime_is_initialized():
        raise UsageError(
            "torch_xla's runtime has already started (PJRT_DEVICE="
            f"{os.environ.get('PJRT_DEVICE', '')!r}): call use_plugin before any XLA work"
        )


def register(settings: Settings, library: str):
    """Sets the environment (the settings' own encoding, and torch_xla's variables for its
    fields) and registers the wrapper around `settings.plugin` with torch_xla under
    `settings.device_type`; torch_xla's `_XLAC`. The environment as it was if that fails."""
    saved = {key: os.environ.get(key) for key in _ENV}
    try:
        for key in ENV.values():  # exactly the settings' encoding, nothing of an earlier run
            os.environ.pop(key, None)
        os.environ.update(settings.to_env())
        os.environ["PJRT_DEVICE"] = settings.device_type  # before torch_xla's import reads it
        if settings.stablehlo_compile:
            os.environ["XLA_STABLEHLO_COMPILE"] = "1"
        else:
            os.environ.pop("XLA_STABLEHLO_COMPILE", None)
        return _register(settings.device_type, library, dict(settings.create_options))
    except BaseException:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        raise


# What to install for the torch_xla entry points (torch_xla 2.9 is what they are built on).
INSTALL_TORCH_XLA = "pip install torch==2.9.0 torch-xla==2.9.0"


def _register(name: str, library: str, options: dict):
    try:
        import torch_xla
        from torch_xla.experimental import plugins
    except ImportError as e:  # installed, but it does not import (torch missing, a mismatch)
        raise MissingDependencyError(
            f"use_plugin cannot import torch_xla ({type(e).__name__}: {e}); it needs torch and "
            f"torch_xla 2.9 ({INSTALL_TORCH_XLA})"
        ) from e

    class _Wrapped(plugins.DevicePlugin):
        def library_path(self) -> str:
            return library

        def client_create_options(self) -> dict:
            return options

        def configure_single_process(self) -> None:
            """Nothing to set up for one process (torch_xla's base raises NotImplementedError,
            which failed `torch_xla.launch`/`xmp.spawn` of a single process on the wrapper)."""

    plugins.use_dynamic_plugins()
    plugins.register_plugin(name, _Wrapped())
    return torch_xla._XLAC


# torch_xla's Python calls into its C++ that sync (compile) the pending graph.
_SYNCS = ("_xla_step_marker", "_xla_sync_multi", "_run_cached_graph", "_xla_warm_up_cache")


def surface_interrupts(xlac) -> None:
    """A Ctrl-C during a conversion fails that compile; the C wrapper keeps the
    KeyboardInterrupt and raises it again when the main thread next runs Python code
    (Py_AddPendingCall), but torch_xla's own error for the failed compile would reach the
    program first. These wrappers of torch_xla's sync calls run Python code as that error
    comes out, so the KeyboardInterrupt is raised there, as itself. Idempotent."""
    for name in _SYNCS:
        original = getattr(xlac, name, None)
        if original is None or wrapped.ours(original):
            continue
        setattr(xlac, name, _interruptible(original))


def _interruptible(original):
    @functools.wraps(original)
    def call(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except Exception:
            _pending_calls_run_here()
            raise

    return wrapped.mark(call)


def _pending_calls_run_here() -> None:
    """Entering a Python function is where the interpreter runs pending calls (and signal
    handlers): a KeyboardInterrupt the wrapper kept is raised from here."""
