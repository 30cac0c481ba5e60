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
  handing HLO protos (its default, and `use_plugin`'s); `plugin-stablehlo`: the same with
  torch_xla handing StableHLO portable artifacts (`stablehlo_compile=True`);
  `plugin-nocache`: `SHARDY_CONVERT_EXECUTABLE_CACHE=0`, every compile going to the plugin,
  as before the wrapper's executable cache;
- `identity`, `identity-stablehlo`: the wrapper with a hook that converts nothing
  (`identity_hook`: the plugin compiles torch_xla's GSPMD program): what each handoff costs
  without the conversion;
- `plugin-replay`: `use_plugin`, the hook answering each compile with the answer the real
  hook gave it in an earlier, unmeasured run (`replay_hook`): the plugin compiles the same
  Shardy programs, and the conversion costs nothing. Its distance to `plugin` is the
  conversion's own cost, its distance to `identity` what XLA's Shardy compile adds.
The sides take turns, R rounds, so the k-th runs see the same machine; per process, the
median wall time of a program after 3 warm-up programs. Prints one JSON line: per side the
per-round medians, and each side's ratio to the built-in runtime (median of the rounds'
paired ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEVICES = 8
WARMUP = 3
SIDES = (
    "builtin",
    "identity",
    "identity-stablehlo",
    "plugin",
    "plugin-stablehlo",
    "plugin-replay",
    "plugin-nocache",
)
STABLEHLO_SIDES = ("identity-stablehlo", "plugin-stablehlo")


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


# What `record_hook` saw and `replay_hook` answers: (program, format, options) digest -> answer.
_answers: dict[bytes, tuple[bytes, ...] | str] = {}
_replay_misses = 0


def _program_key(code: bytes, form: bytes, options: bytes) -> bytes:
    """A compile's key: the wrapper's executable-cache digest of what the hook is handed."""
    from shardy_convert.plugin import wrapper

    return wrapper.executable_key((code, form, options))


def record_hook(code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...] | str:
    """The wrapper's hook, its answers kept (written to $BENCH_ANSWERS when the run ends)."""
    from shardy_convert.plugin import wrapper

    answer = wrapper.on_compile(code, form, options)
    _answers[_program_key(code, form, options)] = answer
    return answer


def replay_hook(code: bytes, form: bytes, options: bytes) -> tuple[bytes, ...] | str:
    """The answer `record_hook` got for this compile (read from $BENCH_ANSWERS); the real hook
    for one it never saw (counted)."""
    global _replay_misses
    if not _answers:
        _answers.update(pickle.loads(Path(os.environ["BENCH_ANSWERS"]).read_bytes()))
    found = _answers.get(_program_key(code, form, options))
    if found is not None:
        return found
    from shardy_convert.plugin import wrapper

    _replay_misses += 1
    return wrapper.on_compile(code, form, options)


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
            stablehlo_compile=side in STABLEHLO_SIDES,
        )
    import torch_xla.runtime as xr

    xr.use_spmd()
    walls = [_program(64 + 8 * k) for k in range(WARMUP + programs)]
    # the hooks ran in the module the wrapper imported by name, not in this __main__
    hooks = sys.modules.get("bench.bench_plugin_path")
    misses = 0 if hooks is None else hooks._replay_misses
    if os.environ.get("SHARDY_CONVERT_HOOK", "").endswith(":record_hook"):
        if hooks is None or not hooks._answers:
            raise SystemExit("the recording hook never ran")
        Path(os.environ["BENCH_ANSWERS"]).write_bytes(pickle.dumps(hooks._answers))
    done = {"median_ms": statistics.median(walls[WARMUP:]) * 1e3, "replay_misses": misses}
    print(json.dumps(done))


HOOKS = {
    "identity": "identity_hook",
    "identity-stablehlo": "identity_hook",
    "plugin-replay": "replay_hook",
    "record": "record_hook",
}


def _run(side: str, programs: int, answers: Path) -> float:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": path}
    if side == "plugin-nocache":
        env["SHARDY_CONVERT_EXECUTABLE_CACHE"] = "0"
    if side in HOOKS:
        env["SHARDY_CONVERT_HOOK"] = f"bench.bench_plugin_path:{HOOKS[side]}"
        env["BENCH_ANSWERS"] = str(answers)
    child = "plugin" if side == "record" else side
    p = subprocess.run(
        [sys.executable, __file__, "--child", child, "--programs", str(programs)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        raise SystemExit(f"{side} run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    done = json.loads(p.stdout.strip().splitlines()[-1])
    if done["replay_misses"]:
        raise SystemExit(f"{side}: {done['replay_misses']} compiles the recording never saw")
    return done["median_ms"]


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
    with tempfile.TemporaryDirectory(prefix="bench-plugin-path-") as tmp:
        answers = Path(tmp, "answers.pickle")
        if "plugin-replay" in args.sides:  # the real hook's answers, in a run not measured
            _run("record", args.programs, answers)
        for _ in range(args.rounds):
            for side in args.sides:
                medians[side].append(_run(side, args.programs, answers))
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
