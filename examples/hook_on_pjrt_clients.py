"""The pre-compile hook in front of two real PJRT clients, on a torch_xla dump.

    python examples/hook_on_pjrt_clients.py [DUMP] [--devices N]

Every graph of the dump (GSPMD, as torch_xla 2.9 writes it) is compiled twice through the
hook: by jaxlib's CPU client (`compile_and_load`) and by the xla-cpu-pjrt plugin through
pypjrt (`client.compile`), the way a PJRT plugin's compile entry point would be wrapped. The
hook converts each distinct graph once and switches the compile options to the Shardy
partitioner; the script checks the parameter shardings against a GSPMD compile of the
original and prints the hook's counters.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "dump", nargs="?", default=ROOT / "testdata/torch_xla/custom_device_ids_manual.dump"
    )
    parser.add_argument("--devices", type=int, default=8)
    args = parser.parse_args()
    # The CPU client reads its device count once, when jax starts.
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    import numpy as np
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc

    from shardy_convert.formats import dump

    sys.path.insert(0, str(ROOT))  # the pypjrt client of the plugin is test harness
    from shardy_convert.commands.check import compile_module
    from shardy_convert.hook import Hook
    from shardy_convert.sharding import parse
    from tests import pjrt_plugin

    n = args.devices
    graphs = dump.graphs(Path(args.dump).read_text())
    hook = Hook()

    # 1. jaxlib's CPU client: wrap its compile entry point.
    backend = xla_bridge.get_backend("cpu")
    compile_and_load = hook.wrap(backend.compile_and_load)
    devices = xc.DeviceList(tuple(backend.devices()[:n]))
    # 2. The xla-cpu-pjrt plugin through pypjrt: wrap the client's compile.
    plugin = pjrt_plugin.get_client(n)
    plugin_compile = hook.wrap(plugin.client.compile)

    failures = 0
    for graph in graphs:
        options = xc.CompileOptions()
        build = options.executable_build_options
        build.num_partitions, build.num_replicas, build.use_spmd_partitioning = n, 1, True
        build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
        exe = compile_and_load(graph.text, devices, options)
        got = [xc.HloSharding.from_proto(p) for p in exe.get_parameter_shardings()]
        want = compile_module(graph.text, n, shardy=False).parameters
        handle = plugin_compile(
            graph.text,
            options=plugin._pypjrt.CompileOptions(
                num_replicas=1, num_partitions=n, use_spmd_partitioning=True
            ),
        )
        on_plugin = [parse(str(s)) for s in plugin._describe(handle, n, True).parameter_shardings]
        same = got == want and on_plugin == [parse(str(s)) for s in got]
        failures += not same
        print(
            f"graph {graph.index}: {len(got)} parameters, Shardy partitioner "
            f"(jaxlib: {build.use_shardy_partitioner}), "
            f"{'same shardings as GSPMD on both clients' if same else 'DIFFERENT shardings'}"
        )
    print(f"hook: {hook.stats}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
