#!/usr/bin/env python3
"""Small distinct programs through the plugin path against torch_xla's built-in runtime.

    .venv-torch/bin/python bench/bench_plugin_path.py [--programs N] [--rounds R] [--sides ...]

The soak of issue 33: a sharded MLP training step (8 CPU devices, a 2x4 mesh, data and model
sharded, forward, backward, SGD; weights and batch made on the host; the loss and the sharded
batch read back with `.cpu()`), a new width each program so that every program is distinct
and compiles (reading the batch back compiles the same `ReplicateShardedData` each time).
Each run is one process, one side:
- `builtin`: torch_xla's built-in runtime (PJRT_DEVICE=CPU, CPU_NUM_DEVICES=8);
- `plugin`: `use_plugin` on xla-cpu-pjrt, every program converted to Shardy, torch_xla
  handing StableHLO; `plugin-hlo`: the same with torch_xla handing HLO protos
  (`stablehlo_compile=False`); `plugin-nocache`: `SHARDY_CONVERT_EXECUTABLE_CACHE=0`, every
  compile going to the plugin, as before the wrapper's executable cache;
- `identity`, `identity-hlo`: the wrapper with a hook that converts nothing
  (`identity_hook`: the plugin compiles torch_xla's GSPMD program): what each handoff costs
  without the conversion.
The sides take turns, R rounds, so the k-th runs see the same machine; per process, the
median wall time of a program after 3 warm-up programs. Prints one JSON line: per side the
per-round medians, and each side's ratio to the built-in runtime (median of the rounds'
paired ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEVICES = 8
WARMUP = 3
SIDES = ("builtin", "identity", "identity-hlo", "plugin", "plugin-hlo", "plugin-nocache")
HLO_SIDES = ("identity-hlo", "plugin-hlo")


def _program(width: int) -> float:
    """One distinct sharded training step of an MLP `width` wide; its wall time."""
    import numpy as np
    import torch
    import torch_xla
    import torch_xla.distributed.spmd as xs

    t0 = time.perf_counter()
    device = torch_xla.device()
    mesh = xs.Mesh(np.arange(DEVICES), (2, 4), ("data", "model"))
    torch.manual_seed(width)  # made on the host, as a data loader's batch and a model's weights
    w1 = torch.randn(32, width).to(device).requires_grad_()
    w2 = torch.randn(width, 8).to(device).requires_grad_()
    xs.mark_sharding(w1, mesh, (None, "model"))
    xs.mark_sharding(w2, mesh, ("model", None))
    x = torch.randn(16, 32).to(device)
    xs.mark_sharding(x, mesh, ("data", None))
    loss = torch.relu(x @ w1).matmul(w2).square().mean()
    loss.backward()
    with torch.no_grad():
        for w in (w1, w2):
            w -= 0.01 * w.grad
    torch_xla.sync()
    loss.cpu()
    x.cpu()  # a sharded tensor of the same shape each time read back: ReplicateShardedData
    return time.perf_counter() - t0


def identity_hook(code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...]:
    """The wrapper's hook converting nothing: the plugin compiles torch_xla's program with
    GSPMD as it came (what the handoff alone costs), cached as the real hook's answers are."""
    from shardy_convert.plugin import wrapper

    answer = (code, form, options, b"")
    return (*answer, wrapper.executable_key(answer))


def _child(side: str, programs: int) -> None:
    if side == "builtin":
        os.environ["PJRT_DEVICE"] = "CPU"
        os.environ["CPU_NUM_DEVICES"] = str(DEVICES)
    else:
        sys.path.insert(0, str(ROOT))
        from shardy_convert.torch_xla import use_plugin
        from tests import pjrt_plugin

        use_plugin(
            pjrt_plugin.plugin_path(),
            create_options={"cpu_device_count": DEVICES},
            stablehlo_compile=side not in HLO_SIDES,
        )
    import torch_xla.runtime as xr

    xr.use_spmd()
    walls = [_program(64 + 8 * k) for k in range(WARMUP + programs)]
    print(json.dumps({"median_ms": statistics.median(walls[WARMUP:]) * 1e3}))


def _run(side: str, programs: int) -> float:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": path}
    if side == "plugin-nocache":
        env["SHARDY_CONVERT_EXECUTABLE_CACHE"] = "0"
    if side.startswith("identity"):
        env["SHARDY_CONVERT_HOOK"] = "bench.bench_plugin_path:identity_hook"
    p = subprocess.run(
        [sys.executable, __file__, "--child", side, "--programs", str(programs)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        raise SystemExit(f"{side} run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES))
    ap.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.programs)
        return
    medians: dict[str, list[float]] = {side: [] for side in args.sides}
    for _ in range(args.rounds):
        for side in args.sides:
            medians[side].append(_run(side, args.programs))
    result: dict = {"programs": args.programs, "rounds": args.rounds, "median_ms": medians}
    if "builtin" in medians:
        base = medians["builtin"]
        result["ratio"] = {
            side: round(statistics.median(m / b for m, b in zip(ms, base)), 3)
            for side, ms in medians.items()
            if side != "builtin"
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
