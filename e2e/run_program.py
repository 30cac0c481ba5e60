"""Runs one e2e program in this process and writes its arrays and facts.

    python -m e2e.run_program PROGRAM cpu|wrapper|eager OUT_DIR [--on-error passthrough]
        [--hook raising] [--no-normalize] [--plugin PATH] [--hlo] [--match-gspmd-boundary]
        [--dump-dir DIR] [--device-type NAME]

cpu: torch_xla's built-in CPU runtime (PJRT_DEVICE=CPU). wrapper: `use_plugin` on the
xla-cpu-pjrt plugin, with e2e.recorder as the hook. eager: plain PyTorch on the CPU,
unsharded. OUT_DIR/arrays.npz holds the arrays; OUT_DIR/facts.json the counters, the records
of what the plugin received, what a program put in audit_programs.FACTS, or the error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HOOKS = {"recorder": "e2e.recorder:on_compile", "raising": "e2e.recorder:raising_hook"}
# Environment a program needs before torch_xla is imported: torch_xla's StableHLO then puts
# the parameters' shardings on a called @SyncTensorsGraph.N, not on @main.
PROGRAM_ENV = {"passthrough_callee_shardings": {"XLA_PARAMETER_WRAPPING_THREADSHOLD": "1"}}


def setup(args, devices: int):
    if args.mode in ("cpu", "eager"):
        os.environ["PJRT_DEVICE"] = "CPU"
        os.environ["CPU_NUM_DEVICES"] = str(devices)
        return None
    from shardy_convert.torch_xla import use_plugin
    from tests import pjrt_plugin

    os.environ["SHARDY_CONVERT_HOOK"] = HOOKS[args.hook]
    handle = use_plugin(
        args.plugin or pjrt_plugin.plugin_path(),
        create_options={"cpu_device_count": devices},
        on_error=args.on_error,
        normalize_sharding_specs=not args.no_normalize,
        stablehlo_compile=args.stablehlo,
        match_gspmd_boundary=args.match_gspmd_boundary,
        dump_dir=args.dump_dir,
        device_type=args.device_type,
    )
    return handle


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("mode", choices=["cpu", "wrapper", "eager"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--on-error", default="raise")
    parser.add_argument("--hook", default="recorder", choices=sorted(HOOKS))
    parser.add_argument("--no-normalize", action="store_true")
    parser.add_argument("--plugin")
    parser.add_argument(
        "--stablehlo", action="store_true", help="StableHLO, XLA_STABLEHLO_COMPILE=1 (default: HLO)"
    )
    parser.add_argument("--match-gspmd-boundary", action="store_true")
    parser.add_argument("--dump-dir", help="use_plugin(dump_dir=...)")
    parser.add_argument("--device-type", help="use_plugin(device_type=...)")
    args = parser.parse_args()
    os.environ.update(PROGRAM_ENV.get(args.program, {}))  # read when torch_xla is imported
    from e2e import (
        api_programs,
        audit_programs,
        boundary_programs,
        mesh_programs,
        other_programs,
        programs,
    )

    every = {
        **programs.PROGRAMS,
        **audit_programs.PROGRAMS,
        **other_programs.PROGRAMS,
        **boundary_programs.PROGRAMS,
        **mesh_programs.PROGRAMS,
        **api_programs.PROGRAMS,
    }
    fn, devices = every[args.program]
    facts: dict = {}
    try:
        handle = setup(args, devices)
        import numpy as np
        import torch_xla.runtime as xr

        programs.EAGER = args.mode == "eager"
        if not programs.EAGER:
            xr.use_spmd()
        arrays = fn()
        np.savez(args.out / "arrays.npz", **arrays)
        facts["devices"] = int(xr.global_runtime_device_count())
        facts["runtime"] = "eager" if programs.EAGER else xr.device_type()
        facts.update(audit_programs.FACTS)
        if not programs.EAGER:  # what torch_xla says the device is
            import torch_xla
            import torch_xla.core.xla_model as xm

            facts["device"] = str(torch_xla.device())
            facts["hw"] = xm.xla_device_hw(torch_xla.device())
    except Exception as e:  # reported to the test, which decides whether it was expected
        facts["error"] = f"{type(e).__name__}: {e}"
        import traceback

        traceback.print_exc()
        handle = locals().get("handle")
    if args.mode == "wrapper" and handle is not None:
        from e2e.recorder import RECORDS

        facts["counters"] = vars(handle.counters)
        facts["records"] = RECORDS
    (args.out / "facts.json").write_text(json.dumps(facts, indent=1))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
