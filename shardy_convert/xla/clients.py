"""CPU clients of N devices: one pool per process, one client per device count.

Each client is jaxlib's own (`compat.make_cpu_client(N)`), beside jax's backend or torch_xla's
runtime, never theirs: it does not read `XLA_FLAGS`, so a program of any device count compiles
in any process, whatever count another client started with (`check` on graphs of 8 and 16
devices, match-gspmd-boundary inside a torch_xla process). A client costs a few threads and
no device memory; they live until the interpreter exits.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from ..cpp_stderr import cpp_stderr
from . import compat

_lock = threading.Lock()
_clients: dict[int, Any] = {}


def cpu_client(num_devices: int) -> Any:
    """The process's CPU client of `num_devices` devices (made on first use)."""
    with _lock:
        if num_devices not in _clients:
            if not _clients:  # freed while the interpreter is whole, as jax frees its own
                atexit.register(_free)
            with cpp_stderr():  # the client lists its devices on fd 2
                _clients[num_devices] = compat.make_cpu_client(num_devices)
        return _clients[num_devices]


def cpu_devices(num_devices: int) -> tuple:
    """The devices of the pool's client of `num_devices` devices, in id order."""
    return tuple(cpu_client(num_devices).devices()[:num_devices])


def _free() -> None:
    with _lock:
        _clients.clear()
