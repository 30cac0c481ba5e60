"""torch_xla programs for the fault tests (e2e/test_faults.py), one per process:

    python -m e2e.fault_programs NAME [ARG]

Each prints one line `FACTS {json}` (what it saw) on stdout; a KeyboardInterrupt the program
does not catch ends the process as Python ends it (by SIGINT).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

DEVICES = 8


def _facts(**facts) -> None:
    print("FACTS " + json.dumps(facts), flush=True)


def _use_plugin(**options):
    from shardy_convert.torch_xla import use_plugin
    from tests import pjrt_plugin

    return use_plugin(
        pjrt_plugin.plugin_path(), create_options={"cpu_device_count": DEVICES}, **options
    )


def _sharded_step():
    """A sharded matmul whose graph the plugin compiles at `torch_xla.sync()`."""
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    xr.use_spmd()
    mesh = xs.Mesh(np.arange(DEVICES), (2, 4), ("data", "model"))
    x = torch.arange(8 * 16, dtype=torch.float32).reshape(8, 16).to(torch_xla.device())
    xs.mark_sharding(x, mesh, ("data", "model"))
    y = (x @ x.T).sum()
    torch_xla.sync()
    return y


def interrupting_hook(code: bytes, form: bytes, options: bytes):
    """The wrapper's hook, with a real SIGINT sent to this process a moment into the
    conversion (SHARDY_CONVERT_SIGINT_AFTER seconds): a Ctrl-C while it converts."""
    from shardy_convert.plugin import wrapper

    delay = float(os.environ["SHARDY_CONVERT_SIGINT_AFTER"])
    threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
    answer = wrapper.on_compile(code, form, options)
    time.sleep(2)  # a conversion that ended before the signal: it arrives here (Python code)
    return answer


def ctrl_c_in_conversion(delay: str, catch: str = "catch") -> None:
    """Ctrl-C during the conversion of the first program: torch_xla's sync must raise it as
    KeyboardInterrupt (caught here, or left to end the process)."""
    # Ctrl-C as a terminal delivers it: Python's handler, also where this process inherited
    # SIGINT ignored (a suite run in the background), which Python then keeps.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ["SHARDY_CONVERT_HOOK"] = "e2e.fault_programs:interrupting_hook"
    os.environ["SHARDY_CONVERT_SIGINT_AFTER"] = delay
    handle = _use_plugin()
    if catch != "catch":
        _sharded_step()
        return
    try:
        _sharded_step()
        _facts(raised=None)
    except BaseException as e:
        _facts(raised=type(e).__name__, message=str(e)[:500], counters=vars(handle.counters))


def two_calls() -> None:
    """A second use_plugin: other arguments are refused and change nothing; the same ones
    give the first handle, whose counters count."""
    from shardy_convert.errors import UsageError
    from shardy_convert.plugin import wrapper

    first = _use_plugin(on_error="raise")
    env = {k: os.environ.get(k) for k in ("SHARDY_CONVERT_ON_ERROR", "PJRT_DEVICE")}
    try:
        _use_plugin(on_error="passthrough")
        refused = None
    except UsageError as e:
        refused = str(e)
    again = _use_plugin(on_error="raise")
    _sharded_step()
    _facts(
        refused=refused,
        env_kept=env == {k: os.environ.get(k) for k in env},
        policy=wrapper.session().settings.on_error,
        same_handle=again is first,
        converted=first.counters.converted,
    )


def after_the_runtime_started() -> None:
    """use_plugin after torch_xla's runtime started: a usage error that changes nothing."""
    os.environ["PJRT_DEVICE"] = "CPU"
    os.environ["CPU_NUM_DEVICES"] = str(DEVICES)
    import torch_xla

    torch_xla.device()  # starts the built-in runtime
    from shardy_convert.plugin import wrapper

    env = dict(os.environ)
    try:
        _use_plugin(on_error="passthrough")
        refused = None
    except Exception as e:
        refused = f"{type(e).__name__}: {e}"
    _facts(refused=refused, env_kept=dict(os.environ) == env, session=repr(wrapper._session))


def read_a_live_manual_tensor() -> None:
    """passthrough, then reading a manual tensor back: torch_xla compiles a program whose
    argument is {manual} (ReplicateShardedData), which XLA aborts on with GSPMD: it must be
    refused as a Python error, the process alive."""
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    handle = _use_plugin(on_error="passthrough")
    xr.use_spmd()
    mesh = xs.Mesh(np.arange(DEVICES), (2, 4), ("data", "model"))
    x = torch.ones(8, 16).to(torch_xla.device())
    xs.mark_sharding(x, mesh, ("data", "model"))
    local = xs.enable_manual_sharding(x + 1.0, ("data", "model"), mesh=mesh).global_tensor
    local = local * 2.0
    torch_xla.sync()  # a graph returning a manual value: passed through, runs
    try:
        local.cpu()
        raised = None
    except Exception as e:
        raised = f"{type(e).__name__}: {e}"
    _facts(raised=raised, counters=vars(handle.counters))


PROGRAMS = {
    "ctrl_c_in_conversion": ctrl_c_in_conversion,
    "two_calls": two_calls,
    "after_the_runtime_started": after_the_runtime_started,
    "read_a_live_manual_tensor": read_a_live_manual_tensor,
}

if __name__ == "__main__":
    PROGRAMS[sys.argv[1]](*sys.argv[2:])
